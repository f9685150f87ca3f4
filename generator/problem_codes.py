"""The short codes of the validator's problems, each with what it means and what to do.

Every problem the validator reports carries one of these codes (`error[FE201]`), so a
contributor can look it up on the site's entry-format page, which lists this table, and
a tool can filter on it. Codes are stable: a rule that changes keeps its code; a new
kind of mistake gets a new one.
"""

from __future__ import annotations

from dataclasses import dataclass

from .compat import SLOTS


@dataclass(frozen=True, **SLOTS)
class ProblemCode:
    code: str
    title: str
    what_to_do: str


_ALL = (
    # The file: reading it and its YAML.
    ProblemCode(
        "FE101", "The file cannot be read", "Save the entry as UTF-8 text, smaller than 256 KiB, named `<id>.yaml`."
    ),
    ProblemCode(
        "FE102",
        "Invalid YAML",
        "Fix the syntax at the line and column given; text that holds `: ` or starts with a symbol goes in quotes.",
    ),
    ProblemCode(
        "FE103", "A tab in the indentation", "Indent with spaces only (two per level); every tabbed line is listed."
    ),
    ProblemCode("FE104", "A key written twice", "Keep one of the two keys: YAML would silently drop the other."),
    ProblemCode(
        "FE105",
        "Not a plain mapping of fields",
        "Write the entry as `key: value` fields with lists and text only: no tags (`!!`), anchors, merge keys, "
        "second documents or keys that are mappings.",
    ),
    # The fields: the schema of the entry format.
    ProblemCode(
        "FE201", "A required field is missing", "Add the field; the message shows its format when it is not obvious."
    ),
    ProblemCode(
        "FE202",
        "An unknown field",
        "Fix the spelling (the message suggests the field meant) or the indentation (it says where the field belongs).",
    ),
    ProblemCode(
        "FE203",
        "A value of the wrong type or form",
        "Give the kind of value the message names: text in quotes if it looks like a number or a date, `true` or "
        "`false`, a list, one of the allowed words, an id in lower-case-with-dashes, an absolute http(s) URL.",
    ),
    ProblemCode(
        "FE204", "A TODO placeholder is left", "Replace every `TODO` that `new` wrote, in text, code and patterns."
    ),
    # One entry's content rules (the same in `validate` and in CI).
    ProblemCode("FE301", "The id and the file name differ", "Rename the file to `<id>.yaml` or change the id."),
    ProblemCode(
        "FE302", "Too few symptoms", "Give at least two symptoms, each a thing one observes, each naming its cause."
    ),
    ProblemCode(
        "FE303",
        "A symptom and its cause do not match",
        "Name in `symptoms[].cause` the `id` of one of the entry's causes; give each cause its own id.",
    ),
    ProblemCode(
        "FE304",
        "No error signature",
        "Add the error line a log shows, as a `literal` or a `regex` with its `source` and real `examples`.",
    ),
    ProblemCode(
        "FE305",
        "Only context lines",
        "Make the line that names the failure (the error message itself) a signature without `supporting: true`.",
    ),
    ProblemCode(
        "FE306",
        "An example its signature does not match",
        "Fix the pattern or the example; the message shows where matching stops (RE2 syntax, as logs are "
        "normalised: no backticks, `**` or repeated blanks).",
    ),
    ProblemCode(
        "FE307",
        "An unknown or repeated category or tag",
        "Use a key of `entries/taxonomy.yaml` (the message lists the closest ones), once; add a new one there first.",
    ),
    ProblemCode(
        "FE308",
        "The entry is in another category's folder",
        "Move the file to the folder named after its category, or change the category.",
    ),
    ProblemCode(
        "FE309",
        "A relation or former id repeated or pointing at itself",
        "List each related entry and each former id once, and never the entry's own id.",
    ),
    # The whole folder of entries.
    ProblemCode(
        "FE401",
        "An id used twice",
        "Give the new entry another id; a former id may belong to one entry only and never be a current id.",
    ),
    ProblemCode(
        "FE402",
        "A related entry that does not exist",
        "Use the id of an existing entry (the message suggests the closest) or write that entry first.",
    ),
    ProblemCode(
        "FE403",
        "An entry nothing links to",
        "Add a `related` item to the closest failure (co-occurs, causes, caused-by, similar or see-also).",
    ),
    ProblemCode(
        "FE501",
        "A problem in the taxonomy",
        "Keep `taxonomy.yaml` beside the category folders; an alias may belong to one tag and never be a tag.",
    ),
)

PROBLEM_CODES: dict[str, ProblemCode] = {entry.code: entry for entry in _ALL}

# The codes, by name, for the places that report them.
FILE_UNREADABLE = "FE101"
YAML_SYNTAX = "FE102"
YAML_TAB = "FE103"
YAML_DUPLICATE_KEY = "FE104"
YAML_NOT_PLAIN = "FE105"
FIELD_MISSING = "FE201"
FIELD_UNKNOWN = "FE202"
FIELD_VALUE = "FE203"
FIELD_PLACEHOLDER = "FE204"
ID_NOT_FILE_NAME = "FE301"
TOO_FEW_SYMPTOMS = "FE302"
SYMPTOM_CAUSE = "FE303"
NO_SIGNATURE = "FE304"
ONLY_SUPPORTING = "FE305"
EXAMPLE_MISMATCH = "FE306"
TAXONOMY_KEY = "FE307"
WRONG_FOLDER = "FE308"
SELF_OR_REPEATED_LINK = "FE309"
ID_TWICE = "FE401"
RELATED_NOT_FOUND = "FE402"
NOT_LINKED = "FE403"
TAXONOMY = "FE501"
