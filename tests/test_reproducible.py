"""Two builds of one commit write the same bytes, whatever the hash seed, the order in which the
file system lists folders, the folder built in and the day: every set or dict that reaches a
page is ordered by a stated key, and dates come from the commit (SOURCE_DATE_EPOCH)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .site_build import REPO, build, make_project

pytestmark = pytest.mark.build

COMMIT_DATE = "2001-02-03T04:05:06+00:00"

# Loaded by the second build (as sitecustomize): every folder listing comes back in a random order.
SHUFFLED_LISTINGS = """
import os, random

_random = random.Random(7)
_listdir, _scandir = os.listdir, os.scandir


def listdir(path="."):
    names = _listdir(path)
    _random.shuffle(names)
    return names


class _Listing:
    def __init__(self, entries):
        self._entries = iter(entries)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._entries)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def close(self):
        pass


def scandir(path="."):
    with _scandir(path) as found:
        entries = list(found)
    _random.shuffle(entries)
    return _Listing(entries)


os.listdir, os.scandir = listdir, scandir
"""


def _committed_project(root: Path) -> Path:
    """The project's site sources with the shipped entries, committed at COMMIT_DATE."""
    make_project(root, REPO / "entries")
    env = {"GIT_AUTHOR_DATE": COMMIT_DATE, "GIT_COMMITTER_DATE": COMMIT_DATE}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "entries"]):
        subprocess.run(
            ["git", "-c", "user.name=Test", "-c", "user.email=test@example.org", *args],
            cwd=root,
            env={"PATH": "/usr/bin:/bin", "HOME": str(root), **env},
            check=True,
            capture_output=True,
        )
    return root


def _tree(site: Path) -> dict[str, bytes]:
    return {path.relative_to(site).as_posix(): path.read_bytes() for path in site.rglob("*") if path.is_file()}


def test_two_builds_of_one_commit_are_byte_identical(tmp_path):
    shuffler = tmp_path / "shuffled-listings"
    shuffler.mkdir()
    (shuffler / "sitecustomize.py").write_text(SHUFFLED_LISTINGS)
    runs = [
        ("first", {"PYTHONHASHSEED": "1", "SOURCE_DATE_EPOCH": None}),
        ("second", {"PYTHONHASHSEED": "2", "SOURCE_DATE_EPOCH": None, "PYTHONPATH": str(shuffler)}),
    ]
    trees = []
    for name, env in runs:
        project = _committed_project(tmp_path / name)
        result = build(project, env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        trees.append(_tree(project / "site"))
    first, second = trees
    only_one = sorted(set(first) ^ set(second))
    assert only_one == [], f"files written by one build only: {only_one[:10]}"
    differing = sorted(path for path in first if first[path] != second[path])
    assert differing == [], f"{len(differing)} files differ, among them {differing[:10]}"
    assert any(path.startswith("pagefind/") for path in first)  # the search index is compared too
    sitemap = first["sitemap.xml"].decode()
    assert "<lastmod>2001-02-03</lastmod>" in sitemap and sitemap.count("<lastmod>") == sitemap.count(
        "<lastmod>2001-02-03</lastmod>"
    ), "the sitemap is dated by the commit, not by the clock"
