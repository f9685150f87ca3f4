"""Lines and signatures read as a person would: the shared table, and what it does to matching."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.models import LiteralSignature
from generator.normalise import clean_block, normalise_block, normalise_regex, normalise_text

from .site_build import REPO

TABLE = json.loads((Path(__file__).resolve().parent / "fixtures" / "diagnose" / "normalise.json").read_text())


@pytest.mark.parametrize("raw,read", TABLE["text"])
def test_text(raw, read):
    assert normalise_text(raw) == read


@pytest.mark.parametrize("raw,read", TABLE["text"])
def test_a_block_reads_each_line_like_a_single_line(raw, read):
    block = f"{raw}\nsecond  line\n> third\n".encode()
    assert normalise_block(block).decode().split("\n") == [read, "second line", "third", ""]


@pytest.mark.parametrize("raw,read", TABLE["regex"])
def test_regex(raw, read):
    assert normalise_regex(raw) == read


def test_cleaning_a_plain_block_copies_nothing():
    block = bytearray(b"[rank0]: step 1  loss 2.30\n")
    assert clean_block(block) is block


def variants(line: str) -> list[str]:
    """The line as terminals and web pages deliver it: blanks doubled or turned into tabs and
    no-break spaces, a quote marker, bold, colour codes, a carriage return."""
    return [
        line.replace(" ", "  "),
        line.replace(" ", "\t"),
        line.replace(" ", " \u00a0 "),
        "> " + line,
        f"**{line}**",
        f"\x1b[31m{line}\x1b[0m\r",
    ]


def test_the_block_scan_finds_every_line_the_exact_pattern_matches():
    """The command-line matcher searches blocks with `tolerant_regex` and lets the exact pattern
    decide on the lines found: on every shipped example, and on each as pasted or coloured, the
    tolerant pattern must find the cleaned line whenever the exact one matches the normalised line,
    and the cleaned line must hold the signature's literals (`prefilter`)."""
    import re2

    from generator.loading import load_encyclopedia
    from generator.matcher import Signature

    encyclopedia = load_encyclopedia(REPO / "entries").encyclopedia
    assert encyclopedia is not None
    checked = 0
    for entry in encyclopedia.entries.values():
        for signature in entry.signatures or ():
            kind = "literal" if isinstance(signature, LiteralSignature) else "regex"
            pattern = signature.literal if isinstance(signature, LiteralSignature) else signature.regex
            record = Signature(entry.id, kind, pattern)
            exact, tolerant = re2.compile(record.regex), re2.compile("(?m)" + record.scan_regex)
            for example in signature.examples or ():
                for line in [example, *variants(example)]:
                    if exact.search(normalise_text(line)):
                        cleaned = clean_block(line.encode()).decode()
                        assert tolerant.search(cleaned), (entry.id, pattern, line)
                        # The matcher's first stage looks only where a block holds the literals.
                        for group in record.literals:
                            assert any(literal in cleaned for literal in group), (entry.id, pattern, line, group)
                        checked += 1
    assert checked > 500


@pytest.mark.parametrize("raw,read", TABLE["text"])
def test_a_single_line_finishes_like_a_block(raw, read):
    from generator.normalise import finish_line

    assert finish_line(clean_block(raw.encode())).decode() == read
