"""What changed recently: dates of entry files from the git history, following renames."""

from __future__ import annotations

import datetime
import os
import subprocess
from pathlib import Path

import pytest

from generator.history import FileHistory, entry_history, parse_log
from generator.loading import load_encyclopedia
from generator.rendering import Renderer

from .site_build import FIXTURE_ENTRIES

D = datetime.date


def test_parse_log_follows_renames_and_forgets_deleted_files():
    log = (
        "\0" + "2026-11-30\n\nR100\tmemory/old-name.yaml\tcorrectness/new-name.yaml\nM\tmemory/kept.yaml\n"
        "\0" + "2026-11-20\n\nD\tmemory/gone.yaml\n"
        "\0" + "2026-11-10\n\nM\tmemory/old-name.yaml\nM\tmemory/gone.yaml\nM\ttaxonomy.yaml\n"
        "\0" + "2026-11-01\n\nA\tmemory/old-name.yaml\nA\tmemory/kept.yaml\nA\tmemory/gone.yaml\nA\tREADME.md\n"
    )
    assert parse_log(log) == {
        "correctness/new-name.yaml": FileHistory(added=D(2026, 11, 1), updated=D(2026, 11, 30)),
        "memory/kept.yaml": FileHistory(added=D(2026, 11, 1), updated=D(2026, 11, 30)),
        "taxonomy.yaml": FileHistory(added=D(2026, 11, 10), updated=D(2026, 11, 10)),
    }


def test_a_file_deleted_and_added_again_counts_from_its_return():
    log = "\0" + "2026-11-30\n\nA\tmemory/back.yaml\n" + "\0" + "2026-11-20\n\nD\tmemory/back.yaml\n"
    log += "\0" + "2026-11-01\n\nA\tmemory/back.yaml\n"
    assert parse_log(log) == {"memory/back.yaml": FileHistory(added=D(2026, 11, 30), updated=D(2026, 11, 30))}


def test_no_git_history_is_no_dates(tmp_path):
    assert entry_history(tmp_path) == {}


def _git(root: Path, *args: str, day: str) -> None:
    stamp = f"{day}T12:00:00+00:00"
    env = {**os.environ, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def test_home_lists_what_was_added_or_updated_most_recently(tmp_path):
    """In a real repository: all three entries added on one day, beta edited later, gamma not
    committed yet (it counts by its `reviewed` date)."""
    import shutil

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    entries = tmp_path / "entries"
    shutil.copytree(FIXTURE_ENTRIES, entries)
    gamma = entries / "performance" / "gamma-failure.yaml"
    gamma_text = gamma.read_text()
    gamma.unlink()
    _git(tmp_path, "init", "-q", day="2026-10-01")
    _git(tmp_path, "add", "-A", day="2026-10-01")
    _git(tmp_path, "commit", "-q", "-m", "first entries", day="2026-10-01")
    beta = entries / "memory" / "beta-failure.yaml"
    beta.write_text(beta.read_text().replace("reviewed: 2026-10-01", "reviewed: 2026-10-02"))
    _git(tmp_path, "commit", "-q", "-am", "beta edited", day="2026-11-15")
    gamma.write_text(gamma_text)
    encyclopedia = load_encyclopedia(entries).encyclopedia
    assert encyclopedia is not None
    renderer = Renderer(encyclopedia, history=entry_history(entries))
    changes = [(change.entry.id, change.date.isoformat(), change.kind) for change in renderer.recent_changes(10)]
    reviewed_gamma = encyclopedia.entries["gamma-failure"].reviewed.isoformat()
    assert changes[:2] == [("beta-failure", "2026-11-15", "updated"), ("gamma-failure", reviewed_gamma, "reviewed")]
    assert ("alpha-failure", "2026-10-01", "added") in changes
    home = renderer.home_page().markdown
    assert "## Recently added or updated" in home and "2026-11-15 · updated · [Beta fragmentation]" in home
