"""The project's own site in a real browser, as a reader uses it: navigation, search (typed
and pasted), diagnosis, no console errors, nothing loaded from other hosts; on the MkDocs build
and on the Zensical build (`make site-zensical`; test_browser_engines.py compares their search
results). Page layout and accessibility (axe-core on every page) are in test_browser_pages.py."""

from __future__ import annotations

import pytest

from .browser import WatchedPage, browser, serve
from .search_queries import PASTED, QUESTIONS, SEED_QUESTIONS, TYPED
from .site_build import REPO

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page(built_site):
    label = "-zensical" if built_site.name == "site-zensical" else ""
    with serve(built_site) as base_url, browser() as chromium:
        yield WatchedPage(chromium.new_page(viewport={"width": 1280, "height": 900}), base_url, label)


def test_home_to_hub_to_entry(page):
    page.page.goto(page.base_url)
    page.page.click("article a[href$='categories/distributed/']")
    page.page.wait_for_url("**/categories/distributed/")
    assert page.page.inner_text("article h1").rstrip("¶") == "Distributed training"
    page.page.click("article table a[href$='failures/nccl-watchdog-timeout/']")
    page.page.wait_for_url("**/failures/nccl-watchdog-timeout/")
    assert page.page.inner_text("article h1").startswith("NCCL watchdog timeout")
    page.screenshot("entry-nccl-watchdog-timeout")
    assert page.errors == [] and page.foreign_requests == []


def search_results(page: WatchedPage, query: str, paste: bool) -> list[tuple[str, bool]]:
    """(entry id, marked "matches this error") of each result, best first. The home page is loaded
    once and its search box reused: emptied, and its state cleared, before each query."""
    if page.page.url != page.base_url:
        page.page.goto(page.base_url)
    page.page.evaluate(
        """() => {
        document.querySelector('.fe-search__input').value = '';
        delete document.querySelector('[data-fe-search]').dataset.state;
    }"""
    )
    page.page.click(".fe-search__input")
    if paste:  # a paste is an input event without key presses
        page.page.evaluate(
            """query => {
            const input = document.querySelector('.fe-search__input');
            input.value = query;
            input.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertFromPaste', data: query}));
        }""",
            query,
        )
    else:
        page.page.type(".fe-search__input", query, delay=5)
    page.page.wait_for_selector("[data-fe-search][data-state=done]", timeout=15_000)
    return page.page.eval_on_selector_all(
        ".fe-search__item > a",
        "links => links.map(a => [a.href.split('?')[0].split('/').filter(Boolean).pop(), !!a.querySelector('.fe-search-badge')])",
    )


ALL_TYPED = TYPED + SEED_QUESTIONS + QUESTIONS


@pytest.mark.parametrize("query,expected", ALL_TYPED, ids=[query for query, _ in ALL_TYPED])
def test_typed_searches_list_the_entry_in_the_first_three(page, query, expected):
    found = [entry for entry, _ in search_results(page, query, paste=False)]
    assert expected & set(found[:3]), found[:8]
    assert page.errors == [] and page.foreign_requests == []


@pytest.mark.parametrize("query,expected", PASTED, ids=[query[:40] for query, _ in PASTED])
def test_a_pasted_error_line_lists_its_entry_first(page, query, expected):
    found = search_results(page, query, paste=True)
    assert tuple(found[0]) == (expected, True), found[:5]
    # No struck-through token lists ("Missing: ..."), whatever words the titles of results hold.
    assert "Missing:" not in page.page.inner_text("[data-fe-search]")
    assert page.page.query_selector_all("[data-fe-search] s, [data-fe-search] del") == []
    assert page.errors == [] and page.foreign_requests == []


def test_the_search_box_reads_queries_like_the_command_line(page):
    """The page's query reading (search.js) against generator/search.py's, on a shared table."""
    import json

    from generator.search import terms

    table = json.loads((REPO / "tests" / "fixtures" / "search" / "terms.json").read_text())
    page.page.goto(page.base_url)
    got = page.page.evaluate("queries => queries.map(query => FeSearch.terms(query))", [query for query, _ in table])
    assert got == [expected for _, expected in table]
    assert [terms(query) for query, _ in table] == [expected for _, expected in table]


def test_diagnose_names_the_right_entry(page):
    page.page.goto(page.base_url + "diagnose/")
    log = (REPO / "tests" / "fixtures" / "diagnose" / "real" / "nccl-timeout.log").read_text()
    page.page.fill("#fe-log", log)
    page.page.click("#fe-diagnose-form button[type=submit]")
    page.page.wait_for_selector("#fe-diagnose[data-state=done]")
    first = page.page.get_attribute("#fe-results > li:first-child", "data-entry")
    assert first == "nccl-watchdog-timeout"
    page.screenshot("diagnose-nccl-timeout")
    assert page.errors == [] and page.foreign_requests == []
