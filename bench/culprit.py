"""How the culprit finder does on the culprit test set (tests/fixtures/culprit/).

    .venv/bin/python bench/culprit.py [--verbose]

For each multi-rank case (made here with torchrun + gloo, or pasted in a public thread) with
known initiating ranks: is the initiator named right, is a victim named as the initiator (the
error that matters most), or is none named. Cases whose logs cannot tell (`initiators:
unknown`, or `tellable: false` where the culprit is known from the thread but not from the
excerpt's lines) must name none, or only true initiators. Then the old rule, "the rank of the earliest matched line failed
first", on the same cases, for comparison.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from generator.diagnose import diagnosis_of, scan_inputs  # noqa: E402
from generator.signature_index import load_index  # noqa: E402
from tests.culprit_cases import load_culprit_cases  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="list every case")
    args = parser.parse_args()
    index, problems = load_index(REPO / "entries")
    if index is None:
        print(f"the shipped entries do not validate: {problems[0].format() if problems else ''}", file=sys.stderr)
        return 2
    matcher = index.matcher()
    right: list = []
    victim: list = []
    none: list = []
    partial: list = []
    unknown_ok: list = []
    unknown_guess: list = []
    first_right = first_victim = 0
    for case in load_culprit_cases():
        scanned = scan_inputs(matcher, case.inputs)
        diagnosis = diagnosis_of(index, matcher, scanned)
        named = tuple(diagnosis.culprit.initiators) if diagnosis.culprit else ()
        earliest = _earliest_rank(diagnosis)
        row = (case, named)
        if not case.tellable:  # naming none is right; naming the true culprit is fine; a victim is not
            wrong = set(named) - set(case.initiators or ())
            (unknown_guess if wrong else unknown_ok).append(row)
            continue
        assert case.initiators is not None  # a tellable case knows its initiators
        if earliest is not None and earliest in case.initiators:
            first_right += 1
        elif earliest is not None:
            first_victim += 1
        if named == case.initiators:
            right.append(row)
        elif not named:
            none.append(row)
        elif set(named) - set(case.initiators):
            victim.append(row)
        else:
            partial.append(row)  # some of the initiators, no victim
    known = len(right) + len(victim) + len(none) + len(partial)
    print(
        f"{known} cases with known initiators: {len(right)} right ({len(right) / max(known, 1):.0%}), "
        f"{len(partial)} some of them, {len(victim)} name a victim, {len(none)} name none"
    )
    print(
        f"{len(unknown_ok) + len(unknown_guess)} cases whose logs cannot tell: {len(unknown_ok)} name none, "
        f"{len(unknown_guess)} guess"
    )
    print(
        f"the old rule (earliest matched line's rank) on the same {known}: {first_right} right, {first_victim} a victim"
    )
    for label, group in (
        ("victim named", victim),
        ("none named", none),
        ("partial", partial),
        ("guess", unknown_guess),
    ):
        for case, named in group:
            print(f"  {label}: {case.name} ({case.kind}): expected {list(case.initiators or ())}, named {list(named)}")
    if args.verbose:
        for case, named in right + unknown_ok:
            print(f"  ok: {case.name}: {list(named)}")
    return 0


def _earliest_rank(diagnosis) -> int | None:
    earliest = None
    for finding in diagnosis.findings:
        for match in finding.result.matches:
            if finding.rank is not None and (earliest is None or match.position() < earliest[0]):
                earliest = (match.position(), finding.rank)
                break
    return earliest[1] if earliest else None


if __name__ == "__main__":
    raise SystemExit(main())
