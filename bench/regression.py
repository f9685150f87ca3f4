"""How the shipped entries do on the regression set of real logs from public threads.

    .venv/bin/python bench/regression.py [--verbose]

Prints how many excerpts rank the expected entry first, how many rank another entry
first, how many match nothing, and the failures that have no entry yet (`expect: none`).
The excerpts taken by sampling (generic queries, every paste in the order found: `sampled:`)
are counted apart, all of them (those with no entry count as misses: the honest measure of
coverage and recall) and those with an entry; then a table per category, and every miss
with its reason (`wording`, `ranking`, `known`, `no entry`). An excerpt that cannot show its
failure names none: one that stops inside a traceback, before its error line, and one marked
`incomplete: no-error` (its error is past the excerpt, no line reports one). There, matching
nothing and saying so (`generator.incomplete`) is the right answer, counted as "said it stops"
and apart.
Then the closest-entries fallback, counted apart: on the excerpts that match nothing, and,
to measure the fallback itself, on every excerpt with an error line as if no signature
had matched (its search reads the words of the error lines, not the signatures' patterns).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from generator.closest import closest_entries  # noqa: E402
from generator.diagnose import scan_logs  # noqa: E402
from generator.incomplete import incomplete_log  # noqa: E402
from generator.loading import load_encyclopedia  # noqa: E402
from generator.search import SearchIndex  # noqa: E402
from generator.signature_index import SignatureIndex  # noqa: E402
from tests.regression_logs import load_cases  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="list every case")
    args = parser.parse_args()
    result = load_encyclopedia(REPO / "entries")
    if not result.ok:
        print("the shipped entries do not validate", file=sys.stderr)
        return 2
    index = SignatureIndex.from_encyclopedia(result.encyclopedia)
    search = SearchIndex.from_encyclopedia(result.encyclopedia)
    matcher = index.matcher()
    right, wrong, nothing, uncovered, said = [], [], [], [], []
    closest: dict[str, list[str]] = {}  # case -> the closest entries of its error lines
    for case in load_cases():
        found = scan_logs(matcher, [str(case.log)])
        ranking = [finding.entry_id for finding in index.triage(matcher.rank(found)).findings]
        closest[case.name] = [item.entry_id for item in closest_entries(search, matcher.error_lines(found))]
        first = ranking[0] if ranking else None
        notice = incomplete_log(matcher.tapped(found, "tail"), matcher.error_lines(found))
        if first is None and notice and (notice.kind == "traceback" or case.incomplete == notice.kind):
            said.append((case, first))
        elif not case.covered:
            uncovered.append((case, first))
        elif first in case.expect:
            right.append((case, first))
        elif first is None:
            nothing.append((case, first))
        else:
            wrong.append((case, first))
    covered = len(right) + len(wrong) + len(nothing)
    print(
        f"{covered} excerpts with an entry: {len(right)} rank it first, {len(wrong)} rank another first, "
        f"{len(nothing)} match nothing; {len(uncovered)} excerpts of failures without an entry; "
        f"{len(said)} cannot show their failure (they stop inside a traceback, or before any error "
        "line), which the tool says (set apart)"
    )
    for label, group in (("wrong first", wrong), ("nothing", nothing), ("no entry yet", uncovered)):
        for case, first in group:
            why = f" [{case.known_miss}]" if case.known_miss else f" [{case.failure}]" if case.failure else ""
            print(
                f"  {label}: {case.name} (expected {', '.join(case.expect) or 'none'}, got {first}){why} {case.origin}"
            )
    _sampled(right, wrong, nothing, uncovered, said, result.encyclopedia)
    covered_cases = [case for case, _ in right + wrong + nothing]
    share = max(covered, 1)
    print(
        f"first fit {len(right) / share:.1%}, wrong first {len(wrong) / share:.1%}, nothing {len(nothing) / share:.1%}"
    )
    print(f"closest entries on the {len(nothing)} that match nothing: " + _fallback([c for c, _ in nothing], closest))
    print(f"closest entries alone (signatures set aside) on all {covered}: " + _fallback(covered_cases, closest))
    if args.verbose:
        for case, first in right:
            print(f"  right: {case.name} -> {first}")
    return 0


def _sampled(right: list, wrong: list, nothing: list, uncovered: list, said: list, encyclopedia) -> None:
    """The figures of the excerpts taken by sampling, per category, and the size of the set."""
    groups = {"right": right, "wrong": wrong, "nothing": nothing, "no entry": uncovered, "said it stops": said}
    sampled = {label: [case for case, _ in group if case.sampled] for label, group in groups.items()}
    total = sum(len(group) for group in sampled.values())
    readable = total - len(sampled["said it stops"])  # excerpts that show their failure
    with_entry = readable - len(sampled["no entry"])
    everything = [case for group in groups.values() for case, _ in group]
    urls = {case.url.split("#")[0] for case in everything if case.url}
    repos = {"/".join(url.split("/")[3:5]) for url in urls}
    recent = sum(1 for case in everything if case.sampled and (case.posted or "") >= "2024")
    print(
        f"the set: {len(everything)} excerpts, {len(urls)} threads in {len(repos)} repositories; "
        f"{total} taken by sampling ({recent} posted 2024 or later)"
    )
    if not total:
        return
    right_n, said_n, wrong_n = len(sampled["right"]), len(sampled["said it stops"]), len(sampled["wrong"])
    print(
        f"sampled, all counted: {right_n} of {total} rank the right entry first ({right_n / total:.1%}), "
        f"{said_n} cannot show it and are said to ({said_n / total:.1%}): the right answer on "
        f"{right_n + said_n} ({(right_n + said_n) / total:.1%}); {wrong_n} another first ({wrong_n / total:.1%}), "
        f"{len(sampled['nothing'])} nothing, {len(sampled['no entry'])} have no entry "
        f"({len(sampled['no entry']) / total:.1%})"
    )
    print(
        f"sampled that show their failure: {right_n} of {readable} first ({right_n / max(readable, 1):.1%}); "
        f"with an entry: {right_n} of {with_entry} first ({right_n / max(with_entry, 1):.1%}), "
        f"wrong first {wrong_n / max(with_entry, 1):.1%}"
    )
    said_covered = sum(1 for case in sampled["said it stops"] if case.covered)
    print(
        f"sampled with an entry, those that cannot show it counted (said to, the right answer): "
        f"{right_n + said_covered} of {with_entry + said_covered} "
        f"({(right_n + said_covered) / max(with_entry + said_covered, 1):.1%}), "
        f"wrong first {wrong_n / max(with_entry + said_covered, 1):.1%}"
    )
    print(f"  {'category':<14} {'sampled':>7} {'first':>6} {'wrong':>6} {'nothing':>8} {'no entry':>9} {'stops':>6}")
    for category in sorted({_category(case, encyclopedia) for group in sampled.values() for case in group}):
        counts = [sum(1 for case in sampled[label] if _category(case, encyclopedia) == category) for label in groups]
        print(
            f"  {category:<14} {sum(counts):>7} {counts[0]:>6} {counts[1]:>6} {counts[2]:>8} {counts[3]:>9} {counts[4]:>6}"
        )
    reasons: dict[str, int] = {}
    for label in ("wrong", "nothing"):
        for case in sampled[label]:
            reason = (case.known_miss or "unexplained").split(":")[0]
            reasons[reason] = reasons.get(reason, 0) + 1
    reasons["no entry"] = len(sampled["no entry"])
    print("sampled misses by reason: " + ", ".join(f"{reason} {count}" for reason, count in sorted(reasons.items())))


def _category(case, encyclopedia) -> str:
    if case.category:
        return case.category
    entry = encyclopedia.entries.get(case.expect[0]) if case.expect else None
    return entry.category if entry else "?"


def _fallback(cases: list, closest: dict[str, list[str]]) -> str:
    first = sum(1 for case in cases if closest[case.name][:1] and closest[case.name][0] in case.expect)
    three = sum(1 for case in cases if set(closest[case.name]) & set(case.expect))
    offered = sum(1 for case in cases if closest[case.name])
    return f"offered on {offered}; the first fits on {first}, one of the (at most) three on {three}"


if __name__ == "__main__":
    sys.exit(main())
