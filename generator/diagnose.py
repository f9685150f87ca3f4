"""`diagnose`: find the failures whose signatures a log contains, and report them.

Inputs are opened here (files, `-` for standard input, gzip recognised by its
magic bytes rather than its name), streamed through the `Matcher`, and the
ranked results are printed as text for a person or as JSON for a program.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

from .closest import HEADING as CLOSEST_HEADING
from .closest import Closest
from .culprit import COLLECT, Culprit, Event, events_of, find_culprit, line_rank, ranges
from .incomplete import Incomplete, incomplete_log
from .inputs import LogFile, expand
from .matcher import Hits, Match, Matcher, Readable, Result
from .roles import REPORTED_BY, UMBRELLA_ALONE, UMBRELLA_NOTE, WRAPPER_ALONE
from .signature_index import SignatureIndex
from .triage import Diagnosis, Finding, mark_culprit, read_ranks

GZIP_MAGIC = b"\x1f\x8b"
PROGRESS_MIN_BYTES = 32 * 1024 * 1024
SHOWN_LINES = 3


class InputError(Exception):
    """A log that cannot be read: missing, a folder, unreadable, or a broken gzip file."""


def check_inputs(paths: list[str]) -> None:
    """Fail before any scanning if an input cannot be opened."""
    for path in paths:
        if path == "-":
            continue
        if os.path.isdir(path):
            if not os.access(path, os.R_OK | os.X_OK):
                raise InputError(f"{path}: permission denied")
            continue
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file")
        if not os.access(path, os.R_OK):
            raise InputError(f"{path}: permission denied")


@contextmanager
def open_log(path: str) -> Iterator[Readable]:
    raw: Any = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115 - closed below, not stdin
    try:
        stream = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)
        if stream.peek(2)[:2] == GZIP_MAGIC:
            with gzip.GzipFile(fileobj=stream) as unzipped:
                yield _GzipErrors(unzipped, path)
        else:
            yield stream
    finally:
        if path != "-":
            raw.close()


class _GzipErrors(io.RawIOBase):
    """A gzip stream whose corruption surfaces as an InputError with the file's name."""

    def __init__(self, stream: gzip.GzipFile, path: str):
        self.stream, self.path = stream, path

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            return self.stream.readinto(buffer)
        except (OSError, EOFError, zlib.error) as error:
            raise InputError(f"{self.path}: damaged gzip data ({error})") from None


def diagnose(matcher: Matcher, paths: list[str], progress_to: TextIO | None = None) -> list[Result]:
    """Scan every input as one log; the entries found, best first (the ranking of `Matcher`)."""
    return matcher.rank(scan_logs(matcher, paths, progress_to))


def scan_logs(matcher: Matcher, paths: list[str], progress_to: TextIO | None = None) -> Hits:
    """Scan every input as one log: what each signature matched (and the last error lines)."""
    found: Hits = {}
    for source, path in enumerate(paths):
        with open_log(path) as stream:
            progress = _progress_printer(path, progress_to)
            try:
                matcher.scan(stream, progress, source, found)
            except OSError as error:
                raise InputError(f"{path}: cannot be read ({error.strerror or error})") from None
            finally:
                if progress:
                    progress(None)
    return found


@dataclass
class Scanned:
    """Every input scanned: what the signatures and taps found, and each input's name and rank."""

    found: Hits
    logs: list[LogFile]  # per input (source), with the rank its path names
    names: list[str]  # per input, as shown to the reader
    extra: list[Event] = field(default_factory=list)  # from Flight Recorder dumps
    problems: list[str] = field(default_factory=list)  # inputs set aside, and why


