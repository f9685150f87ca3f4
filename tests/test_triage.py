"""Causes before effects, roles, and the ranks of each finding, on the matcher's results."""

from __future__ import annotations

import pytest

from generator.matcher import Match, Result
from generator.triage import rank_of, triage


def result(entry_id: str, *lines: tuple[int, str]) -> Result:
    found = Result(entry_id, primary=True)
    found.matches = [Match(line, text, 0) for line, text in lines]
    found.evidence = {match.position() for match in found.matches}
    found.first = (0, lines[0][0])
    return found


# Lines and the rank each names (None: none); the diagnose page reads them alike (test_browser_diagnose).
RANK_CASES = [
    ("[rank3]:[E1129 10:42:17 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout", 3),
    ("[Rank 12] Some NCCL operations have failed or timed out.", 12),
    ("[default5]:RuntimeError: CUDA error: an illegal memory access was encountered", 5),
    (" rank : 7 (local_rank: 3)", 7),
    ("local_rank: 4 (pid: 1234) of binary: /usr/bin/python", 4),
    ("Detected mismatch between collectives on ranks. Rank 0 is running collective", 0),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", None),
    ("world_rank 3 and ranking 4", None),
    # Settings printed in a configuration are not ranks.
    ("LoRA rank 8, alpha 16, dropout 0.05", None),
    ("lora rank: 16", None),
    ("Using low rank 4 adapters", None),
    ("rank=16, lora_alpha=32", None),
    ("LoraConfig(r=8, lora_alpha=16)", None),
]


@pytest.mark.parametrize("line,rank", RANK_CASES)
def test_rank_of(line, rank):
    assert rank_of(line) == rank


def test_the_matchers_order_stands_without_causes():
    results = [result("b", (5, "x")), result("a", (1, "y"))]
    assert [finding.entry_id for finding in triage(results, []).findings] == ["b", "a"]


def test_a_cause_moves_above_its_effect_and_unrelated_order_stands():
    results = [result("wrapper", (9, "x")), result("other", (3, "y")), result("timeout", (2, "z"))]
    findings = triage(results, [("timeout", "wrapper"), ("unmatched", "other")]).findings
    assert [finding.entry_id for finding in findings] == ["other", "timeout", "wrapper"]
    assert [finding.consequence_of for finding in findings] == [[], [], ["timeout"]]


def test_a_cause_seen_only_on_the_effects_own_lines_does_not_move():
    """Two OOM entries matching the same OOM message: the `causes` link proves nothing here."""
    results = [
        result("oom-forward", (3, "CUDA out of memory"), (1, "in forward")),
        result("activation-spike", (3, "x")),
    ]
    findings = triage(results, [("activation-spike", "oom-forward")]).findings
    assert [finding.entry_id for finding in findings] == ["oom-forward", "activation-spike"]
    assert findings[0].consequence_of == []


def test_a_cycle_of_causes_keeps_the_best_ranked_first():
    results = [result("a", (1, "x")), result("b", (2, "y"))]
    findings = triage(results, [("a", "b"), ("b", "a")]).findings
    assert [finding.entry_id for finding in findings] == ["a", "b"]


def test_the_culprits_answer_marks_the_initiating_finding_and_the_collateral():
    from generator.culprit import Culprit
    from generator.triage import apply_culprit

    results = [
        result("timeout", (40, "[rank0]: Watchdog caught"), (41, "[rank1]: Watchdog caught")),
        result("oom", (12, "[rank3]: torch.OutOfMemoryError")),
        result("unranked", (50, "Killed")),
    ]
    diagnosis = triage(results, [])
    assert {f.entry_id: (f.ranks, f.initiating, f.collateral) for f in diagnosis.findings} == {
        "timeout": ([0, 1], False, False),
        "oom": ([3], False, False),
        "unranked": ([], False, False),
    }, "without the culprit finder's answer nothing is initiating or collateral"
    apply_culprit(diagnosis, Culprit([3], "own-failure", [], [0, 1], 4, [0, 1, 3], {}), [])
    assert diagnosis.initiating is not None and diagnosis.initiating.entry_id == "oom"
    assert {f.entry_id: (f.rank, f.initiating, f.collateral) for f in diagnosis.findings} == {
        "timeout": (0, False, True),
        "oom": (3, True, False),
        "unranked": (None, False, False),
    }
