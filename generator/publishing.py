"""Write rendered pages to a folder as plain files, for engines other than MkDocs.

The folder is replaced as a whole and only once everything is written: the new
tree is built beside it and swapped in, so a failure half-way leaves the old
folder as it was and never a half-written one.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .rendering import Page, StaticFile


def write_pages(out: Path, pages: Iterable[Page], static_files: Iterable[StaticFile]) -> int:
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        count = 0
        for relative, content in [(page.src_uri, page.markdown) for page in pages] + [
            (static.dest_uri, static.content) for static in static_files
        ]:
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            count += 1
        _swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return count


def _swap_in(staging: Path, out: Path) -> None:
    if not out.exists():
        staging.rename(out)
        return
    retired = out.with_name(f".{out.name}-old")
    shutil.rmtree(retired, ignore_errors=True)
    out.rename(retired)
    staging.rename(out)
    shutil.rmtree(retired, ignore_errors=True)
