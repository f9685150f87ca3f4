"""Where the package's data lives, and where its links point.

An installed package carries the encyclopedia with it: the repository's top-level
`entries/` and `templates/` are packaged as `generator/entries` and
`generator/templates` (see `[tool.setuptools]` in pyproject.toml), so `mlfail` works
from any folder, offline. A source checkout reads the top-level folders directly.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent

# The published site; kept equal to `site_url` in mkdocs.yml (tests/test_installed.py checks).
SITE_URL = "https://ml-failure-encyclopedia.github.io/encyclopedia/"
SITE_URL_VARIABLE = "MLFAIL_SITE_URL"


def _data_dir(name: str) -> Path:
    packaged = PACKAGE_DIR / name
    return packaged if packaged.is_dir() else PACKAGE_DIR.parent / name


TEMPLATES_DIR = _data_dir("templates")


def shipped_entries() -> Path:
    """The encyclopedia the package carries (in a checkout: the repository's `entries/`)."""
    return _data_dir("entries")


def site_url(explicit: str | None = None) -> str:
    """The site links point at: `--site-url`, else $MLFAIL_SITE_URL, else the published site."""
    url = explicit or os.environ.get(SITE_URL_VARIABLE) or SITE_URL
    return url if url.endswith("/") else url + "/"
