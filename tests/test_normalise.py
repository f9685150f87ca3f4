"""Lines and signatures read as a person would: the shared table, and what it does to matching."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.normalise import normalise_block, normalise_regex, normalise_text

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


def test_a_plain_block_is_returned_unchanged():
    block = bytearray(b"[rank0]: step 1 loss 2.30\n")
    assert normalise_block(block) is block
