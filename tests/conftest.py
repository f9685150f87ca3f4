"""Shared fixtures: small, real corpora written as YAML text into temporary folders."""

from __future__ import annotations

import fcntl
import os
import shutil
import textwrap
from pathlib import Path

import pytest

SITE_FIXTURES = {"fixture_site", "project_site", "zensical_site", "built_site"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that needs a built site is a `build` test, whatever its module."""
    for item in items:
        if SITE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.build)


TAXONOMY = """\
categories:
  memory:
    title: Memory
    description: Out-of-memory errors.
  performance:
    title: Performance
    description: Slow runs.
    signatures_optional: true
tags:
  deepspeed:
    title: DeepSpeed
    group: Frameworks
    description: DeepSpeed.
    aliases: [deep-speed]
  zero-3:
    title: ZeRO-3
    group: Techniques
    aliases: [zero3]
  oom:
    title: Out of memory
    group: Symptoms
"""


SOURCE = "https://github.com/pytorch/pytorch/blob/v2.5.0/c10/cuda/CUDACachingAllocator.cpp#L1150"


def entry_yaml(entry_id: str = "cuda-oom-example", **overrides: str) -> str:
    """A valid entry as YAML text; `overrides` replace whole top-level fields (YAML text)."""
    fields = {
        "id": entry_id,
        "title": "CUDA out of memory in the example",
        "summary": "The example runs out of GPU memory.",
        "category": "memory",
        "severity": "high",
        "tags": "[deepspeed, oom]",
        "mechanism": "The allocator cannot find a free block.",
        "causes": (
            "\n  - id: big-batch\n    text: The batch is too large.\n    fix: Halve the micro-batch."
            "\n  - id: prefetch\n    text: Prefetch holds too much.\n    fix: Lower the prefetch bucket."
        ),
        "symptoms": "\n  - symptom: OOM on the first step.\n    cause: big-batch\n  - symptom: Smaller batches do not help.\n    cause: prefetch",
        "signatures": (
            '\n  - literal: "CUDA out of memory."'
            f"\n    source: {SOURCE}"
            "\n  - regex: 'Tried to allocate [0-9.]+ [KMG]iB'"
            f"\n    source: {SOURCE}"
            "\n    examples:"
            '\n      - "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"'
        ),
        "affected": "[PyTorch]",
        "confirm": "\n  - Run with a batch of one.",
        "fix": "\n  summary: Lower the batch size.",
        "references": "\n  - title: CUDA semantics\n    url: https://pytorch.org/docs/stable/notes/cuda.html",
        "reviewed": "2026-11-29",
    }
    fields.update(overrides)
    return "".join(f"{key}: {value}\n" for key, value in fields.items() if value is not None)


class Corpus:
    def __init__(self, root: Path):
        self.root = root
        self.write("taxonomy.yaml", TAXONOMY)

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text) if text.startswith("\n") else text, encoding="utf-8")
        return path

    def entry(self, entry_id: str = "cuda-oom-example", folder: str = "memory", **overrides: str) -> Path:
        return self.write(f"{folder}/{entry_id}.yaml", entry_yaml(entry_id, **overrides))


@pytest.fixture
def corpus(tmp_path: Path) -> Corpus:
    return Corpus(tmp_path / "entries")


def _built(tmp_path_factory, entries: Path, name: str, engine: str = "mkdocs") -> Path:
    """A site built once per test run: under pytest-xdist the workers share one build (the first
    to ask builds it while the others wait on a lock), so parallel workers add no builds.
    `engine`: "mkdocs" (the plugin, into project/site) or "zensical" (project/site-zensical)."""
    from .site_build import build, build_with_zensical, make_project

    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        root = tmp_path_factory.mktemp(name)
    else:  # the workers' temporary folders share a parent that is new for each run
        root = tmp_path_factory.getbasetemp().parent / name
    root.mkdir(parents=True, exist_ok=True)
    project, done = root / "project", root / "built"
    site = project / ("site-zensical" if engine == "zensical" else "site")
    with open(root / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(project, ignore_errors=True)
            make_project(project, entries)
            if engine == "zensical":
                build_with_zensical(project)
            else:
                result = build(project)
                assert result.returncode == 0, result.stderr[-3000:]
            done.touch()
    return site


@pytest.fixture(scope="session")
def fixture_site(tmp_path_factory) -> Path:
    """The site built once from tests/fixtures/site/entries with the project's mkdocs.yml (read only)."""
    from .site_build import FIXTURE_ENTRIES

    return _built(tmp_path_factory, FIXTURE_ENTRIES, "fixture-site")


@pytest.fixture(scope="session")
def project_site(tmp_path_factory) -> Path:
    """The site built once from the shipped entries (read only)."""
    from .site_build import REPO

    return _built(tmp_path_factory, REPO / "entries", "project-site")


@pytest.fixture(scope="session")
def zensical_site(tmp_path_factory) -> Path:
    """The site built once from the shipped entries by Zensical, as `make site-zensical` builds it
    (read only); the tests that ask for it skip where Zensical is not installed."""
    from .site_build import REPO, zensical_installed

    if not zensical_installed():
        pytest.skip("zensical is not installed (make test installs it)")
    return _built(tmp_path_factory, REPO / "entries", "zensical-site", engine="zensical")


ENGINES = {"mkdocs": "project_site", "zensical": "zensical_site"}


@pytest.fixture(scope="module", params=list(ENGINES))
def built_site(request) -> Path:
    """The shipped entries' site as each engine builds it: a test that takes it runs on both."""
    return request.getfixturevalue(ENGINES[request.param])
