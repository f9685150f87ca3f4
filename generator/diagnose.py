"""`diagnose`: find the failures whose signatures a log contains, and report them.

Inputs are opened here (files, `-` for standard input, gzip recognised by its
magic bytes rather than its name), streamed through the `Matcher`, and the
ranked results are printed as text for a person or as JSON for a program.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from .closest import HEADING as CLOSEST_HEADING
from .closest import Closest
from .matcher import Hits, Match, Matcher, Readable, Result
from .roles import REPORTED_BY, UMBRELLA_ALONE, UMBRELLA_NOTE, WRAPPER_ALONE
from .signature_index import SignatureIndex
from .triage import Diagnosis, Finding, rank_of

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
            raise InputError(f"{path}: is a folder, not a log file")
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


def as_json(diagnosis: Diagnosis, index: SignatureIndex, matcher: Matcher, paths: list[str], site: str) -> str:
    return json.dumps(json_items(diagnosis, index, matcher, paths, site), ensure_ascii=False, indent=2)


def json_items(
    diagnosis: Diagnosis, index: SignatureIndex, matcher: Matcher, paths: list[str], site: str
) -> list[dict[str, Any]]:
    """The findings as JSON objects, best first (`--format json`)."""
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
                "rank": rank_of(match.text),
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
                "collateral": finding.collateral,
                "summary": info.summary,
                "fix": info.fix,
                "matches": matches,
            }
        )
    return items


def as_text(diagnosis: Diagnosis, index: SignatureIndex, paths: list[str], site: str) -> str:
    lines: list[str] = []
    # A wrapper that reports a finding is told under that finding, not numbered on its own.
    shown = [finding for finding in diagnosis.findings if finding.reports is None]
    by_id = {finding.entry_id: finding for finding in diagnosis.findings}
    number = {finding.entry_id: rank for rank, finding in enumerate(shown, 1)}
    specific = any(finding.role == "failure" for finding in shown)
    if diagnosis.first_rank is not None and diagnosis.first_line is not None:
        collateral = [finding for finding in shown if finding.collateral]
        first = diagnosis.first_line
        lines.append(f"Rank {diagnosis.first_rank} failed first ({_where(first, paths)}).")
        if collateral:
            ranks = sorted({finding.rank for finding in collateral if finding.rank is not None})
            lines.append(
                f"After it, {_count(len(collateral), 'failure')} on other ranks "
                f"({', '.join(map(str, ranks))}): collateral, fix the first one."
            )
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
        if finding.collateral:
            lines.append(f"   Collateral: first seen on rank {finding.rank}, after rank {diagnosis.first_rank} failed.")
        for match in result.matches[:SHOWN_LINES]:
            lines.append(f"   {_where(match, paths)}: {_shorten(match.text, 160)}")
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
    rank = rank_of(first.text)
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


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' if number != 1 else ''}"


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    # Control characters from a binary log must not drive the terminal.
    text = "".join(char if char.isprintable() else "\ufffd" for char in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
