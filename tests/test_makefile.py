"""The Makefile's set-up on interpreters it cannot use: one clear line, and no half-made .venv/."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from .site_build import REPO


def project_copy(tmp_path: Path) -> Path:
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(REPO / name, tmp_path / name)
    return tmp_path


def fake_python(tmp_path: Path, version: tuple[int, int, int]) -> Path:
    """An interpreter that reports `version` (Debian 12's python3 is 3.11.2)."""
    script = tmp_path / "fake-python"
    script.write_text(
        f'#!/bin/sh\n[ "$1" = -c ] || exit 3\nexec "{sys.executable}" -c "import sys; '
        f'sys.version_info = {(*version, "final", 0)!r}\n$2"\n'
    )
    script.chmod(0o755)
    return script


def set_up(project: Path, python: str, stamp: str = ".venv/.installed-stamp") -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "--no-print-directory", stamp, f"PYTHON={python}"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_too_old_a_python_stops_with_one_line_naming_the_minimum(tmp_path):
    project = project_copy(tmp_path)
    result = set_up(project, str(fake_python(tmp_path, (3, 10, 13))))
    assert result.returncode != 0
    assert "Python 3.11 or newer is needed for the site, test and lint tools" in result.stderr
    assert "(the package alone needs 3.9), but" in result.stderr and "is 3.10.13" in result.stderr
    assert "make PYTHON=python3.12" in result.stderr
    assert not (project / ".venv").exists()


def test_validation_alone_needs_only_the_package_minimum(tmp_path):
    project = project_copy(tmp_path)
    result = set_up(project, str(fake_python(tmp_path, (3, 8, 18))), stamp=".venv/.core-stamp")
    assert result.returncode != 0
    assert "Python 3.9 or newer is needed, but" in result.stderr and "is 3.8.18" in result.stderr
    assert not (project / ".venv").exists()


def test_a_missing_python_is_named(tmp_path):
    result = set_up(project_copy(tmp_path), "no-such-python3")
    assert result.returncode != 0 and "no-such-python3 not found" in result.stdout + result.stderr


def test_the_minimum_is_the_one_pyproject_declares():
    text = (REPO / "pyproject.toml").read_text()
    assert 'requires-python = ">=3.9"' in text
    assert "Python 3.9 or newer" in (REPO / "README.md").read_text()
    assert "TOOLS_MIN_PYTHON := 3.11\n" in (REPO / "Makefile").read_text()
    assert "3.11 or newer" in (REPO / "README.md").read_text()
