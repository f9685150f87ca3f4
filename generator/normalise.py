"""Read a log line as a person would, and a signature the same way.

Logs reach us through terminals and web pages: ANSI colour codes, carriage returns
of progress bars, Markdown emphasis and backticks from a GitHub comment, a leading
`> ` quote marker, and runs of blanks that a rendered page collapses (apex prints
`Gradient overflow.  Skipping step`, a page shows one space). Matching ignores all
of them, on the line and on the signature alike, by these rules in this order:

1. ANSI escape sequences and carriage returns are removed;
2. backticks, and runs of two or more `*` (Markdown bold), are removed;
3. a no-break space becomes a space;
4. a leading quote marker (`>`, `> >`, after optional blanks) is removed;
5. a run of blanks (spaces and tabs) becomes one space.

Between rules 3 and 4, a shell's report of a signal printed in another language reads as
in English (`SHELL_MESSAGES`): `段错误 (核心已转储)` is `Segmentation fault (core dumped)`,
so the entries' English signatures match it; the words are glibc's and bash's own
translations, taken only where the shell prints them (at a line's start, or after the PID
or job number), and the core-dump note wherever it stands.

The diagnose page's matcher (`docs/assets/javascripts/diagnose-matcher.js`) applies
the same rules in the same order; the shared fixtures check that both agree.

The command-line matcher scans whole blocks of a log at once, and collapsing every
blank run of every block would cost it more than the scan itself. So it applies rules
1-3 (cheap, and rarely needed) to each block, searches it with `tolerant_regex`
patterns that accept any run of blanks and any quote marker, and applies rules 4-5
only to the few lines found, where the exact (`normalise_regex`) pattern decides.
"""

from __future__ import annotations

import functools
import re

import re2

# -- shell messages in other languages --------------------------------------------------------

# The signal descriptions of glibc 2.36 (po/*.po, strsignal) and bash 5.2's core-dump note
# (po/*.po, " (core dumped)"), in the languages people paste most, read as in English.
SHELL_MESSAGES = {
    # zh_CN, zh_TW
    "已杀死": "Killed",
    "段错误": "Segmentation fault",
    "已放弃": "Aborted",
    "总线错误": "Bus error",
    "強制結束": "Killed",
    "程式記憶體區段錯誤": "Segmentation fault",
    "匯流排錯誤": "Bus error",
    # ja (glibc leaves "Segmentation fault" untranslated)
    "強制終了": "Killed",
    "バスエラー": "Bus error",
    # de
    "Getötet": "Killed",
    "Speicherzugriffsfehler": "Segmentation fault",
    "Abgebrochen": "Aborted",
    "Bus-Zugriffsfehler": "Bus error",
    # fr
    "Processus arrêté": "Killed",
    "Erreur de segmentation": "Segmentation fault",
    "Abandon": "Aborted",
    "Erreur du bus": "Bus error",
    # es
    "Terminado (killed)": "Killed",
    "Violación de segmento": "Segmentation fault",
    "Abortado": "Aborted",
    "Error del bus": "Bus error",
    # ru
    "Убито": "Killed",
    "Ошибка сегментирования": "Segmentation fault",
    "Аварийный останов": "Aborted",
    "Ошибка шины": "Bus error",
    # pt, pt_BR
    "Morto": "Killed",
    "Falta de segmentação": "Segmentation fault",
    "Falha de segmentação": "Segmentation fault",
    "Erro de bus": "Bus error",
    "Erro no barramento": "Bus error",
}
CORE_DUMPED = {  # bash's " (core dumped)", as rule 2 leaves it (no backticks)
    "（核心已转储）": " (core dumped)",
    "(核心已转储)": " (core dumped)",  # the same, its brackets made narrow by a copy
    "(核心已傾印)": " (core dumped)",
    "(コアダンプ)": " (core dumped)",
    "(Speicherabzug geschrieben)": " (core dumped)",
    "(core' generado)": " (core dumped)",
    "(образ памяти сброшен на диск)": " (core dumped)",
    "(imagem do núcleo gravada)": " (core dumped)",
    "(núcleo despejado)": " (core dumped)",
}
# Where the shell prints a signal's name: alone on a line (after a quote marker, before its
# core-dump note), or after the PID (`line 3: 4242 Killed  python train.py`) or the job number
# (`[1]+  Killed  python train.py`), before a blank, a bracket or the end. The browser reads
# the same patterns (shared.js).
_ALTERNATIVES = "|".join(re.escape(word) for word in sorted(SHELL_MESSAGES, key=len, reverse=True))
SHELL_MESSAGE_PATTERNS = (
    rf"(^[ \t>]*)({_ALTERNATIVES})(?=[ \t]*[(（]|[ \t]*$)",
    rf"([0-9+\]-] +)({_ALTERNATIVES})(?=[ \t(（]|$)",
)
CORE_DUMPED_PATTERN = " ?(" + "|".join(re.escape(note) for note in CORE_DUMPED) + ")"

