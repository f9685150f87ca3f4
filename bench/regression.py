"""How the shipped entries do on the regression set of real logs from public threads.

    .venv/bin/python bench/regression.py [--verbose]

Prints how many excerpts rank the expected entry first, how many rank another entry
first, how many match nothing, and the failures that have no entry yet (`expect: none`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from generator.diagnose import diagnose  # noqa: E402
from generator.loading import load_encyclopedia  # noqa: E402
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
    matcher = index.matcher()
    right, wrong, nothing, uncovered = [], [], [], []
    for case in load_cases():
        ranking = [finding.entry_id for finding in index.triage(diagnose(matcher, [str(case.log)])).findings]
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
    if args.verbose:
        for case, first in right:
            print(f"  right: {case.name} -> {first}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
