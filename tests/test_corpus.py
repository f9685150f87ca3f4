"""The shipped corpus: valid, and as complete as the project promises."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from generator.loading import load_encyclopedia

ENTRIES = Path(__file__).resolve().parent.parent / "entries"


@pytest.fixture(scope="module")
def encyclopedia():
    result = load_encyclopedia(ENTRIES)
    assert result.ok, "\n".join(problem.format() for problem in result.problems)
    return result.encyclopedia


def test_corpus_is_large_enough(encyclopedia):
    assert len(encyclopedia) >= 40


def test_every_category_has_three_entries(encyclopedia):
    counts = Counter(entry.category for entry in encyclopedia.entries.values())
    assert len(encyclopedia.taxonomy.categories) >= 6
    assert {key: counts[key] for key in encyclopedia.taxonomy.categories if counts[key] < 3} == {}


def test_taxonomy_is_described_and_grouped(encyclopedia):
    taxonomy = encyclopedia.taxonomy
    assert all(category.description for category in taxonomy.categories.values())
    assert all(tag.description and tag.group for tag in taxonomy.tags.values())
    assert len({tag.group for tag in taxonomy.tags.values()}) >= 4


def test_seed_failures_and_their_neighbours_are_covered(encyclopedia):
    for entry_id in (
        "deepspeed-zero3-slow-prefetch",
        "zero3-prefetch-forward-oom",
        "cpu-affinity-misconfiguration",
        "gpu-utilization-low",
        "unsloth-qwen3-moe-slow-low-gpu-util",
        "straggler-rank-thermal-throttling",
        "activation-memory-spike",
        "cuda-memory-summary-reading",
        "caching-allocator-debugging",
        "host-ram-exhaustion",
    ):
        assert entry_id in encyclopedia.entries
