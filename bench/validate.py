"""Benchmark: `validate` against the bare libyaml parse of the same files, in one run.

    .venv/bin/python bench/validate.py [N ...]      (default: 2000 10000)

For each N it writes N synthetic entries, then times (best of 3, warm file cache):
- bare parse: read each file and `yaml.load(text, Loader=yaml.CSafeLoader)`;
- validate: `load_encyclopedia`, the whole validator (read, parse with positions,
  models, per-entry and corpus checks), as `python -m generator validate` runs it.
Target: validate <= 3x the bare parse, and linear in N.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.synthetic import make_corpus
from generator.loading import entry_files, load_encyclopedia
from generator.regex_subset import check_portable


def best_of(runs: int, action) -> float:
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        timings.append(time.perf_counter() - started)
    return min(timings)


def bare_parse(files: list[Path]) -> None:
    for path in files:
        yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


def validate(root: Path) -> None:
    # Each run starts cold, as a fresh `python -m generator validate` does.
    check_portable.cache_clear()
    re.purge()
    result = load_encyclopedia(root)
    assert result.ok, result.problems[:3]


def main(sizes: list[int]) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for count in sizes:
            root = make_corpus(Path(scratch, f"entries-{count}"), count)
            files = entry_files(root)
            bare = best_of(3, lambda files=files: bare_parse(files))
            full = best_of(3, lambda root=root: validate(root))
            rows.append((count, bare, full))
    print(f"{'N':>7} {'bare parse s':>13} {'validate s':>11} {'ratio':>6} {'validate us/entry':>18}")
    for count, bare, full in rows:
        print(f"{count:>7} {bare:>13.3f} {full:>11.3f} {full / bare:>6.2f} {full / count * 1e6:>18.0f}")


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [2000, 10000])