def scan_inputs(matcher: Matcher, paths: list[str], progress_to: TextIO | None = None) -> Scanned:
    """Scan logs, folders of logs, Flight Recorder dumps and other runs' reports, as one job."""
    from .flight_recorder import events_from
    from .reports import add_reports

    inputs = expand(paths)
    if not inputs.logs and not inputs.dumps and not inputs.reports:
        raise InputError(
            f"{', '.join(paths)}: no log files found (looked for *.log, *.out, *.err, *.txt, *.json, *.gz)"
        )
    names = [log.path for log in inputs.logs]
    scanned = Scanned(scan_logs(matcher, names, progress_to), list(inputs.logs), names)
    add_reports(matcher, scanned, inputs.reports)
    scanned.extra, scanned.problems = events_from(inputs.dumps)
    return scanned


def diagnosis_of(index: SignatureIndex, matcher: Matcher, scanned: Scanned) -> Diagnosis:
    """The findings, causes first, and for a job of several ranks which ranks started it."""
    diagnosis = index.triage(matcher.rank(scanned.found))
    read_ranks(diagnosis, scanned.logs)
    found_on = {rank for finding in diagnosis.findings for rank in finding.ranks}
    mark_culprit(diagnosis, culprit_of(matcher, scanned, found_on))
    return diagnosis


def culprit_of(matcher: Matcher, scanned: Scanned, found_on: frozenset[int] | set[int] = frozenset()) -> Culprit | None:
    """The culprit finder's answer, when the logs show more than one rank (else None);
    `found_on`: the ranks the findings' lines were printed by."""
    kept = {match.position(): match for match in matcher.tapped(scanned.found, "evidence")}
    kept.update((match.position(), match) for match in matcher.tapped(scanned.found, "progress"))
    lines = [kept[position] for position in sorted(kept)]  # a line both taps kept is read once
    culprit = find_culprit(events_of(lines, scanned.logs, scanned.names), scanned.extra)
    seen = set(culprit.ranks_seen) | found_on
    several = len(seen) > 1 or (culprit.world_size or 0) > 1 or culprit.launched
    return culprit if several else None


def _progress_printer(path: str, stream: TextIO | None) -> Callable[[int | None], None] | None:
    """Progress on stderr for a big file, only when a person watches (a terminal)."""
    if stream is None or not stream.isatty() or path == "-":
        return None
    size = os.path.getsize(path)
    if size < PROGRESS_MIN_BYTES:
        return None
    last = [0.0]

    def report(done: int | None) -> None:
        if done is None:
            stream.write("\r" + " " * 60 + "\r")
            stream.flush()
            return
        now = time.monotonic()
        if now - last[0] >= 0.25:
            last[0] = now
            stream.write(f"\rscanning {os.path.basename(path)}: {min(done / size, 1):.0%} of {size / 2**20:.0f} MiB")
            stream.flush()

    return report


# -- output -------------------------------------------------------------------------------


REPORT_FORMAT = 1  # `"mlfail-report"` in a JSON report: it can be merged with others (generator.reports)


def report_object(
    diagnosis: Diagnosis,
    closest: list[Closest],
    index: SignatureIndex,
    matcher: Matcher,
    scanned: Scanned | None,
    paths: list[str],
    site: str,
    incomplete: Incomplete | None = None,
) -> dict[str, Any]:
    """The whole diagnosis as one JSON object (`--format json`): who started it, the findings,
    why the log cannot show its failure (when nothing matched), and the lines kept of each
    input, so that reports of several nodes can be merged."""
    from .reports import kept_inputs

    culprit = diagnosis.culprit
    return {
        "mlfail-report": REPORT_FORMAT,
        "initiator": initiator_object(diagnosis, index),
        "world_size": culprit.world_size if culprit else None,
        "collateral": culprit.collateral if culprit and culprit.initiators else [],
        "collect": COLLECT if culprit is not None and not culprit.initiators else None,
        "findings": json_items(diagnosis, index, matcher, paths, site, scanned.logs if scanned else [])
        + closest_as_json(closest, index, paths, site),
        "incomplete": incomplete_as_json(incomplete, paths) if incomplete else None,
        "inputs": kept_inputs(matcher, scanned) if scanned else [],
    }


