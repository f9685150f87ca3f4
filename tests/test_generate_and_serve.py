"""The same pages as plain Markdown files, and the live preview reacting to an edited entry."""

from __future__ import annotations

import shutil
import socket
import time
import urllib.parse
import urllib.request

import pytest
import yaml

from .site_build import FIXTURE_ENTRIES, REPO, make_project, start_preview
from .test_cli import run

pytestmark = pytest.mark.build


def test_generate_writes_markdown_pages_and_api(tmp_path):
    shutil.copytree(FIXTURE_ENTRIES, tmp_path / "entries")
    result = run("generate", "--out", "out", "--repo-url", "https://example.org/repo", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    for path in (
        "index.md",
        "failures/alpha-failure/index.md",
        "tags/index.md",
        "tags/alpha-tag/index.md",
        "categories/index.md",
        "categories/memory/index.md",
        "symptoms.md",
        "signatures.md",
        "api/entries.json",
        "api/signatures.json",
        "failures/old-beta/index.html",
        "contributing/entry-format.md",
    ):
        assert (out / path).is_file(), path
    alpha = (out / "failures" / "alpha-failure" / "index.md").read_text()
    # The edit link is in the front matter, for engines that run no plugin (overrides/partials/actions.html).
    assert alpha.startswith(
        '---\nedit_url: "https://example.org/repo/edit/main/entries/memory/alpha-failure.yaml"\ntitle: '
    )
    tag_page = (out / "tags" / "alpha-tag" / "index.md").read_text()
    assert tag_page.startswith('---\nedit_url: ""\n')
    assert "[#alpha-tag](../../tags/alpha-tag/index.md)" in alpha
    assert "https://example.org/repo/edit/main/entries/memory/alpha-failure.yaml" in alpha
    gamma = (out / "failures" / "gamma-failure" / "index.md").read_text()
    assert "# &lt;script>alert('title')&lt;/script> Überlauf" in gamma


def test_generate_replaces_the_folder_and_refuses_invalid_entries(tmp_path):
    shutil.copytree(FIXTURE_ENTRIES, tmp_path / "entries")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "stale.md").write_text("old")
    assert run("generate", "--out", "out", cwd=tmp_path).returncode == 0
    assert not (tmp_path / "out" / "stale.md").exists()
    broken = tmp_path / "entries" / "memory" / "beta-failure.yaml"
    broken.write_text(broken.read_text().replace("severity: medium", "severity: huge"))
    result = run("generate", "--out", "out", cwd=tmp_path)
    assert result.returncode == 1 and "beta-failure.yaml:5:11" in result.stdout
    assert (tmp_path / "out" / "failures" / "alpha-failure" / "index.md").is_file()  # the old output is intact


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode("utf-8")
    except OSError:
        return None


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.3)
    return False


@pytest.mark.parametrize("mode", [[], ["--dirty", "--no-strict"]], ids=["full", "preview"])  # as make serve runs it
def test_serve_rebuilds_when_an_entry_changes(tmp_path, mode):
    project = tmp_path / "project"
    make_project(project, FIXTURE_ENTRIES)
    port = free_port()
    server = start_preview(project, mode, port)
    base_path = urllib.parse.urlsplit(yaml.safe_load((REPO / "mkdocs.yml").read_text())["site_url"]).path
    base = f"http://127.0.0.1:{port}{base_path}"
    try:
        assert wait_for(lambda: "Beta fragmentation" in (fetch(base + "failures/beta-failure/") or ""), 90)
        entry = project / "entries" / "memory" / "beta-failure.yaml"
        entry.write_text(entry.read_text().replace("title: Beta fragmentation", "title: Beta fragmentation, edited"))
        # The entry itself, an entry that links to it, and the hub of its tag all show the edit.
        for page in ("failures/beta-failure/", "failures/alpha-failure/", "tags/beta-tag/"):
            assert wait_for(lambda page=page: "Beta fragmentation, edited" in (fetch(base + page) or ""), 60), page
        # Pages the edit does not touch are still served.
        assert "gamma-failure" in (fetch(base + "categories/performance/") or "")
        assert not list((project / "docs").rglob("beta-failure*")), "nothing generated is written into docs/"
    finally:
        server.terminate()
        server.wait(timeout=20)


