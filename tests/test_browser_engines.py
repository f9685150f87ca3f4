"""The header search of both builds, MkDocs + Material and Zensical, in a real browser: every query
of the shared table, typed or pasted, lists the same results in the same order. Its own module: a
module's browser (test_browser_site.py's `page`) must be closed before another one starts."""

from __future__ import annotations

import pytest

from .browser import WatchedPage, browser, serve
from .search_queries import PASTED
from .test_browser_site import ALL_TYPED, search_results

pytestmark = pytest.mark.browser


def test_both_engines_give_the_same_search_results(project_site, zensical_site):
    """Every query of the table lists the same results on both builds; a difference names the query
    and the first result that differs."""
    queries = [(query, False) for query, _ in ALL_TYPED] + [(query, True) for query, _ in PASTED]
    with serve(project_site) as mkdocs_url, serve(zensical_site) as zensical_url, browser() as chromium:
        pages = [
            WatchedPage(chromium.new_page(viewport={"width": 1280, "height": 900}), url)
            for url in (mkdocs_url, zensical_url)
        ]
        for query, paste in queries:
            on_mkdocs, on_zensical = (search_results(page, query, paste) for page in pages)
            first = next((i for i, (a, b) in enumerate(zip(on_mkdocs, on_zensical)) if a != b), None)
            assert on_zensical == on_mkdocs, (
                f"{query!r}: result {first}: MkDocs {on_mkdocs[first : first + 1]}, Zensical {on_zensical[first : first + 1]}"
                if first is not None
                else f"{query!r}: MkDocs lists {len(on_mkdocs)} results, Zensical {len(on_zensical)}"
            )
        for page in pages:
            assert page.errors == [] and page.foreign_requests == []
