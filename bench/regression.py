"""How the shipped entries do on the regression set of real logs from public threads.

    .venv/bin/python bench/regression.py [--verbose]

Prints how many excerpts rank the expected entry first, how many rank another entry
first, how many match nothing, and the failures that have no entry yet (`expect: none`).
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
    right, wrong, nothing, uncovered = [], [], [], []
    closest: dict[str, list[str]] = {}  # case -> the closest entries of its error lines
    for case in load_cases():
        found = scan_logs(matcher, [str(case.log)])
        ranking = [finding.entry_id for finding in index.triage(matcher.rank(found)).findings]
        closest[case.name] = [item.entry_id for item in closest_entries(search, matcher.error_lines(found))]
        first = ranking[0] if ranking else None
        if not case.covered:
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
        f"{len(nothing)} match nothing; {len(uncovered)} excerpts of failures without an entry"
    )
    for label, group in (("wrong first", wrong), ("nothing", nothing), ("no entry yet", uncovered)):
        for case, first in group:
            why = f" [known: {case.known_miss}]" if case.known_miss else ""
            print(
                f"  {label}: {case.name} (expected {', '.join(case.expect) or 'none'}, got {first}){why} {case.origin}"
            )
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


def _fallback(cases: list, closest: dict[str, list[str]]) -> str:
    first = sum(1 for case in cases if closest[case.name][:1] and closest[case.name][0] in case.expect)
    three = sum(1 for case in cases if set(closest[case.name]) & set(case.expect))
    offered = sum(1 for case in cases if closest[case.name])
    return f"offered on {offered}; the first fits on {first}, one of the (at most) three on {three}"


if __name__ == "__main__":
    sys.exit(main())
