"""The project's own site in a real browser, as a reader uses it: navigation, search (typed
and pasted), diagnosis, no console errors, nothing loaded from other hosts. Page layout and
accessibility (axe-core on every page) are in test_browser_pages.py."""

from __future__ import annotations

import pytest

from .browser import WatchedPage, browser, serve
from .site_build import REPO

pytestmark = pytest.mark.browser

OOM_FAMILY = {
    "cuda-oom-forward",
    "cuda-oom-backward",
    "cuda-memory-fragmentation",
    "caching-allocator-debugging",
    "cuda-memory-summary-reading",
    "activation-memory-spike",
    "cuda-error-out-of-memory",
}
# What readers type (identifiers, phrases, short words) and the entries of which one must be among
# the first three results.
TYPED = [
    ("CUBLAS_STATUS_ALLOC_FAILED", {"cublas-status-alloc-failed"}),
    ("ncclUnhandledCudaError", {"nccl-unhandled-cuda-error"}),
    ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError", {"torchrun-child-failed-error"}),
    ("torch.cuda.OutOfMemoryError", OOM_FAMILY),
    ("Tried to allocate", {"cuda-oom-forward"}),
    ("nccl timeout", {"nccl-watchdog-timeout"}),
    (
        "fsdp",
        {
            "fsdp-flat-param-mixed-dtype",
            "fsdp-flat-param-mixed-requires-grad",
            "fsdp-sharded-param-outside-forward",
            "fsdp-full-state-dict-oom-hang",
            "fsdp2-dtensor-mixed-tensor",
        },
    ),
    ("zero3 slow", {"deepspeed-zero3-slow-prefetch"}),
    ("nan loss", {"nan-loss-divergence"}),
    ("gradient overflow", {"fp16-loss-scale-collapse"}),
    ("Xid 79", {"gpu-fallen-off-bus"}),
    ("address already in use", {"rendezvous-address-in-use"}),
    ("device-side assert", {"device-side-assert-triggered"}),
    ("Expected to mark a variable ready only once", {"ddp-variable-marked-ready-twice"}),
    ("Must flatten tensors with uniform dtype", {"fsdp-flat-param-mixed-dtype"}),
    ("unrecognized arguments --local-rank", {"launcher-local-rank-argument-rejected"}),
    ("recompile limit", {"torch-compile-recompile-limit"}),
    ("graph break", {"torch-compile-graph-breaks"}),
    ("flash_attn undefined symbol", {"flash-attn-undefined-symbol"}),
    ("no kernel image", {"cuda-no-kernel-image"}),
    ("bus error shared memory", {"dataloader-shared-memory-exhausted"}),
    ("size mismatch for", {"checkpoint-size-mismatch", "deepspeed-zero3-empty-weights"}),
    ("weights not initialized", {"hf-weights-not-initialized"}),
    ("slurm oom", {"slurm-cgroup-oom-kill"}),
    ("expandable_segments", {"cuda-memory-fragmentation"}),
    ("IBV_WC_RETRY_EXC_ERR", {"nccl-remote-error-infiniband"}),
    ("Duplicate GPU detected", {"nccl-duplicate-gpu-detected"}),
    ("CUDA_DEVICE_MAX_CONNECTIONS", {"megatron-cuda-device-max-connections"}),
    ("Invalidate trace cache", {"zero3-trace-cache-invalidation"}),
    ("ncclSystemError", {"nccl-unhandled-system-error"}),
]
# Whole error lines, pasted: the entry that prints it must come first.
PASTED = [
    ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "cuda-oom-forward"),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "cuda-illegal-memory-access"),
    (
        "ValueError: Must flatten tensors with uniform dtype but got torch.bfloat16 and torch.float16",
        "fsdp-flat-param-mixed-dtype",
    ),
    (
        "[rank3]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
        "nccl-unhandled-system-error",
    ),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. "
        "port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
        "rendezvous-address-in-use",
    ),
    (
        "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM Killed.",
        "slurm-cgroup-oom-kill",
    ),
    (
        "RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory",
        "checkpoint-truncated-archive",
    ),
    (
        "[rank1]:[E1129 10:42:17.532806824 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=40211, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) ran for "
        "600043 milliseconds before timing out.",
        "nccl-watchdog-timeout",
    ),
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


def search_results(page: WatchedPage, query: str, paste: bool) -> list[tuple[str, bool]]:
    """(entry id, marked "matches this error") of each result, best first."""
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
    page.page.wait_for_selector("[data-fe-search][data-state=done]", timeout=15_000)
    return page.page.eval_on_selector_all(
        ".md-search-result__item > a",
        "links => links.map(a => [a.href.split('?')[0].split('/').filter(Boolean).pop(), !!a.querySelector('.fe-search-badge')])",
    )


@pytest.mark.parametrize("query,expected", TYPED, ids=[query for query, _ in TYPED])
def test_typed_searches_list_the_entry_in_the_first_three(page, query, expected):
    found = [entry for entry, _ in search_results(page, query, paste=False)]
    assert expected & set(found[:3]), found[:8]
    assert page.errors == [] and page.foreign_requests == []


@pytest.mark.parametrize("query,expected", PASTED, ids=[query[:40] for query, _ in PASTED])
def test_a_pasted_error_line_lists_its_entry_first(page, query, expected):
    found = search_results(page, query, paste=True)
    assert tuple(found[0]) == (expected, True), found[:5]
    assert "Missing" not in page.page.inner_text("[data-fe-search]")  # no struck-through token lists
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
