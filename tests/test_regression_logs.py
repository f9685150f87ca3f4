"""Real logs from public threads rank the right entry first, in the CLI's matcher and the page's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.diagnose import diagnose, scan_logs
from generator.incomplete import incomplete_log
from generator.signature_index import SignatureIndex

from .regression_logs import PRODUCED, THREADS, load_cases
from .site_build import REPO

CASES = load_cases()


@pytest.fixture(scope="module")
def shipped():
    from generator.loading import load_encyclopedia

    result = load_encyclopedia(REPO / "entries")
    assert result.ok, "\n".join(problem.format() for problem in result.problems[:20])
    index = SignatureIndex.from_encyclopedia(result.encyclopedia)
    return result.encyclopedia, (index.matcher(), index)


def cli_ranking(matcher, log: Path) -> list[str]:
    matcher, index = matcher
    return [finding.entry_id for finding in index.triage(diagnose(matcher, [str(log)])).findings]


def cli_cut(matcher, log: Path) -> tuple[str, int, str] | None:
    """The CLI's notice of a log that cannot show its failure, said only when nothing matched:
    (kind, line, text), as in its JSON report."""
    matcher, index = matcher
    found = scan_logs(matcher, [str(log)])
    if index.triage(matcher.rank(found)).findings:
        return None
    cut = incomplete_log(matcher.tapped(found, "tail"), matcher.error_lines(found))
    return (cut.kind, cut.line, cut.text) if cut else None


def test_every_case_names_its_origin_and_a_known_entry(shipped):
    encyclopedia, _ = shipped
    for folder in (THREADS, PRODUCED):
        logs = {path.stem for path in folder.glob("*.log")}
        sidecars = {path.stem for path in folder.glob("*.yaml")}
        assert logs == sidecars, f"{folder.name}: each <case>.log needs its <case>.yaml, and the reverse"
    assert len({case.name for case in CASES}) == len(CASES), "case names are unique across folders"
    for case in CASES:
        if case.log.parent == THREADS:
            assert case.url and case.url.startswith(("https://", "http://")), case.name
        else:  # printed here: the release, the command and the script that printed it
            assert case.made_with and case.command, case.name
            assert case.log.with_suffix(".py").is_file(), f"{case.name}: the script that printed the log"
        assert case.log.stat().st_size > 0, case.name
        unknown = [entry_id for entry_id in case.expect if entry_id not in encyclopedia.entries]
        assert not unknown, f"{case.name}: no entry {unknown}"


def _marked(case):
    """A known miss must keep missing (strict): when it starts to pass, its note goes."""
    marks = [pytest.mark.xfail(reason=case.known_miss, strict=True)] if case.known_miss else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_marked(case) for case in CASES if case.covered])
def test_the_expected_entry_ranks_first(shipped, case):
    _, matcher = shipped
    ranking = cli_ranking(matcher, case.log)
    assert ranking, f"{case.name}: nothing matched ({case.origin})"
    assert ranking[0] in case.expect, f"{case.name}: {ranking[0]} ranked first, expected {case.expect} ({case.origin})"


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_an_excerpt_that_cannot_show_its_failure_is_said_to(shipped, case):
    """Exactly the cases marked `incomplete: traceback` are said to stop inside one: each mark is
    checked, and that notice on any other case (a new case, a change of the rule) asks for a look.
    A case marked `incomplete: no-error` (its error is past the excerpt and no line reports one)
    gets the notice that no line reports an error; unmarked cases may get it too (a hang, a slow run)."""
    _, matcher = shipped
    cut = cli_cut(matcher, case.log)
    kind = cut[0] if cut else None
    assert case.incomplete in (None, "traceback", "no-error"), case.name
    if case.incomplete:
        assert kind == case.incomplete, (
            f"{case.name}: marked `incomplete: {case.incomplete}`, told {cut} ({case.origin})"
        )
    else:
        assert kind != "traceback", (
            f"{case.name}: the notice says it stops inside a traceback at {cut}; if it does, mark it"
        )


@pytest.mark.browser
def test_the_page_matcher_ranks_every_case_as_the_cli_does(shipped, project_site):
    """The diagnose page's matcher on the built site's API, each case pasted as text."""
    from .browser import page_rankings as rankings_on_the_page

    _, matcher = shipped
    texts = {case.name: case.log.read_text(encoding="utf-8", errors="replace") for case in CASES}
    on_page = rankings_on_the_page(project_site, texts, with_cuts=True)
    page_rankings = {name: ranking for name, (ranking, _) in on_page.items()}
    cli = {case.name: cli_ranking(matcher, case.log) for case in CASES}
    assert page_rankings == cli, json.dumps(
        {name: (page_rankings[name], cli[name]) for name in cli if page_rankings.get(name) != cli[name]}, indent=1
    )
    # Where nothing matched, the same notice of a log that cannot show its failure.
    page_cuts = {
        name: (cut["kind"], cut.get("line", 0), cut.get("text", ""))
        for name, (ranking, cut) in on_page.items()
        if cut and not ranking
    }
    cli_cuts = {case.name: cut for case in CASES if (cut := cli_cut(matcher, case.log))}
    assert page_cuts == cli_cuts, json.dumps(
        {
            name: (page_cuts.get(name), cli_cuts.get(name))
            for name in set(page_cuts) | set(cli_cuts)
            if page_cuts.get(name) != cli_cuts.get(name)
        },
        indent=1,
    )
