"""Diagnose from Python: a framework's error handler, a notebook, a CI step.

    from generator.api import diagnose_text, diagnose_file, install_excepthook

    for failure in diagnose_text(log_text):
        print(failure.title, failure.url, failure.fix)

    job = diagnose_job(["logs/"])  # several ranks' logs: which rank started it
    if job.initiator:
        print(job.initiator.ranks, job.initiator.host, job.initiator.verdict)
    if job.incomplete:  # nothing matched: the logs stop inside a traceback, or show no error
        print(job.incomplete.heading, job.incomplete.advice)

    install_excepthook()  # an uncaught exception's traceback is diagnosed on stderr

The ranking is the command line's (`mlfail diagnose`): causes before their effects,
then the strongest evidence. The encyclopedia installed with the package is used unless
`entries` names a folder of entries.
"""

from __future__ import annotations

import io
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from .closest import Closest
from .compat import SLOTS
from .diagnose import as_text, diagnosis_of, incomplete_of, initiator_object, scan_inputs, scan_logs
from .incomplete import Incomplete
from .matcher import Match
from .resources import shipped_entries, site_url
from .signature_index import SignatureIndex, closest_for, load_index
from .triage import Diagnosis, Finding, rank_of

__all__ = [
    "Evidence",
    "Failure",
    "Incomplete",
    "Initiator",
    "Job",
    "MatchedLine",
    "diagnose_file",
    "diagnose_job",
    "diagnose_text",
    "install_excepthook",
]


@dataclass(frozen=True, **SLOTS)
class MatchedLine:
    line: int  # 1-based
    text: str  # as read (normalised), cut to 4,096 characters
    rank: int | None  # the rank the line names, if any


@dataclass(frozen=True, **SLOTS)
class Failure:
    """One failure found, best first."""

    id: str
    title: str
    severity: str
    url: str  # the entry's page
    summary: str  # the quick answer
    fix: str  # the fix in a sentence
    lines: tuple[MatchedLine, ...]
    consequence_of: tuple[str, ...]  # ids of failures found in the same text that cause this one
    rank: int | None
    collateral: bool  # seen only on other ranks than those that started a multi-rank failure
    role: str = "failure"  # "wrapper": a launcher's summary; "umbrella": a generic error code (generator.roles)
    reports: str | None = None  # a wrapper: the id of the failure it reports
    reported_by: tuple[str, ...] = ()  # ids of the wrappers that report this failure
    evidence: str = "signature"  # "signature": a signature matched; "closest": found by search, none matched


@dataclass(frozen=True, **SLOTS)
class Evidence:
    rule: str  # the culprit finder's rule (generator.culprit)
    file: str
    line: int
    text: str


@dataclass(frozen=True, **SLOTS)
class Initiator:
    """The ranks that started a multi-rank failure (`mlfail diagnose`'s first line)."""

    ranks: tuple[int, ...]
    host: str | None
    verdict: str  # code | hardware | infrastructure | unknown
    failure: str | None  # the id of the failure found on those ranks
    rule: str
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True, **SLOTS)
class Job:
    """The diagnosis of a job's logs, as `mlfail diagnose --format json` gives it."""

    initiator: Initiator | None  # None: one process, or the logs cannot tell (see `collect`)
    world_size: int | None
    collateral: tuple[int, ...]  # ranks that failed because of the initiator
    collect: str | None  # what to collect when the logs of several ranks cannot tell
    failures: list[Failure]
    # Nothing matched and the logs cannot show their failure: they stop inside a traceback (its
    # last frame), or no line reports an error (generator.incomplete).
    incomplete: Incomplete | None = None


def diagnose_job(paths: list[str | Path], entries: str | Path | None = None, site: str | None = None) -> Job:
    """Logs, folders of rank logs, Flight Recorder dumps or nodes' JSON reports of one job."""
    from .culprit import COLLECT

    index = _load(entries)
    matcher = index.matcher()
    scanned = scan_inputs(matcher, [str(path) for path in paths])
    diagnosis = diagnosis_of(index, matcher, scanned)
    found = initiator_object(diagnosis, index)
    culprit = diagnosis.culprit
    initiator = None
    if found is not None:
        evidence = tuple(Evidence(**item) for item in found["evidence"])
        initiator = Initiator(
            tuple(found["ranks"]), found["host"], found["verdict"], found["failure"], found["rule"], evidence
        )
    return Job(
        initiator,
        culprit.world_size if culprit else None,
        tuple(culprit.collateral) if culprit and initiator else (),
        COLLECT if culprit is not None and initiator is None else None,
        _failures(diagnosis, matcher.error_lines(scanned.found), entries, site),
        incomplete_of(diagnosis, matcher, scanned.found),
    )


