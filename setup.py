"""Packaging that pyproject.toml cannot say alone.

The entries ship inside the package (`generator.entries` is the repository's entries/). A
category folder whose name is a Python identifier (entries/memory/) looks like a package to
setuptools, which warns about each one it was not told of: name them all here.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
CATEGORY_PACKAGES = sorted(
    f"generator.entries.{folder.name}"
    for folder in (ROOT / "entries").iterdir()
    if folder.is_dir() and folder.name.isidentifier()
)



class FreshBuildPy(build_py):
    """Start from an empty build/lib/generator: setuptools keeps what an earlier build copied
    there, so an entry deleted or moved since would still ship (twice, once moved)."""

    def run(self) -> None:
        shutil.rmtree(Path(self.build_lib) / "generator", ignore_errors=True)
        super().run()


setup(
    packages=["generator", "generator.entries", "generator.templates", *CATEGORY_PACKAGES],
    cmdclass={"build_py": FreshBuildPy},
)
