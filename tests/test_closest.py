"""The fallback when no signature matches: the closest entries to a log's error lines, marked as
such, the same in the terminal, the Python API and the diagnose page."""

from __future__ import annotations

import io
import json

import pytest

from generator.closest import CLOSEST_SHOWN, ERROR_LINES_READ, HEADING, closest_entries, recent_error_lines
from generator.limits import ERROR_LINES_KEPT
from generator.signature_index import SignatureIndex

from .regression_logs import load_cases
from .site_build import REPO
from .test_diagnose import diagnose

SHIPPED = REPO / "entries"
# A resumed run whose checkpoint folder has no trainer state: no entry prints this line.
RESUME = """\
[INFO|trainer.py:2399] 2026-12-02 01:02:03,456 >> Loading model from out/checkpoint-500.
Traceback (most recent call last):
  File "/w/train.py", line 88, in <module>
    trainer.train(resume_from_checkpoint="out/checkpoint-500")
FileNotFoundError: [Errno 2] No such file or directory: 'out/checkpoint-500/trainer_state.json'
"""


@pytest.fixture(scope="module")
def shipped():
    from generator.loading import load_encyclopedia
    from generator.search import SearchIndex

    result = load_encyclopedia(SHIPPED)
    assert result.ok
    return SignatureIndex.from_encyclopedia(result.encyclopedia), SearchIndex.from_encyclopedia(result.encyclopedia)


def error_lines(index: SignatureIndex, text: str):
    matcher = index.matcher()
    return matcher.error_lines(matcher.scan(io.BytesIO(text.encode())))


@pytest.mark.parametrize(
    "line,is_error",
    [
        ("RuntimeError: CUDA error: an illegal memory access was encountered", True),
        ("[rank1]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970", True),
        ("srun: error: gpu-12: task 3: Exited with exit code 1", True),
        ("train.py FAILED", True),
        ("Killed", True),
        ("Segmentation fault (core dumped)", True),
        ("terminate called after throwing an instance of 'c10::Error'", True),
        ("{'eval_loss': 0.41, 'eval_error_rate': 0.12, 'epoch': 3.0}", False),
        ("UserWarning: TypedStorage is deprecated.", False),
        ("Error", False),
        ("killed_workers=0 errors=0", False),
    ],
)
def test_what_counts_as_an_error_line(shipped, line, is_error):
    assert bool(error_lines(shipped[0], line + "\n")) is is_error


def test_the_last_error_lines_are_kept_bounded_and_read_last_first(shipped):
    text = "".join(f"ValueError: bad value {number}\n" for number in range(ERROR_LINES_KEPT * 3))
    kept = error_lines(shipped[0], text + "ValueError: bad value 1\n")
    assert len(kept) == ERROR_LINES_KEPT
    assert kept[-1].line == ERROR_LINES_KEPT * 3 + 1
    recent = recent_error_lines(kept)
    assert len(recent) == ERROR_LINES_READ and recent[0].line == ERROR_LINES_KEPT * 3 + 1
    assert len({match.text for match in recent}) == ERROR_LINES_READ, "repeated lines are looked up once"


def test_a_line_of_common_words_offers_nothing(shipped):
    index, search = shipped
    assert closest_entries(search, error_lines(index, "RuntimeError: error\n")) == []


def test_the_cli_marks_the_closest_entries_and_exits_1(tmp_path):
    log = tmp_path / "resume.log"
    log.write_text(RESUME)
    found = diagnose(str(log), cache=tmp_path / "cache", entries=SHIPPED)
    assert found.returncode == 1
    text = found.stdout.decode()
    assert text.startswith("No known failure signature found in the log.\n\n" + HEADING + ":\n")
    assert "   found from line 5: FileNotFoundError: [Errno 2] No such file or directory:" in text
    items = json.loads(diagnose("--json", str(log), cache=tmp_path / "cache", entries=SHIPPED).stdout)["findings"]
    assert 1 <= len(items) <= CLOSEST_SHOWN
    assert {item["evidence"] for item in items} == {"closest"}
    assert items[0]["matches"] == [{"line": 5, "text": RESUME.splitlines()[4]}]


def test_a_signature_match_is_never_mixed_with_closest_entries(tmp_path):
    log = tmp_path / "disk.log"
    log.write_text(RESUME + "OSError: [Errno 28] No space left on device\n")
    items = json.loads(diagnose("--json", str(log), cache=tmp_path / "cache", entries=SHIPPED).stdout)["findings"]
    assert items and {item["evidence"] for item in items} == {"signature"}


def test_the_api_returns_the_same_closest_entries(tmp_path, shipped, monkeypatch):
    from generator.api import diagnose_text

    monkeypatch.setenv("MLFAIL_CACHE_DIR", str(tmp_path))
    found = diagnose_text(RESUME, entries=SHIPPED)
    expected = closest_entries(shipped[1], error_lines(shipped[0], RESUME))
    assert [(failure.id, failure.evidence) for failure in found] == [(item.entry_id, "closest") for item in expected]
    assert found[0].lines[0].line == 5


@pytest.mark.browser
def test_the_page_finds_the_same_closest_entries_as_the_cli(shipped, project_site):
    """Every log of the regression set: the page's error lines and closest entries (its own
    search over api/search-index.json) equal the terminal's; and the page shows them marked."""
    from .browser import WatchedPage, browser, serve

    index, search = shipped
    texts = {case.name: case.log.read_text(encoding="utf-8", errors="replace") for case in load_cases()}
    texts["resume"] = RESUME
    expected = {}
    for name, text in texts.items():
        lines = error_lines(index, text)
        expected[name] = {
            "lines": [[match.line, match.text] for match in lines],
            "closest": [[item.entry_id, item.line.line] for item in closest_entries(search, lines)],
        }
    with serve(project_site) as base_url, browser() as chromium:
        page = WatchedPage(chromium.new_page(), base_url)
        page.page.goto(base_url + "diagnose/")
        page.page.add_script_tag(url=base_url + "assets/javascripts/diagnose-matcher.js")
        on_page = page.page.evaluate(
            """async texts => {
            const signatures = await (await fetch('../api/signatures.json')).json();
            const index = await (await fetch('../api/search-index.json')).json();
            const matcher = new DiagnoseMatcher.Matcher(signatures, []);
            const out = {};
            for (const [name, text] of Object.entries(texts)) {
                const lines = matcher.scan(text).errorLines;
                out[name] = {lines: lines.map(l => [l.line, l.text]),
                             closest: FeSearch.closestEntries(index, lines).map(c => [c.id, c.line])};
            }
            return out;
        }""",
            texts,
        )
        differing = {name: (on_page[name], expected[name]) for name in texts if on_page[name] != expected[name]}
        assert not differing, json.dumps(differing, indent=1)[:4000]
        assert sum(1 for value in expected.values() if value["closest"]) > 100, "the comparison is not empty"

        page.page.fill("#fe-log", RESUME)
        page.page.click("#fe-diagnose-form button[type=submit]")
        page.page.wait_for_selector("#fe-diagnose[data-state=done]")
        assert page.page.inner_text("#fe-status") == "No known failure signature found in this log."
        assert page.page.inner_text(".fe-diagnose__closest-heading") == HEADING + ":"
        shown = page.page.eval_on_selector_all(
            "#fe-results > li[data-evidence=closest]", "items => items.map(item => item.dataset.entry)"
        )
        assert shown == [entry for entry, _ in expected["resume"]["closest"]]
        assert page.errors == []
