"""The entry format (contract version 2) as pydantic models: the one source of the schema.

These models check everything that can be checked inside one field. Rules that
need more context (cause references, the taxonomy, links between entries) live
in `generator.validation`, so the models stay a faithful picture of one file.

Optional fields default to ``None`` but their type does not admit ``None``: an
omitted field is fine, an explicit ``null``, ``''`` or ``[]`` is an error.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Annotated, Any, Literal, TypeVar, Union, get_args
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Strict,
    StrictBool,
    Tag,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from .limits import MAX_LINE_LENGTH
from .regex_subset import RegexError, check_portable

CONTRACT_VERSION = 2
KEY_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"
KEY_MAX_LENGTH = 80
PLACEHOLDER = "TODO"  # what `new` writes into every field that must be filled in

KEY_RE = re.compile(KEY_PATTERN)
_PLACEHOLDER_RE = re.compile(rf"\b{PLACEHOLDER}\b")  # anywhere: a TODO left in code or a pattern fails too
_DATE_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


# -- field types ------------------------------------------------------------------


def _check_text(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("empty_text", "must not be empty; write the text or leave the field out")
    if _PLACEHOLDER_RE.search(value):
        raise PydanticCustomError("placeholder", "still holds a TODO placeholder written by `new`; replace it")
    return value


def _check_key(value: str) -> str:
    if value.startswith(PLACEHOLDER):
        raise PydanticCustomError("placeholder", "still holds the placeholder written by `new`; replace it")
    if len(value) > KEY_MAX_LENGTH:
        raise PydanticCustomError("key_length", "is longer than {limit} characters", {"limit": KEY_MAX_LENGTH})
    if not KEY_RE.match(value):
        raise PydanticCustomError(
            "key_format",
            "'{value}' is not a valid key: use lowercase letters, digits and single hyphens, e.g. 'cuda-oom-forward'",
            {"value": value},
        )
    return value


def _check_url(value: str) -> str:
    if value.startswith(PLACEHOLDER):
        raise PydanticCustomError("placeholder", "still holds the placeholder written by `new`; replace it")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises for a port that is not a number in range
    except ValueError:
        raise PydanticCustomError("url", "is not a well-formed URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PydanticCustomError("url", "must be an absolute http:// or https:// URL")
    if any(char.isspace() or ord(char) < 32 for char in value):
        raise PydanticCustomError("url", "must not contain spaces or control characters; encode them")
    return value


def _parse_date(value: Any) -> Any:
    if isinstance(value, dt.datetime):  # a YAML timestamp with a time of day
        raise PydanticCustomError("date_format", "must be a date YYYY-MM-DD, without a time")
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and value.startswith(PLACEHOLDER):
        raise PydanticCustomError(
            "placeholder", "still holds the placeholder written by `new`; write the date of your review, YYYY-MM-DD"
        )
    if not isinstance(value, str) or not _DATE_RE.match(value.strip()):
        raise PydanticCustomError("date_format", "must be a date YYYY-MM-DD, without a time")
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise PydanticCustomError(
            "date_calendar", "'{value}' is not a date in the calendar", {"value": value}
        ) from None


def _check_regex(value: str) -> str:
    try:
        check_portable(value)
    except RegexError as error:
        raise PydanticCustomError("regex", "{reason}", {"reason": str(error)}) from None
    return value


def _check_one_line(value: str) -> str:
    if "\n" in value or "\r" in value:
        raise PydanticCustomError("one_line", "a signature matches within one line; remove the line break")
    return value


def _check_line_length(value: str) -> str:
    if len(value) > MAX_LINE_LENGTH:
        raise PydanticCustomError(
            "too_long", "is longer than a log line is kept ({limit} characters)", {"limit": MAX_LINE_LENGTH}
        )
    return value


Text = Annotated[str, Strict(), AfterValidator(_check_text)]
"""Non-empty text (Markdown where shown on a page)."""

Key = Annotated[
    str,
    Strict(),
    AfterValidator(_check_key),
    WithJsonSchema({"type": "string", "pattern": KEY_PATTERN, "maxLength": KEY_MAX_LENGTH}),
]
"""An identifier that becomes part of a URL or an anchor."""

Url = Annotated[
    str,
    Strict(),
    AfterValidator(_check_url),
    WithJsonSchema({"type": "string", "format": "uri", "pattern": "^https?://"}),
]
ReviewDate = Annotated[dt.date, BeforeValidator(_parse_date), WithJsonSchema({"type": "string", "format": "date"})]
Pattern = Annotated[str, Strict(), AfterValidator(_check_text), AfterValidator(_check_regex)]
LiteralText = Annotated[
    str, Strict(), AfterValidator(_check_text), AfterValidator(_check_one_line), AfterValidator(_check_line_length)
]
ExampleLine = Annotated[str, Strict(), AfterValidator(_check_text), AfterValidator(_check_one_line)]
Severity = Literal["critical", "high", "medium", "low"]  # most severe first: the order pages sort by
SEVERITIES: tuple[str, ...] = get_args(Severity)
# What an entry is to a diagnosis: a failure in its own right; a launcher's or scheduler's summary
# that reports another failure (`wrapper`); a generic error code whose specific cause the log may
# not show (`umbrella`). Diagnoses rank them in this order (generator/roles.py).
Role = Literal["failure", "wrapper", "umbrella"]
ROLES: tuple[str, ...] = get_args(Role)
# What the reader of a multi-rank diagnosis does about the failure that started it: fix the
# program (`code`), drain the node (`hardware`), fix the network, storage or scheduler limits
# (`infrastructure`), or find out (`unknown`). An entry's own value, else its category's.
Verdict = Literal["code", "hardware", "infrastructure", "unknown"]
VERDICTS: tuple[str, ...] = get_args(Verdict)
DEFAULT_VERDICT: Verdict = "unknown"
RelationKind = Literal["co-occurs", "causes", "caused-by", "similar", "see-also"]


ItemT = TypeVar("ItemT")
NonEmptyList = Annotated[list[ItemT], Field(min_length=1)]
"""A required list with at least one item."""


def _optional(annotation: Any, description: str) -> Any:
    """A field that may be left out but, when present, is not empty.

    The default is None, and pydantic does not validate defaults, so an explicit
    ``null`` still fails against the (non-null) type.
    """
    return Field(default=None, description=description, json_schema_extra=_drop_default, **_limits(annotation))


def _limits(annotation: Any) -> dict[str, Any]:
    origin = getattr(annotation, "__origin__", None)
    return {"min_length": 1} if origin is list else {}


def _drop_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


# -- models -----------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


class Cause(_Model):
    id: Key = Field(description="Unique within the entry; the anchor of this cause on the page.")
    text: Text = Field(description="The root cause, in one or two sentences (Markdown).")
    fix: Text = Field(description="What to do about this cause: the setting, command or code change (Markdown).")


class Symptom(_Model):
    symptom: Text = Field(description="What is seen (Markdown).")
    cause: Key = Field(description="The `id` of one of this entry's `causes`.")


_SOURCE_DESCRIPTION = (
    "Where a reader can see this exact wording: best, a permalink at a release tag or commit to the "
    "upstream line that prints it; else official documentation or a public issue whose log shows it."
)
_SUPPORTING_DESCRIPTION = (
    "True for a line that does not identify the failure alone (a traceback frame, a configuration echo, "
    "a common prefix): it raises an entry another signature matched, never finds one by itself."
)


class LiteralSignature(_Model):
    literal: LiteralText = Field(description="An exact, case-sensitive substring of one log line.")
    source: Url = Field(description=_SOURCE_DESCRIPTION)
    supporting: StrictBool = _optional(StrictBool, _SUPPORTING_DESCRIPTION)
    note: Text = _optional(Text, "Where the text comes from.")
    examples: list[ExampleLine] = _optional(list[ExampleLine], "Real log lines that contain the literal.")


class RegexSignature(_Model):
    regex: Pattern = Field(description="A pattern searched for in one log line, in the portable subset.")
    source: Url = Field(description=_SOURCE_DESCRIPTION)
    supporting: StrictBool = _optional(StrictBool, _SUPPORTING_DESCRIPTION)
    note: Text = _optional(Text, "Where the text comes from.")
    examples: NonEmptyList[ExampleLine] = Field(description="Real log lines the pattern must match (at least one).")


def _signature_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        has_literal, has_regex = "literal" in value, "regex" in value
        if has_literal != has_regex:
            return "literal" if has_literal else "regex"
    elif isinstance(value, (LiteralSignature, RegexSignature)):
        return "literal" if isinstance(value, LiteralSignature) else "regex"
    return None


Signature = Annotated[
    Union[Annotated[LiteralSignature, Tag("literal")], Annotated[RegexSignature, Tag("regex")]],
    Discriminator(
        _signature_kind,
        custom_error_type="signature_kind",
        custom_error_message="a signature is a mapping with exactly one of `literal` or `regex`",
    ),
]


@functools.cache
def _lexer_names() -> frozenset[str]:
    from pygments.lexers import get_all_lexers

    return frozenset(alias.lower() for _, aliases, _, _ in get_all_lexers() for alias in aliases)


def _check_language(value: str) -> str:
    if value.lower() not in _lexer_names():
        raise PydanticCustomError(
            "language",
            "'{value}' is not a Pygments lexer name; use e.g. python, bash, console, json, yaml or text",
            {"value": value},
        )
    return value


class CodeSnippet(_Model):
    label: Text = Field(description="The tab's title, e.g. 'DeepSpeed config'.")
    language: Annotated[str, Strict(), AfterValidator(_check_text), AfterValidator(_check_language)] = Field(
        description="A Pygments lexer name, e.g. python, bash, json, yaml."
    )
    source: Text = Field(description="The code, shown as written.")


class Fix(_Model):
    summary: Text = Field(description="The fix in one or two sentences.")
    steps: list[Text] = _optional(list[Text], "Ordered steps (Markdown).")
    code: list[CodeSnippet] = _optional(list[CodeSnippet], "Snippets, shown as tabs.")
    tradeoff: Text = _optional(Text, "What the fix costs.")


class Question(_Model):
    question: Text
    answer: Text


class Reference(_Model):
    title: Text
    url: Url


class Relation(_Model):
    id: Key = Field(description="The id (or a former id) of another entry.")
    relation: RelationKind
    note: Text = _optional(Text, "Why the two are related.")


class Entry(_Model):
    """One failure: the contents of one `entries/**/<id>.yaml` file."""

    model_config = ConfigDict(title=f"Failure entry (contract version {CONTRACT_VERSION})")

    id: Key = Field(description="Equals the file name without `.yaml`.")
    title: Text
    summary: Text = Field(description='The "quick answer": one to three sentences.')
    category: Key = Field(description="A key of the taxonomy's `categories`.")
    severity: Severity
    role: Role = Field(
        default="failure",
        description="`failure` (the default); `wrapper`: a launcher or job summary that reports another failure "
        "(torchrun's ChildFailedError); `umbrella`: a generic error code with many specific causes (ncclSystemError). "
        "A diagnosis ranks a wrapper below every other finding and an umbrella below every specific failure.",
    )
    verdict: Verdict = _optional(
        Verdict,
        "What to do when this failure starts a multi-rank failure: `code` (fix the program), `hardware` "
        "(drain the node), `infrastructure` (network, storage, scheduler limits, preemption) or `unknown`. "
        "Without it, the category's `verdict` applies.",
    )
    tags: NonEmptyList[Key] = Field(description="Keys of the taxonomy's `tags`.")
    description: Text = _optional(Text, "What this failure is (Markdown).")
    mechanism: Text = Field(description="Why it happens (Markdown).")
    causes: NonEmptyList[Cause] = Field(description="The root causes.")
    observations: list[Text] = _optional(list[Text], "What you will observe.")
    symptoms: NonEmptyList[Symptom] = Field(description="The symptom-to-cause table.")
    signatures: list[Signature] = _optional(list[Signature], "Text that appears in logs when it happens.")
    affected: NonEmptyList[Text] = Field(description="Affected systems, free text.")
    confirm: NonEmptyList[Text] = Field(description="The confirmation checklist.")
    fix: Fix
    prevention: list[Text] = _optional(list[Text], "How to keep it from happening.")
    faq: list[Question] = _optional(list[Question], "Questions and answers.")
    references: NonEmptyList[Reference] = Field(description="Official documentation or upstream threads.")
    related: list[Relation] = _optional(list[Relation], "Links to other entries.")
    former_ids: list[Key] = _optional(list[Key], "Ids this entry had before; their URLs redirect here.")
    reviewed: ReviewDate = Field(description="Date of the last review, YYYY-MM-DD.")


class Category(_Model):
    title: Text
    description: Text = _optional(Text, "What the category holds (Markdown).")
    signatures_optional: Annotated[bool, Strict()] = Field(
        default=False,
        description="True when its failures may print no error line (a slow run): entries may then have no signatures.",
    )
    verdict: Verdict = Field(
        default=DEFAULT_VERDICT,
        description="The verdict of its entries that set none (`code`, `hardware`, `infrastructure`, `unknown`).",
    )


class TagInfo(_Model):
    title: Text
    group: Text = _optional(Text, "The heading the tags index lists this tag under.")
    description: Text = _optional(Text, "What the tag means (Markdown).")
    aliases: list[Key] = _optional(list[Key], "Spellings the validator suggests this tag for.")


class Taxonomy(_Model):
    """The contents of `entries/taxonomy.yaml`."""

    categories: Annotated[dict[Key, Category], Field(min_length=1)]
    tags: Annotated[dict[Key, TagInfo], Field(min_length=1)]


def entry_json_schema(taxonomy: Taxonomy | None = None) -> dict[str, Any]:
    """The JSON Schema of an entry; with a taxonomy, its categories and tags as enums, so
    an editor completes them (and flags a typo) as the contributor types."""
    schema = Entry.model_json_schema()
    if taxonomy is not None:
        schema["properties"]["category"]["enum"] = sorted(taxonomy.categories)
        schema["properties"]["tags"]["items"]["enum"] = sorted(taxonomy.tags)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["description"] = (
        "One failure of the ML training failure encyclopedia. "
        f"Contract version {CONTRACT_VERSION}; see the Entry format page of the site."
    )
    return schema
