"""When no signature matches a log: the entries closest to its error lines, marked as such.

A log whose every signature missed still says what went wrong in its error lines (the
last line of a traceback, `error:` from a compiler or launcher, `FAILED`, an assertion).
The matcher collects the last few of them while it scans (`ERROR_LINE`, no second pass);
each is then looked up with the word search of `mlfail search` (without its signature
step: no signature matched), and the best entry for each line, most recent line first, is
offered as a "closest entry", never as a finding. The diagnose page runs the same rule on
the same search index (api/search-index.json), with this table from shared.js.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .compat import SLOTS
from .limits import ERROR_LINES_KEPT
from .matcher import Match
from .search import SearchIndex

# A line that reports an error, as read after normalisation: an exception's class (a word ending
# in Error or Exception, with or without its module path), `error:`/`Error:` as compilers,
# shells and launchers print it, `FAILED`, a failed assertion, an abort or a signal by name.
ERROR_LINE = (
    r"\b[A-Z][A-Za-z0-9_]*(?:Error|Exception)\b"
    r"|\b[Ee]rror:[ \t]"
    r"|\bFAILED\b"
    r"|\bAssertion\b.*\bfailed\b"
    r"|\b(?:Segmentation fault|Bus error|Aborted|Killed)(?: \(core dumped\))?$"
    r"|\bterminate called\b"
)
# Source code printed in a log (a traceback's code lines, a compiler's debug dump) names
# exceptions without reporting one: such lines are not looked up.
CODE_LINE = r"\b(?:raise|except) [A-Za-z_(]"
ERROR_LINES_READ = 8  # the most recent distinct error lines looked up
CLOSEST_SHOWN = 3
# Below this a line shares only common words with an entry (`error`, `runtime`, a file name):
# offering it would be a guess. One rare word of a title, or a code, is well above it.
MIN_SCORE = 20.0
HEADING = "Closest entries (no signature matched; found by searching the error lines)"


@dataclass(frozen=True, **SLOTS)
class Closest:
    entry_id: str
    title: str
    score: float
    line: Match  # the error line it was found from


_CODE_LINE = re.compile(CODE_LINE)


def recent_error_lines(lines: list[Match]) -> list[Match]:
    """The most recent distinct error lines that are not source code, last first."""
    chosen: list[Match] = []
    seen: set[str] = set()
    for match in reversed(lines):
        if match.text not in seen and not _CODE_LINE.search(match.text):
            seen.add(match.text)
            chosen.append(match)
            if len(chosen) == ERROR_LINES_READ:
                break
    return chosen


def closest_entries(search: SearchIndex, lines: list[Match]) -> list[Closest]:
    """At most CLOSEST_SHOWN entries: the best hit of each recent error line, last line first."""
    found: list[Closest] = []
    for match in recent_error_lines(lines):
        for hit in search.search(match.text, limit=CLOSEST_SHOWN):
            if hit.score < MIN_SCORE:
                break
            if all(other.entry_id != hit.entry_id for other in found):
                found.append(Closest(hit.entry_id, hit.title, hit.score, match))
                break
        if len(found) == CLOSEST_SHOWN:
            break
    return found


def shared_table() -> dict:
    """The part of shared.js that the diagnose page reads."""
    return {
        "errorLine": ERROR_LINE,
        "codeLine": CODE_LINE,
        "errorLinesRead": ERROR_LINES_READ,
        "errorLinesKept": ERROR_LINES_KEPT,
        "closestShown": CLOSEST_SHOWN,
        "closestMinScore": MIN_SCORE,
        "closestHeading": HEADING,
    }
