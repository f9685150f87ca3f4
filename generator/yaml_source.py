"""Read one YAML file into plain Python values that remember where they came from.

Safety comes first, because the files come from pull requests:

* libyaml's C parser produces *events*; the tree is built here from those events
  with an explicit stack. Nothing is ever constructed from a tag, so a
  ``!!python/object`` tag is an error and never code. (libyaml's own composer
  recurses in C and crashes on deeply nested input; its event parser does not.)
* Aliases reuse the anchored value instead of copying it, and every alias
  charges the size of what it stands for to a fixed budget, so a "billion
  laughs" file fails fast in little memory.
* Size, encoding, tabs, duplicate keys, merge keys, several documents, an empty
  file or a top level that is not a mapping: each becomes a clear `Problem`.

Mappings and sequences come back as `LocatedDict` / `LocatedList`, which carry
the line and column of every key and value, so a later error about
``symptoms[1].cause`` can point at the exact spot in the source.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Union

import yaml
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from . import problem_codes as codes
from .compat import SLOTS
from .problems import FILE_FIELD, Problem

MAX_FILE_BYTES = 1024 * 1024
MAX_ALIAS_EXPANSION = 10_000  # nodes that aliases may stand for, per file
MAX_DEPTH = 64

_TAG = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_TAG + name for name in ("str", "int", "float", "bool", "null", "timestamp")}
_IMPLICIT_RESOLVERS = Resolver.yaml_implicit_resolvers
_RESOLVER_FIRST_CHARACTERS = frozenset(_IMPLICIT_RESOLVERS) - {""}  # others are always text
_CONSTRUCTOR = SafeConstructor()

# libyaml's C parser makes reading fast; only its event parser is used (see above).
_Parser = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Mark(NamedTuple):
    line: int  # 1-based
    column: int  # 1-based


# Inside the tree, positions are plain (line, column) tuples: building millions of
# them is the hot path. `Mark` gives them names at the edges.
Position = tuple[int, int]


class LocatedDict(dict):
    """A mapping that knows the position of each key and each value."""

    __slots__ = ("key_marks", "mark", "value_marks")

    def __init__(self, mark: Position):
        super().__init__()
        self.mark = mark
        self.key_marks: dict[str, Position] = {}
        self.value_marks: dict[str, Position] = {}


class LocatedList(list):
    """A sequence that knows the position of each item."""

    __slots__ = ("item_marks", "mark")

    def __init__(self, mark: Position):
        super().__init__()
        self.mark = mark
        self.item_marks: list[Position] = []


class YamlProblem(Exception):
    def __init__(self, mark: Mark, message: str, code: str = codes.YAML_NOT_PLAIN):
        super().__init__(message)
        self.mark = mark
        self.message = message
        self.code = code


@dataclass(**SLOTS)
class Document:
    """The result of reading one file: its data (None if unreadable) and problems."""

    data: LocatedDict | None
    problems: list[Problem]


def read_yaml_file(path: os.PathLike | str, display_path: str) -> Document:
    """Read, decode and parse one file; never raises for bad content."""
    try:
        raw = _read_bounded(path)
    except YamlProblem as problem:
        return _failed(display_path, problem)
    except OSError as error:
        reason = error.strerror or str(error)
        return _failed(display_path, YamlProblem(Mark(1, 1), f"cannot read the file: {reason}", codes.FILE_UNREADABLE))
    return parse_yaml_bytes(raw, display_path)


def parse_yaml_bytes(raw: bytes, display_path: str) -> Document:
    try:
        text = _decode(raw)
        builder = _TreeBuilder(display_path)
        data = builder.build(text)
    except YamlProblem as problem:
        if problem.message == TAB_MESSAGE:
            return _read_past_tabs(text, display_path, problem)
        return _failed(display_path, problem)
    return Document(data, builder.problems)


TAB_MESSAGE = "tab character in indentation; YAML allows only spaces there"


def _read_past_tabs(text: str, display_path: str, first: YamlProblem) -> Document:
    """A tab in the indentation stops YAML, but one mistake should not hide the others:
    report every such line, then read the file with its tabs as the spaces an editor most
    likely meant (2, 4 or 8), so the rest of the file is still checked."""
    lines = text.split("\n")
    tabbed = [number for number, line in enumerate(lines) if "\t" in line[: len(line) - len(line.lstrip(" \t"))]]
    problems = [Problem(display_path, number + 1, 1, FILE_FIELD, TAB_MESSAGE, codes.YAML_TAB) for number in tabbed]
    if not tabbed:
        return _failed(display_path, first)
    for width in (2, 4, 8):
        fixed = [line.expandtabs(width) if number in tabbed else line for number, line in enumerate(lines)]
        builder = _TreeBuilder(display_path)
        try:
            data = builder.build("\n".join(fixed))
        except YamlProblem:
            continue
        return Document(data, problems + builder.problems)
    return Document(None, problems)


def _failed(display_path: str, problem: YamlProblem) -> Document:
    return Document(
        None,
        [Problem(display_path, problem.mark.line, problem.mark.column, FILE_FIELD, problem.message, problem.code)],
    )


def _read_bounded(path: os.PathLike | str) -> bytes:
    with open(path, "rb") as handle:
        raw = handle.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise YamlProblem(
            Mark(1, 1),
            f"file is larger than {MAX_FILE_BYTES // 1024} KiB; an entry should be far smaller",
            codes.FILE_UNREADABLE,
        )
    return raw


def _decode(raw: bytes) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        column = error.start - (raw.rfind(b"\n", 0, error.start) + 1) + 1
        raise YamlProblem(
            Mark(line, column), "bytes that are not UTF-8; save the file as UTF-8", codes.FILE_UNREADABLE
        ) from None
    return text.removeprefix("\ufeff")


def _position(event: Any) -> Position:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1)


class _Container:
    """A mapping or sequence under construction, on the builder's stack."""

    __slots__ = ("anchor", "is_mapping", "pending_key", "pending_key_mark", "size", "value")

    def __init__(self, value: LocatedDict | LocatedList, anchor: str | None):
        self.value = value
        self.is_mapping = isinstance(value, LocatedDict)
        self.anchor = anchor
        self.size = 1  # nodes, counting what aliases stand for
        self.pending_key: Any = _NO_KEY
        self.pending_key_mark: Position = (0, 0)  # set with each pending key


