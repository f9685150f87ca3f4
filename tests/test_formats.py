"""The diagnosis where it is read: `--format short`, `github` and `sarif` on real logs of the
regression set (golden files), SARIF against the official 2.1.0 schema, hostile log lines that
must not become workflow commands, the VS Code problem matcher on real output, and the GitHub
Action's steps run with the variables GitHub sets."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from generator.closest import closest_entries
from generator.diagnose import scan_logs
from generator.formats import Report, as_github, as_sarif, as_short, github_summary
from generator.signature_index import SignatureIndex

from .regression_logs import PRODUCED, THREADS, load_cases
from .site_build import REPO
from .test_diagnose import diagnose

FIXTURES = Path(__file__).resolve().parent / "fixtures"
GOLDEN = FIXTURES / "formats"
SARIF_SCHEMA = FIXTURES / "sarif" / "sarif-2.1.0-rtm.5.json"
SITE = "https://example.org/encyclopedia/"
# Real logs of the regression set: a launcher's summary under the error it reports; a watchdog
# timeout on several ranks; an out-of-memory error from a thread.
GOLDEN_LOGS = [
    PRODUCED / "linear-shape-under-torchrun-torch-2-13.log",
    THREADS / "nccl-watchdog-timeout.log",
    THREADS / "cuda-oom-forward.log",
]
HOSTILE = (
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x10 and 12x3) %0A::error::injected"
    " ::set-env name=PATH::/tmp ,title=x:: 100%\x1b[31m red\x1b[0m \x07bell"
)


@pytest.fixture(scope="module")
def shipped():
    from generator.loading import load_encyclopedia
    from generator.search import SearchIndex

    result = load_encyclopedia(REPO / "entries")
    assert result.ok
    return SignatureIndex.from_encyclopedia(result.encyclopedia), SearchIndex.from_encyclopedia(result.encyclopedia)


def report(index: SignatureIndex, search, paths: list[Path], top: int = 5) -> Report:
    matcher = index.matcher()
    found = scan_logs(matcher, [str(path) for path in paths])
    diagnosis = index.triage(matcher.rank(found))
    diagnosis.findings = diagnosis.findings[:top]
    closest = [] if diagnosis.findings else closest_entries(search, matcher.error_lines(found))
    names = [path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path) for path in paths]
    return Report(diagnosis, closest, index, matcher, names, SITE)


def frozen(index: SignatureIndex) -> SignatureIndex:
    """The shipped signatures and ranking, with placeholder texts: the golden files pin each
    format's shape, not the wording of entries (which contributors change)."""
    entries = {
        entry_id: dataclasses.replace(info, title=f"Title of {entry_id}", summary=f"Summary of {entry_id}.", fix="Fix.")
        for entry_id, info in index.entries.items()
    }
    return dataclasses.replace(index, entries=entries)


@pytest.mark.parametrize("log", GOLDEN_LOGS, ids=lambda log: log.stem)
@pytest.mark.parametrize("output", ["short", "github", "sarif", "summary.md"])
def test_each_format_on_real_logs_matches_its_golden_file(shipped, log, output):
    index, search = shipped
    made = report(frozen(index), search, [log])
    text = {
        "short": as_short,
        "github": as_github,
        "sarif": lambda made: as_sarif(made, "0.1.0"),
        "summary.md": github_summary,
    }[output](made)
    golden = GOLDEN / f"{log.stem}.{output}"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text + "\n", encoding="utf-8")
    assert text + "\n" == golden.read_text(encoding="utf-8"), f"regenerate with UPDATE_GOLDEN=1 if intended: {golden}"


def test_sarif_is_valid_against_the_official_schema(shipped, tmp_path):
    jsonschema = pytest.importorskip("jsonschema", reason="installed with the lint tools (check-jsonschema)")

    index, search = shipped
    validator = jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text()))
    nothing = tmp_path / "healthy.log"
    nothing.write_text("step 1 loss 2.0\n")
    unmatched = tmp_path / "closest.log"
    unmatched.write_text(
        "FileNotFoundError: [Errno 2] No such file or directory: 'out/checkpoint-500/trainer_state.json'\n"
    )
    logs = [case.log for case in load_cases()[::25]]
    for paths in [[log] for log in logs] + [[nothing], [unmatched], logs[:3]]:
        made = report(index, search, paths)
        errors = sorted(validator.iter_errors(json.loads(as_sarif(made, "0.1.0"))), key=str)
        assert errors == [], f"{paths}: {errors[0].message if errors else ''}"
    assert json.loads(as_sarif(report(index, search, [unmatched]), "0.1.0"))["runs"][0]["results"]


def test_a_hostile_log_line_cannot_start_a_workflow_command(shipped, tmp_path):
    index, search = shipped
    log = tmp_path / "a,b::c%.log"
    log.write_bytes((HOSTILE + "\r\n" + HOSTILE + "\n").encode())
    made = report(index, search, [log])
    assert made.diagnosis.findings, "the hostile line is matched by a real signature"
    commands = as_github(made).split("\n")
    assert all(re.match(r"::(error|warning|notice) ", line) for line in commands), commands
    assert len(commands) == len(made.diagnosis.findings), "one line per finding, nothing injected"
    first = commands[0]
    assert "a%2Cb%3A%3Ac%25.log" in first, "the file property is escaped"
    assert "%250A::error::injected" in first and "100%25" in first
    assert "\x1b" not in first and "\x07" not in first
    for line in as_short(made).split("\n"):
        assert "\x1b" not in line and "\x07" not in line and "\r" not in line
    sarif = json.loads(as_sarif(made, "0.1.0"))
    assert (
        "::error::injected"
        in sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["snippet"]["text"]
    )
    assert "\x1b" not in github_summary(made)


