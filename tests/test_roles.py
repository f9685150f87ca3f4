"""Entry roles (`role:` failure, wrapper, umbrella): the ranking rules, on the matcher's
results and end to end on real logs with the shipped entries, and the validator's message."""

from __future__ import annotations

import json
import shutil

import pytest

from generator.matcher import Match, Result
from generator.triage import triage

from .regression_logs import PRODUCED
from .site_build import REPO
from .test_diagnose import diagnose

SHIPPED = REPO / "entries"
# Rank 1's Linear layer gets the wrong width; torchrun's ChildFailedError summary follows it.
SHAPE_UNDER_TORCHRUN = PRODUCED / "linear-shape-under-torchrun-torch-2-13.log"


def result(entry_id: str, signatures: int, *lines: int) -> Result:
    found = Result(entry_id, signatures=set(range(signatures)), primary=True)
    found.matches = [Match(line, f"line {line}", 0) for line in lines]
    found.evidence = {match.position() for match in found.matches}
    found.first = (0, lines[0])
    return found


def order(results: list[Result], roles: dict[str, str], causes=()) -> list[str]:
    return [finding.entry_id for finding in triage(results, list(causes), roles).findings]


def test_a_wrapper_ranks_below_a_failure_whatever_the_counts():
    results = [result("launcher", 5, 40, 41, 42, 43, 44), result("shape", 1, 3)]  # the matcher's order: by count
    diagnosis = triage(results, [], {"launcher": "wrapper"})
    assert [finding.entry_id for finding in diagnosis.findings] == ["shape", "launcher"]
    shape, launcher = diagnosis.findings
    assert launcher.reports == "shape" and shape.reported_by == ["launcher"]


def test_a_wrapper_ranks_below_an_umbrella_too():
    results = [result("launcher", 3, 9), result("generic", 1, 2)]
    assert order(results, {"launcher": "wrapper", "generic": "umbrella"}) == ["generic", "launcher"]


def test_an_umbrella_ranks_below_every_specific_failure():
    results = [result("generic", 4, 1, 2, 3, 4), result("illegal-access", 1, 5), result("oom", 1, 9)]
    assert order(results, {"generic": "umbrella"}) == ["illegal-access", "oom", "generic"]


def test_a_cause_does_not_lift_an_umbrella_above_a_specific_failure():
    """A `causes` link orders findings within a role, never across roles."""
    results = [result("specific", 2, 5), result("generic", 1, 2)]
    assert order(results, {"generic": "umbrella"}, causes=[("generic", "specific")]) == ["specific", "generic"]


def test_found_alone_an_umbrella_or_a_wrapper_is_the_diagnosis():
    assert order([result("generic", 1, 2)], {"generic": "umbrella"}) == ["generic"]
    diagnosis = triage([result("launcher", 2, 9)], [], {"launcher": "wrapper"})
    assert [finding.entry_id for finding in diagnosis.findings] == ["launcher"]
    assert diagnosis.findings[0].reports is None


# -- end to end: `mlfail diagnose` on real logs with the shipped entries ---------------------------


def test_the_launchers_summary_is_told_under_the_error_it_reports(tmp_path):
    found = diagnose(str(SHAPE_UNDER_TORCHRUN), cache=tmp_path, entries=SHIPPED)
    assert found.returncode == 0, found.stderr
    text = found.stdout.decode()
    numbered = [line for line in text.splitlines() if line[:1].isdigit()]
    assert numbered[0].startswith('1. "mat1 and mat2 shapes cannot be multiplied"')
    assert not any("ChildFailedError" in line for line in numbered), "the wrapper is not numbered on its own"
    assert "Reported by the launcher: torchrun ChildFailedError" in text

    as_json = json.loads(diagnose("--json", str(SHAPE_UNDER_TORCHRUN), cache=tmp_path, entries=SHIPPED).stdout)[
        "findings"
    ]
    first, launcher = as_json[0], as_json[-1]
    assert (first["id"], first["role"], first["evidence"]) == (
        "linear-mat1-mat2-shape-mismatch",
        "failure",
        "signature",
    )
    assert first["reported_by"] == ["torchrun-child-failed-error"]
    assert (launcher["id"], launcher["role"], launcher["reports"]) == (
        "torchrun-child-failed-error",
        "wrapper",
        "linear-mat1-mat2-shape-mismatch",
    )


