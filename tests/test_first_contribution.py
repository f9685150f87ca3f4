"""A first contribution, scripted as CONTRIBUTING.md tells it: scaffold, fill in, make the usual
mistakes one at a time (each message says what to do), fix them, validate, build, read the page."""

from __future__ import annotations

import pytest

from .site_build import FIXTURE_ENTRIES, build, make_project
from .test_cli import run

SOURCE = "https://github.com/pytorch/pytorch/blob/v2.6.0/c10/cuda/CUDACachingAllocator.cpp#L1341"

FILLED = f"""\
id: pinned-host-memory-exhausted
title: Pinned host memory runs out
summary: >-
  Page-locked host buffers ran out. Lower the DataLoader's pinned prefetch first.
category: memory
severity: medium
tags: [alpha-tag]
mechanism: >-
  Pinned pages cannot be swapped, and the kernel limits how many a process may lock.
causes:
  - id: prefetch
    text: Too many batches are prefetched into pinned memory.
    fix: Lower `prefetch_factor` or the number of workers.
  - id: ulimit
    text: The locked-memory limit is low.
    fix: Raise `ulimit -l` for the job.
symptoms:
  - symptom: The error appears once the workers start.
    cause: prefetch
  - symptom: The same job works on another machine.
    cause: ulimit
signatures:
  - regex: 'cudaHostAlloc failed: [a-z ]+'
    source: {SOURCE}
    examples:
      - "RuntimeError: cudaHostAlloc failed: out of memory"
affected: [PyTorch]
confirm:
  - Run with pin_memory=False.
fix:
  summary: Lower the prefetch.
  code:
    - label: PyTorch
      language: python
      source: |
        loader = DataLoader(dataset, num_workers=2, prefetch_factor=2)
references:
  - title: CUDA semantics
    url: https://pytorch.org/docs/stable/notes/cuda.html
related:
  - id: alpha-failure
    relation: similar
reviewed: 2026-12-01
"""

# (what the contributor got wrong, the text with that mistake, what the one message must say)
MISTAKES = [
    ("a misspelt field", ("symptoms:", "symtoms:"), "did you mean 'symptoms'? (a required field)"),
    ("a tag that does not exist", ("[alpha-tag]", "[pinned]"), "keys of `tags` in taxonomy.yaml"),
    ("an example its regex misses", ("[a-z ]+'", "[0-9]+'"), "its start `cudaHostAlloc failed: ` matches"),
    (
        "a colon in unquoted text",
        ("    fix: Raise `ulimit -l` for the job.", "    fix: Raise it: ulimit -l."),
        "put the value in quotes",
    ),
    ("no review date", ("reviewed: 2026-12-01\n", ""), "(YYYY-MM-DD)"),
    ("a TODO left in the code", ("prefetch_factor=2)", "prefetch_factor=2)  # TODO"), "TODO placeholder"),
    (
        "one symptom only",
        ("  - symptom: The same job works on another machine.\n    cause: ulimit\n", ""),
        "give at least 2 rows",
    ),
    ("a category that is not its folder", ("category: memory", "category: performance"), "move it to performance/"),
]


@pytest.mark.build
def test_a_first_contribution_from_scaffold_to_page(tmp_path):
    project = tmp_path / "project"
    make_project(project, FIXTURE_ENTRIES)
    assert run("new", "pinned-host-memory-exhausted", "--category", "memory", cwd=project).returncode == 0
    entry = project / "entries" / "memory" / "pinned-host-memory-exhausted.yaml"
    given = "entries/memory/pinned-host-memory-exhausted.yaml"
    scaffold = run("validate", given, cwd=project)
    assert scaffold.returncode == 1 and "TODO placeholder" in scaffold.stdout

    for mistake, (right, wrong), advice in MISTAKES:
        assert right in FILLED, mistake
        entry.write_text(FILLED.replace(right, wrong, 1))
        result = run("validate", given, cwd=project)
        problems = result.stdout.strip().splitlines()[:-1]
        assert result.returncode == 1 and len(problems) == 1, (mistake, result.stdout)
        assert problems[0].startswith(f"{given}:") and advice in problems[0], (mistake, problems[0])
        assert "Traceback" not in result.stderr

    entry.write_text(FILLED)
    assert run("validate", given, cwd=project).stdout.strip() == "OK: 1 entry valid"
    assert run("validate", "entries", cwd=project).stdout.strip() == "OK: 4 entries valid"
    built = build(project)
    assert built.returncode == 0, built.stderr[-2000:]
    page = (project / "site" / "failures" / "pinned-host-memory-exhausted" / "index.html").read_text()
    assert "Pinned host memory runs out" in page and "cudaHostAlloc failed" in page
