"""The safe YAML reader: hostile and broken files become clear, located problems."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from generator.yaml_source import MAX_FILE_BYTES, parse_yaml_bytes, read_yaml_file


def read(text: bytes | str):
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return parse_yaml_bytes(raw, "entries/x.yaml")


def single(text: bytes | str):
    document = read(text)
    assert len(document.problems) == 1, document.problems
    return document.problems[0]


def test_values_keep_their_positions():
    document = read("id: x\nfix:\n  summary: lower it\ntags:\n  - a\n  - b\n")
    assert document.problems == []
    data = document.data
    assert data.value_marks["id"] == (1, 5)
    assert data["fix"].value_marks["summary"] == (3, 12)
    assert [line for line, _ in data["tags"].item_marks] == [5, 6]


def test_plain_scalars_resolve_like_yaml_but_dates_stay_text():
    data = read("a: 3\nb: 1.5\nc: true\nd: ~\ne: 2026-11-29\nf: '3'\n").data
    assert data == {"a": 3, "b": 1.5, "c": True, "d": None, "e": "2026-11-29", "f": "3"}


def test_keys_are_their_source_text():
    assert list(read("no: 1\n3: x\n").data) == ["no", "3"]


def test_duplicate_keys_are_reported_with_both_lines():
    problem = single("id: a\ntitle: t\nid: b\n")
    assert (problem.line, problem.column, problem.field) == (3, 1, "id")
    assert "first at line 1" in problem.message


def test_duplicate_nested_keys_name_their_path():
    problem = single("fix:\n  summary: a\n  summary: b\n")
    assert problem.field == "fix.summary" and problem.line == 3


@pytest.mark.parametrize(
    "text",
    [
        "a: !!python/object/apply:os.system ['touch /tmp/pwned']\n",
        "a: !!python/name:os.system\n",
        "a: !custom x\n",
        "a: !!binary aGVsbG8=\n",
        "a: !!set {x: null}\n",
    ],
)
def test_non_standard_tags_are_errors_and_never_run(text, tmp_path):
    problem = single(text)
    assert "not allowed" in problem.message and problem.line == 1


def test_billion_laughs_fails_fast_in_little_memory():
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, 10):
        refs = ", ".join([f"*a{level - 1}"] * 10)
        lines.append(f"a{level}: &a{level} [{refs}]")
    # Python's own allocations while reading, measured directly (a process's peak RSS would hide
    # any growth below the peak earlier tests reached); expanding it would take gigabytes.
    tracemalloc.start()
    started = time.perf_counter()
    try:
        problem = single("\n".join(lines) + "\n")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 5  # generous: the real figure is milliseconds
    assert peak < 20 * 2**20, f"{peak / 2**20:.0f} MiB"
    assert "aliases expand" in problem.message


def test_small_aliases_are_fine():
    data = read("base: &b [x, y]\nother: *b\n").data
    assert data["other"] == ["x", "y"]


def test_recursive_alias_is_an_error():
    assert "alias" in single("a: &a [*a]\n").message


def test_merge_keys_are_errors():
    problem = single("base: &b {x: 1}\nc:\n  <<: *b\n")
    assert "merge keys" in problem.message and problem.line == 3


def test_file_over_the_size_limit(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_bytes(b"a: " + b"x" * MAX_FILE_BYTES + b"\n")
    document = read_yaml_file(path, "big.yaml")
    assert document.data is None and "larger than" in document.problems[0].message


def test_not_utf8_names_the_position():
    problem = single(b"id: x\ntitle: caf\xe9\n")
    assert (problem.line, problem.column) == (2, 11) and "UTF-8" in problem.message


def test_tab_in_indentation():
    problem = single("fix:\n\tsummary: a\n")
    assert problem.line == 2 and "tab" in problem.message


def test_tab_inside_quoted_string_is_text():
    assert read('a: "x\ty"\n').data == {"a": "x\ty"}


@pytest.mark.parametrize(
    "text,words",
    [
        ("", "empty"),
        ("# only a comment\n", "empty"),
        ("~\n", "empty"),
        ("- a\n- b\n", "mapping"),
        ("just text\n", "mapping"),
    ],
)
def test_empty_or_not_a_mapping(text, words):
    assert words in single(text).message


def test_second_document_is_an_error():
    assert single("a: 1\n---\nb: 2\n").line == 2


def test_deep_nesting_does_not_crash():
    assert "nested deeper" in single("a: " + "[" * 200_000 + "\n").message


def test_control_character_is_located():
    problem = single("a: b\n\x07\n")
    assert problem.line == 2 and "U+0007" in problem.message


def test_syntax_error_is_one_line():
    problem = single("a: [b, c\nd: e\n")
    assert "\n" not in problem.format() and problem.message.startswith("invalid YAML")


def test_unreadable_file(tmp_path):
    document = read_yaml_file(tmp_path / "missing.yaml", "missing.yaml")
    assert document.data is None and "cannot read" in document.problems[0].message
