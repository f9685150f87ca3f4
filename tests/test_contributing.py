"""The contribution workflow's files exist and say what they should: workflows, hook, template."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from .site_build import REPO


def workflow(name: str) -> dict:
    return yaml.safe_load((REPO / ".github" / "workflows" / name).read_text())


def steps_text(job: dict) -> str:
    return "\n".join(step.get("run", "") + step.get("uses", "") for step in job["steps"])


def test_pull_requests_validate_test_and_build():
    flow = workflow("pull-request.yml")
    assert "pull_request" in flow[True]  # YAML 1.1 reads the key `on` as True
    text = steps_text(flow["jobs"]["check"])
    assert "validate entries --format github" in text and "make test" in text and "mkdocs build --strict" in text


def test_main_deploys_to_pages():
    flow = workflow("deploy.yml")
    assert flow[True]["push"]["branches"] == ["main"]
    assert "actions/deploy-pages" in steps_text(flow["jobs"]["deploy"])
    assert "make site" in steps_text(flow["jobs"]["build"])


def test_links_are_checked_weekly_and_never_on_pull_requests():
    flow = workflow("links.yml")
    assert "schedule" in flow[True] and "pull_request" not in flow[True]
    assert "check-links" in steps_text(flow["jobs"]["links"])


def test_pre_commit_config_uses_the_projects_venv():
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    hook = config["repos"][0]["hooks"][0]
    assert hook["entry"] == ".venv/bin/python -m generator validate entries" and hook["files"] == "^entries/"


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(repo), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, timeout=120)


def test_the_commit_hook_stops_an_invalid_entry_without_an_activated_venv(tmp_path, corpus):
    """A clone with .venv/ but nothing on PATH from it: `make hooks`' hook validates staged entries."""
    entry = corpus.entry()
    repo = tmp_path / "clone"
    shutil.copytree(corpus.root.parent, repo)
    shutil.copytree(REPO / ".githooks", repo / ".githooks")
    (repo / ".venv").symlink_to(Path(sys.prefix))
    _git(repo, "init", "-q")
    assert _git(repo, "config", "core.hooksPath", ".githooks").returncode == 0
    (repo / "entries" / entry.relative_to(corpus.root)).write_text(
        entry.read_text().replace("severity: high", "severity: huge")
    )
    _git(repo, "add", "entries")
    refused = _git(repo, "commit", "-q", "-m", "new entry")
    assert refused.returncode != 0
    assert "entries/memory/cuda-oom-example.yaml:5:11: error[FE203]: severity:" in refused.stdout + refused.stderr
    (repo / "entries" / entry.relative_to(corpus.root)).write_text(entry.read_text())
    _git(repo, "add", "entries")
    accepted = _git(repo, "commit", "-q", "-m", "new entry")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr


def test_contributing_and_template_walk_through_the_workflow():
    guide = (REPO / "CONTRIBUTING.md").read_text()
    for step in ("generator new", "generator validate", "make serve", "pull request"):
        assert step in guide
    assert "- [ ]" in (REPO / ".github" / "PULL_REQUEST_TEMPLATE.md").read_text()


def test_pull_requests_run_on_the_oldest_and_newest_python():
    flow = workflow("pull-request.yml")
    assert flow["jobs"]["check"]["strategy"]["matrix"]["python"] == ["3.11.5", "3.13"]
    assert flow["jobs"]["package"]["strategy"]["matrix"]["python"] == ["3.9", "3.14"]
    minimum = (REPO / "pyproject.toml").read_text().split('requires-python = ">=')[1].split('"')[0]
    assert minimum == flow["jobs"]["package"]["strategy"]["matrix"]["python"][0]


def test_relative_links_of_the_contributor_pages_work_on_github_too():
    """Contributors read docs/contributing/ on GitHub, where generated pages do not exist: links
    to them are absolute URLs, and a relative link names a file of docs/."""
    for page in (REPO / "docs" / "contributing").rglob("*.md"):
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if target.startswith(("http://", "https://", "#", "mailto:")):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            assert path.is_file(), f"{page.relative_to(REPO)}: {target} is not a file of docs/"
