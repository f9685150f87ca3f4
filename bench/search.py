"""Benchmark: what the site's search costs a reader, in Chromium, at N synthetic entries.

    .venv/bin/python bench/search.py [N ...]      (default: 2000 10000)

Builds N synthetic entries with the project's mkdocs.yml (Pagefind indexes them after the
build), serves the site on 127.0.0.1 and, in Debian's Chromium, for three fresh pages:
- the bytes downloaded to load the home page, and then for the first query (typed in the
  header's search box), as response body sizes: as sent by a host that compresses text with
  gzip (as GitHub Pages and nginx do), and uncompressed;
- the time from the first key press to the first result shown.
Targets: at 2,000 entries at most 1 MB (page load plus first query) and 1.5 s; at 10,000 at
most 600 KB.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.synthetic import make_corpus  # noqa: E402
from tests.browser import CHROMIUM, CHROMIUM_ARGS, serve  # noqa: E402
from tests.site_build import build, make_project  # noqa: E402

QUERY = "OutOfMemoryError"


def measure(count: int) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch, "project")
        make_project(project, make_corpus(Path(scratch, "entries"), count))
        started = time.perf_counter()
        result = build(project, timeout=7200)  # 10,000 pages take a while on two cores
        build_seconds = time.perf_counter() - started
        if result.returncode != 0:
            raise SystemExit(result.stderr[-2000:])
        index_bytes = sum(path.stat().st_size for path in (project / "site" / "pagefind").rglob("*") if path.is_file())
        with serve(project / "site", compress=True) as base_url:
            rows = _visits(base_url)
    (load, raw_load), (query, raw_query), seconds = min(rows, key=lambda row: row[2])
    return (
        f"{count} entries: build {build_seconds:.0f} s, Pagefind index {index_bytes / 2**20:.1f} MiB on disk; "
        f"transferred (text gzip-compressed, as static hosts serve it): page load {load / 1024:.0f} KiB "
        f"+ first query {query / 1024:.0f} KiB = {(load + query) / 1024:.0f} KiB; uncompressed: "
        f"{raw_load / 1024:.0f} + {raw_query / 1024:.0f} = {(raw_load + raw_query) / 1024:.0f} KiB; "
        f"first result {seconds:.2f} s after the first key press (best of 3: "
        f"{', '.join(f'{row[2]:.2f}' for row in rows)})"
    )


def _visits(base_url: str) -> list[tuple[tuple[int, int], tuple[int, int], float]]:
    """Three first visits (empty caches): (sent, uncompressed) bytes for the home page and for
    the first query, and seconds from the first key press to the first result."""
    from playwright.sync_api import Response, sync_playwright

    rows = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(3):
            context = browser.new_context()
            page = context.new_page()
            responses: list[Response] = []  # Pagefind's worker fetches are reported on the page too

            def record(response: Response, responses: list[Response] = responses) -> None:
                responses.append(response)

            page.on("response", record)
            page.goto(base_url, wait_until="networkidle")
            page.wait_for_timeout(500)  # lets every response event of the load arrive
            loaded = len(responses)
            page.click(".md-search__input")
            started = time.perf_counter()
            page.keyboard.type(QUERY, delay=30)
            page.wait_for_selector("[data-fe-search][data-state=done] .md-search-result__item", timeout=60_000)
            seconds = time.perf_counter() - started - 0.03 * (len(QUERY) - 1)  # from the first key press
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(500)
            rows.append((_bytes(responses[:loaded]), _bytes(responses[loaded:]), seconds))
            context.close()
        browser.close()
    return rows


def _bytes(responses: list[Any]) -> tuple[int, int]:
    """Body bytes as sent (compressed when the server compressed them) and once decoded."""
    sent = sum(response.request.sizes()["responseBodySize"] for response in responses)
    decoded = 0
    for response in responses:
        with contextlib.suppress(Exception):  # a redirect has no body
            decoded += len(response.body())
    return sent, decoded


def main() -> None:
    counts = [int(arg) for arg in sys.argv[1:]] or [2000, 10000]
    for count in counts:
        print(measure(count), flush=True)


if __name__ == "__main__":
    main()
