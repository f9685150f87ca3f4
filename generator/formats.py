"""How a diagnosis is printed where it is read: GitHub Actions (`github`), code scanning
(`sarif`) and editors and grep (`short`). The terminal's `text` and the program's `json`
live in `generator.diagnose`; all five read the same `Report`.

- `short`: one line per finding, `LOG:LINE: LEVEL: ID: title (url)`, the shape compilers
  print, so editors jump to it (the VS Code problem matcher in docs/assets/vscode/ reads it)
  and grep finds it. LEVEL is `error` (critical, high), `warning` (medium) or `note` (low,
  and closest entries, which no signature matched).
- `github`: GitHub Actions workflow commands, causes first, at most ANNOTATIONS of them (the
  runner shows ten errors per step); the rest in one notice. With $GITHUB_STEP_SUMMARY set,
  a Markdown summary is appended to it. Text from the log is escaped by `github_annotation`,
  the one function the validator's annotations use too, so no log line can start a command.
- `sarif`: SARIF 2.1.0, one rule per entry found (id, title, help URI, level) and one result
  per finding, located at its first matched line.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .closest import Closest
from .incomplete import Incomplete
from .matcher import Match, Matcher, Result
from .problems import github_annotation
from .signature_index import SignatureIndex
from .triage import Diagnosis, Finding

if TYPE_CHECKING:
    from .diagnose import Scanned

FORMATS = ("text", "json", "github", "sarif", "short")
ANNOTATIONS = 10
LEVELS = {"critical": "error", "high": "error", "medium": "warning", "low": "note"}
GITHUB_LEVELS = {"error": "error", "warning": "warning", "note": "notice"}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
STDIN_NAME = "<stdin>"


@dataclass(frozen=True)
class Report:
    """One diagnosis with what its formats need to name files and link entries."""

    diagnosis: Diagnosis
    closest: list[Closest]
    index: SignatureIndex
    matcher: Matcher | None  # JSON names each matched signature's pattern; the other formats need none
    paths: list[str]
    site: str
    scanned: Scanned | None = None  # the inputs with their ranks (a whole diagnosis of logs)
    incomplete: Incomplete | None = None  # why the log cannot show its failure, when nothing matched


@dataclass(frozen=True)
class Item:
    """A finding, or a closest entry, as the formats list it: where, how bad, what."""

    entry_id: str
    level: str
    line: Match
    evidence: str  # "signature" or "closest"


def items(report: Report) -> list[Item]:
    """The findings, causes first (a wrapper after what it reports), then the closest entries."""
    found = [_item(report, finding) for finding in report.diagnosis.findings]
    found += [Item(near.entry_id, "note", near.line, "closest") for near in report.closest]
    return found


def _item(report: Report, finding: Finding) -> Item:
    return Item(finding.entry_id, _level(report, finding.entry_id), located(finding.result), "signature")


def located(result: Result) -> Match:
    """Where a finding is: its first line that a primary signature matched (a supporting
    traceback frame may come before the error it belongs to)."""
    return next((match for match in result.matches if match.position() in result.evidence), result.matches[0])


def _level(report: Report, entry_id: str) -> str:
    return LEVELS[report.index.entries[entry_id].severity]


def _file(report: Report, match: Match) -> str:
    return _path(report, match.source)


def _path(report: Report, source: int) -> str:
    path = report.paths[source] if source < len(report.paths) else "-"
    return STDIN_NAME if path == "-" else path


def _one_line(text: str) -> str:
    """A log line as one printable line (the matcher has already dropped ANSI codes)."""
    return "".join(char if char.isprintable() else "\ufffd" for char in " ".join(text.split()))


def live_item(result: Result, index: SignatureIndex) -> Item:
    """A failure found while a job runs (`run --on-match`, `watch`), at its first line."""
    return Item(result.entry_id, LEVELS[index.entries[result.entry_id].severity], located(result), "signature")


def live_line(result: Result, index: SignatureIndex, site: str, output: str, path: str) -> str:
    """One failure as soon as it is found, in `short`, `github` or `json` (one object per line)."""
    report = Report(Diagnosis([]), [], index, None, [path], site)
    item = live_item(result, index)
    if output == "short":
        return _short_line(report, item)
    if output == "github":
        return _annotation(report, item)
    info = index.entries[result.entry_id]
    return json.dumps(
        {
            "id": result.entry_id,
            "title": info.title,
            "url": site + info.url,
            "severity": info.severity,
            "role": info.role,
            "line": item.line.line,
            "text": item.line.text,
        },
        ensure_ascii=False,
    )


# -- short ------------------------------------------------------------------------------------


def as_short(report: Report) -> str:
    return "\n".join(_short_line(report, item) for item in items(report))


def _short_line(report: Report, item: Item) -> str:
    info = report.index.entries[item.entry_id]
    where = f"{_file(report, item.line)}:{item.line.line}"
    return f"{where}: {item.level}: {item.entry_id}: {_one_line(info.title)} ({report.site}{info.url})"


# -- github -----------------------------------------------------------------------------------


def as_github(report: Report) -> str:
    listed = items(report)
    commands = [_annotation(report, item) for item in listed[:ANNOTATIONS]]
    rest = listed[ANNOTATIONS:]
    if rest:
        names = ", ".join(item.entry_id for item in rest)
        commands.append(f"::notice title=mlfail::{len(rest)} more: {names}")
    if report.incomplete:
        commands.append(_incomplete_annotation(report, report.incomplete))
    return "\n".join(commands)


def _incomplete_annotation(report: Report, incomplete: Incomplete) -> str:
    """Nothing matched and the log cannot show its failure: a notice, on the last frame of the
    traceback it stops inside, or on the log's first line."""
    path = _path(report, incomplete.source)
    return github_annotation("notice", path, incomplete.line or 1, 1, incomplete.heading, incomplete.advice)