_NO_KEY = object()
_MERGE = object()


class _TreeBuilder:
    def __init__(self, display_path: str):
        self.display_path = display_path
        self.problems: list[Problem] = []
        self.anchors: dict[str, tuple[Any, int]] = {}  # anchor -> (value, size)
        self.expanded = 0
        self.stack: list[_Container] = []
        self.top: _Container | None = None  # self.stack[-1], kept at hand
        self.root: Any = _NO_KEY
        self.root_mark: Position = (1, 1)
        self.documents = 0

    def build(self, text: str) -> LocatedDict:
        parser = _Parser(text)
        dispatch = _DISPATCH  # plain functions: bound methods here would make a reference
        try:  # cycle, and loading runs with the cyclic collector paused
            while True:
                event = parser.get_event()
                if event is None or type(event) is yaml.StreamEndEvent:
                    break
                handler = dispatch.get(type(event))
                if handler is not None:
                    handler(self, event)
        except yaml.MarkedYAMLError as error:
            raise _syntax_problem(error, text) from None
        except yaml.reader.ReaderError as error:  # a character YAML does not allow
            raise _reader_problem(error, text) from None
        finally:
            parser.dispose()
        if self.root is _NO_KEY or self.root is None:
            raise YamlProblem(Mark(1, 1), "file is empty; an entry is a YAML mapping of fields")
        if not isinstance(self.root, LocatedDict):
            raise YamlProblem(Mark(*self.root_mark), "the top level must be a mapping of fields (key: value)")
        return self.root

    # -- events ---------------------------------------------------------------

    def _on_scalar(self, event: yaml.ScalarEvent) -> None:
        tag = event.tag
        value: Any = event.value
        top = self.top
        is_key = top is not None and top.is_mapping and top.pending_key is _NO_KEY
        if tag is None or tag == "!":
            if event.style or tag == "!":
                pass  # quoted and block scalars are always text
            elif is_key:
                if value == "<<":  # keys are their source text: `no:` stays "no", not False
                    raise YamlProblem(
                        Mark(*_position(event)), "merge keys ('<<') are not supported; write the fields out"
                    )
            elif not value:
                value = None  # `key:` with nothing after it
            elif value[0] in _RESOLVER_FIRST_CHARACTERS:
                value = _construct(_resolve_plain(value), value, _position(event))
        elif tag in _SCALAR_TAGS:
            if not is_key:
                value = _construct(tag, value, _position(event))
        else:
            raise YamlProblem(Mark(*_position(event)), _tag_message(tag))
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1)
        self._add(value, 1, _position(event))

    def _on_mapping_start(self, event: yaml.MappingStartEvent) -> None:
        self._open(LocatedDict(_position(event)), event, "map")

    def _on_sequence_start(self, event: yaml.SequenceStartEvent) -> None:
        self._open(LocatedList(_position(event)), event, "seq")

    def _open(self, value: LocatedDict | LocatedList, event: Any, kind: str) -> None:
        if event.tag not in (None, "!", _TAG + kind):
            raise YamlProblem(Mark(*value.mark), _tag_message(event.tag))
        if len(self.stack) >= MAX_DEPTH:
            raise YamlProblem(Mark(*value.mark), f"nested deeper than {MAX_DEPTH} levels")
        self.top = _Container(value, event.anchor)
        self.stack.append(self.top)

    def _on_end(self, event: Any) -> None:
        container = self.stack.pop()
        self.top = self.stack[-1] if self.stack else None
        if container.is_mapping and container.pending_key is not _NO_KEY:
            raise YamlProblem(
                Mark(*container.value.mark), "mapping ends with a key that has no value", codes.YAML_SYNTAX
            )
        if container.anchor is not None:
            self.anchors[container.anchor] = (container.value, container.size)
        self._add(container.value, container.size, container.value.mark)

    def _on_alias(self, event: yaml.AliasEvent) -> None:
        mark = _position(event)
        if event.anchor not in self.anchors:
            raise YamlProblem(
                Mark(*mark), f"alias '*{event.anchor}' refers to no finished anchor (undefined, or used inside itself)"
            )
        value, size = self.anchors[event.anchor]
        self.expanded += size
        if self.expanded > MAX_ALIAS_EXPANSION:
            raise YamlProblem(
                Mark(*mark), f"aliases expand to more than {MAX_ALIAS_EXPANSION} values; write the content out instead"
            )
        self._add(value, size, mark)

    def _on_document_start(self, event: yaml.DocumentStartEvent) -> None:
        self.documents += 1
        if self.documents > 1:
            raise YamlProblem(Mark(*_position(event)), "a second YAML document ('---'); one file holds one entry")

    def _add(self, value: Any, size: int, mark: Position) -> None:
        parent = self.top
        if parent is None:
            self.root = value
            self.root_mark = mark
            return
        parent.size += size
        container: Any = parent.value  # a LocatedList or LocatedDict, told apart by is_mapping (fast)
        if not parent.is_mapping:
            container.append(value)
            container.item_marks.append(mark)
        elif parent.pending_key is _NO_KEY:
            if isinstance(value, (LocatedDict, LocatedList)):
                raise YamlProblem(Mark(*mark), "a key must be plain text, not a mapping or a list")
            parent.pending_key = value
            parent.pending_key_mark = mark
        else:
            key = parent.pending_key
            parent.pending_key = _NO_KEY
            if key in container:
                self._duplicate_key(key, container.key_marks[key], parent.pending_key_mark)
                return
            container[key] = value
            container.key_marks[key] = parent.pending_key_mark
            container.value_marks[key] = mark

    def _duplicate_key(self, key: str, first: Position, again: Position) -> None:
        self.problems.append(
            Problem(
                self.display_path,
                again[0],
                again[1],
                _field_of(self.stack, key),
                f"duplicate key '{key}' (first at line {first[0]}); YAML keeps only one, so remove or merge them",
                codes.YAML_DUPLICATE_KEY,
            )
        )


