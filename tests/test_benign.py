"""No alarms on healthy runs: logs of successful runs made with real libraries
(tests/fixtures/benign/) get nothing of severity medium or above, no closest-entry
guesses and no notice of a log cut inside a traceback; `mlfail run` around a successful job adds nothing to its output. A case may name,
with its reason, an entry whose warning the run prints truly but on purpose (`expected:`)."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.closest import closest_entries
from generator.diagnose import scan_logs
from generator.incomplete import cut_in
from generator.signature_index import SignatureIndex

from .site_build import REPO

BENIGN = Path(__file__).resolve().parent / "fixtures" / "benign"
ALARMING = {"medium", "high", "critical"}
BIG = 5 * 2**20


def cases() -> list[Path]:
    return sorted(path for path in BENIGN.iterdir() if path.name.endswith((".log", ".log.gz")))


def about(log: Path) -> dict:
    return yaml.safe_load((BENIGN / (log.name.split(".")[0] + ".yaml")).read_text())


def size_of(log: Path) -> int:
    if log.suffix != ".gz":
        return log.stat().st_size
    with open(log, "rb") as stream:  # gzip's trailer: the uncompressed size (modulo 4 GiB)
        stream.seek(-4, os.SEEK_END)
        return int.from_bytes(stream.read(4), "little")


@pytest.fixture(scope="module")
def shipped():
    from generator.loading import load_encyclopedia
    from generator.search import SearchIndex

    result = load_encyclopedia(REPO / "entries")
    assert result.ok
    return SignatureIndex.from_encyclopedia(result.encyclopedia), SearchIndex.from_encyclopedia(result.encyclopedia)


def test_the_corpus_is_large_and_each_case_says_how_it_was_made():
    logs = cases()
    assert len(logs) >= 40
    assert sum(1 for log in logs if size_of(log) > BIG) >= 5, "five logs over 5 MB"
    for log in logs:
        case = about(log)
        assert case["made_with"] and case["command"] and case["about"], log.name
        assert (BENIGN / (log.name.split(".")[0] + ".py")).is_file(), f"{log.name}: the script that printed it"


@pytest.mark.parametrize("log", cases(), ids=lambda log: log.name)
def test_a_healthy_run_raises_no_alarm(shipped, log):
    index, search = shipped
    matcher = index.matcher()
    found = scan_logs(matcher, [str(log)])
    findings = index.triage(matcher.rank(found)).findings
    # A case may name an entry whose warning the run prints truly but on purpose, and why (its YAML).
    expected = about(log).get("expected", {})
    assert all(isinstance(reason, str) and reason for reason in expected.values()), "each expected entry says why"
    alarms = [
        (finding.entry_id, finding.result.matches[0].text)
        for finding in findings
        if index.entries[finding.entry_id].severity in ALARMING and finding.entry_id not in expected
    ]
    assert alarms == []
    if not findings:
        assert closest_entries(search, matcher.error_lines(found)) == []
        assert cut_in(matcher.tapped(found, "tail")) is None, "no 'stops inside a traceback' notice"


@pytest.mark.parametrize("log", [log for log in cases() if log.suffix == ".log"][:3], ids=lambda log: log.name)
def test_mlfail_run_around_a_successful_job_adds_nothing(tmp_path, log):
    printer = "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())"
    env = {**os.environ, "MLFAIL_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    ran = subprocess.run(
        [sys.executable, "-m", "generator", "run", "--", sys.executable, "-c", printer, str(log)],
        capture_output=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert ran.returncode == 0
    assert ran.stdout == log.read_bytes()
    assert ran.stderr == b""


def test_gzip_sizes_are_read_from_the_trailer(tmp_path):
    packed = tmp_path / "x.log.gz"
    packed.write_bytes(gzip.compress(b"step 1 loss 2.0\n" * 1000))
    assert size_of(packed) == 16000
