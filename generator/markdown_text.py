"""Make contributors' Markdown safe to place into a page.

Entry text is Markdown, but raw HTML written in an entry must never become HTML
on a page, and a link must never run script. Outside code spans and fenced
blocks, `&` and `<` become entities (so `<script>` shows as text and entity
tricks such as `java&#115;cript:` stay inert), and link destinations whose
scheme is not http, https or mailto are replaced by `#`. Code is left alone:
Markdown already shows code literally.

These are Jinja filters: `block` for paragraphs and lists, `inline` for one
line (titles, list items), `cell` for a table cell.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

# A fenced block (``` or ~~~, to its closing fence or the end), or a code span.
_CODE = re.compile(
    r"(?P<fence>^[ \t]*(?P<mark>`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]*(?P=mark)[ \t]*$|\Z))"
    r"|(?P<span>(?P<ticks>`+)(?!`).+?(?<!`)(?P=ticks)(?!`))",
    re.MULTILINE | re.DOTALL,
)
_INLINE_DESTINATION = re.compile(r"(\]\(\s*)([^)\s]*)")
_REFERENCE_DEFINITION = re.compile(r"^(\s{0,3}\[[^\]]+\]:\s*)(\S+)", re.MULTILINE)
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*):")
_SAFE_SCHEMES = {"http", "https", "mailto"}


def _safe_destination(destination: str) -> str:
    """Only absolute http(s) and mailto links survive. Script schemes must not run, and a
    relative link or anchor written in an entry would point into whatever page the text
    lands on (an entry, a hub, another engine's layout), so it becomes an inert `#`."""
    scheme = _SCHEME.match(destination)
    if scheme and scheme.group(1).lower() in _SAFE_SCHEMES:
        return destination
    return "#"


def _neutralise_prose(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    if "]" not in text:
        return text
    text = _INLINE_DESTINATION.sub(lambda m: m.group(1) + _safe_destination(m.group(2)), text)
    return _REFERENCE_DEFINITION.sub(lambda m: m.group(1) + _safe_destination(m.group(2)), text)


def _map_prose(text: str, transform: Callable[[str], str]) -> str:
    """Apply `transform` to the parts of `text` that are not code."""
    if "`" not in text and "~~~" not in text:
        return transform(text)
    parts: list[str] = []
    position = 0
    for match in _CODE.finditer(text):
        parts.append(transform(text[position : match.start()]))
        parts.append(match.group(0))
        position = match.end()
    parts.append(transform(text[position:]))
    return "".join(parts)


def block(text: str) -> str:
    """Markdown for a block of prose, safe to render."""
    return _map_prose(text.strip("\n"), _neutralise_prose)


def inline(text: str) -> str:
    """Markdown for one line (a title, a list item): safe, and without line breaks."""
    return _map_prose(" ".join(text.split()), _neutralise_prose)


def cell(text: str) -> str:
    """Markdown for a table cell: one line, with pipes that do not split the cell.

    Python-Markdown's tables already keep a `|` inside a code span in its cell."""
    return _map_prose(" ".join(text.split()), lambda prose: _neutralise_prose(prose).replace("|", "\\|"))


def code_cell(text: str) -> str:
    """Verbatim text as inline code in a table cell, exactly as written: every ASCII symbol is a
    numeric entity, so neither the table (`|`) nor Markdown (`*`, `_`, `\\`, backticks) nor HTML
    reads it. A backslash-escaped pipe in a code span would show as `\\|` and break a copied
    pattern."""
    escaped = "".join(
        f"&#{ord(char)};" if char.isascii() and not char.isalnum() and char != " " else char for char in text
    )
    return f"<code>{escaped}</code>"


def gist(text: str, limit: int = 180) -> str:
    """The first sentence of a paragraph, for a table that compares many entries; cut at a word
    (and never inside a code span) with an ellipsis when even that is longer than `limit`."""
    text = " ".join(text.split())
    in_code = False
    end = len(text)
    for position, char in enumerate(text):
        if char == "`":
            in_code = not in_code
        elif (
            not in_code
            and char in ".!?"
            and text[position + 1 : position + 2] == " "
            and text[position + 2 : position + 3].isupper()
        ):
            end = position + 1
            break
    sentence = text[:end]
    if len(sentence) <= limit:
        return sentence
    cut = sentence[:limit].rsplit(" ", 1)[0]
    if cut.count("`") % 2:  # an open code span: end before it
        cut = cut[: cut.rindex("`")].rstrip()
    return cut.rstrip(",;:") + " …"


def code_fence(source: str) -> str:
    """A backtick fence longer than any run of backticks in `source`."""
    longest = max((len(run) for run in re.findall(r"`+", source)), default=0)
    return "`" * max(3, longest + 1)


def url(value: str) -> str:
    """A URL for a Markdown link destination: parentheses and spaces percent-encoded."""
    return value.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")


def attribute(text: str) -> str:
    """One line of plain text, HTML-escaped: for front matter and labels that themes print raw."""
    return html.escape(" ".join(str(text).split()), quote=True)


FILTERS = {
    "block": block,
    "inline": inline,
    "cell": cell,
    "code_cell": code_cell,
    "gist": gist,
    "fence": code_fence,
    "url": url,
    "attr": attribute,
}
