"""Reports of several nodes merged into one diagnosis: `mlfail diagnose node-*.json`.

A 1,000-node job needs no copy of every log in one place: each node diagnoses its own logs
(`srun mlfail diagnose --format json /local/logs > node-$SLURM_NODEID.json`) and the reports
are merged. A report carries, per input, the lines its scan kept (every matched line, and the
lines the culprit finder reads), with their line numbers. Merging scans those lines again with
the same matcher, as if they were the inputs, and puts back each line's number: the findings and
the culprit are then decided over the whole job by the same rules as for one log folder.
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

from .inputs import LogFile
from .matcher import Match, Matcher

if TYPE_CHECKING:
    from .diagnose import Scanned

MAX_REPORT_BYTES = 64 << 20


class ReportError(Exception):
    """A report that cannot be merged."""


def kept_inputs(matcher: Matcher, scanned: Scanned) -> list[dict[str, Any]]:
    """Per input: its name, what its path says of its rank, and the lines the scan kept."""
    lines: dict[int, dict[int, str]] = {}
    for matches in scanned.found.values():
        for match in matches:
            lines.setdefault(match.source, {})[match.line] = match.text
    inputs = []
    for source, log in enumerate(scanned.logs):
        kept = lines.get(source, {})
        inputs.append(
            {
                "file": scanned.names[source],
                "rank": log.rank,
                "local_rank": log.local_rank,
                "node": log.node,
                "lines": [[number, kept[number]] for number in sorted(kept)],
            }
        )
    return inputs


def add_reports(matcher: Matcher, scanned: Scanned, paths: list[str]) -> None:
    """Scan the kept lines of every report as more inputs of the same job."""
    from .diagnose import InputError

    for path in paths:
        try:
            inputs = _read(path)
        except ReportError as error:
            raise InputError(f"{path}: not a report that can be merged: {error}") from None
        for item in inputs:
            source = len(scanned.logs)
            log = LogFile(item["file"], item.get("rank"), item.get("local_rank"), item.get("node"))
            numbers = [int(number) for number, _ in item["lines"]]
            text = "".join(str(line).replace("\n", " ") + "\n" for _, line in item["lines"])
            found: dict[int, list[Match]] = {}
            matcher.scan(io.BytesIO(text.encode("utf-8")), source=source, found=found)
            for index, matches in found.items():
                renumbered = [Match(numbers[m.line - 1], m.text, m.signature, m.source) for m in matches]
                scanned.found.setdefault(index, []).extend(renumbered)
            scanned.logs.append(log)
            scanned.names.append(f"{path}:{item['file']}")


def _read(path: str) -> list[dict[str, Any]]:
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_REPORT_BYTES + 1)
    except OSError as error:
        raise ReportError(f"cannot be read ({error.strerror or error})") from None
    if len(data) > MAX_REPORT_BYTES:
        raise ReportError(f"more than {MAX_REPORT_BYTES >> 20} MiB")
    try:
        report = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise ReportError(f"not JSON ({error})") from None
    if not isinstance(report, dict) or "mlfail-report" not in report:
        raise ReportError("no `mlfail-report` key: not written by `mlfail diagnose --format json`")
    inputs = report.get("inputs")
    if not isinstance(inputs, list):
        raise ReportError("no `inputs` list")
    checked = []
    for item in inputs:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("file"), str)
            or not isinstance(item.get("lines"), list)
        ):
            raise ReportError("an input without `file` and `lines`")
        for pair in item["lines"]:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], int) and pair[0] > 0):
                raise ReportError(f"{item['file']}: a line that is not [number, text]")
        for key in ("rank", "local_rank", "node"):
            if item.get(key) is not None and not isinstance(item[key], int):
                raise ReportError(f"{item['file']}: `{key}` is not a whole number")
        checked.append(item)
    return checked