def initiating_failure(diagnosis: Diagnosis, index: SignatureIndex) -> str | None:
    """The entry of the failure that started it: the best specific finding on the initiating
    ranks; else the failure the deciding rule shows by itself (`RULE_FAILURES`); else the generic
    finding seen there, if any."""
    from .culprit import RULE_FAILURES

    culprit = diagnosis.culprit
    if culprit is None or not culprit.initiators:
        return None
    found = diagnosis.initiating
    if found is not None and found.role == "failure":
        return found.entry_id
    shown = RULE_FAILURES.get(culprit.rule or "")
    if shown in index.entries:
        return shown
    return found.entry_id if found else None


def initiator_object(diagnosis: Diagnosis, index: SignatureIndex) -> dict[str, Any] | None:
    culprit = diagnosis.culprit
    if culprit is None or not culprit.initiators:
        return None
    failure = initiating_failure(diagnosis, index)
    return {
        "ranks": culprit.initiators,
        "host": culprit.host,
        "verdict": index.entries[failure].verdict if failure else "unknown",
        "failure": failure,
        "rule": culprit.rule,
        "note": culprit.note,
        "evidence": [item.to_json() for item in culprit.evidence],
    }


def json_items(
    diagnosis: Diagnosis,
    index: SignatureIndex,
    matcher: Matcher,
    paths: list[str],
    site: str,
    logs: list[LogFile] | None = None,
) -> list[dict[str, Any]]:
    """The findings as JSON objects, best first (`"findings"` of `--format json`)."""
    logs = logs or []
    items = []
    for finding in diagnosis.findings:
        result = finding.result
        info = index.entries[result.entry_id]
        matches = []
        for match in result.matches:
            item = {
                "line": match.line,
                "text": match.text,
                "signature": matcher.signatures[match.signature].pattern,
                "rank": line_rank(match.text, logs[match.source] if match.source < len(logs) else LogFile("")),
            }
            if len(paths) > 1:
                item["file"] = paths[match.source]
            matches.append(item)
        items.append(
            {
                "id": result.entry_id,
                "title": info.title,
                "url": site + info.url,
                "severity": info.severity,
                "role": finding.role,
                "evidence": "signature",
                "score": len(result.signatures),
                "specificity": result.specificity,
                "consequence_of": finding.consequence_of,
                "reports": finding.reports,
                "reported_by": finding.reported_by,
                "rank": finding.rank,
                "ranks": finding.ranks,
                "initiating": finding.initiating,
                "collateral": finding.collateral,
                "summary": info.summary,
                "fix": info.fix,
                "matches": matches,
            }
        )
    return items


