"""The weekly link check, against a server on this machine that answers 200, 404 or refuses HEAD."""

from __future__ import annotations

import http.server
import shutil
import threading

import pytest

from .site_build import FIXTURE_ENTRIES
from .test_cli import run


class Handler(http.server.BaseHTTPRequestHandler):
    def do_HEAD(self):
        if self.path == "/no-head":
            self.send_response(405)
        else:
            self.send_response(404 if self.path == "/gone" else 200)
        self.end_headers()

    def do_GET(self):
        self.send_response(404 if self.path == "/gone" else 200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_dead_links_are_reported_at_their_line(tmp_path, server):
    entries = tmp_path / "entries"
    shutil.copytree(FIXTURE_ENTRIES, entries)
    for name, path in (("alpha-failure", "/fine"), ("beta-failure", "/gone")):
        entry = next(entries.rglob(f"{name}.yaml"))
        text = entry.read_text()
        start = text.index("    url: ")
        end = text.index("\n", start)
        entry.write_text(text[:start] + f"    url: {server}{path}" + text[end:])
    gamma = next(entries.rglob("gamma-failure.yaml"))
    gamma.write_text(gamma.read_text().replace("https://example.org/gamma?a=1&b=<x>", f"{server}/no-head"))
    result = run("check-links", "entries", "--timeout", "5", cwd=tmp_path)
    assert result.returncode == 0, result.stderr  # reported, never failing
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("entries/memory/beta-failure.yaml:")
    assert ": warning: references[0].url: " in lines[0] and "answered HTTP 404 (dead)" in lines[0]
    assert result.stderr.strip() == "1 dead link, 0 unreachable"
    assert run("check-links", "entries", "--strict", "--timeout", "5", cwd=tmp_path).returncode == 1
    github = run("check-links", "entries", "--format", "github", "--timeout", "5", cwd=tmp_path).stdout
    assert github.startswith("::warning file=entries/memory/beta-failure.yaml,line=")


def test_links_that_get_no_answer_are_unreachable_not_dead(tmp_path):
    """Offline (here: a port nothing listens on), nothing is judged dead, and the check says why."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    entries = tmp_path / "entries"
    shutil.copytree(FIXTURE_ENTRIES, entries)
    for entry in entries.rglob("*-failure.yaml"):
        lines = entry.read_text().split("\n")
        entry.write_text(
            "\n".join(
                f"    url: http://127.0.0.1:{closed_port}/x" if line.startswith("    url: ") else line for line in lines
            )
        )
    result = run("check-links", "entries", "--strict", "--timeout", "5", cwd=tmp_path)
    assert result.returncode == 0, "unreachable links never fail the check"
    assert all(line.endswith("(unreachable)") for line in result.stdout.strip().splitlines())
    assert "0 dead links" in result.stderr and "is this machine offline? nothing was judged dead" in result.stderr
