"""The pull-request workflow, dry-run here: every `run:` step of .github/workflows/pull-request.yml
executed in order on a fresh clone (the `uses:` steps skipped), so a renamed make target or a
missing file fails this test rather than a contributor's pull request. The steps that run the
test suites themselves are not run inside the suite they belong to: their make targets must
exist in the Makefile's database (`make -pRrq`)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from .site_build import REPO

WORKFLOW = REPO / ".github" / "workflows" / "pull-request.yml"
SUITES = {"test", "test-package", "test-all-pages"}  # make targets that run a test suite


def steps() -> list[tuple[str, str]]:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    found = []
    for job_name, job in workflow["jobs"].items():
        for step in job["steps"]:
            if "run" in step:
                found.append((f"{job_name}: {step.get('name', step['run'])}", step["run"]))
    return found


def suite_targets(command: str) -> list[str]:
    """The make targets of a step that runs a test suite, or [] for any other step."""
    words = shlex.split(command)
    targets = [word for word in words[1:] if "=" not in word and not word.startswith("-")]
    return targets if words[:1] == ["make"] and SUITES & set(targets) else []


def make_targets(folder: Path) -> set[str]:
    database = subprocess.run(["make", "-pRrq", ":"], cwd=folder, capture_output=True, text=True, timeout=60)
    return {line.split(":", 1)[0] for line in database.stdout.splitlines() if line[:1].isalnum() and ":" in line}


def test_the_workflow_has_run_steps_and_no_expressions_in_them():
    found = steps()
    assert len(found) >= 5
    assert not [name for name, command in found if "${{" in command], "a run step must work as written"


@pytest.mark.build
def test_every_run_step_passes_on_a_fresh_clone(tmp_path):
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", head.stdout.strip()], check=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("VIRTUAL_ENV", "PYTEST", "PYTHON"))}
    targets = make_targets(clone)
    assert "site" in targets and "test" in targets
    for name, command in steps():
        suites = suite_targets(command)
        if suites:
            assert set(suites) <= targets, f"{name}: no make target {sorted(set(suites) - targets)}"
            continue
        ran = subprocess.run(command, shell=True, cwd=clone, env=env, capture_output=True, text=True, timeout=1200)
        assert ran.returncode == 0, f"{name}: {command}\n{ran.stdout[-2000:]}\n{ran.stderr[-3000:]}"
    assert (clone / "site" / "index.html").is_file(), "the build step wrote the site"