def test_the_validators_annotations_use_the_same_escaping():
    from generator import formats, links, problems

    assert formats.github_annotation is problems.github_annotation
    assert links.github_annotation is problems.github_annotation


# -- the command line ---------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["short", "github", "sarif", "json"])
def test_the_cli_prints_each_format(tmp_path, output):
    log = GOLDEN_LOGS[0]
    found = diagnose("--format", output, str(log), cache=tmp_path, entries=REPO / "entries")
    assert found.returncode == 0, found.stderr
    text = found.stdout.decode()
    if output in ("sarif", "json"):
        json.loads(text)
    if output == "json":
        alias = diagnose("--json", str(log), cache=tmp_path, entries=REPO / "entries")
        assert alias.stdout == found.stdout, "--json is --format json"
    if output == "short":
        assert text.splitlines()[0].startswith(f"{log}:13: error: linear-mat1-mat2-shape-mismatch: ")


def test_github_format_writes_the_job_summary(tmp_path):
    summary = tmp_path / "summary.md"
    env = {
        **os.environ,
        "GITHUB_STEP_SUMMARY": str(summary),
        "MLFAIL_CACHE_DIR": str(tmp_path),
        "PYTHONPATH": str(REPO),
    }
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "generator",
            "diagnose",
            "--entries",
            str(REPO / "entries"),
            "--format",
            "github",
            str(GOLDEN_LOGS[0]),
        ],
        capture_output=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert ran.returncode == 0 and ran.stdout.startswith(b"::error ")
    assert summary.read_text().startswith("### mlfail diagnosis\n")


# -- VS Code ---------------------------------------------------------------------------------


def vscode_matchers() -> list[dict]:
    tasks = json.loads((REPO / "docs" / "assets" / "vscode" / "tasks.json").read_text())
    return [task["problemMatcher"] for task in tasks["tasks"]]


def test_the_problem_matcher_reads_real_short_output(shipped):
    index, search = shipped
    made = report(index, search, GOLDEN_LOGS)
    lines = as_short(made).split("\n")
    assert len(lines) >= 5
    for matcher in vscode_matchers():
        pattern = matcher["pattern"]
        regexp = re.compile(pattern["regexp"])
        for line in lines:
            found = regexp.match(line)
            assert found, line
            assert (REPO / found[pattern["file"]]).is_file()
            assert int(found[pattern["line"]]) > 0
            assert found[pattern["severity"]] in ("error", "warning", "note")
            assert found[pattern["code"]] in index.entries
            assert SITE in found[pattern["message"]]


def test_watch_prints_the_background_markers_around_its_findings(tmp_path):
    background = next(matcher["background"] for matcher in vscode_matchers() if "background" in matcher)
    log = tmp_path / "train.log"
    shutil.copy(GOLDEN_LOGS[0], log)
    env = {**os.environ, "MLFAIL_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "generator", "watch", "--entries", str(REPO / "entries"), "--format", "short"]
    watching = subprocess.Popen(
        [*command, "--interval", "0.05", str(log)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO
    )
    try:
        assert watching.stderr is not None
        begin = watching.stderr.readline().decode()
        end = watching.stderr.readline().decode()
    finally:
        time.sleep(0.2)
        watching.terminate()
        output, _ = watching.communicate(timeout=30)
    assert re.search(background["beginsPattern"], begin), begin
    assert re.search(background["endsPattern"], end), end
    assert f"{log}:13: error: linear-mat1-mat2-shape-mismatch: " in output.decode()


# -- the GitHub Action ---------------------------------------------------------------------------


def action_steps() -> list[dict]:
    return yaml.safe_load((REPO / "action.yml").read_text())["runs"]["steps"]


def run_step(step: dict, inputs: dict[str, str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """A composite step as the runner runs it: its `env:` expressions evaluated, its script in bash."""
    values = {**{f"inputs.{name}": value for name, value in inputs.items()}, "github.action_path": str(REPO)}
    step_env = {
        name: re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda found: values[found[1]], str(value))
        for name, value in step.get("env", {}).items()
    }
    assert "${{" not in step["run"], "expressions reach the script through env only"
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]], env={**env, **step_env}, cwd=cwd, capture_output=True, text=True, timeout=900
    )


@pytest.mark.build
def test_the_action_installs_mlfail_and_reports_in_github_format(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    shutil.copy(GOLDEN_LOGS[0], workspace / "train.log")
    summary = tmp_path / "summary.md"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "RUNNER_TEMP": str(tmp_path / "runner"),
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_STEP_SUMMARY": str(summary),
        "MLFAIL_CACHE_DIR": str(tmp_path / "cache"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }
    (tmp_path / "runner").mkdir()
    install, diagnose_step = action_steps()
    defaults = {"run": "", "logs": "", "python": sys.executable}
    installed = run_step(install, defaults, env, workspace)
    assert installed.returncode == 0, installed.stderr[-3000:]

    logs = run_step(diagnose_step, {**defaults, "logs": "*.log"}, env, workspace)
    assert logs.returncode == 0, logs.stderr[-3000:]
    assert logs.stdout.startswith("::error file=train.log,line=13,")
    assert "| 1 | [" in summary.read_text()

    job = "echo 'RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x10 and 12x3)' >&2; exit 3"
    ran = run_step(diagnose_step, {**defaults, "run": job}, env, workspace)
    assert ran.returncode == 3, "the job's own status"
    assert "::error file=<stdin>,line=1," in ran.stdout

    neither = run_step(diagnose_step, defaults, env, workspace)
    assert neither.returncode == 2 and neither.stdout.startswith("::error title=mlfail::")
