"""`diagnose` from the command line: rankings on fixture logs, the JSON shape, exit codes, hostile input.

The same fixture cases (fixtures/diagnose/cases.json) are run through the browser's
matcher in the end-to-end tests, so both sides rank alike."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.resources import SITE_URL

from .site_build import FIXTURE_ENTRIES, REPO

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "diagnose"
CASES = json.loads((FIXTURES / "cases.json").read_text())
REAL = FIXTURES / "real"


@pytest.fixture
def cache(tmp_path) -> Path:
    return tmp_path / "cache"


def diagnose(
    *args: str, cache: Path, entries: Path = FIXTURE_ENTRIES, stdin: bytes | None = None, cwd: Path = REPO
) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "MLFAIL_SITE_URL"}  # links: the published site
    env.update(MLFAIL_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "generator", "diagnose", "--entries", str(entries), *args],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


def ranking(result: subprocess.CompletedProcess) -> list[dict]:
    return json.loads(result.stdout)["findings"]


@pytest.mark.parametrize("case", CASES, ids=[case["log"] for case in CASES])
def test_fixture_rankings(case, cache):
    result = diagnose(str(FIXTURES / case["log"]), "--json", cache=cache)
    assert result.returncode == (0 if case["ranking"] else 1), result.stderr
    found = ranking(result)
    assert [item["id"] for item in found] == case["ranking"]
    assert {item["id"]: item["matches"][0]["line"] for item in found} == case["first_lines"]


def test_json_shape(cache):
    found = ranking(diagnose(str(FIXTURES / "alpha.log"), "--json", cache=cache))
    alpha = found[0]
    assert {"id", "title", "url", "score", "matches"} <= set(alpha)
    assert alpha["url"] == f"{SITE_URL}failures/alpha-failure/" and alpha["score"] == 2
    assert alpha["matches"] == [
        {
            "line": 6,
            "text": "torch.OutOfMemoryError: Tried to allocate 3.50 GiB (alpha)",
            "signature": r"Tried to allocate [0-9.]+ [KMG]iB \(alpha\)",
            "rank": None,
        },
        {
            "line": 7,
            "text": "AlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED",
            "signature": "AlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED",
            "rank": None,
        },
    ]
    assert (alpha["consequence_of"], alpha["rank"], alpha["collateral"]) == ([], None, False)
    assert found[1]["consequence_of"] == ["alpha-failure"]  # alpha-failure declares `causes` beta-failure


def test_a_cause_ranks_above_its_effect_and_ranks_are_read(cache):
    """beta matches two signatures and alpha one, but alpha causes beta: alpha comes first.
    Rank 2 fails on its own (an out-of-memory error); beta, seen only on ranks 0 and 1, is collateral."""
    found = ranking(diagnose(str(FIXTURES / "ranks.log"), "--json", cache=cache))
    assert [(item["id"], item["score"]) for item in found] == [("alpha-failure", 1), ("beta-failure", 2)]
    alpha, beta = found
    assert (alpha["rank"], alpha["collateral"], alpha["consequence_of"]) == (2, False, [])
    assert (beta["rank"], beta["collateral"], beta["consequence_of"]) == (0, True, ["alpha-failure"])
    assert [match["rank"] for match in beta["matches"]] == [0, 1]
    whole = json.loads(diagnose(str(FIXTURES / "ranks.log"), "--json", cache=cache).stdout)
    assert (whole["initiator"]["ranks"], whole["initiator"]["failure"], whole["initiator"]["rule"]) == (
        [2],
        "alpha-failure",
        "own-failure",
    )
    text = diagnose(str(FIXTURES / "ranks.log"), cache=cache).stdout.decode()
    assert text.startswith("Rank 2 started it: Alpha failure with CUDA out of memory.\n")
    assert "Consequence: here this is a result of 1. Alpha failure with CUDA out of memory (above)" in text
    assert "Collateral: seen only on other ranks than rank 2, which started it." in text


def test_text_output_for_people(cache):
    result = diagnose(str(FIXTURES / "alpha.log"), cache=cache)
    out = result.stdout.decode()
    assert result.returncode == 0
    assert out.startswith("1. Alpha failure with CUDA out of memory  [high]")
    assert f"alpha-failure · {SITE_URL}failures/alpha-failure/ · 2 signatures matched" in out
    assert "line 6: torch.OutOfMemoryError: Tried to allocate 3.50 GiB (alpha)" in out
    assert "Quick answer: The alpha model runs out of GPU memory on its first step." in out
    assert "Fix: Lower the batch size or the prefetch buckets." in out


def test_standard_input(cache):
    result = diagnose("-", "--json", cache=cache, stdin=(FIXTURES / "alpha.log").read_bytes())
    assert [item["id"] for item in ranking(result)] == ["alpha-failure", "beta-failure"]
    gz = diagnose("--json", cache=cache, stdin=gzip.compress((FIXTURES / "tie.log").read_bytes()))
    assert [item["id"] for item in ranking(gz)] == ["beta-failure", "gamma-failure"]


def test_several_logs_are_one_diagnosis(cache):
    result = diagnose(str(FIXTURES / "tie.log"), str(FIXTURES / "alpha.log"), "--json", cache=cache)
    found = ranking(result)
    assert [item["id"] for item in found] == ["alpha-failure", "beta-failure", "gamma-failure"]
    beta = found[1]
    assert [(m["file"].rsplit("/", 1)[-1], m["line"]) for m in beta["matches"]] == [("tie.log", 5), ("alpha.log", 3)]


def test_top_limits_the_results(cache):
    assert len(ranking(diagnose(str(FIXTURES / "alpha.log"), "--json", "--top", "1", cache=cache))) == 1
    assert diagnose(str(FIXTURES / "alpha.log"), "--top", "0", cache=cache).returncode == 2


@pytest.mark.parametrize(
    "make_input,message",
    [
        (lambda tmp: tmp / "missing.log", b"no such file"),
        (lambda tmp: (tmp / "logs").mkdir() or tmp / "logs", b"no log files found"),
    ],
)
def test_unusable_input_is_a_clear_error(tmp_path, cache, make_input, message):
    result = diagnose(str(make_input(tmp_path)), cache=cache)
    assert result.returncode == 2 and message in result.stderr and b"Traceback" not in result.stderr


def test_damaged_gzip_is_a_clear_error(tmp_path, cache):
    damaged = tmp_path / "damaged.log.gz"
    damaged.write_bytes(gzip.compress(b"AlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED\n" * 1000)[:-40] + b"garbage!")
    result = diagnose(str(damaged), cache=cache)
    assert result.returncode == 2 and b"damaged gzip" in result.stderr and b"Traceback" not in result.stderr


def test_invalid_entries_are_an_error(tmp_path, cache):
    entries = tmp_path / "entries"
    shutil.copytree(FIXTURE_ENTRIES, entries)
    broken = entries / "memory" / "beta-failure.yaml"
    broken.write_text(broken.read_text().replace("severity: medium", "severity: huge"))
    result = diagnose(str(FIXTURES / "alpha.log"), cache=cache, entries=entries)
    assert result.returncode == 2
    assert b"beta-failure.yaml:5:11: error[FE203]: severity" in result.stderr and b"Traceback" not in result.stderr


def test_the_cached_index_follows_edits(tmp_path, cache):
    entries = tmp_path / "entries"
    shutil.copytree(FIXTURE_ENTRIES, entries)
    log = FIXTURES / "tie.log"
    assert [item["id"] for item in ranking(diagnose(str(log), "--json", cache=cache, entries=entries))] == [
        "beta-failure",
        "gamma-failure",
    ]
    assert list(cache.glob("signatures-*.json")), "the index is cached"
    gamma = entries / "performance" / "gamma-failure.yaml"
    gamma.write_text(
        gamma.read_text().replace(
            '  - literal: "GammaError: <script>"',
            '  - literal: "nothing"\n    source: https://example.org/nothing\n  - literal: "GammaError: <script>"',
        )
    )
    assert [item["id"] for item in ranking(diagnose(str(log), "--json", cache=cache, entries=entries))] == [
        "gamma-failure",
        "beta-failure",
    ]


def test_a_damaged_cache_is_rebuilt(cache):
    assert diagnose(str(FIXTURES / "alpha.log"), cache=cache).returncode == 0
    for path in cache.glob("signatures-*.json"):
        path.write_text("{not json")
    found = ranking(diagnose(str(FIXTURES / "alpha.log"), "--json", cache=cache))
    assert found[0]["id"] == "alpha-failure"


def test_binary_noise_never_crashes(tmp_path, cache):
    noise = tmp_path / "noise.log"
    noise.write_bytes(os.urandom(300_000) + b"\nAlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED\n" + os.urandom(1000))
    result = diagnose(str(noise), "--json", cache=cache)
    assert result.returncode == 0 and ranking(result)[0]["id"] == "alpha-failure"


def test_huge_line_without_newline_is_bounded(tmp_path, cache):
    huge = tmp_path / "huge.log"
    with open(huge, "wb") as handle:
        handle.write(b"AlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED")
        for _ in range(40):
            handle.write(b"x" * 1_000_000)
        handle.write(b"\nBetaFragmentationWarning\n")
    found = ranking(diagnose(str(huge), "--json", cache=cache))
    # One signature each; alpha's literal is the longer (more specific) pattern.
    assert [(item["id"], item["matches"][0]["line"]) for item in found] == [("alpha-failure", 1), ("beta-failure", 2)]
    assert len(found[0]["matches"][0]["text"]) == 4096


EXPECTED = json.loads((REAL / "expected.json").read_text())  # missing: the tests below fail, not vanish


def test_every_real_log_has_its_expectation():
    assert {path.name for path in REAL.glob("*.log")} == set(EXPECTED)


@pytest.mark.parametrize("log", sorted(EXPECTED), ids=sorted(EXPECTED))
def test_real_logs_against_the_shipped_corpus(log, cache):
    result = diagnose(str(REAL / log), "--json", cache=cache, entries=REPO / "entries")
    assert result.returncode == 0, result.stderr
    top = ranking(result)[0]["id"]
    assert top in EXPECTED[log], f"{log}: {top} ranked first"