def diagnose_text(text: str, entries: str | Path | None = None, site: str | None = None) -> list[Failure]:
    """The failures a log's text shows, best first; when no signature matches, at most three
    closest entries (`evidence == "closest"`), found by searching its error lines."""
    index = _load(entries)
    matcher = index.matcher()
    found = matcher.scan(io.BytesIO(text.encode("utf-8", "replace")))
    return _failures(index.triage(matcher.rank(found)), matcher.error_lines(found), entries, site)


def diagnose_file(path: str | Path, entries: str | Path | None = None, site: str | None = None) -> list[Failure]:
    """A log file, plain or gzip; as `diagnose_text`."""
    index = _load(entries)
    matcher = index.matcher()
    found = scan_logs(matcher, [str(path)])
    return _failures(index.triage(matcher.rank(found)), matcher.error_lines(found), entries, site)


def install_excepthook(entries: str | Path | None = None, site: str | None = None) -> None:
    """Diagnose uncaught exceptions: after Python prints the traceback, the failures it shows
    (if any) follow on stderr. The previous hook still runs first."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], error: BaseException, trace: TracebackType | None) -> None:
        previous(kind, error, trace)
        text = "".join(traceback.format_exception(kind, error, trace))
        try:
            index = _load(entries)
            diagnosis = _diagnosis(io.BytesIO(text.encode("utf-8", "replace")), entries)
        except Exception as failure:
            print(f"mlfail: could not diagnose this exception ({failure})", file=sys.stderr)
            return
        if diagnosis.findings:
            diagnosis.findings = diagnosis.findings[:3]
            print("\nmlfail diagnosis:\n" + as_text(diagnosis, index, ["-"], site_url(site)), file=sys.stderr)

    sys.excepthook = hook


# -- internals -------------------------------------------------------------------------------

_INDEXES: dict[Path, SignatureIndex] = {}


def _folder(entries: str | Path | None) -> Path:
    return Path(entries) if entries else shipped_entries()


def _load(entries: str | Path | None) -> SignatureIndex:
    folder = _folder(entries)
    if folder not in _INDEXES:
        index, problems = load_index(folder)
        if index is None:
            raise ValueError(f"the entries in {folder} are invalid: {problems[0].format() if problems else ''}")
        _INDEXES[folder] = index
    return _INDEXES[folder]


def _diagnosis(stream: io.BytesIO, entries: str | Path | None) -> Diagnosis:
    index = _load(entries)
    matcher = index.matcher()
    return index.triage(matcher.rank(matcher.scan(stream)))


def _failures(
    diagnosis: Diagnosis, error_lines: list[Match], entries: str | Path | None, site: str | None
) -> list[Failure]:
    index, base = _load(entries), site_url(site)
    if diagnosis.findings:
        return [_failure(finding, index, base) for finding in diagnosis.findings]
    return [_closest(found, index, base) for found in closest_for(_folder(entries), error_lines)]


def _closest(found: Closest, index: SignatureIndex, base: str) -> Failure:
    info = index.entries[found.entry_id]
    line = MatchedLine(found.line.line, found.line.text, rank_of(found.line.text))
    return Failure(
        found.entry_id,
        info.title,
        info.severity,
        base + info.url,
        info.summary,
        info.fix,
        (line,),
        (),
        None,
        False,
        role=info.role,
        evidence="closest",
    )


def _failure(finding: Finding, index: SignatureIndex, base: str) -> Failure:
    result = finding.result
    info = index.entries[result.entry_id]
    return Failure(
        id=result.entry_id,
        title=info.title,
        severity=info.severity,
        url=base + info.url,
        summary=info.summary,
        fix=info.fix,
        lines=tuple(MatchedLine(match.line, match.text, rank_of(match.text)) for match in result.matches),
        consequence_of=tuple(finding.consequence_of),
        rank=finding.rank,
        collateral=finding.collateral,
        role=finding.role,
        reports=finding.reports,
        reported_by=tuple(finding.reported_by),
    )
