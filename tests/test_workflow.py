"""The pull-request workflow, dry-run here: every `run:` step of .github/workflows/pull-request.yml
executed in order on a fresh clone (the `uses:` steps skipped), so a renamed make target or a
missing file fails this test rather than a contributor's pull request. The steps that run the
test suites themselves are checked with `make -n` (their targets and prerequisites resolve)
instead of being run inside the suite they belong to."""

from __future__ import annotations

import os
import shlex
import subprocess

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


def as_run_here(command: str) -> str:
    words = shlex.split(command)
    if words[:1] == ["make"] and SUITES & {word for word in words[1:] if "=" not in word}:
        return shlex.join(["make", "-n", *words[1:]])
    return command


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
    for name, command in steps():
        ran = subprocess.run(
            as_run_here(command), shell=True, cwd=clone, env=env, capture_output=True, text=True, timeout=1200
        )
        assert ran.returncode == 0, f"{name}: {command}\n{ran.stdout[-2000:]}\n{ran.stderr[-3000:]}"
    assert (clone / "site" / "index.html").is_file(), "the build step wrote the site"
