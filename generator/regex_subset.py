"""The portable regular-expression subset used by signatures.

A signature runs in three engines: Python's ``re`` (validation, the CLI),
RE2 (the fast log matcher) and the browser's JavaScript ``RegExp`` (the diagnose
page). This module parses a pattern with a small grammar that admits only what
means the same in all three, and rejects the shapes that make backtracking
engines take exponential time.

Grammar (anything else is an error naming the position)::

    alternation := sequence ('|' sequence)*
    sequence    := (atom quantifier?)*
    quantifier  := ('*' | '+' | '?' | '{n}' | '{n,}' | '{n,m}') '?'?
    atom        := '(' ['?:'] alternation ')' | '[' class ']' | '.' | '^' | '$'
                 | escape | any other character
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Union

import re2

from .compat import SLOTS

MAX_PATTERN_LENGTH = 2_000
MAX_GROUP_DEPTH = 32
MAX_REPEAT = 1_000  # RE2's own limit on counted repetition

# Character sets are approximated over ASCII/Latin-1 plus one code, OTHER, for
# every character above U+00FF: enough to tell whether two branches overlap.
OTHER = 256
_ALL = frozenset(range(OTHER + 1))
_DIGITS = frozenset(range(ord("0"), ord("9") + 1))
_WORD = _DIGITS | frozenset(range(ord("a"), ord("z") + 1)) | frozenset(range(ord("A"), ord("Z") + 1)) | {ord("_")}
_SPACE = frozenset(map(ord, " \t\n\r\f\v"))
_CLASS_ESCAPES = {
    "d": _DIGITS,
    "D": _ALL - _DIGITS,
    "w": _WORD,
    "W": _ALL - _WORD,
    "s": _SPACE,
    "S": _ALL - _SPACE,
}
_CONTROL_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v"}
_NOT_PORTABLE_ESCAPES = {
    "A": r"'\A' is Python-only; use '^'",
    "Z": r"'\Z' is not portable; use '$'",
    "z": r"'\z' is not portable; use '$'",
    "u": r"'\u' escapes are not portable; write the character itself",
    "U": r"'\U' escapes are not portable; write the character itself",
    "N": r"'\N' escapes are not portable; write the character itself",
    "G": r"'\G' is not portable",
    "k": "named back-references are not allowed",
    "p": r"'\p' classes are not portable",
    "P": r"'\P' classes are not portable",
}
_GROUP_PREFIXES = {
    "?P": "named groups are not allowed; use '(?:...)'",
    "?<=": "look-behind is not allowed",
    "?<!": "look-behind is not allowed",
    "?<": "named groups are not allowed; use '(?:...)'",
    "?=": "look-ahead is not allowed",
    "?!": "look-ahead is not allowed",
    "?#": "comments are not allowed",
    "?>": "atomic groups are not allowed",
    "?(": "conditional groups are not allowed",
}


class RegexError(ValueError):
    def __init__(self, message: str, position: int | None = None):
        where = f" (at character {position + 1})" if position is not None else ""
        super().__init__(f"{message}{where}")


# -- the syntax tree ------------------------------------------------------------


@dataclass(**SLOTS)
class Chars:
    """One character from a set."""

    chars: frozenset[int]


@dataclass(**SLOTS)
class Assertion:
    """A zero-width position test: ^, $, \\b, \\B."""


@dataclass(**SLOTS)
class Sequence:
    items: list[Node] = field(default_factory=list)


@dataclass(**SLOTS)
class Alternation:
    branches: list[Node]
    position: int


@dataclass(**SLOTS)
class Repeat:
    body: Node
    minimum: int
    maximum: int | None  # None: unbounded
    position: int


Node = Union[Chars, Assertion, Sequence, Alternation, Repeat]
"""A node of a parsed pattern."""


# -- parsing --------------------------------------------------------------------


class _Parser:
    def __init__(self, pattern: str):
        self.pattern = pattern
        self.pos = 0
        self.depth = 0

    def parse(self):
        tree = self._alternation()
        if self.pos < len(self.pattern):  # only an unmatched ')' stops the top level early
            raise RegexError("unbalanced ')'", self.pos)
        return tree

    def _peek(self, text: str) -> bool:
        return self.pattern.startswith(text, self.pos)

    def _alternation(self):
        start = self.pos
        branches: list[Node] = [self._sequence()]
        while self._peek("|"):
            self.pos += 1
            branches.append(self._sequence())
        return branches[0] if len(branches) == 1 else Alternation(branches, start)

    def _sequence(self) -> Sequence:
        sequence = Sequence()
        while self.pos < len(self.pattern) and self.pattern[self.pos] not in "|)":
            start = self.pos
            atom = self._atom()
            repeat = self._quantifier()
            if repeat is None:
                sequence.items.append(atom)
                continue
            if isinstance(atom, Assertion):
                raise RegexError("a quantifier cannot follow an anchor or '\\b'", start)
            minimum, maximum = repeat
            sequence.items.append(Repeat(atom, minimum, maximum, start))
            if self.pos < len(self.pattern) and self.pattern[self.pos] in "*+?{":
                raise RegexError("a quantifier cannot follow another quantifier", self.pos)
        return sequence

    def _quantifier(self) -> tuple[int, int | None] | None:
        if self.pos >= len(self.pattern):
            return None
        char = self.pattern[self.pos]
        if char in "*+?":
            self.pos += 1
            bounds = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
        elif char == "{":
            bounds = self._counted()
        else:
            return None
        if self._peek("?"):  # lazy: the same in every engine
            self.pos += 1
        elif self._peek("+"):
            raise RegexError("possessive quantifiers are not allowed", self.pos)
        return bounds

    def _counted(self) -> tuple[int, int | None]:
        match = re.compile(r"\{([0-9]+)(,([0-9]*))?\}").match(self.pattern, self.pos)
        if not match:
            raise RegexError("write a literal '{' as '\\{' (or a quantifier as {n}, {n,} or {n,m})", self.pos)
        minimum = int(match.group(1))
        maximum: int | None = minimum
        if match.group(2):
            maximum = int(match.group(3)) if match.group(3) else None
        if maximum is not None and maximum < minimum:
            raise RegexError(f"repeat range {{{minimum},{maximum}}} is backwards", self.pos)
        if minimum > MAX_REPEAT or (maximum or 0) > MAX_REPEAT:
            raise RegexError(f"repeat counts above {MAX_REPEAT} are not allowed", self.pos)
        self.pos = match.end()
        return minimum, maximum

    def _atom(self):
        char = self.pattern[self.pos]
        if char == "(":
            return self._group()
        if char == "[":
            return Chars(self._class())
        if char in "*+?":
            raise RegexError(f"'{char}' has nothing to repeat; escape it as '\\{char}'", self.pos)
        if char == "{":
            raise RegexError("write a literal '{' as '\\{'", self.pos)
        self.pos += 1
        if char == ".":
            return Chars(_ALL - {ord("\n")})
        if char in "^$":
            return Assertion()
        if char == "\\":
            return self._escape(in_class=False)
        return _single(char)

    def _group(self):
        start = self.pos
        self.pos += 1
        if self._peek("?"):
            if self._peek("?:"):
                self.pos += 2
            else:
                for prefix, message in _GROUP_PREFIXES.items():
                    if self._peek(prefix):
                        raise RegexError(message, start)
                raise RegexError("inline flags are not allowed", start)
        self.depth += 1
        if self.depth > MAX_GROUP_DEPTH:
            raise RegexError(f"groups nested deeper than {MAX_GROUP_DEPTH}", start)
        body = self._alternation()
        self.depth -= 1
        if not self._peek(")"):
            raise RegexError("missing ')'", start)
        self.pos += 1
        return body

    def _escape(self, in_class: bool) -> Node:
        if self.pos >= len(self.pattern):
            raise RegexError("pattern ends with a lone backslash", self.pos - 1)
        char = self.pattern[self.pos]
        start = self.pos - 1
        self.pos += 1
        if char in _CLASS_ESCAPES:
            return Chars(_CLASS_ESCAPES[char])
        if char in _CONTROL_ESCAPES:
            return Chars(frozenset({ord(_CONTROL_ESCAPES[char])}))
        if char in "bB":
            if in_class:
                raise RegexError("'\\b' inside a class is not portable", start)
            return Assertion()
        if char == "x":
            digits = self.pattern[self.pos : self.pos + 2]
            if not re.fullmatch(r"[0-9a-fA-F]{2}", digits):
                raise RegexError("'\\x' needs two hex digits", start)
            self.pos += 2
            return Chars(frozenset({_code(chr(int(digits, 16)))}))
        if char.isdigit():
            raise RegexError("back-references and octal escapes are not allowed", start)
        if char in _NOT_PORTABLE_ESCAPES:
            raise RegexError(_NOT_PORTABLE_ESCAPES[char], start)
        if char.isascii() and not char.isalnum():
            return _single(char)  # an escaped punctuation mark is itself
        raise RegexError(f"unknown escape '\\{char}'", start)

    def _class(self) -> frozenset[int]:
        start = self.pos
        self.pos += 1
        negated = self._peek("^")
        if negated:
            self.pos += 1
        if self._peek("]"):
            raise RegexError("a ']' first in a class is not portable; escape it as '\\]'", self.pos)
        members: set[int] = set()
        while True:
            if self.pos >= len(self.pattern):
                raise RegexError("missing ']'", start)
            if self._peek("]"):
                self.pos += 1
                break
            low = self._class_member()
            if self._peek("-") and not self.pattern.startswith("-]", self.pos):
                self.pos += 1
                high = self._class_member()
                if len(low) != 1 or len(high) != 1:
                    raise RegexError("a range needs single characters at both ends", self.pos)
                (lo,), (hi,) = low, high
                if hi < lo:
                    raise RegexError("class range is backwards", self.pos)
                members.update(range(lo, hi + 1))
            else:
                members.update(low)
        return frozenset(_ALL - members if negated else members)

    def _class_member(self) -> frozenset[int]:
        char = self.pattern[self.pos]
        if char == "[":
            raise RegexError("escape '[' inside a class as '\\['", self.pos)
        self.pos += 1
        if char == "\\":
            escaped = self._escape(in_class=True)
            assert isinstance(escaped, Chars)  # inside a class an escape is a set of characters (\b is refused)
            return escaped.chars
        return frozenset({_code(char)})


def _code(char: str) -> int:
    return min(ord(char), OTHER)


@functools.cache
def _single(char: str) -> Chars:
    return Chars(frozenset({_code(char)}))


# -- analysis -------------------------------------------------------------------


def _nullable(node: Node) -> bool:
    if isinstance(node, Chars):
        return False
    if isinstance(node, Assertion):
        return True
    if isinstance(node, Sequence):
        return all(_nullable(item) for item in node.items)
    if isinstance(node, Alternation):
        return any(_nullable(branch) for branch in node.branches)
    return node.minimum == 0 or _nullable(node.body)


def _first(node: Node) -> frozenset[int]:
    """The characters a match of `node` can start with."""
    if isinstance(node, Chars):
        return node.chars
    if isinstance(node, Assertion):
        return frozenset()
    if isinstance(node, Sequence):
        result: frozenset[int] = frozenset()
        for item in node.items:
            result |= _first(item)
            if not _nullable(item):
                break
        return result
    if isinstance(node, Alternation):
        return frozenset().union(*(_first(branch) for branch in node.branches))
    return _first(node.body)


def _walk(node):
    """The structural nodes under `node` (itself included); single characters are skipped."""
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, Sequence):
            pending.extend(current.items)
        elif isinstance(current, Alternation):
            pending.extend(current.branches)
        elif isinstance(current, Repeat):
            pending.append(current.body)
        else:
            continue
        yield current


def _check_backtracking(tree: Node) -> None:
    """Reject repeated groups whose inside can match the same text in many ways."""
    for node in _walk(tree):
        if not isinstance(node, Repeat) or (node.maximum is not None and node.maximum <= 1):
            continue
        if _nullable(node.body):
            raise RegexError("a repeated part can match the empty string", node.position)
        for inner in _walk(node.body):
            if isinstance(inner, Repeat) and inner.maximum is None:
                raise RegexError(
                    "nested quantifiers (an unbounded repeat inside a repeated group) can backtrack exponentially",
                    node.position,
                )
            if isinstance(inner, Alternation) and _branches_overlap(inner):
                raise RegexError(
                    "a repeated group has alternatives that can start with the same character", inner.position
                )


def _branches_overlap(alternation: Alternation) -> bool:
    seen: set[int] = set()
    for branch in alternation.branches:
        first = _first(branch)
        if seen & first:
            return True
        seen |= first
    return False


# -- the required literal ---------------------------------------------------------


def required_literal(pattern: str, minimum: int = 3) -> str | None:
    """The longest run of plain characters that every match of `pattern` contains.

    A multi-pattern matcher can search for these few literals all at once and
    run a regex only on the lines that contain its literal (the diagnose page
    does). None when there is no run of at least `minimum` characters."""
    try:
        tree = _Parser(pattern).parse()
    except RegexError:
        return None
    best, run = "", ""
    for node in _mandatory_items(tree):
        char = _plain_char(node)
        if char is None:
            best, run = max(best, run, key=len), ""
        else:
            run += char
    best = max(best, run, key=len)
    return best if len(best) >= minimum else None


def required_literals(pattern: str, minimum: int = 4) -> list[tuple[str, ...]]:
    """Groups of literals that every match of `pattern` contains: of each group, at least one.

    A group is one run of plain characters other than blanks (`foo` in `foo\\d+`), or, for
    an alternation every branch of which has one, the alternatives (`(?:Error|Exception)`).
    Blanks end a run: the command-line matcher reads blocks before their blank runs are
    collapsed, so only blank-free text is found there as written. Only runs of at least
    `minimum` characters count; [] when there are none, or the pattern is not in the subset."""
    try:
        tree = _Parser(pattern).parse()
    except RegexError:
        return []
    return [tuple(sorted(group)) for group in _literal_groups(tree, minimum)]


def _literal_groups(node: Node, minimum: int) -> list[frozenset[str]]:
    if isinstance(node, Alternation):
        best = [_most_selective(_literal_groups(branch, minimum)) for branch in node.branches]
        chosen = [group for group in best if group is not None]
        return [frozenset().union(*chosen)] if len(chosen) == len(best) else []
    if isinstance(node, Repeat):
        return _literal_groups(node.body, minimum) if node.minimum >= 1 else []
    groups: list[frozenset[str]] = []
    run: list[str] = []

    def end_run() -> None:
        if len(run) >= minimum:
            groups.append(frozenset(["".join(run)]))
        run.clear()

    for item in _mandatory_items(node):
        char = _plain_char(item)
        if char is not None and not char.isspace():
            run.append(char)
            continue
        end_run()
        if isinstance(item, (Alternation, Repeat)):
            groups.extend(_literal_groups(item, minimum))
    end_run()
    return groups


def _most_selective(groups: list[frozenset[str]]) -> frozenset[str] | None:
    """The group whose shortest literal is longest (then the fewest alternatives)."""
    return max(groups, key=lambda group: (min(map(len, group)), -len(group)), default=None)


def _mandatory_items(node):
    """The items of a top-level sequence, with unquantified groups flattened into it."""
    if isinstance(node, Sequence):
        for item in node.items:
            yield from _mandatory_items(item)
    else:
        yield node


def _plain_char(node: Node) -> str | None:
    if isinstance(node, Chars) and len(node.chars) == 1:
        (code,) = node.chars
        return chr(code) if code < OTHER else None
    return None


# -- the public check -----------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def check_portable(pattern: str) -> Any:
    """Return the pattern compiled by RE2 (the engine `diagnose` matches logs with), or
    raise `RegexError` saying what to change.

    The grammar above admits only what Python's `re`, RE2 and JavaScript read alike,
    so compiling with RE2 here checks the last engine-specific limits (sizes) without
    paying for a second compile. Cached: validation asks for each pattern twice in a
    row (the model, then the examples). Bounded: a corpus has tens of thousands."""
    if not isinstance(pattern, str) or not pattern:
        raise RegexError("the pattern is empty")
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise RegexError(f"the pattern is longer than {MAX_PATTERN_LENGTH} characters")
    if "\n" in pattern or "\r" in pattern:
        raise RegexError("a signature matches within one line; remove the line break")
    tree = _Parser(pattern).parse()
    if _nullable(tree):
        raise RegexError("the pattern can match the empty string, so it would match every line")
    _check_backtracking(tree)
    try:
        return re2.compile(pattern)
    except Exception as error:  # re2 raises its own error type
        raise RegexError(f"RE2 cannot compile it: {error}") from None