def as_text(
    diagnosis: Diagnosis, index: SignatureIndex, paths: list[str], site: str, logs: list[LogFile] | None = None
) -> str:
    lines: list[str] = []
    # A wrapper that reports a finding is told under that finding, not numbered on its own.
    shown = [finding for finding in diagnosis.findings if finding.reports is None]
    by_id = {finding.entry_id: finding for finding in diagnosis.findings}
    number = {finding.entry_id: rank for rank, finding in enumerate(shown, 1)}
    specific = any(finding.role == "failure" for finding in shown)
    if diagnosis.culprit is not None:
        lines.extend(culprit_lines(diagnosis, index))
        lines.append("")
    for rank, finding in enumerate(shown, 1):
        result = finding.result
        info = index.entries[result.entry_id]
        count = len(result.signatures)
        lines.append(f"{rank}. {info.title}  [{info.severity}]")
        lines.append(
            f"   {result.entry_id} · {site}{info.url} · {count} signature{'s' if count != 1 else ''} matched"
            + (f" · rank {finding.rank}" if finding.rank is not None else "")
        )
        lines.extend(_role_notes(finding, specific, info.first_check))
        for cause in finding.consequence_of:
            if by_id.get(cause) is not None and by_id[cause].reports is not None:
                continue  # a wrapper: shown as reporting this finding instead
            shown_as = f"{number[cause]}. " if cause in number else ""
            lines.append(
                f"   Consequence: here this is a result of {shown_as}{index.entries[cause].title} (above); fix that first."
            )
        if finding.collateral and diagnosis.culprit is not None:
            lines.append(
                f"   Collateral: seen only on other ranks than {_ranks(diagnosis.culprit.initiators)}, which started it."
            )
        for match, ranks in _collapsed(result.matches, logs or [])[:SHOWN_LINES]:
            on = f" (on ranks {ranges(ranks)})" if len(ranks) > 1 else ""
            lines.append(f"   {_where(match, paths)}: {_shorten(match.text, 160)}{on}")
        for wrapper_id in finding.reported_by:
            wrapper = by_id[wrapper_id].result
            lines.append(
                f"   {REPORTED_BY}: {index.entries[wrapper_id].title} ({wrapper_id}, "
                f"{_where(wrapper.matches[0], paths)})"
            )
        lines.append(f"   Quick answer: {_shorten(info.summary, 400)}")
        lines.append(f"   Fix: {_shorten(info.fix, 300)}")
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def culprit_lines(diagnosis: Diagnosis, index: SignatureIndex) -> list[str]:
    """Who started a multi-rank failure, why the finder says so, and what to do; or, when the
    logs cannot tell, what to collect."""
    from .culprit import RULE_WORDS, VERDICT_WORDS

    culprit = diagnosis.culprit
    assert culprit is not None
    if not culprit.initiators:
        seen = f" (ranks {ranges(culprit.ranks_seen)} seen)" if culprit.ranks_seen else ""
        return [
            f"Which rank started it cannot be told from these logs{seen}.",
            f"   Collect next: {COLLECT}.",
        ]
    failure = initiating_failure(diagnosis, index)
    what = index.entries[failure].title if failure else "a failure of its own (below)"
    host = f" (node {culprit.host})" if culprit.host else ""
    others = f"; {_ranks(culprit.collateral)} failed because of it (collateral)" if culprit.collateral else ""
    first = f"{_ranks(culprit.initiators).capitalize()}{host} started it: {what}{others}."
    verdict = index.entries[failure].verdict if failure else "unknown"
    lines = [first, f"   Why: {RULE_WORDS.get(culprit.rule or '', culprit.rule or '')}."]
    if culprit.note:
        lines.append(f"   Note: {culprit.note}.")
    for item in culprit.evidence[:SHOWN_LINES]:
        where = f"{item.file}:{item.line}" if item.line else item.file
        lines.append(f"   {where}: {_shorten(item.text, 160)}")
    lines.append(f"   Verdict: {verdict}: {VERDICT_WORDS.get(verdict, '')}.")
    return lines


