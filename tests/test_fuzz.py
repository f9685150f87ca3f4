"""Property-based fuzzing of the loader and validator: no input escapes as an exception,
and every problem names a file and a position."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator.loading import load_encyclopedia

from .conftest import TAXONOMY, entry_yaml

VALID = entry_yaml("fuzzed-entry")
FRAGMENTS = [
    ": ",
    "- ",
    "\n",
    "  ",
    "\t",
    "'",
    '"',
    "&a ",
    "*a",
    "<<: ",
    "!!python/object ",
    "!!str ",
    "---\n",
    "...",
    "[",
    "]",
    "{",
    "}",
    "? ",
    "|\n",
    ">-\n",
    "#",
    "null",
    "~",
    "yes",
    "2026-02-30",
    "1e9",
    "0x1F",
    "é",
    "\x00",
    "\ufeff",
    "\x85",
    "regex: '(a+)+'",
    "literal: ''",
    "id: other",
    "tags: [zero3]",
    "related:\n  - id: fuzzed-entry",
]


def problems_of(raw: bytes):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder, "entries")
        (root / "memory").mkdir(parents=True)
        (root / "taxonomy.yaml").write_text(TAXONOMY, encoding="utf-8")
        (root / "memory" / "fuzzed-entry.yaml").write_bytes(raw)
        return load_encyclopedia(root).problems


def assert_well_formed(problems):
    for problem in problems:
        assert problem.path.endswith(".yaml")
        assert problem.line >= 1 and problem.column >= 1
        assert problem.field and problem.message
        assert "\n" not in problem.format()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=400))
def test_random_bytes(raw):
    assert_well_formed(problems_of(raw))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_valid_entries(data):
    text = VALID
    for _ in range(data.draw(st.integers(1, 4))):
        position = data.draw(st.integers(0, len(text)))
        action = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        fragment = data.draw(st.sampled_from(FRAGMENTS) | st.text(max_size=8))
        if action == "insert":
            text = text[:position] + fragment + text[position:]
        elif action == "delete":
            text = text[:position] + text[position + data.draw(st.integers(1, 20)) :]
        else:
            text = text[:position] + fragment + text[position + len(fragment) :]
    assert_well_formed(problems_of(text.encode("utf-8", "surrogatepass")))


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
        max_leaves=30,
    )
)
def test_any_yaml_value_under_any_field(value):
    import yaml

    for field in ("title", "causes", "signatures", "fix", "related", "reviewed", "tags"):
        # The field is written once, holding the generated value (the entry's own is left out).
        text = entry_yaml("fuzzed-entry", **{field: None}) + yaml.safe_dump({field: value}, allow_unicode=True)
        problems = problems_of(text.encode("utf-8", "surrogatepass"))
        assert_well_formed(problems)
        assert not any("duplicate" in problem.message for problem in problems), "the value itself was validated"