def test_a_wrapper_found_alone_says_where_to_look(tmp_path):
    lines = SHAPE_UNDER_TORCHRUN.read_text().splitlines()
    summary = tmp_path / "summary.log"  # only torchrun's own part, as people often paste it
    summary.write_text("\n".join(lines[lines.index(next(line for line in lines if line.startswith("W1"))) :]) + "\n")
    text = diagnose(str(summary), cache=tmp_path, entries=SHIPPED).stdout.decode()
    assert "1. torchrun ChildFailedError" in text
    assert "A launcher's summary: the failure it reports printed nothing this tool knows here" in text


def test_an_umbrella_below_the_specific_error_and_alone_with_what_to_collect(tmp_path):
    specific = "RuntimeError: CUDA error: an illegal memory access was encountered"
    generic = "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error"
    both = tmp_path / "both.log"
    both.write_text(f"{generic}\n{specific}\n")
    found = json.loads(diagnose("--json", str(both), cache=tmp_path, entries=SHIPPED).stdout)["findings"]
    assert [item["id"] for item in found][:2] == ["cuda-illegal-memory-access", "nccl-unhandled-cuda-error"]
    assert found[1]["role"] == "umbrella"

    alone = tmp_path / "alone.log"
    alone.write_text(generic + "\n")
    text = diagnose(str(alone), cache=tmp_path, entries=SHIPPED).stdout.decode()
    assert text.startswith("1. ") and "nccl-unhandled-cuda-error" in text.splitlines()[1]
    assert "A generic error code with many causes, and no specific cause was found here" in text
    assert "   Collect next: " in text


def test_a_wrong_role_is_one_line_with_its_place(tmp_path):
    entries = tmp_path / "entries"
    shutil.copytree(SHIPPED, entries)
    path = entries / "distributed" / "torchrun-child-failed-error.yaml"
    path.write_text(path.read_text().replace("role: wrapper", "role: wraper"))
    found = diagnose(str(SHAPE_UNDER_TORCHRUN), cache=tmp_path, entries=entries)
    line = next(line for line in found.stderr.decode().splitlines() if "error[" in line)
    number = path.read_text().splitlines().index("role: wraper") + 1
    assert line == (
        f"{path}:{number}:7: error[FE203]: role: must be one of 'failure', 'wrapper' or 'umbrella', found 'wraper'"
    )


@pytest.mark.browser
def test_the_page_tells_roles_as_the_terminal_does(project_site):
    from .browser import WatchedPage, browser, serve

    with serve(project_site) as base_url, browser() as chromium:
        page = WatchedPage(chromium.new_page(), base_url)
        page.page.goto(base_url + "diagnose/")
        page.page.fill("#fe-log", SHAPE_UNDER_TORCHRUN.read_text())
        page.page.click("#fe-diagnose-form button[type=submit]")
        page.page.wait_for_selector("#fe-diagnose[data-state=done]")
        items = page.page.eval_on_selector_all("#fe-results > li", "items => items.map(item => item.dataset.entry)")
        assert items[0] == "linear-mat1-mat2-shape-mismatch" and "torchrun-child-failed-error" not in items
        reported = page.page.inner_text("#fe-results > li .fe-diagnose__reported")
        assert reported.startswith("Reported by the launcher: torchrun ChildFailedError")
        count = len(items)
        assert page.page.inner_text("#fe-status") == f"{count} matching failure{'s' if count > 1 else ''}, best first."

        page.page.fill("#fe-log", "NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled cuda error\n")
        page.page.click("#fe-diagnose-form button[type=submit]")
        page.page.wait_for_selector("#fe-diagnose[data-state=done]")
        notes = page.page.inner_text("#fe-results > li").splitlines()
        assert any(note.startswith("A generic error code with many causes, and no specific") for note in notes)
        assert any(note.startswith("Collect next: ") for note in notes)
        assert page.errors == []
