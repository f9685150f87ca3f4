"""Benchmark: how soon the site's search answers after a page loads, in Chromium, at N entries.

    .venv/bin/python bench/search.py [N]      (default: 2000)

Builds N synthetic entries with the project's mkdocs.yml, serves the site on
127.0.0.1, loads the home page in Debian's Chromium and times, from the load event,
until a query returns results (Material's search worker has fetched and indexed
search_index.json by then). Best of three fresh page loads. Target at 2,000: <= 1 s.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.synthetic import make_corpus  # noqa: E402
from tests.browser import CHROMIUM, CHROMIUM_ARGS, serve  # noqa: E402
from tests.site_build import build, make_project  # noqa: E402


def main() -> None:
    from playwright.sync_api import sync_playwright

    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch, "project")
        make_project(project, make_corpus(Path(scratch, "entries"), count))
        result = build(project)
        if result.returncode != 0:
            raise SystemExit(result.stderr[-2000:])
        index_bytes = (project / "site" / "search" / "search_index.json").stat().st_size
        timings = []
        with serve(project / "site") as base_url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for _ in range(3):
                page = browser.new_page()
                page.goto(base_url, wait_until="load")
                started = time.perf_counter()
                page.click(".md-search__input")
                page.keyboard.insert_text("OutOfMemoryError")
                page.wait_for_selector(".md-search-result__item", timeout=60_000)
                timings.append(time.perf_counter() - started)
                page.close()
            browser.close()
    print(
        f"{count} entries: search index {index_bytes / 1024:.0f} KiB "
        f"({index_bytes / count / 1024:.2f} KiB per entry); first results "
        f"{min(timings):.2f} s after the load event (best of 3: {', '.join(f'{t:.2f}' for t in timings)})"
    )


if __name__ == "__main__":
    main()
