"""`mlfail explain ID`: one entry in the terminal, readable at 80 columns, like `rustc --explain`.

The order is a reader's under pressure: what it is and the first thing to try, then
symptom → cause → what to do, the checklist that confirms it, the fix with its code, and
the link to the full page.
"""

from __future__ import annotations

import difflib
import re
import textwrap

from .encyclopedia import Encyclopedia
from .models import Entry
from .urls import entry_src, url_of

WIDTH = 80
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def closest_ids(encyclopedia: Encyclopedia, wanted: str, count: int = 3) -> list[str]:
    known = list(encyclopedia.entries) + list(encyclopedia.former_ids)
    close = difflib.get_close_matches(wanted, known, n=count, cutoff=0.5)
    if not close:  # a fragment of an id: `nccl-timeout` for nccl-watchdog-timeout
        parts = [part for part in wanted.split("-") if part]
        close = [key for key in encyclopedia.entries if parts and all(part in key for part in parts)][:count]
    return list(dict.fromkeys(encyclopedia.resolve(key) for key in close))


def explain(entry: Entry, site: str, width: int = WIDTH) -> str:
    out: list[str] = []
    out += _wrapped(entry.title.upper(), width)
    out += _wrapped(f"{entry.severity} · {entry.category} · {', '.join(entry.tags)}", width)
    out.append("")
    out += _section("Quick answer", [_wrapped(entry.summary, width, "  ")])
    causes = {cause.id: cause for cause in entry.causes}
    rows = []
    for symptom in entry.symptoms:
        cause = causes[symptom.cause]
        rows.append(
            _wrapped(symptom.symptom, width, "  - ", "    ")
            + _wrapped(cause.text, width, "    because: ", "             ")
            + _wrapped(cause.fix, width, "    do:      ", "             ")
        )
    out += _section("Symptom → cause → what to do", rows)
    out += _section("Confirm it", [_wrapped(check, width, "  [ ] ", "      ") for check in entry.confirm])
    fix = [_wrapped(entry.fix.summary, width, "  ")]
    fix += [_wrapped(step, width, f"  {number}. ", "     ") for number, step in enumerate(entry.fix.steps or (), 1)]
    for snippet in entry.fix.code or ():
        fix.append(
            [
                f"  {snippet.label} ({snippet.language}):",
                *("      " + line for line in snippet.source.rstrip("\n").split("\n")),
            ]
        )
    if entry.fix.tradeoff:
        fix.append(_wrapped(entry.fix.tradeoff, width, "  Trade-off: ", "  "))
    out += _section("Fix", fix)
    out.append(f"More: {site}{url_of(entry_src(entry.id))}")
    return "\n".join(out)


def _section(title: str, blocks: list[list[str]]) -> list[str]:
    lines = [title, "-" * len(title)]
    for block in blocks:
        lines += block
    return [*lines, ""]


def _wrapped(text: str, width: int, first: str = "", rest: str | None = None) -> list[str]:
    """Markdown prose as plain wrapped lines: links show their URL, code spans keep their backticks."""
    plain = _LINK.sub(lambda link: f"{link.group(1)} ({link.group(2)})", " ".join(text.split()))
    return textwrap.wrap(
        plain,
        width=width,
        initial_indent=first,
        subsequent_indent=first if rest is None else rest,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first.rstrip()]
