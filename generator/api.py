"""Diagnose from Python: a framework's error handler, a notebook, a CI step.

    from generator.api import diagnose_text, diagnose_file, install_excepthook

    for failure in diagnose_text(log_text):
        print(failure.title, failure.url, failure.fix)

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

from .compat import SLOTS
from .diagnose import as_text, diagnose
from .resources import shipped_entries, site_url
from .signature_index import SignatureIndex, load_index
from .triage import Diagnosis, Finding, rank_of

__all__ = ["Failure", "MatchedLine", "diagnose_file", "diagnose_text", "install_excepthook"]


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
    collateral: bool  # first seen on another rank after the first failure
    role: str = "failure"  # "wrapper": a launcher's summary; "umbrella": a generic error code (generator.roles)
    reports: str | None = None  # a wrapper: the id of the failure it reports
    reported_by: tuple[str, ...] = ()  # ids of the wrappers that report this failure
    evidence: str = "signature"  # "signature": a signature matched; "closest": found by search, none matched


def diagnose_text(text: str, entries: str | Path | None = None, site: str | None = None) -> list[Failure]:
    return _failures(_diagnosis(io.BytesIO(text.encode("utf-8", "replace")), entries), entries, site)


def diagnose_file(path: str | Path, entries: str | Path | None = None, site: str | None = None) -> list[Failure]:
    """A log file, plain or gzip."""
    index = _load(entries)
    results = diagnose(index.matcher(), [str(path)])
    return _failures(index.triage(results), entries, site)


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


def _load(entries: str | Path | None) -> SignatureIndex:
    folder = Path(entries) if entries else shipped_entries()
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


def _failures(diagnosis: Diagnosis, entries: str | Path | None, site: str | None) -> list[Failure]:
    index, base = _load(entries), site_url(site)
    return [_failure(finding, index, base) for finding in diagnosis.findings]


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
