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
- **Ranks.** Each matched line is read for the rank that printed it (`[rank3]:`,
  `[default3]:`, the rank its file's path names, `rank 3`: `generator.rank_lines`). With the
  culprit finder's answer (`generator.culprit`), a finding seen on an initiating rank is the
  one that started it, and one seen only on ranks that failed because of it is collateral.

The diagnose page's matcher applies the same rules (docs/assets/javascripts/diagnose-matcher.js).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .compat import SLOTS
from .culprit import Culprit, line_rank
from .inputs import LogFile
from .matcher import Result
from .rank_lines import RANK_PATTERNS, rank_of
from .roles import DEFAULT_ROLE, role_order

__all__ = ["RANK_PATTERNS", "Diagnosis", "Finding", "apply_culprit", "mark_culprit", "rank_of", "read_ranks", "triage"]


@dataclass(**SLOTS)
class Finding:
    """One matched entry in the diagnosis."""

    result: Result
    role: str = DEFAULT_ROLE
    consequence_of: list[str] = field(default_factory=list)  # matched entries that cause this one
    reports: str | None = None  # a wrapper: the finding it is the launcher's summary of
    reported_by: list[str] = field(default_factory=list)  # the wrappers that report this finding
    rank: int | None = None  # the rank of its earliest matched line that names one
    ranks: list[int] = field(default_factory=list)  # every rank its lines were printed by
    collateral: bool = False  # seen only on other ranks than the initiating ones: a consequence
    initiating: bool = False  # seen on an initiating rank: the failure that started it

    @property
    def entry_id(self) -> str:
        return self.result.entry_id


@dataclass(**SLOTS)
class Diagnosis:
    findings: list[Finding]
    culprit: Culprit | None = None  # which ranks started it, for a job of several ranks

    @property
    def initiating(self) -> Finding | None:
        """The finding that started a multi-rank failure, when the culprit finder named ranks."""
        return next((finding for finding in self.findings if finding.initiating), None)


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
    read_ranks(diagnosis, [])
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


def apply_culprit(diagnosis: Diagnosis, culprit: Culprit | None, logs: list[LogFile]) -> None:
    """Each finding's ranks (`read_ranks`), then the culprit finder's answer (`mark_culprit`)."""
    read_ranks(diagnosis, logs)
    mark_culprit(diagnosis, culprit)


def read_ranks(diagnosis: Diagnosis, logs: list[LogFile]) -> None:
    """Each finding's ranks: its lines' ranks, `logs` giving each input's rank from its path."""
    for finding in diagnosis.findings:
        ranks: list[int] = []
        for match in finding.result.matches:
            log = logs[match.source] if match.source < len(logs) else LogFile("")
            rank = line_rank(match.text, log)
            if rank is not None and rank not in ranks:
                ranks.append(rank)
        finding.ranks, finding.rank = sorted(ranks), (ranks[0] if ranks else None)


def mark_culprit(diagnosis: Diagnosis, culprit: Culprit | None) -> None:
    """With the culprit finder's answer, which finding started it and which are collateral."""
    diagnosis.culprit = culprit
    if culprit is None or not culprit.initiators:
        return
    initiators = set(culprit.initiators)
    for finding in diagnosis.findings:
        finding.initiating = bool(initiators & set(finding.ranks))
        finding.collateral = bool(finding.ranks) and not finding.initiating
    if not any(finding.initiating for finding in diagnosis.findings):
        # Nothing matched on the initiating ranks' own lines: the best specific finding seen on no
        # collateral rank stands for it (torchrun's summary names the signal, say, in its own lines).
        for finding in diagnosis.findings:
            if finding.role != "wrapper" and not finding.collateral:
                finding.initiating = True
                break