_DISPATCH: dict[type, Callable[[_TreeBuilder, Any], None]] = {
    yaml.ScalarEvent: _TreeBuilder._on_scalar,
    yaml.MappingStartEvent: _TreeBuilder._on_mapping_start,
    yaml.SequenceStartEvent: _TreeBuilder._on_sequence_start,
    yaml.MappingEndEvent: _TreeBuilder._on_end,
    yaml.SequenceEndEvent: _TreeBuilder._on_end,
    yaml.AliasEvent: _TreeBuilder._on_alias,
    yaml.DocumentStartEvent: _TreeBuilder._on_document_start,
}


def _tag_message(tag: str) -> str:
    return f"tag '{tag.replace(_TAG, '!!')}' is not allowed; entries use plain YAML values only"


def _resolve_plain(value: str) -> str:
    for tag, pattern in _IMPLICIT_RESOLVERS.get(value[:1] if value else "", ()):
        if pattern.match(value):
            return tag
    return _TAG + "str"


def _construct(tag: str, value: str, mark: Position) -> Any:
    name = tag[len(_TAG) :]
    if name in ("str", "timestamp"):
        # Dates stay text: the entry model checks them strictly as YYYY-MM-DD.
        return value
    try:
        node = yaml.ScalarNode(tag, value)
        if name == "null":
            return _CONSTRUCTOR.construct_yaml_null(node)
        if name == "bool":
            return _CONSTRUCTOR.construct_yaml_bool(node)
        if name == "int":
            return _CONSTRUCTOR.construct_yaml_int(node)
        if name == "float":
            return _CONSTRUCTOR.construct_yaml_float(node)
    except (ValueError, KeyError, yaml.YAMLError):
        raise YamlProblem(Mark(*mark), f"'{value}' is not a valid !!{name}") from None
    if name == "merge":
        raise YamlProblem(Mark(*mark), "merge keys ('<<') are not supported; write the fields out")
    raise YamlProblem(Mark(*mark), _tag_message(tag))  # pragma: no cover