_SHELL = [re.compile(pattern, re.MULTILINE) for pattern in SHELL_MESSAGE_PATTERNS]
_CORE = re.compile(CORE_DUMPED_PATTERN)
_SHELL_BYTES = [re.compile(pattern.encode(), re.MULTILINE) for pattern in SHELL_MESSAGE_PATTERNS]
_CORE_BYTES = re.compile(CORE_DUMPED_PATTERN.encode())
_ENGLISH = {word.encode(): english.encode() for word, english in SHELL_MESSAGES.items()}
_CORE_ENGLISH = {note.encode(): english.encode() for note, english in CORE_DUMPED.items()}
# A fast first look (RE2: one automaton, linear time) decides whether a block needs the rule.
TRANSLATED_WORDS = (*SHELL_MESSAGES, *CORE_DUMPED)
_ANY_TRANSLATED = re2.compile("|".join(re.escape(word) for word in TRANSLATED_WORDS))


def english_bytes(block: bytes | bytearray) -> bytes | bytearray:
    """The shell's messages in a block read as in English (the rule between 3 and 4)."""
    if _ANY_TRANSLATED.search(block) is None:
        return block
    for pattern in _SHELL_BYTES:
        block = pattern.sub(lambda found: found[1] + _ENGLISH[found[2]], block)
    return _CORE_BYTES.sub(lambda found: _CORE_ENGLISH[found[1]], block)


def _english(text: str) -> str:
    for pattern in _SHELL:
        text = pattern.sub(lambda found: found[1] + SHELL_MESSAGES[found[2]], text)
    return _CORE.sub(lambda found: CORE_DUMPED[found[1]], text)


# -- text: log lines (as bytes, whole blocks of lines at once) and literal signatures ------------

_ANSI_BYTES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_MARKUP_BYTES = re.compile(rb"`+|\*{2,}")
_QUOTE_BYTES = re.compile(rb"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
_BLANKS_BYTES = re.compile(rb" [ \t]+|\t[ \t]*")  # a space then more blanks, or a tab: starts cheaply

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_MARKUP = re.compile(r"`+|\*{2,}")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE)
_BLANKS = re.compile(r" [ \t]+|\t[ \t]*")


def clean_block(block: bytes | bytearray, english: bool = True) -> bytes | bytearray:
    """Rules 1-3 on a block of whole lines (UTF-8), then shell messages read as English
    (`english=False`: not; the matcher finds their words among its literals, and reads
    only the blocks that hold one with `english_bytes`). Each rule runs only when its
    trigger bytes are present, so a plain log costs a few single-byte searches per block
    (the two-byte searches, ten times slower, run only after their first byte was found)."""
    if b"\x1b" in block:
        block = _ANSI_BYTES.sub(b"", block)
    if b"\r" in block:
        block = block.replace(b"\r", b"")
    if b"`" in block or (b"*" in block and b"**" in block):
        block = _MARKUP_BYTES.sub(b"", block)
    if b"\xa0" in block and b"\xc2\xa0" in block:
        block = block.replace(b"\xc2\xa0", b" ")
    return english_bytes(block) if english else block


