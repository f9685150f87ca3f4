"""Turn located YAML data into models, and every mistake into a located `Problem`.

Three layers, each reporting everything it finds:

1. `validate_model`: the pydantic model of one file (types, required fields,
   formats, portable regexes), with pydantic's errors rewritten for people.
2. `check_entry`: rules inside one entry that need the taxonomy (cause
   references, known tags and category, signatures against their examples).
3. `check_corpus`: rules across files (unique ids, former ids, relations).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, TypeVar

import re2
from pydantic import BaseModel, ValidationError

from . import problem_codes as codes
from .limits import MAX_LINE_LENGTH
from .models import (
    KEY_MAX_LENGTH,
    KEY_RE,
    Category,
    Cause,
    CodeSnippet,
    Entry,
    Fix,
    LiteralSignature,
    Question,
    Reference,
    RegexSignature,
    Relation,
    Symptom,
    TagInfo,
    Taxonomy,
)
from .normalise import normalise_regex, normalise_text
from .problems import Problem
from .regex_subset import RegexError, check_portable
from .yaml_source import Loc, Located, Mark, field_path

ModelT = TypeVar("ModelT", bound=BaseModel)

_ALL_MODELS = (
    Entry,
    Cause,
    Symptom,
    LiteralSignature,
    RegexSignature,
    CodeSnippet,
    Fix,
    Question,
    Reference,
    Relation,
    Taxonomy,
    Category,
    TagInfo,
)
_KNOWN_FIELDS = sorted({name for model in _ALL_MODELS for name in model.model_fields})
_MODEL_NAMES = {
    Entry: "the entry",
    Cause: "a cause",
    Symptom: "a symptom",
    LiteralSignature: "a signature",
    RegexSignature: "a signature",
    CodeSnippet: "a code snippet",
    Fix: "the entry's `fix`",
    Question: "an FAQ item",
    Reference: "a reference",
    Relation: "a `related` item",
    Taxonomy: "the taxonomy",
    Category: "a category",
    TagInfo: "a tag",
}
_FIELD_OWNERS = {
    name: " and ".join(dict.fromkeys(_MODEL_NAMES[model] for model in _ALL_MODELS if name in model.model_fields))
    for name in _KNOWN_FIELDS
}
_UNION_TAGS = {"literal", "regex"}
_TYPE_NAMES = {
    "string_type": "text",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "date_type": "a date",
    "bool_type": "true or false",
}


class CorpusLocated:
    """Where the fields that the corpus rules report on sit in one file: just those
    marks, so a large corpus need not keep every file's whole tree in memory."""

    def __init__(self, located: Located):
        self.path = located.path
        data = located.data
        locs: list[Loc] = [("id",)]
        locs += [("former_ids", index) for index, _ in _strings(data.get("former_ids"))]
        locs += [("related", index, "id") for index, _ in _mappings(data.get("related"))]
        self.marks = {loc: located.mark(loc) for loc in locs}

    def problem(self, loc: Loc, message: str, code: str) -> Problem:
        line, column = self.marks.get(loc, Mark(1, 1))
        return Problem(self.path, line, column, field_path(loc), message, code)


# -- layer 1: the model ------------------------------------------------------------


def validate_model(model: type[ModelT], located: Located) -> tuple[ModelT | None, list[Problem]]:
    try:
        return model.model_validate(located.data), []
    except ValidationError as error:
        errors = _merge_misspellings([dict(item) for item in error.errors(include_url=False)])
        return None, [_translate(located, item) for item in errors]