@pytest.mark.parametrize("mode", [[], ["--dirty", "--no-strict"]], ids=["full", "preview"])
def test_serve_shows_the_problems_of_an_invalid_entry_and_recovers(tmp_path, mode):
    """A mistake never stops or hangs the preview: the pages answer, the entry's page and the
    home page list the validator's lines, and the next valid save clears them."""
    project = tmp_path / "project"
    make_project(project, FIXTURE_ENTRIES)
    port = free_port()
    terminal = tmp_path / "serve.log"
    server = start_preview(project, mode, port, log=terminal)
    base_path = urllib.parse.urlsplit(yaml.safe_load((REPO / "mkdocs.yml").read_text())["site_url"]).path
    base = f"http://127.0.0.1:{port}{base_path}"
    page = base + "failures/beta-failure/"
    try:
        assert wait_for(lambda: "Beta fragmentation" in (fetch(page) or ""), 90)
        entry = project / "entries" / "memory" / "beta-failure.yaml"
        valid = entry.read_text()
        entry.write_text(valid.replace("severity: medium", "severity: huge"))
        shown = "entries/memory/beta-failure.yaml:5:11: error[FE203]: severity:"
        assert wait_for(lambda: shown in (fetch(page) or ""), 60), "the entry's page lists the problem"
        assert shown in (fetch(base) or ""), "so does the home page"
        assert "Beta fragmentation" in (fetch(page) or ""), "with the last valid version below"
        entry.write_text(valid.replace("title: Beta fragmentation", "title: Beta fragmentation, fixed"))
        assert wait_for(lambda: "Beta fragmentation, fixed" in (fetch(page) or ""), 60)
        assert wait_for(lambda: "problem(s) in the entries" not in (fetch(page) or "") + (fetch(base) or ""), 60)
        printed = terminal.read_text()
        assert shown in printed, "the terminal shows the validator's lines too"
        if mode:  # the preview names the pages of the entries an edit changed
            assert f"edited {page}" in printed
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_a_preview_that_starts_on_a_broken_entry_shows_the_rest_and_the_problems(tmp_path):
    """`make serve` with an invalid entry from the start: the other entries are shown, the broken
    entry's address answers with the validator's lines, and the first valid save shows it."""
    project = tmp_path / "project"
    make_project(project, FIXTURE_ENTRIES)
    entry = project / "entries" / "memory" / "beta-failure.yaml"
    valid = entry.read_text()
    entry.write_text(valid.replace("severity: medium", "severity: huge"))
    port = free_port()
    server = start_preview(project, ["--dirty", "--no-strict"], port, log=tmp_path / "serve.log")
    base_path = urllib.parse.urlsplit(yaml.safe_load((REPO / "mkdocs.yml").read_text())["site_url"]).path
    base = f"http://127.0.0.1:{port}{base_path}"
    shown = "entries/memory/beta-failure.yaml:5:11: error[FE203]: severity:"
    try:
        assert wait_for(lambda: shown in (fetch(base) or ""), 90), "the home page lists the problem"
        assert "Alpha failure with CUDA out of memory" in (fetch(base + "failures/alpha-failure/") or "")
        broken = fetch(base + "failures/beta-failure/") or ""
        assert shown in broken and "no valid version yet" in broken
        entry.write_text(valid)
        assert wait_for(lambda: "Beta fragmentation" in (fetch(base + "failures/beta-failure/") or ""), 60)
        assert wait_for(lambda: "problem(s) in the entries" not in (fetch(base) or ""), 60)
    finally:
        server.terminate()
        server.wait(timeout=20)