def finish_lines(cleaned: bytes | bytearray) -> bytes:
    """Rules 4-5 on lines that `clean_block` has already cleaned."""
    if b">" in cleaned:
        cleaned = _QUOTE_BYTES.sub(b"", cleaned)
    return _BLANKS_BYTES.sub(b" ", cleaned)


def finish_line(cleaned: bytes | bytearray) -> bytes | bytearray:
    """Rules 4-5 on one line (no line end) that `clean_block` has already cleaned: the
    matcher's check of each line it found, so the common cases cost a few tests."""
    if cleaned.lstrip(b" \t")[:1] == b">":
        cleaned = _QUOTE_BYTES.sub(b"", cleaned, count=1)
    if b"  " in cleaned or b"\t" in cleaned:
        cleaned = _BLANKS_BYTES.sub(b" ", cleaned)
    return cleaned


def normalise_block(block: bytes | bytearray) -> bytes:
    """A block of whole lines, normalised line by line (all five rules); line ends are kept."""
    return finish_lines(clean_block(block))


def normalise_text(text: str) -> str:
    """One line (or a literal signature), normalised by the same rules as a block."""
    text = _ANSI.sub("", text).replace("\r", "")
    text = _english(_MARKUP.sub("", text).replace("\u00a0", " "))
    text = _QUOTE.sub("", text)
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


_QUANTIFIER = re.compile(r"[*+?]|\{[0-9]*,?[0-9]*\}")
_BLANK_RUN = "[ \\t]+"  # a quantifier after an atom applies to the whole group it becomes


def tolerant_regex(normalised: str) -> str:
    """A pattern that finds, in a line cleaned by `clean_block` only, at least every line
    whose full normalisation the `normalised` pattern (from `normalise_regex`, or an
    escaped literal) matches: each atom that can match a blank also takes a run of
    blanks, and `^` also takes a leading quote marker. For RE2, whose matching time does
    not depend on how a pattern is nested; the exact pattern then decides on each line."""
    out: list[str] = []
    index, length = 0, len(normalised)
    while index < length:
        char = normalised[index]
        if char == "\\" and index + 1 < length:
            size = 4 if normalised[index + 1] == "x" else 2
            out.append(_tolerant_atom(normalised[index : index + size], normalised, index + size))
            index += size
        elif char == "[":
            end = _class_end(normalised, index)
            out.append(_tolerant_atom(normalised[index:end], normalised, end))
            index = end
        elif char == ".":
            out.append(_tolerant_atom(".", normalised, index + 1))
            index += 1
        elif char == "(" and normalised.startswith("(?:", index):
            out.append("(?:")
            index += 3
        elif char == "^":
            out.append("^[ \\t>]*")
            index += 1
        elif char in "()|$":
            out.append(char)
            index += 1
        elif char in "*+?{":
            quantifier = _QUANTIFIER.match(normalised, index)
            size = quantifier.end() - index if quantifier else 1
            out.append(normalised[index : index + size])
            index += size
        elif char == " ":
            quantified = index + 1 < length and normalised[index + 1] in "*+?{"
            out.append(f"(?:{_BLANK_RUN})" if quantified else _BLANK_RUN)
            index += 1
        else:
            out.append(char)  # a plain character other than a space matches no blank
            index += 1
    return "".join(out)


_UNBOUNDED = re.compile(r"[*+]|\{[0-9]+,\}")


def _tolerant_atom(atom: str, pattern: str, after: int) -> str:
    """An escape, a class or `.`, made to take a run of blanks where it could take one blank.
    Repeated without bound, one that takes tabs as well (`.*`, `[^x]+`) takes a run already."""
    space, tab = _matches_blanks(atom)
    if not space or (tab and _UNBOUNDED.match(pattern, after)):
        return atom
    return f"(?:{atom}|{_BLANK_RUN})"


@functools.lru_cache(maxsize=4096)
def _matches_blanks(atom: str) -> tuple[bool, bool]:
    """Whether the atom matches a space, and a tab."""
    return re.fullmatch(atom, " ", re.ASCII) is not None, re.fullmatch(atom, "\t", re.ASCII) is not None
