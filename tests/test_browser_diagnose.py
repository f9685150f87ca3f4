"""The diagnose page in a real browser: the same rankings as the CLI on the shared fixture,
nothing sent anywhere, and a 20 MB log that leaves the page responsive."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .browser import WatchedPage, browser, serve
from .test_diagnose import CASES, FIXTURES

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page(fixture_site):
    with serve(fixture_site) as base_url, browser() as chromium:
        watched = WatchedPage(chromium.new_page(), base_url)
        watched.page.goto(base_url + "diagnose/")
        yield watched


def diagnose_file(page: WatchedPage, path: Path, timeout: float = 30_000) -> list[dict]:
    page.page.set_input_files("#fe-file", str(path))
    page.page.wait_for_selector("#fe-diagnose[data-state=done]", timeout=timeout)
    return results(page)


def results(page: WatchedPage) -> list[dict]:
    return page.page.eval_on_selector_all(
        "#fe-results > li[data-entry]",
        """items => items.map(item => ({
        id: item.dataset.entry,
        first: Number(item.querySelector('.fe-diagnose__score').textContent.match(/line (\\d+)/)[1]),
        href: item.querySelector('a').getAttribute('href'),
        marked: Array.from(item.querySelectorAll('mark')).map(mark => mark.textContent),
    }))""",
    )


@pytest.mark.parametrize("case", CASES, ids=[case["log"] for case in CASES])
def test_same_ranking_as_the_cli(page, case):
    found = diagnose_file(page, FIXTURES / case["log"])
    assert [item["id"] for item in found] == case["ranking"]
    assert {item["id"]: item["first"] for item in found} == case["first_lines"]
    assert page.errors == [] and page.foreign_requests == []


def test_pasted_log_and_highlighted_lines(page):
    page.page.set_input_files("#fe-file", [])
    page.page.fill("#fe-log", (FIXTURES / "alpha.log").read_text())
    page.page.click("#fe-diagnose-form button[type=submit]")
    page.page.wait_for_selector("#fe-diagnose[data-state=done]")
    found = results(page)
    assert [item["id"] for item in found] == ["alpha-failure", "beta-failure"]
    assert found[0]["marked"] == [
        "Tried to allocate 3.50 GiB (alpha)",
        "AlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED",
    ]
    assert found[0]["href"].endswith("/failures/alpha-failure/")
    assert "nothing is uploaded" in page.page.inner_text("article").lower()
    page.screenshot("diagnose-pasted")


def paste(page: WatchedPage, text: str) -> list[dict]:
    page.page.fill("#fe-log", text)
    page.page.click("#fe-diagnose-form button[type=submit]")
    page.page.wait_for_selector("#fe-diagnose[data-state=done]")
    return results(page)


def test_results_read_as_a_triage(page):
    """Cause first with its effect marked, the rank that started it and the collateral, quick
    answer and fix, each matched line shown once."""
    page.page.set_input_files("#fe-file", [])
    found = paste(page, (FIXTURES / "ranks.log").read_text() + "[rank0]: Beta overflow. Skipping step again\n")
    assert [item["id"] for item in found] == ["alpha-failure", "beta-failure"]
    summary = page.page.inner_text("#fe-summary")
    assert summary.startswith("Rank 2 started it: Alpha failure with CUDA out of memory.\n"), summary
    assert "Why: they failed on their own" in summary and "Verdict: " in summary
    beta = page.page.query_selector("#fe-results > li[data-entry=beta-failure]")
    assert "A consequence of “Alpha failure with CUDA out of memory” above" in beta.inner_text()
    assert "Collateral: seen only on other ranks than rank 2, which started it." in beta.inner_text()
    alpha = page.page.query_selector("#fe-results > li[data-entry=alpha-failure]")
    assert alpha.query_selector(".fe-diagnose__answer").inner_text() == (
        "Quick answer: The alpha model runs out of GPU memory on its first step."
    )
    assert alpha.query_selector(".fe-diagnose__fix").inner_text().startswith("What to do: Lower the batch size")
    shown = page.page.eval_on_selector_all(".fe-diagnose__number", "nodes => nodes.map(n => n.textContent)")
    assert len(shown) == len(set(shown)), "a matched line is shown once"
    page.screenshot("diagnose-triage")


def test_the_same_line_under_two_results_is_shown_once(page):
    page.page.set_input_files("#fe-file", [])
    paste(page, "AlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED BetaFragmentationWarning\n")
    beta = page.page.query_selector("#fe-results > li[data-entry=beta-failure]")
    assert beta.query_selector(".fe-diagnose__lines") is None
    assert beta.query_selector(".fe-diagnose__again").inner_text() == "Also matched on line 1, shown above."


def test_copy_as_markdown(page):
    page.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.page.set_input_files("#fe-file", [])
    paste(page, (FIXTURES / "ranks.log").read_text())
    page.page.click("#fe-copy")
    page.page.wait_for_function("document.getElementById('fe-copy').textContent === 'Copied'")
    copied = page.page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith("## Diagnosis\n\nRank 2 started it: Alpha failure with CUDA out of memory.\n   - Why: ")
    assert "1. **[Alpha failure with CUDA out of memory](" in copied and "/failures/alpha-failure/)** (high)" in copied
    assert "   - A consequence of: Alpha failure with CUDA out of memory" in copied
    assert "   line 1: [rank2]:[E1129 10:00:01] torch.OutOfMemoryError: Tried to allocate 2.00 GiB (alpha)" in copied


def test_a_log_that_stops_inside_a_traceback_is_said_to_and_copied(page):
    """Nothing matched, and the paste ends in a traceback's frames: the page says where it stops and
    what to paste next, as `mlfail diagnose` does (generator/incomplete.py), also in the copy."""
    page.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.page.set_input_files("#fe-file", [])
    text = 'Traceback (most recent call last):\n  File "train.py", line 9, in <module>\n    main()\n'
    assert paste(page, text) == []
    notice = page.page.inner_text("#fe-results > li[data-cut=traceback]")
    assert notice.startswith('The log stops inside a traceback\n\nits last frame, line 2: File "train.py", line 9')
    assert "diagnose the lines that follow" in notice
    page.page.click("#fe-copy")
    page.page.wait_for_function("document.getElementById('fe-copy').textContent === 'Copied'")
    copied = page.page.evaluate("navigator.clipboard.readText()")
    assert copied.startswith(
        "## Diagnosis\n\nNo known failure signature found. The log stops inside a traceback (its last frame, line 2)."
    )
    assert page.errors == [] and page.foreign_requests == []


def test_a_log_in_which_no_line_reports_an_error_is_said_to(page):
    page.page.set_input_files("#fe-file", [])
    assert paste(page, "epoch 1 step 10 loss 2.31\nepoch 1 step 20 loss 2.29\n") == []
    notice = page.page.inner_text("#fe-results > li[data-cut=no-error]")
    assert notice.startswith("No line of this log reports an error") and "Slurm's .err file" in notice
    assert page.errors == [] and page.foreign_requests == []


def test_newly_pasted_text_wins_over_a_chosen_file_and_the_file_can_be_cleared(page):
    found = diagnose_file(page, FIXTURES / "tie.log")
    assert [item["id"] for item in found] == ["beta-failure", "gamma-failure"]
    assert page.page.is_visible("#fe-file-clear")
    assert [item["id"] for item in paste(page, "AlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED\n")] == [
        "alpha-failure"
    ]
    page.page.click("#fe-file-clear")
    assert page.page.eval_on_selector("#fe-file", "input => input.files.length") == 0
    assert not page.page.is_visible("#fe-file-clear")


def test_hostile_log_text_stays_text(page):
    page.page.set_input_files("#fe-file", [])
    page.page.fill("#fe-log", "GammaError: <script>window.hacked = 1</script><img src=x onerror='window.hacked=2'>\n")
    page.page.click("#fe-diagnose-form button[type=submit]")
    page.page.wait_for_selector("#fe-diagnose[data-state=done]")
    assert page.page.evaluate("window.hacked") is None
    assert page.page.query_selector("#fe-results img") is None


def test_twenty_megabyte_log_keeps_the_page_responsive(page, tmp_path):
    big = tmp_path / "big.log"
    line = "[rank3]:[W1129 10:00:00.000000 ProcessGroupNCCL.cpp:1234] Warning: barrier took 12 ms on device cuda:3\n"
    with open(big, "w") as handle:
        for _ in range(20 * 1024 * 1024 // len(line)):
            handle.write(line)
        handle.write("AlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED\n")
    # Count animation frames while the worker scans: a blocked main thread would draw none.
    page.page.evaluate("""() => { window.frames_seen = 0;
        const tick = () => { window.frames_seen++; if (window.counting) requestAnimationFrame(tick); };
        window.counting = true; requestAnimationFrame(tick); }""")
    started = time.monotonic()
    found = diagnose_file(page, big, timeout=120_000)
    elapsed = time.monotonic() - started
    frames = page.page.evaluate("() => { window.counting = false; return window.frames_seen; }")
    assert [item["id"] for item in found] == ["alpha-failure"]
    assert frames >= max(5, elapsed * 5), f"only {frames} frames in {elapsed:.1f} s: the page was blocked"
    print(f"20 MB log diagnosed in the browser in {elapsed:.1f} s, {frames} frames drawn meanwhile")


def test_the_page_reads_lines_and_signatures_as_the_cli_does(page):
    """The shared table of generator/normalise.py, run through the page's own functions."""
    from .test_normalise import TABLE

    page.page.add_script_tag(url=page.base_url + "assets/javascripts/diagnose-matcher.js")
    got = page.page.evaluate(
        """table => ({
        text: table.text.map(([raw]) => DiagnoseMatcher.normaliseText(raw)),
        regex: table.regex.map(([raw]) => DiagnoseMatcher.normaliseRegex(raw)),
    })""",
        TABLE,
    )
    assert got == {"text": [read for _, read in TABLE["text"]], "regex": [read for _, read in TABLE["regex"]]}


def test_the_page_reads_ranks_as_the_cli_does(page):
    """The rank reader's table (generator/triage.py, through shared.js) on the same lines."""
    from .test_triage import RANK_CASES

    lines = [line for line, _ in RANK_CASES]
    found = page.page.evaluate("lines => lines.map(line => DiagnoseMatcher.rankOf(line))", lines)
    assert found == [rank for _, rank in RANK_CASES]