def _syntax_problem(error: yaml.MarkedYAMLError, text: str) -> YamlProblem:
    mark = error.problem_mark or error.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    if mark is not None and _tab_at(text, mark.line, mark.column):
        return YamlProblem(Mark(line, column), TAB_MESSAGE, codes.YAML_TAB)
    parts = [part for part in (error.context, error.problem) if part]
    message = "; ".join(parts) if parts else "invalid YAML"
    return YamlProblem(Mark(line, column), f"invalid YAML: {message}{_syntax_hint(message)}", codes.YAML_SYNTAX)


_SYNTAX_HINTS = {
    # The usual cause: text such as `fix: set x: 1` or `error: foo` written without quotes.
    "mapping values are not allowed": "; a ': ' inside unquoted text starts a mapping, so put the value in quotes",
}


def _syntax_hint(message: str) -> str:
    return next((hint for phrase, hint in _SYNTAX_HINTS.items() if phrase in message), "")


def _reader_problem(error: yaml.reader.ReaderError, text: str) -> YamlProblem:
    position = min(max(error.position, 0), len(text))
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    character = error.character if isinstance(error.character, str) else chr(error.character)
    return YamlProblem(
        Mark(line, column), f"character U+{ord(character):04X} is not allowed in YAML; remove it", codes.YAML_SYNTAX
    )


def _tab_at(text: str, line: int, column: int) -> bool:
    """True when the error sits in a line whose indentation holds a tab."""
    lines = text.split("\n", line + 1)
    if line >= len(lines):
        return False
    current = lines[line]
    indentation = current[: len(current) - len(current.lstrip(" \t-"))]
    return "\t" in indentation or current[column : column + 1] == "\t"


def _field_of(stack: list[_Container], key: str) -> str:
    """The dotted path of `key` in the mapping at the top of `stack`."""
    parts: list[str] = []
    for below in stack[:-1]:  # each container below the top: its key or index on the way down
        container = below.value
        if isinstance(container, LocatedList):
            parts.append(f"[{len(container)}]")
        else:
            parts.append(f".{below.pending_key}")
    parts.append(f".{key}")
    return "".join(parts).lstrip(".")


# -- pointing into a file: the position of a field, and a problem there -------------------------

Loc = tuple[Union[str, int], ...]


class Located:
    """Creates problems that point into one file's source."""

    def __init__(self, path: str, data: LocatedDict):
        self.path = path
        self.data = data

    def problem(self, loc: Loc, message: str, code: str, at_key: bool = False) -> Problem:
        line, column = self.mark(loc, at_key)
        return Problem(self.path, line, column, field_path(loc), message, code)

    def mark(self, loc: Loc, at_key: bool = False) -> Mark:
        """The position of the deepest part of `loc` that exists in the source."""
        node: Any = self.data
        mark: Any = self.data.mark
        for position, part in enumerate(loc):
            last = position == len(loc) - 1
            if isinstance(node, LocatedDict) and isinstance(part, str) and part in node:
                mark = node.key_marks[part] if (last and at_key) else node.value_marks[part]
                node = node[part]
            elif isinstance(node, LocatedList) and isinstance(part, int) and 0 <= part < len(node):
                mark = node.item_marks[part]
                node = node[part]
            else:
                break
        return Mark(*mark)


def field_path(loc: Loc) -> str:
    parts = [f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc]
    return "".join(parts).lstrip(".") or "(file)"
