"""The portable regex subset, on its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.regex_subset import RegexError, check_portable

PORTABLE = [
    r"Tried to allocate [0-9.]+ [KMG]iB",
    r"(?:[0-9]{1,3}\.){3}[0-9]{1,3}",
    r"torch\.cuda\.OutOfMemoryError",
    r"^\[rank[0-9]+\]:",
    r"(?:an )?illegal memory access",
    r"x[-a-z_]+y",
    r"\bncclInternalError\b",
    r"(?:ab|cd)+x",
    r"a\{3\}",
    r"caf\xe9|café",
    r"[^ ]+\.so: undefined symbol: _Z[A-Za-z0-9_]+",
]


@pytest.mark.parametrize("pattern", PORTABLE)
def test_portable_patterns_pass_and_compile_everywhere(pattern):
    check_portable(pattern)  # compiles with RE2, the engine the matcher uses
    re.compile(pattern, re.ASCII)  # and Python's `re` reads it too


def test_every_shipped_signature_compiles_in_python_too():
    """The grammar is what keeps Python, RE2 and JavaScript in step; check it on the corpus."""
    from generator.loading import load_encyclopedia

    encyclopedia = load_encyclopedia(Path(__file__).resolve().parent.parent / "entries").encyclopedia
    for ref in encyclopedia.signatures:
        if ref.kind == "regex":
            re.compile(ref.pattern, re.ASCII)


@pytest.mark.parametrize(
    "pattern",
    [
        r"(a+)+",
        r"(\w+\s?)+",
        r"(?:\d+\.)+x",
        r"(?:a+){3}",
        r"x(?:a|ab)+",
        r"x(a|b|a)+",
        r"x(?:\w|\d)+",
        r"(?:a?)*b",
        r"(?:(?:a)+)+",
    ],
)
def test_catastrophic_shapes_are_rejected(pattern):
    with pytest.raises(RegexError):
        check_portable(pattern)


@pytest.mark.parametrize("pattern", [r"a*", r"^", r"$", r"\b", r"a|", r"(?:)", r"x?", r"(?:a*)?"])
def test_empty_matches_are_rejected(pattern):
    with pytest.raises(RegexError, match="empty string"):
        check_portable(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        r"a{,3}",
        r"a{",
        r"[]a]",
        r"[[:alpha:]]",
        r"\u00e9",
        r"\N{DASH}",
        r"\p{L}",
        r"(?P=x)",
        r"\1",
        r"\q",
        r"\d{5000}",
        r"a{3,2}",
        r"*a",
        r"a**",
        "a" * 2001,
        "a\nb",
    ],
)
def test_non_portable_syntax_is_rejected(pattern):
    with pytest.raises(RegexError):
        check_portable(pattern)


def test_error_names_the_position():
    with pytest.raises(RegexError, match=r"at character 4"):
        check_portable(r"abc(?=x)")


def test_deep_group_nesting_is_rejected_not_crashing():
    with pytest.raises(RegexError, match="deeper"):
        check_portable("(" * 500 + "a" + ")" * 500)


@pytest.mark.parametrize(
    "pattern,needle",
    [
        (r"Tried to allocate [0-9.]+ [KMG]iB", "Tried to allocate "),
        (r"(?:an )?illegal memory access", "illegal memory access"),
        (r"torch\.cuda\.OutOfMemoryError", "torch.cuda.OutOfMemoryError"),
        (r"CUDA error: (?:an illegal|invalid) x", "CUDA error: "),
        (r"a|b", None),
        (r"\d+ GiB", " GiB"),
    ],
)
def test_required_literal_is_in_every_match(pattern, needle):
    from generator.regex_subset import required_literal

    assert required_literal(pattern) == needle


@pytest.mark.parametrize(
    "pattern,groups",
    [
        # Blanks end a run (a block's blank runs are not collapsed yet); short runs do not count.
        (r"Tried to allocate [0-9.]+ [KMG]iB", [("Tried",), ("allocate",)]),
        # An unquantified group joins the text around it; an optional one ends the run.
        (r"torch\.(?:cuda\.)OutOfMemoryError", [("torch.cuda.OutOfMemoryError",)]),
        (r"torch\.(?:cuda\.)?OutOfMemoryError", [("torch.",), ("OutOfMemoryError",)]),
        # An alternation is one group of its branches' best literals, if every branch has one.
        (r"(?:OutOfMemoryError|RuntimeError): CUDA", [("OutOfMemoryError", "RuntimeError"), ("CUDA",)]),
        (r"(?:srun|sbatch|ps): not found", [("found",)]),
        # A repeat that must occur once keeps its body's literals.
        (r"(?:worker )+killed", [("worker",), ("killed",)]),
        (r"\bNCCL\b error", [("NCCL",), ("error",)]),
        (r"\d+ GiB", []),
        (r"a|b", []),
        (r"(?=look-ahead)", []),  # not in the subset: no literals, never a wrong one
    ],
)
def test_required_literals_are_in_every_match(pattern, groups):
    from generator.regex_subset import required_literals

    assert required_literals(pattern) == groups
