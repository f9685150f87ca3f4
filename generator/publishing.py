"""Write rendered pages to a folder as plain files, for engines other than MkDocs.

The folder is replaced as a whole and only once everything is written: the new
tree is built beside it and swapped in, so a failure half-way leaves the old
folder as it was and never a half-written one. With `docs`, the hand-written pages
and assets are copied in first, so that the folder is a whole docs folder for an
engine that runs no plugin (Zensical); a generated page may not hide one of them,
as under the MkDocs plugin (a hand-written home page wins).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .rendering import Page, StaticFile
from .urls import HOME


class PublishingError(Exception):
    """The pages cannot be written as asked; the message says why."""


def write_pages(out: Path, pages: Iterable[Page], static_files: Iterable[StaticFile], docs: Path | None = None) -> int:
    """Write the pages and static files (and the `docs` folder's files) into `out`; the count written."""
    out = out.resolve()
    if docs is not None and not docs.is_dir():
        raise PublishingError(f"{docs} is not a folder")
    if docs is not None and (out == docs.resolve() or docs.resolve() in out.parents):
        raise PublishingError(f"{out} lies inside {docs}: write the pages elsewhere")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        count = _copy_docs(docs, staging) if docs is not None else 0
        hand_written = {path.relative_to(staging).as_posix() for path in staging.rglob("*") if path.is_file()}
        for relative, content in [(page.src_uri, page.markdown) for page in pages] + [
            (static.dest_uri, static.content) for static in static_files
        ]:
            if relative in hand_written:
                if relative == HOME:
                    continue  # a hand-written home page wins
                raise PublishingError(f"{docs}/{relative} would hide a generated page; rename or remove it")
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            count += 1
        _swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return count


def _copy_docs(docs: Path, staging: Path) -> int:
    """Copy the docs folder's files, as MkDocs would take them (dot-files left out)."""
    count = 0
    for path in sorted(docs.rglob("*")):
        relative = path.relative_to(docs)
        if path.is_dir() or any(part.startswith(".") for part in relative.parts):
            continue
        target = staging / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        count += 1
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
