"""The matcher's first stage (`generator.prefilter`): a block is searched only for the signatures
whose literals it holds, and what that stage rules out could never have matched."""

from __future__ import annotations

import io

from generator.matcher import Matcher, Signature, Tap

SIGNATURES = [
    Signature("timeout", "regex", r"Exception raised from checkTimeout at \S*ProcessGroupNCCL\.cpp:\d+"),
    Signature("oom", "regex", r"(?:torch\.OutOfMemoryError|RuntimeError): CUDA out of memory"),
    # No literal of four characters: matched by the small set of whole patterns.
    Signature("kernel", "regex", r"^\s*(?:mm|bmm) [0-9.]+ ?ms"),
    Signature("crash", "literal", "Segmentation fault (core dumped)"),
]


def found(log: str, taps: tuple[Tap, ...] = ()) -> tuple[Matcher, dict]:
    matcher = Matcher(SIGNATURES, taps=taps)
    return matcher, matcher.scan(io.BytesIO(log.encode()))


def test_signatures_with_and_without_literals_are_found_on_their_lines():
    log = (
        "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P\n"
        "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:616\n"
        "  bmm 12.5 ms\n"
        "RuntimeError:  CUDA out of\tmemory\n"
    )
    _, hits = found(log)
    assert {SIGNATURES[index].entry_id: [match.line for match in matches] for index, matches in hits.items()} == {
        "timeout": [2],
        "kernel": [3],
        "oom": [4],
    }


def test_literals_spread_over_other_lines_find_nothing():
    """The block holds every literal of the timeout signature, but no line is the signature."""
    log = "Exception raised from main\nchecking ProcessGroupNCCL.cpp:1 checkTimeout later\n"
    _, hits = found(log)
    assert hits == {}


def test_a_shell_message_in_another_language_is_read_as_english():
    log = "step 10 loss 2.1\n段错误 (核心已转储)\n"
    _, hits = found(log)
    assert [SIGNATURES[index].entry_id for index in hits] == ["crash"]
    assert hits[3][0].line == 2


def test_taps_keep_their_lines_through_the_same_stage():
    taps = (Tap("error", r"\b[A-Z][A-Za-z]*Error\b", 0, 8, tolerant=False), Tap("dots", r"^\.+$", 0, 8))
    matcher, hits = found("ValueError: bad\nok\n...\nKeyError: 'x'\n", taps)
    assert [match.line for match in matcher.tapped(hits, "error")] == [1, 4]
    assert [match.line for match in matcher.tapped(hits, "dots")] == [3]
