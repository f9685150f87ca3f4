"""The contribution workflow's files exist and say what they should: workflows, hook, template."""

from __future__ import annotations

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


def test_pre_commit_hook_runs_the_validator():
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text())
    hook = config["repos"][0]["hooks"][0]
    assert hook["entry"] == "python -m generator validate entries" and hook["files"] == "^entries/"


def test_contributing_and_template_walk_through_the_workflow():
    guide = (REPO / "CONTRIBUTING.md").read_text()
    for step in ("generator new", "generator validate", "make serve", "pull request"):
        assert step in guide
    assert "- [ ]" in (REPO / ".github" / "PULL_REQUEST_TEMPLATE.md").read_text()


def test_pull_requests_run_on_the_oldest_and_newest_python():
    flow = workflow("pull-request.yml")
    assert flow["jobs"]["check"]["strategy"]["matrix"]["python"] == ["3.11.5", "3.13"]
    minimum = (REPO / "pyproject.toml").read_text().split('requires-python = ">=')[1].split('"')[0]
    assert minimum == flow["jobs"]["check"]["strategy"]["matrix"]["python"][0]
