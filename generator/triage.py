"""From ranked matches to a diagnosis: causes before their effects, roles, and which rank failed first.

The matcher ranks entries by their own evidence (distinct signatures, specificity,
earliest line). Three things it cannot know are added here:

- **Causes first.** When two matched entries are related by `causes` (declared on
  either side) and the cause has evidence of its own (a line matched by one of its
  primary signatures that the effect did not match), the cause ranks above its effect
  whatever the signature counts, and the effect is marked as a consequence of it: a
  torchrun `ChildFailedError` printed after an NCCL timeout is the launcher reporting
  that timeout. A cause seen only through the effect's own lines (two OOM entries
  matching the same OOM message) proves nothing, so it does not move. Among entries
  not ordered by a cause, the matcher's order stands.
- **Roles** (`generator.roles`). Specific failures come first, then umbrellas (generic
  codes), then wrappers (a launcher's summary), whatever their counts; the order above
  stands within each group. A wrapper reports the best finding that is not a wrapper.
- **Ranks.** Each matched line is read for the rank it belongs to (`[rank3]:`,
  `[Rank 3]`, `[default3]:`, `local_rank: 3`, `rank 3`). The earliest matched line
  that names a rank gives the rank that failed first; failures first seen on other
  ranks after it are collateral.

The diagnose page's matcher applies the same rules (docs/assets/javascripts/diagnose-matcher.js).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .compat import SLOTS
from .matcher import Match, Result
from .roles import DEFAULT_ROLE, role_order

# The usual rank prefixes of launchers and of PyTorch / NCCL messages, most specific first.
RANK_PATTERNS = [
    re.compile(r"\[(?:rank|Rank|RANK) ?([0-9]{1,6})\]"),
    re.compile(r"\[default([0-9]{1,6})\]:"),
    # "on rank 3", torchrun's "rank : 3"; not a LoRA or low-rank setting printed in a config ("LoRA rank 8")
    re.compile(r"(?<![Ll][Oo][Rr][Aa] )(?<![Ll]ow )\b(?:rank|Rank|RANK) ?:? ?([0-9]{1,6})\b"),
    re.compile(r"\blocal_rank: ?([0-9]{1,6})"),
]


def rank_of(line: str) -> int | None:
    """The rank a log line belongs to, or None when it names none."""
    for pattern in RANK_PATTERNS:
        found = pattern.search(line)
        if found:
            return int(found.group(1))
    return None


@dataclass(**SLOTS)
class Finding:
    """One matched entry in the diagnosis."""

    result: Result
    role: str = DEFAULT_ROLE
    consequence_of: list[str] = field(default_factory=list)  # matched entries that cause this one
    reports: str | None = None  # a wrapper: the finding it is the launcher's summary of
    reported_by: list[str] = field(default_factory=list)  # the wrappers that report this finding
    rank: int | None = None  # the rank of its earliest matched line that names one
    collateral: bool = False  # first seen on another rank after the initiating failure

    @property
    def entry_id(self) -> str:
        return self.result.entry_id


@dataclass(**SLOTS)
class Diagnosis:
    findings: list[Finding]
    first_rank: int | None = None  # the rank that failed first, when the log names ranks
    first_line: Match | None = None  # the line that shows it


def triage(
    results: list[Result], causes: Iterable[tuple[str, str]], roles: Mapping[str, str] | None = None
) -> Diagnosis:
    """Order `results` (the matcher's ranking) so causes precede effects and roles are
    grouped, attach wrappers to what they report, and read ranks. `roles`: entry id ->
    role, for the entries that are not plain failures."""
    roles = roles or {}
    matched = {result.entry_id: result for result in results}
    causes_of: dict[str, list[str]] = {}
    for cause, effect in causes:
        if (
            cause in matched
            and effect in matched
            and cause != effect
            and matched[cause].evidence - matched[effect].evidence
        ):
            causes_of.setdefault(effect, []).append(cause)
    findings = [
        Finding(result, roles.get(result.entry_id, DEFAULT_ROLE), sorted(set(causes_of.get(result.entry_id, ()))))
        for result in _causes_first(results, causes_of)
    ]
    findings.sort(key=lambda finding: role_order(finding.role))  # stable: the order above stands per role
    _attach_wrappers(findings)
    diagnosis = Diagnosis(findings)
    _read_ranks(diagnosis)
    return diagnosis


def _causes_first(results: list[Result], causes_of: dict[str, list[str]]) -> list[Result]:
    """The matcher's order, changed only where a cause would come after its effect.

    Repeatedly takes the best-ranked result whose matched causes are all placed; in a
    cycle of causes (A causes B, B causes A) none is free, and the best-ranked goes."""
    remaining = list(results)
    placed: set[str] = set()
    ordered: list[Result] = []
    while remaining:
        chosen = next(
            (result for result in remaining if all(cause in placed for cause in causes_of.get(result.entry_id, ()))),
            remaining[0],
        )
        remaining.remove(chosen)
        placed.add(chosen.entry_id)
        ordered.append(chosen)
    return ordered


def _attach_wrappers(findings: list[Finding]) -> None:
    reported = next((finding for finding in findings if finding.role != "wrapper"), None)
    if reported is None:
        return
    for finding in findings:
        if finding.role == "wrapper":
            finding.reports = reported.entry_id
            reported.reported_by.append(finding.entry_id)


def _read_ranks(diagnosis: Diagnosis) -> None:
    earliest: Match | None = None
    earliest_rank: int | None = None
    first_seen: dict[str, tuple[tuple[int, int], int]] = {}  # entry -> (position, rank) of its first ranked line
    for finding in diagnosis.findings:
        for match in finding.result.matches:
            rank = rank_of(match.text)
            if rank is None:
                continue
            if finding.entry_id not in first_seen:
                first_seen[finding.entry_id] = (match.position(), rank)
                finding.rank = rank
            if earliest is None or match.position() < earliest.position():
                earliest, earliest_rank = match, rank
    if earliest is None:
        return
    diagnosis.first_rank, diagnosis.first_line = earliest_rank, earliest
    for finding in diagnosis.findings:
        seen = first_seen.get(finding.entry_id)
        finding.collateral = seen is not None and seen[1] != earliest_rank and seen[0] > earliest.position()