def _annotation(report: Report, item: Item) -> str:
    info = report.index.entries[item.entry_id]
    closest = " (closest entry: no signature matched)" if item.evidence == "closest" else ""
    message = f"{info.summary}\n\nFix: {info.fix}\n\n{report.site}{info.url}"
    return github_annotation(
        GITHUB_LEVELS[item.level],
        _file(report, item.line),
        item.line.line,
        1,
        f"{info.title}{closest}",
        f"Line {item.line.line}: {_one_line(item.line.text)[:300]}\n\n{message}",
    )


def github_summary(report: Report) -> str:
    """The job summary: a table of the findings with links, and the line each was found on."""
    listed = items(report)
    if not listed:
        told = f"\n{report.incomplete.heading}. {report.incomplete.advice}\n" if report.incomplete else ""
        return "### mlfail\n\nNo known failure signature found.\n" + told
    out = ["### mlfail diagnosis", "", "| # | Failure | Severity | Where |", "| --- | --- | --- | --- |"]
    for number, item in enumerate(listed, 1):
        info = report.index.entries[item.entry_id]
        title = _one_line(info.title).replace("|", "\\|").replace("[", "\\[").replace("]", "\\]")
        severity = info.severity if item.evidence == "signature" else "closest entry"
        where = f"{_file(report, item.line)}:{item.line.line}".replace("|", "\\|").replace("`", "")
        out.append(f"| {number} | [{title}]({report.site}{info.url}) | {severity} | `{where}` |")
    out += ["", "```text"]
    out += [f"{_file(report, item.line)}:{item.line.line}: {_one_line(item.line.text)[:300]}" for item in listed]
    out += ["```", ""]
    return "\n".join(out)


def write_github_summary(report: Report) -> None:
    """Append the summary to $GITHUB_STEP_SUMMARY, when the step runs on GitHub Actions."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as summary:
            summary.write(github_summary(report))


# -- sarif ------------------------------------------------------------------------------------

SARIF_LEVELS = {"error": "error", "warning": "warning", "note": "note"}


def as_sarif(report: Report, version: str) -> str:
    listed = items(report)
    rule_ids = list(dict.fromkeys(item.entry_id for item in listed))
    rules = [_sarif_rule(report, entry_id) for entry_id in rule_ids]
    results = [_sarif_result(report, item, rule_ids.index(item.entry_id)) for item in listed]
    log: dict[str, Any] = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mlfail",
                        "version": version,
                        "informationUri": report.site,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, ensure_ascii=False, indent=2)


def _sarif_rule(report: Report, entry_id: str) -> dict[str, Any]:
    info = report.index.entries[entry_id]
    return {
        "id": entry_id,
        "name": "".join(part.capitalize() for part in entry_id.split("-")),
        "shortDescription": {"text": info.title},
        "fullDescription": {"text": info.summary},
        "help": {"text": info.fix},
        "helpUri": report.site + info.url,
        "defaultConfiguration": {"level": SARIF_LEVELS[LEVELS[info.severity]]},
        "properties": {"severity": info.severity, "role": info.role},
    }


def _sarif_result(report: Report, item: Item, rule_index: int) -> dict[str, Any]:
    info = report.index.entries[item.entry_id]
    text = f"{info.title}: {info.summary}"
    if item.evidence == "closest":
        text = f"Closest entry (no signature matched): {text}"
    return {
        "ruleId": item.entry_id,
        "ruleIndex": rule_index,
        "level": SARIF_LEVELS[item.level],
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _file(report, item.line).replace(STDIN_NAME, "stdin")},
                    "region": {"startLine": item.line.line, "snippet": {"text": item.line.text}},
                }
            }
        ],
        "properties": {"evidence": item.evidence},
    }
