"""Check that the reference URLs of the entries still answer, and report the dead ones.

Run weekly (not on pull requests: the web changes under everyone alike). Each URL is
asked once with HEAD, falling back to GET when a server refuses HEAD; a few run at
once. A dead link is reported at the line of its `url` in the entry's YAML.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .compat import SLOTS
from .loading import display_path, entry_files
from .problems import github_annotation
from .yaml_source import Located, read_yaml_file

USER_AGENT = "ml-failure-encyclopedia-link-check/1 (+https://github.com/ml-failure-encyclopedia/encyclopedia)"


@dataclass(frozen=True, **SLOTS)
class Reference:
    path: str
    line: int
    column: int
    field: str
    url: str


@dataclass(frozen=True, **SLOTS)
class DeadLink:
    """A reference that did not answer: `dead` when the server said so (HTTP 4xx or 5xx),
    `unreachable` when no answer came (no network, DNS, refused, timeout): not the link's fault."""

    reference: Reference
    reason: str
    kind: str = "dead"

    def format(self) -> str:
        ref = self.reference
        return f"{ref.path}:{ref.line}:{ref.column}: warning: {ref.field}: {ref.url} {self.reason} ({self.kind})"

    def format_github(self) -> str:
        ref = self.reference
        title = "dead link" if self.kind == "dead" else "unreachable link"
        return github_annotation("warning", ref.path, ref.line, ref.column, title, f"{ref.url} {self.reason}")


def references(entries_arg: str) -> Iterator[Reference]:
    entries_dir = Path(entries_arg)
    for path in entry_files(entries_dir):
        shown = display_path(entries_arg, path, entries_dir)
        document = read_yaml_file(path, shown)
        if document.data is None or not isinstance(document.data.get("references"), list):
            continue
        located = Located(shown, document.data)
        for index, item in enumerate(document.data["references"]):
            if isinstance(item, dict) and isinstance(item.get("url"), str):
                loc = ("references", index, "url")
                mark = located.mark(loc)
                yield Reference(shown, mark.line, mark.column, f"references[{index}].url", item["url"])


HEAD_REFUSED = (403, 405, 429, 501)  # some servers answer HEAD so but serve GET


def check(url: str, timeout: float) -> tuple[str, str] | None:
    """None when the URL answers; otherwise why, and whether it is dead or unreachable."""
    verdict = _ask(url, "HEAD", timeout)
    if verdict in HEAD_REFUSED:
        verdict = _ask(url, "GET", timeout)
    if verdict is None:
        return None
    if isinstance(verdict, int):
        return f"answered HTTP {verdict}", "dead"
    return f"could not be reached ({verdict})", "unreachable"


def _ask(url: str, method: str, timeout: float) -> int | str | None:
    """None when the URL answers, the HTTP status of an error, or why it could not be reached."""
    request = urllib.request.Request(url, method=method, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return None
    except urllib.error.HTTPError as error:
        return error.code
    except (urllib.error.URLError, TimeoutError, OSError, ValueError) as error:
        return str(getattr(error, "reason", error))


def dead_links(entries_arg: str, timeout: float = 15.0, workers: int = 8) -> list[DeadLink]:
    found = list(references(entries_arg))
    unique = sorted({reference.url for reference in found})
    with ThreadPoolExecutor(max_workers=workers) as pool:
        verdicts = dict(zip(unique, pool.map(lambda url: check(url, timeout), unique)))
    return [DeadLink(reference, *verdict) for reference in found if (verdict := verdicts[reference.url])]
