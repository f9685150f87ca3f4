"""Two builds of one commit write the same bytes, whatever the hash seed, the order in which the
file system lists folders, the folder built in and the day: every set or dict that reaches a
page is ordered by a stated key, and dates come from the commit (SOURCE_DATE_EPOCH)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from .site_build import FIXTURE_ENTRIES, REPO, build, make_project

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


def _tree(site: Path) -> dict[str, bytes]:
    return {path.relative_to(site).as_posix(): path.read_bytes() for path in site.rglob("*") if path.is_file()}


def test_two_builds_of_one_commit_are_byte_identical(project_site, tmp_path):
    """The session's build of the shipped entries against one more, in another folder, with
    another hash seed and every folder listed in a shuffled order."""
    shuffler = tmp_path / "shuffled-listings"
    shuffler.mkdir()
    (shuffler / "sitecustomize.py").write_text(SHUFFLED_LISTINGS)
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"  # not the session build's
    project = tmp_path / "elsewhere"
    make_project(project, REPO / "entries")
    result = build(project, env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(shuffler)})
    assert result.returncode == 0, result.stderr[-3000:]
    first, second = _tree(project_site), _tree(project / "site")
    only_one = sorted(set(first) ^ set(second))
    assert only_one == [], f"files written by one build only: {only_one[:10]}"
    differing = sorted(path for path in first if first[path] != second[path])
    assert differing == [], f"{len(differing)} files differ, among them {differing[:10]}"
    assert any(path.startswith("pagefind/") for path in first)  # the search index is compared too


def test_a_checkout_is_dated_by_its_commit_not_by_the_clock(tmp_path):
    make_project(tmp_path, FIXTURE_ENTRIES)
    env = {"GIT_AUTHOR_DATE": COMMIT_DATE, "GIT_COMMITTER_DATE": COMMIT_DATE}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "entries"]):
        subprocess.run(
            ["git", "-c", "user.name=Test", "-c", "user.email=test@example.org", *args],
            cwd=tmp_path,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env},
            check=True,
            capture_output=True,
        )
    result = build(tmp_path, env={"SOURCE_DATE_EPOCH": None})
    assert result.returncode == 0, result.stderr[-3000:]
    dates = set(re.findall(r"<lastmod>([^<]*)</lastmod>", (tmp_path / "site" / "sitemap.xml").read_text()))
    assert dates == {"2001-02-03"}
    given = build(tmp_path, "--site-dir", str(tmp_path / "given"), env={"SOURCE_DATE_EPOCH": "1000000000"})
    assert given.returncode == 0, given.stderr[-3000:]
    assert "<lastmod>2001-09-09</lastmod>" in (tmp_path / "given" / "sitemap.xml").read_text(), "a caller's date wins"
