"""Read a log line as a person would, and a signature the same way.

Logs reach us through terminals and web pages: ANSI colour codes, carriage returns
of progress bars, Markdown emphasis and backticks from a GitHub comment, a leading
`> ` quote marker, and runs of blanks that a rendered page collapses (apex prints
`Gradient overflow.  Skipping step`, a page shows one space). Matching ignores all
of them, on the line and on the signature alike:

1. ANSI escape sequences and carriage returns are removed;
2. a leading quote marker (`>`, `> >`, after optional blanks) is removed;
3. backticks, and runs of two or more `*` (Markdown bold), are removed;
4. a run of blanks (space, tab, no-break space) becomes one space.

The diagnose page's matcher (`docs/assets/javascripts/diagnose-matcher.js`) applies
the same rules in the same order; the shared fixtures check that both agree.
"""

from __future__ import annotations

import re

# -- text: log lines (as bytes, whole blocks of lines at once) and literal signatures ------------

_ANSI_BYTES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_QUOTE_BYTES = re.compile(rb"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
_MARKUP_BYTES = re.compile(rb"`+|\*{2,}")
_BLANKS_BYTES = re.compile(rb"(?: |\t|\xc2\xa0){2,}|\t|\xc2\xa0")

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
_MARKUP = re.compile(r"`+|\*{2,}")
_BLANKS = re.compile(r"[ \t\u00a0]{2,}|[\t\u00a0]")


def normalise_block(block: bytes | bytearray) -> bytes | bytearray:
    """A block of whole lines (UTF-8), normalised line by line; line ends are kept.

    Each rule runs only when its trigger bytes are present, so a plain log costs a
    few `in` tests per block."""
    if b"\x1b" in block:
        block = _ANSI_BYTES.sub(b"", block)
    if b"\r" in block:
        block = block.replace(b"\r", b"")
    if b">" in block:
        block = _QUOTE_BYTES.sub(b"", block)
    if b"`" in block or b"**" in block:
        block = _MARKUP_BYTES.sub(b"", block)
    if b"  " in block or b"\t" in block or b"\xc2\xa0" in block:
        block = _BLANKS_BYTES.sub(b" ", block)
    return block


def normalise_text(text: str) -> str:
    """One line (or a literal signature), normalised by the same rules as a block."""
    text = _ANSI.sub("", text).replace("\r", "")
    text = _QUOTE.sub("", text)
    text = _MARKUP.sub("", text)
    return _BLANKS.sub(" ", text)


# -- regex signatures ---------------------------------------------------------------------------


def normalise_regex(pattern: str) -> str:
    """A regex signature as it must read against normalised lines.

    Outside character classes: backticks and runs of two or more escaped `\\*` are
    dropped, `\\t` and runs of literal blanks become one space. Classes and every other
    construct are kept as written. Validation checks that the result still compiles in
    the portable subset and still matches the entry's (normalised) examples."""
    out: list[str] = []
    index, length = 0, len(pattern)
    while index < length:
        char = pattern[index]
        if char == "\\" and index + 1 < length:
            pair = pattern[index : index + 2]
            if pair == "\\*" and pattern.startswith("\\*\\*", index):
                while pattern.startswith("\\*", index):
                    index += 2
                continue
            if pair == "\\t":
                _add_blank(out)
            elif pair == "\\`":
                pass
            else:
                out.append(pair)
            index += 2
            continue
        if char == "[":
            end = _class_end(pattern, index)
            out.append(pattern[index:end])
            index = end
            continue
        if char in " \u00a0":
            _add_blank(out)
        elif char != "`":
            out.append(char)
        index += 1
    return "".join(out)


def _add_blank(out: list[str]) -> None:
    if not out or out[-1] != " ":
        out.append(" ")


def _class_end(pattern: str, start: int) -> int:
    """The index just past the character class that opens at `start`."""
    index = start + 1
    if index < len(pattern) and pattern[index] == "^":
        index += 1
    if index < len(pattern) and pattern[index] == "]":
        index += 1  # a leading ] is a member
    while index < len(pattern):
        if pattern[index] == "\\":
            index += 2
            continue
        if pattern[index] == "]":
            return index + 1
        index += 1
    return len(pattern)