def _merge_misspellings(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A misspelt required field (`symtoms`) is one mistake, not an unknown field plus a
    missing one: keep the unknown field's error, which points at the typo."""
    missing = {_clean_loc(error["loc"]): error for error in errors if error["type"] == "missing"}
    merged = []
    for error in errors:
        loc = _clean_loc(error["loc"])
        if error["type"] == "extra_forbidden" and loc:
            siblings = [other[-1] for other in missing if other[:-1] == loc[:-1]]
            close = difflib.get_close_matches(str(loc[-1]), [str(name) for name in siblings], n=1, cutoff=0.7)
            if close:
                error = {**error, "meant": close[0]}
                missing.pop((*loc[:-1], close[0]), None)
        merged.append(error)
    return [error for error in merged if error["type"] != "missing" or _clean_loc(error["loc"]) in missing]


def _translate(located: Located, error: dict[str, Any]) -> Problem:
    loc = _clean_loc(error["loc"])
    kind = error["type"]
    value = error.get("input")
    if kind == "missing":
        hint = _MISSING_HINTS.get(str(loc[-1]), "")
        return located.problem(loc, f"required field '{loc[-1]}' is missing{hint}", codes.FIELD_MISSING)
    if kind == "extra_forbidden" and "meant" in error:
        return located.problem(
            loc,
            f"unknown field '{loc[-1]}'; did you mean '{error['meant']}'? (a required field)",
            codes.FIELD_UNKNOWN,
            at_key=True,
        )
    if kind == "extra_forbidden":
        return located.problem(loc, _unknown_field(str(loc[-1])), codes.FIELD_UNKNOWN, at_key=True)
    if error["loc"] and error["loc"][-1] == "[key]":
        return located.problem(loc, error["msg"], codes.FIELD_VALUE, at_key=True)
    code = codes.FIELD_PLACEHOLDER if kind == "placeholder" else codes.FIELD_VALUE
    return located.problem(loc, _message(kind, value, error), code)


_MISSING_HINTS = {"reviewed": "; add the date of your review, e.g. reviewed: 2026-12-01 (YYYY-MM-DD)"}


def _unknown_field(name: str) -> str:
    """The message for a key no model has at this place: the field meant, or where it belongs."""
    if name in _FIELD_OWNERS:  # a real field, written at the wrong level
        return f"unknown field '{name}' here; '{name}' is a field of {_FIELD_OWNERS[name]}, check the indentation"
    hint = difflib.get_close_matches(name, _KNOWN_FIELDS, n=1, cutoff=0.7)
    suggestion = f"; did you mean '{hint[0]}'?" if hint else "; see the entry format for the fields"
    return f"unknown field '{name}'{suggestion}"


def _clean_loc(loc: Loc) -> Loc:
    """Drop pydantic's union tags and dict-key markers, which are not in the YAML."""
    cleaned: list[str | int] = []
    for index, part in enumerate(loc):
        if part == "[key]":
            continue
        if (
            part in _UNION_TAGS
            and index >= 2
            and isinstance(loc[index - 1], int)
            and loc[index - 2] == "signatures"
            and index + 1 < len(loc)
        ):
            continue
        cleaned.append(part)
    return tuple(cleaned)


def _message(kind: str, value: Any, error: dict[str, Any]) -> str:
    if value is None and kind != "missing":
        return "is empty (null); give a value or leave the field out"
    if kind in _TYPE_NAMES:
        expected = _TYPE_NAMES[kind]
        hint = ""
        if kind == "string_type" and isinstance(value, (bool, int, float)):
            hint = "; put it in quotes"
        elif kind == "bool_type":
            hint = "; write true or false, without quotes"
        elif kind == "string_type" and isinstance(value, dict):
            hint = "; a ': ' inside unquoted text starts a mapping, so quote the text"
        return f"expected {expected}, found {_describe(value)}{hint}"
    if kind == "too_short":
        if isinstance(value, (list, dict)) and not value:
            return "is empty; add at least one item, or leave the field out if it is optional"
        return f"needs at least {error['ctx']['min_length']} item(s)"
    if kind == "literal_error":
        return f"must be one of {error['ctx']['expected']}, found {_describe(value)}"
    return error["msg"]


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"a true/false value ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"'{shown}'"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


# -- layer 2: one entry --------------------------------------------------------------


def suggest(value: str, keys: Iterable[str], aliases: dict[str, str] | None = None) -> str:
    """A "did you mean" clause: aliases first, then the closest key."""
    if aliases and value in aliases:
        return f"; did you mean '{aliases[value]}'?"
    close = difflib.get_close_matches(value, list(keys), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def tag_aliases(taxonomy: Taxonomy) -> dict[str, str]:
    return {alias: key for key, tag in taxonomy.tags.items() for alias in tag.aliases or ()}


MIN_SYMPTOMS = 2  # one row cannot tell causes apart


def check_entry(
    located: Located, stem: str, taxonomy: Taxonomy | None, aliases: dict[str, str], folder: str | None = None
) -> Iterator[Problem]:
    """Rules beyond one field. They read the raw data, so they also run when the
    model rejected some other field: one run shows every problem of the file.

    `folder` is the entry's top folder under the entries folder (None at the top)."""
    data = located.data
    entry_id = data.get("id")
    if isinstance(entry_id, str) and entry_id != stem:
        yield located.problem(
            ("id",),
            f"id '{entry_id}' must equal the file name '{stem}.yaml'; rename one of them",
            codes.ID_NOT_FILE_NAME,
        )
    yield from _check_causes(data, located)
    yield from _check_symptom_count(data, located)
    yield from _check_signatures(data, located)
    yield from _check_own_links(data, located)
    if taxonomy is not None:
        yield from _check_taxonomy_keys(data, located, taxonomy, aliases)
        yield from _check_placement(data, located, taxonomy, folder)


def _check_symptom_count(data: dict, located: Located) -> Iterator[Problem]:
    symptoms = data.get("symptoms")
    if isinstance(symptoms, list) and 0 < len(symptoms) < MIN_SYMPTOMS:
        yield located.problem(
            ("symptoms",),
            f"lists {len(symptoms)} symptom; give at least {MIN_SYMPTOMS} rows of what one observes, "
            "each naming the cause it points to, so a reader can tell the causes apart",
            codes.TOO_FEW_SYMPTOMS,
        )


def _check_placement(data: dict, located: Located, taxonomy: Taxonomy, folder: str | None) -> Iterator[Problem]:
    """The folder matches the category; entries of categories that print errors have signatures."""
    category = data.get("category")
    if not isinstance(category, str) or category not in taxonomy.categories:
        return  # reported as an unknown category
    if folder is not None and folder != category:
        yield located.problem(
            ("category",),
            f"category '{category}' but the file is in the folder '{folder}'; "
            f"move it to {category}/ (the folder names the category) or change the category",
            codes.WRONG_FOLDER,
        )
    if "signatures" not in data and not taxonomy.categories[category].signatures_optional:
        optional = sorted(key for key, info in taxonomy.categories.items() if info.signatures_optional)
        yield located.problem(
            ("signatures",),
            "no signatures: add the error line a log shows (a literal or a regex, with its source), so that "
            f"`mlfail` and the diagnose page find this entry; only {', '.join(optional) or 'no'} entries may have none",
            codes.NO_SIGNATURE,
        )


def _mappings(value: Any) -> Iterator[tuple[int, dict]]:
    """(index, item) for the mapping items of a list; anything else is the model's to report."""
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield index, item


def _strings(value: Any) -> Iterator[tuple[int, str]]:
    if isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                yield index, item


def _check_causes(data: dict, located: Located) -> Iterator[Problem]:
    seen: set[str] = set()
    for index, cause in _mappings(data.get("causes")):
        cause_id: Any = cause.get("id")
        if not isinstance(cause_id, str):
            continue
        if cause_id in seen:
            yield located.problem(
                ("causes", index, "id"), f"cause id '{cause_id}' is used twice in this entry", codes.SYMPTOM_CAUSE
            )
        seen.add(cause_id)
    if not seen:
        return
    for index, symptom in _mappings(data.get("symptoms")):
        named = symptom.get("cause")
        if isinstance(named, str) and named not in seen:
            known = ", ".join(sorted(seen))
            yield located.problem(
                ("symptoms", index, "cause"),
                f"unknown cause '{named}'{suggest(named, seen)} (causes of this entry: {known})",
                codes.SYMPTOM_CAUSE,
            )


def _check_signatures(data: dict, located: Located) -> Iterator[Problem]:
    signatures = list(_mappings(data.get("signatures")))
    if signatures and all(signature.get("supporting") is True for _, signature in signatures):
        yield located.problem(
            ("signatures",),
            "every signature is `supporting: true`, so none can find this entry; a line that names the failure "
            "(the error message itself) must be a signature without `supporting`",
            codes.ONLY_SUPPORTING,
        )
    for index, signature in signatures:
        matches = _signature_matcher(signature)
        if matches is None:
            continue
        as_read = _signature_matcher(signature, normalised=True)
        if as_read is None:
            yield located.problem(_kind_loc(signature, index), _UNREADABLE_AS_NORMALISED, codes.EXAMPLE_MISMATCH)
            continue
        for number, example in _strings(signature.get("examples")):
            loc = ("signatures", index, "examples", number)
            if as_read(normalise_text(example)[:MAX_LINE_LENGTH]):
                continue  # as the matcher reads it (a shell word in another language read as English too)
            if not matches(example[:MAX_LINE_LENGTH]):
                yield located.problem(loc, _mismatch(signature, example[:MAX_LINE_LENGTH]), codes.EXAMPLE_MISMATCH)
            else:
                yield located.problem(loc, _MISSED_AS_NORMALISED, codes.EXAMPLE_MISMATCH)


_UNREADABLE_AS_NORMALISED = (
    "the matcher ignores backticks, `**` and extra blanks in logs and signatures alike, and without them "
    "this signature is empty or no longer a valid pattern; write it without that markup"
)
_MISSED_AS_NORMALISED = (
    "the matcher reads lines without backticks, `**` and extra blanks (a run of blanks is one space), and "
    "read so, this example no longer matches; write the signature for one blank (e.g. ' +' not ' {2}')"
)


def _mismatch(signature: dict, example: str) -> str:
    """Why an example misses its signature: how far the two agree, and where they part."""
    if "literal" in signature:
        literal = signature["literal"]
        agreed = _longest(len(literal), lambda size: example.find(literal[:size]))
        told = f"this example does not contain the literal {_quote(literal)}"
        if agreed == 0:
            return f"{told}; no part of it, not even its first character"
        after = example.find(literal[:agreed]) + agreed
        return (
            f"{told}; they agree on {_quote(literal[:agreed])}, then the literal has "
            f"{_quote(literal[agreed:])} where the example has {_quote(example[after:])}"
        )
    pattern = signature["regex"]
    told = f"this example is not matched by the regex {_quote(pattern)}"
    options = re2.Options()
    options.log_errors = False  # most cuts are not patterns; RE2 would print each to stderr
    for size in range(len(pattern) - 1, 0, -1):  # the longest start of the pattern that matches
        try:
            found = re2.compile(pattern[:size], options).search(example)  # RE2: linear, whatever the cut
        except re2.error:
            continue  # cut inside a group, a class or an escape
        if found and found.end() > found.start():
            return (
                f"{told}; its start {_quote(pattern[:size])} matches {_quote(found.group())}, then "
                f"{_quote(pattern[size:])} does not match {_quote(example[found.end() :])}"
            )
    return f"{told}; not even its first part matches"


def _longest(limit: int, position: Callable[[int], int]) -> int:
    """The largest size up to `limit` whose prefix is found (position >= 0)."""
    size = 0
    while size < limit and position(size + 1) >= 0:
        size += 1
    return size


def _quote(text: str, limit: int = 40) -> str:
    """Text as written, between backticks (not repr: a pattern's backslashes stay single)."""
    return f"`{text if len(text) <= limit else text[: limit - 3] + '...'}`"


def _kind_loc(signature: dict, index: int) -> Loc:
    return ("signatures", index, "literal" if "literal" in signature else "regex")


def _signature_matcher(signature: dict, normalised: bool = False) -> Callable[[str], bool] | None:
    """A test for one line, or None when the signature itself is invalid (reported elsewhere).

    `normalised`: the test the log matcher runs, for lines read by `normalise_text`."""
    literal, regex = signature.get("literal"), signature.get("regex")
    if isinstance(literal, str) and regex is None and literal.strip():
        if normalised:
            literal = normalise_text(literal)
            if not literal.strip():
                return None
        return lambda line: literal in line
    if isinstance(regex, str) and literal is None:
        try:
            compiled = check_portable(normalise_regex(regex) if normalised else regex)
        except RegexError:
            return None
        return lambda line: compiled.search(line) is not None
    return None


def _check_own_links(data: dict, located: Located) -> Iterator[Problem]:
    formers = [former for _, former in _strings(data.get("former_ids"))]
    own = {data.get("id"), *formers}
    for index, former in _strings(data.get("former_ids")):
        if former == data.get("id"):
            yield located.problem(
                ("former_ids", index), "a former id cannot be the entry's own id", codes.SELF_OR_REPEATED_LINK
            )
        elif former in formers[:index]:
            yield located.problem(
                ("former_ids", index), f"former id '{former}' is listed twice", codes.SELF_OR_REPEATED_LINK
            )
    targets: set[str] = set()
    for index, relation in _mappings(data.get("related")):
        target = relation.get("id")
        if not isinstance(target, str):
            continue
        if target in own:
            yield located.problem(
                ("related", index, "id"), "an entry cannot be related to itself", codes.SELF_OR_REPEATED_LINK
            )
        elif target in targets:
            yield located.problem(
                ("related", index, "id"), f"'{target}' is already listed in `related`", codes.SELF_OR_REPEATED_LINK
            )
        targets.add(target)


def _is_key(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= KEY_MAX_LENGTH and KEY_RE.match(value) is not None


def _check_taxonomy_keys(
    data: dict, located: Located, taxonomy: Taxonomy, aliases: dict[str, str]
) -> Iterator[Problem]:
    category = data.get("category")
    if isinstance(category, str) and _is_key(category) and category not in taxonomy.categories:
        hint = suggest(category, taxonomy.categories) or _known_keys("categories", taxonomy.categories)
        yield located.problem(("category",), f"unknown category '{category}'{hint}", codes.TAXONOMY_KEY)
    tags = [tag for _, tag in _strings(data.get("tags"))]
    for index, tag in _strings(data.get("tags")):
        if not _is_key(tag):
            continue  # its format is the model's to report
        if tag not in taxonomy.tags:
            hint = suggest(tag, taxonomy.tags, aliases) or _known_keys("tags", taxonomy.tags)
            yield located.problem(("tags", index), f"unknown tag '{tag}'{hint}", codes.TAXONOMY_KEY)
        elif tag in tags[:index]:
            yield located.problem(("tags", index), f"tag '{tag}' is listed twice", codes.TAXONOMY_KEY)


def _known_keys(kind: str, keys: Iterable[str], shown: int = 12) -> str:
    """For a key with no close match: what there is, and where a new one is added."""
    names = sorted(keys)
    listed = ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")
    return f"; the {kind} are keys of `{kind}` in taxonomy.yaml ({listed}); add a new one there first"


def check_taxonomy(taxonomy: Taxonomy, located: Located) -> Iterator[Problem]:
    owners: dict[str, str] = {}
    for key, tag in taxonomy.tags.items():
        for index, alias in enumerate(tag.aliases or ()):
            loc = ("tags", key, "aliases", index)
            if alias in taxonomy.tags:
                yield located.problem(loc, f"alias '{alias}' is already a tag of its own", codes.TAXONOMY)
            elif alias in owners:
                yield located.problem(loc, f"alias '{alias}' is also an alias of '{owners[alias]}'", codes.TAXONOMY)
            owners.setdefault(alias, key)


# -- layer 3: the corpus ------------------------------------------------------------------


def check_corpus(
    entries: Sequence[tuple[Entry, Located | CorpusLocated]], invalid_ids: AbstractSet[str] = frozenset()
) -> Iterator[Problem]:
    """Uniqueness of ids and former ids, relations that resolve, and no entry left unlinked.

    `invalid_ids` are the ids of files that failed validation: a link to one of
    them is not reported again, since the broken file already has its errors."""
    problems = list(_check_ids_and_relations(entries, invalid_ids))
    yield from problems
    if not problems and not invalid_ids:  # an island is only known once every link resolves
        yield from _check_connected(entries)


def _check_ids_and_relations(
    entries: Sequence[tuple[Entry, Located | CorpusLocated]], invalid_ids: AbstractSet[str]
) -> Iterator[Problem]:
    owner: dict[str, tuple[Entry, Located | CorpusLocated]] = {}
    for entry, located in entries:
        if entry.id in owner:
            _, first_located = owner[entry.id]
            yield located.problem(("id",), f"id '{entry.id}' is also used by {first_located.path}", codes.ID_TWICE)
            yield first_located.problem(("id",), f"id '{entry.id}' is also used by {located.path}", codes.ID_TWICE)
        else:
            owner[entry.id] = (entry, located)
    former_owner: dict[str, str] = {}
    for entry, located in entries:
        for index, former in enumerate(entry.former_ids or ()):
            if former == entry.id:
                continue
            if former in owner:
                yield located.problem(
                    ("former_ids", index), f"former id '{former}' is the id of {owner[former][1].path}", codes.ID_TWICE
                )
            elif former_owner.get(former, entry.id) != entry.id:
                yield located.problem(
                    ("former_ids", index),
                    f"former id '{former}' is also claimed by {former_owner[former]}",
                    codes.ID_TWICE,
                )
            former_owner.setdefault(former, entry.id)
    yield from _check_relations(entries, owner, former_owner, invalid_ids)


def _check_relations(
    entries: Sequence[tuple[Entry, Located | CorpusLocated]],
    owner: dict[str, tuple[Entry, Located | CorpusLocated]],
    former_owner: dict[str, str],
    invalid_ids: AbstractSet[str],
) -> Iterator[Problem]:
    known = set(owner) | set(former_owner) | set(invalid_ids)
    for entry, located in entries:
        own = {entry.id, *(entry.former_ids or ())}
        for index, relation in enumerate(entry.related or ()):
            if relation.id in own:
                continue  # reported by check_entry
            if relation.id not in known:
                yield located.problem(
                    ("related", index, "id"),
                    f"no entry has the id '{relation.id}'{suggest(relation.id, owner)}",
                    codes.RELATED_NOT_FOUND,
                )
            elif former_owner.get(relation.id, relation.id) == entry.id:
                yield located.problem(
                    ("related", index, "id"), "an entry cannot be related to itself", codes.SELF_OR_REPEATED_LINK
                )
    yield from _check_resolved_duplicates(entries, former_owner)


def _check_connected(entries: Sequence[tuple[Entry, Located | CorpusLocated]]) -> Iterator[Problem]:
    """Every entry links to a neighbour or is linked from one: pages are reached through
    their neighbours, and an island is found only by search."""
    if len(entries) < 2:
        return
    former_owner = {former: entry.id for entry, _ in entries for former in entry.former_ids or ()}
    linked = {former_owner.get(relation.id, relation.id) for entry, _ in entries for relation in entry.related or ()}
    for entry, located in entries:
        if not entry.related and entry.id not in linked:
            yield located.problem(
                ("id",),
                "no entry is related to this one and it names none; add a `related` entry "
                "(co-occurs, causes, caused-by, similar or see-also) to the failure closest to it",
                codes.NOT_LINKED,
            )


def _check_resolved_duplicates(
    entries: Sequence[tuple[Entry, Located | CorpusLocated]], former_owner: dict[str, str]
) -> Iterator[Problem]:
    """`related` naming one entry twice, once by its id and once by a former id."""
    for entry, located in entries:
        seen: dict[str, str] = {}
        for index, relation in enumerate(entry.related or ()):
            target = former_owner.get(relation.id, relation.id)
            if target in seen and seen[target] != relation.id:
                yield located.problem(
                    ("related", index, "id"),
                    f"'{relation.id}' is the same entry as '{seen[target]}'",
                    codes.SELF_OR_REPEATED_LINK,
                )
            seen.setdefault(target, relation.id)