def _ranks(ranks: list[int]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {ranges(ranks)}"


def _collapsed(matches: list[Match], logs: list[LogFile]) -> list[tuple[Match, list[int]]]:
    """A finding's lines with the same words on several ranks shown once, with those ranks."""
    groups: dict[str, tuple[Match, list[int]]] = {}
    for match in matches:
        key = _NUMBER.sub("#", _PREFIX.sub("", match.text)).strip()
        rank = line_rank(match.text, logs[match.source] if match.source < len(logs) else LogFile(""))
        ranks = groups.setdefault(key, (match, []))[1]
        if rank is not None and rank not in ranks:
            ranks.append(rank)
    return [(first, sorted(ranks)) for first, ranks in groups.values()]


# Rank prefixes and numbers (ranks, ports, pids), so the same message on two ranks compares equal.
_PREFIX = re.compile(r"^\s*(?:\[[^\]]*\]:\s*)+")
_NUMBER = re.compile(r"[0-9]+")


def _role_notes(finding: Finding, specific: bool, first_check: str) -> list[str]:
    """What a generic code or a launcher's summary means here (generator.roles); `specific`:
    a specific failure was found too."""
    if finding.role == "umbrella":
        if specific:
            return [f"   {UMBRELLA_NOTE}"]
        notes = [f"   {UMBRELLA_ALONE}"]
        return notes + ([f"   Collect next: {_shorten(first_check, 300)}"] if first_check else [])
    if finding.role == "wrapper":
        return [f"   {WRAPPER_ALONE}"]
    return []


def closest_as_json(closest: list[Closest], index: SignatureIndex, paths: list[str], site: str) -> list[dict]:
    items = []
    for found in closest:
        info = index.entries[found.entry_id]
        line: dict[str, Any] = {"line": found.line.line, "text": found.line.text}
        if len(paths) > 1:
            line["file"] = paths[found.line.source]
        items.append(
            {
                "id": found.entry_id,
                "title": info.title,
                "url": site + info.url,
                "severity": info.severity,
                "role": info.role,
                "evidence": "closest",
                "score": round(found.score, 3),
                "summary": info.summary,
                "fix": info.fix,
                "matches": [line],
            }
        )
    return items


def incomplete_of(diagnosis: Diagnosis, matcher: Matcher, found: Hits) -> Incomplete | None:
    """Why nothing matched, when nothing did: the log stops inside a traceback, or no line of it
    reports an error (`generator.incomplete`); the CLI's formats and the API's job share it."""
    if diagnosis.findings:
        return None
    return incomplete_log(matcher.tapped(found, "tail"), matcher.error_lines(found))


def incomplete_as_json(incomplete: Incomplete, paths: list[str]) -> dict[str, Any]:
    if incomplete.kind != "traceback":
        return {"kind": incomplete.kind, "advice": incomplete.advice}
    where: dict[str, Any] = {"kind": incomplete.kind, "line": incomplete.line, "text": incomplete.text}
    where["advice"] = incomplete.advice
    if len(paths) > 1:
        where["file"] = paths[incomplete.source]
    return where


def incomplete_as_text(incomplete: Incomplete, paths: list[str]) -> str:
    if incomplete.kind != "traceback":
        return f"{incomplete.heading}.\n   {incomplete.advice}"
    where = f"{paths[incomplete.source]}:{incomplete.line}" if len(paths) > 1 else f"line {incomplete.line}"
    frame = _shorten(incomplete.text, 160)
    return f"{incomplete.heading} (its last frame, {where}: {frame}).\n   {incomplete.advice}"


def closest_as_text(closest: list[Closest], index: SignatureIndex, paths: list[str], site: str) -> str:
    lines = [CLOSEST_HEADING + ":", ""]
    for number, found in enumerate(closest, 1):
        info = index.entries[found.entry_id]
        lines.append(f"{number}. {info.title}  [{info.severity}]")
        lines.append(f"   {found.entry_id} · {site}{info.url}")
        lines.append(f"   found from {_where(found.line, paths)}: {_shorten(found.line.text, 160)}")
        lines.append(f"   Quick answer: {_shorten(info.summary, 400)}")
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def found_now(result: Result, index: SignatureIndex, site: str) -> str:
    """One failure as soon as it is found in a running job's output (`mlfail run --on-match`,
    `mlfail watch`): what, where, the first thing to try and the link."""
    info = index.entries[result.entry_id]
    first = result.matches[0]
    rank = line_rank(first.text, LogFile(""))
    return "\n".join(
        [
            f"mlfail: {info.title}  [{info.severity}]" + (f" on rank {rank}" if rank is not None else ""),
            f"   line {first.line}: {_shorten(first.text, 160)}",
            f"   Quick answer: {_shorten(info.summary, 400)}",
            f"   Fix: {_shorten(info.fix, 300)}",
            f"   {site}{info.url}",
            "",
        ]
    )


def _where(match: Match, paths: list[str]) -> str:
    return f"{paths[match.source]}:{match.line}" if len(paths) > 1 else f"line {match.line}"


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    # Control characters from a binary log must not drive the terminal.
    text = "".join(char if char.isprintable() else "\ufffd" for char in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
