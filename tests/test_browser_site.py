"""The project's own site in a real browser, as a reader uses it: navigation, search (typed
and pasted), diagnosis, no console errors, nothing loaded from other hosts, and no serious
or critical accessibility violations (axe-core)."""

from __future__ import annotations

import pytest

from .browser import WatchedPage, browser, serve
from .site_build import REPO

A11Y_PAGES = ["", "failures/nccl-watchdog-timeout/", "tags/nccl/", "categories/memory/", "symptoms/", "diagnose/"]
OOM_FAMILY = {
    "cuda-oom-forward",
    "cuda-oom-backward",
    "cuda-memory-fragmentation",
    "caching-allocator-debugging",
    "cuda-memory-summary-reading",
    "activation-memory-spike",
}
SEARCHES = [  # (what a reader types or pastes, entries of which one must be among the first three results)
    ("CUBLAS_STATUS_ALLOC_FAILED", {"cublas-status-alloc-failed"}),
    ("ncclUnhandledCudaError", {"nccl-unhandled-cuda-error"}),
    ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError", {"torchrun-child-failed-error"}),
    ("torch.cuda.OutOfMemoryError", OOM_FAMILY),
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", OOM_FAMILY),
]


@pytest.fixture(scope="module")
def page(project_site):
    with serve(project_site) as base_url, browser() as chromium:
        yield WatchedPage(chromium.new_page(viewport={"width": 1280, "height": 900}), base_url)


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


def search_results(page: WatchedPage, query: str, paste: bool) -> list[str]:
    page.page.goto(page.base_url)
    page.page.click(".md-search__input")
    if paste:  # a paste is an input event without key presses
        page.page.evaluate(
            """query => {
            const input = document.querySelector('.md-search__input');
            input.value = query;
            input.dispatchEvent(new InputEvent('input', {bubbles: true, inputType: 'insertFromPaste', data: query}));
        }""",
            query,
        )
    else:
        page.page.type(".md-search__input", query, delay=5)
    page.page.wait_for_selector(".md-search-result__item", timeout=10_000)
    links = page.page.eval_on_selector_all(".md-search-result__item > a", "links => links.map(a => a.href)")
    return [link.split("?")[0].rstrip("/").rsplit("/", 1)[-1] for link in links]


@pytest.mark.parametrize("paste", [False, True], ids=["typed", "pasted"])
@pytest.mark.parametrize("query,expected", SEARCHES, ids=[query for query, _ in SEARCHES])
def test_search_finds_entries_by_their_signatures(page, query, expected, paste):
    found = search_results(page, query, paste)
    assert expected & set(found[:3]), found[:8]
    assert page.errors == [] and page.foreign_requests == []


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


@pytest.mark.parametrize("path", A11Y_PAGES, ids=[path or "home" for path in A11Y_PAGES])
def test_no_serious_accessibility_violations(page, path):
    from axe_playwright_python.sync_playwright import Axe

    page.page.goto(page.base_url + path)
    violations = [
        (violation["id"], violation["impact"], [node["target"] for node in violation["nodes"]][:3])
        for violation in Axe().run(page.page).response["violations"]
        if violation["impact"] in ("serious", "critical")
    ]
    assert violations == []
    page.screenshot(f"a11y-{(path or 'home').strip('/').replace('/', '-')}")
