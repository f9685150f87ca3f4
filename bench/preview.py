"""Benchmark: the contributor's live preview at N entries (`make serve`, i.e. `mkdocs serve --dirty`).

    .venv/bin/python bench/preview.py [N] [--full]

Starts the preview on N synthetic entries, waits for the first build, then edits one
entry's title three times, 4 s apart, and measures how long each edit takes to show
on that entry's page (polled over HTTP every 50 ms). With --full, also measures the plain
`mkdocs serve`, which rebuilds every page. Target at 2,000 entries: within 2 s.
"""

from __future__ import annotations

import socket
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.synthetic import make_corpus  # noqa: E402
from tests.site_build import make_project, start_preview  # noqa: E402

PAUSE = 4.0  # seconds between an edit showing and the next edit


def fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode("utf-8")
    except OSError:
        return ""


def wait_for(url: str, text: str, limit: float) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < limit:
        if text in fetch(url):
            return time.perf_counter() - started
        time.sleep(0.05)
    raise SystemExit(f"{text!r} never appeared at {url}")


def measure(project: Path, mode: list[str], edits: int) -> tuple[float, list[float]]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = start_preview(project, mode, port)
    url = f"http://127.0.0.1:{port}/encyclopedia/failures/synthetic-00007/"
    entry = next((project / "entries").rglob("synthetic-00007.yaml"))
    try:
        first = wait_for(url, "synthetic-00007", 1800)
        timings = []
        for number in range(edits):
            data = yaml.safe_load(entry.read_text())
            marker = f"Edited title {number}"
            data["title"] = f"{marker} {data['title']}"
            entry.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))
            timings.append(wait_for(url, marker, 600))
            time.sleep(PAUSE)  # a contributor reads the page before the next edit
        return first, timings
    finally:
        server.terminate()
        server.wait(timeout=60)


def main() -> None:
    count = int(next((arg for arg in sys.argv[1:] if arg.isdigit()), "2000"))
    with tempfile.TemporaryDirectory() as scratch:
        entries = make_corpus(Path(scratch, "entries"), count)
        project = Path(scratch, "project")
        make_project(project, entries)
        modes = [("preview (make serve)", ["--dirty", "--no-strict"], 3)]
        if "--full" in sys.argv:
            modes.append(("full rebuilds (make serve-full)", [], 1))
        print(f"{count} entries")
        for name, mode, edits in modes:
            first, timings = measure(project, mode, edits)
            shown = ", ".join(f"{seconds:.2f}" for seconds in timings)
            print(f"{name}: first build {first:.1f} s; edit shown after {shown} s")


if __name__ == "__main__":
    main()
