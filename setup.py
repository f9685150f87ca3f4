"""Packaging that pyproject.toml cannot say alone.

The entries ship inside the package (`generator.entries` is the repository's entries/). A
category folder whose name is a Python identifier (entries/memory/) looks like a package to
setuptools, which warns about each one it was not told of: name them all here.
"""

from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
CATEGORY_PACKAGES = sorted(
    f"generator.entries.{folder.name}"
    for folder in (ROOT / "entries").iterdir()
    if folder.is_dir() and folder.name.isidentifier()
)

setup(packages=["generator", "generator.entries", "generator.templates", *CATEGORY_PACKAGES])
