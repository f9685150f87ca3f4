"""Load a folder of entries into an `Encyclopedia`, or the list of what is wrong.

This is the pipeline's front door: find files, read each one safely, validate
it, then check the corpus as a whole. Every problem of every file comes back
in one list; a broken file never hides the errors of the others.
"""

from __future__ import annotations

import contextlib
import gc
import os
from dataclasses import dataclass, field
from pathlib import Path

from . import problem_codes as codes
from .compat import SLOTS
from .encyclopedia import Encyclopedia
from .models import Entry, Taxonomy
from .problems import FILE_FIELD, EntriesFolderError, Problem
from .validation import CorpusLocated, check_corpus, check_entry, check_taxonomy, tag_aliases, validate_model
from .yaml_source import Located, read_yaml_file

TAXONOMY_FILE = "taxonomy.yaml"


@dataclass
class LoadResult:
    encyclopedia: Encyclopedia | None
    problems: list[Problem] = field(default_factory=list)
    files: int = 0  # entry files read
    # With problems: the entries that are valid on their own, their links to the others dropped
    # (None if the taxonomy is unusable). Only a preview shows it, beside the problems.
    partial: Encyclopedia | None = None

    @property
    def ok(self) -> bool:
        return self.encyclopedia is not None


def entry_files(entries_dir: Path) -> list[Path]:
    """Every YAML file under the folder (taxonomy excluded), in a stable order."""
    if not entries_dir.is_dir():
        raise EntriesFolderError(f"{entries_dir}: no such folder")
    found: list[Path] = []
    try:
        for root, dirs, files in os.walk(entries_dir, onerror=_raise):
            dirs[:] = sorted(name for name in dirs if not name.startswith("."))
            for name in sorted(files):
                if name.endswith((".yaml", ".yml")) and not name.startswith("."):
                    found.append(Path(root, name))
    except OSError as error:
        raise EntriesFolderError(f"{entries_dir}: cannot read the folder: {error.strerror or error}") from None
    taxonomy = entries_dir / TAXONOMY_FILE
    return [path for path in found if path != taxonomy]


def _raise(error: OSError) -> None:
    raise error


def display_path(entries_arg: str, path: Path, entries_dir: Path) -> str:
    """The path as the user reached it: the argument joined with the relative path."""
    relative = path.relative_to(entries_dir).as_posix()
    return relative if entries_arg in ("", ".") else f"{entries_arg.rstrip('/')}/{relative}"


@contextlib.contextmanager
def _gc_paused():
    """Loading creates millions of small objects and no reference cycles; the
    cyclic collector would rescan the growing heap again and again (a quarter
    of the time at 2,000 entries)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True, **SLOTS)
class _FileResult:
    """What one entry file yields on its own: its problems, and its entry if valid."""

    problems: list[Problem]
    entry: Entry | None
    located: CorpusLocated | None
    claimed_ids: set[str]


FileCache = dict[Path, tuple[tuple, _FileResult]]
"""Per-file results kept between loads (the live preview), keyed by the file's stamp."""


def load_encyclopedia(entries_arg: str | os.PathLike, cache: FileCache | None = None) -> LoadResult:
    """Load and validate a folder of entries.

    With a `cache` (any dict, kept by the caller between calls), files unchanged
    since the previous call are not read or validated again; the rules across
    files always run on the whole corpus."""
    with _gc_paused():
        return _load(os.fspath(entries_arg), cache)


def _load(entries_arg: str, cache: FileCache | None) -> LoadResult:
    entries_dir = Path(entries_arg)
    files = entry_files(entries_dir)
    problems: list[Problem] = []

    taxonomy = _load_taxonomy(entries_arg, entries_dir, problems)
    aliases = tag_aliases(taxonomy) if taxonomy else {}
    taxonomy_stamp = _stamp(entries_dir / TAXONOMY_FILE)

    valid: list[tuple[Entry, CorpusLocated]] = []
    invalid_ids: set[str] = set()
    sources: dict[str, str] = {}
    for path in files:
        shown = display_path(entries_arg, path, entries_dir)
        stamp = (_stamp(path), taxonomy_stamp, shown)
        cached = cache.get(path) if cache is not None else None
        if cached is not None and cached[0] == stamp:
            result = cached[1]
        else:
            result = _read_entry(path, shown, taxonomy, aliases, _top_folder(path, entries_dir))
            if cache is not None:
                cache[path] = (stamp, result)
        problems.extend(result.problems)
        if result.entry is None:
            invalid_ids.update(result.claimed_ids)
            continue
        assert result.located is not None  # a valid entry keeps the marks the corpus rules report at
        valid.append((result.entry, result.located))
        sources.setdefault(result.entry.id, path.relative_to(entries_dir).as_posix())

    problems.extend(check_corpus(valid, invalid_ids))
    problems.sort()
    if problems or taxonomy is None:
        return LoadResult(None, problems, len(files), _partial(taxonomy, valid, sources))
    return LoadResult(Encyclopedia(taxonomy, [entry for entry, _ in valid], sources), [], len(files))


def _partial(
    taxonomy: Taxonomy | None, valid: list[tuple[Entry, CorpusLocated]], sources: dict[str, str]
) -> Encyclopedia | None:
    """The valid entries as an encyclopedia of their own: relations to an entry that is not among
    them are left out, so every page can still be made."""
    if taxonomy is None:
        return None
    entries = {entry.id: entry for entry, _ in valid}  # a duplicated id: the first file's entry
    known = set(entries) | {former for entry in entries.values() for former in entry.former_ids or ()}
    kept = [
        entry.model_copy(update={"related": [link for link in entry.related if link.id in known] or None})
        if entry.related and any(link.id not in known for link in entry.related)
        else entry
        for entry in entries.values()
    ]
    return Encyclopedia(taxonomy, kept, sources)


def _stamp(path: Path) -> tuple[int, int]:
    try:
        status = path.stat()
    except OSError:
        return (0, -1)
    return (status.st_mtime_ns, status.st_size)


def _top_folder(path: Path, entries_dir: Path) -> str | None:
    parts = path.relative_to(entries_dir).parts
    return parts[0] if len(parts) > 1 else None


def _read_entry(
    path: Path, shown: str, taxonomy: Taxonomy | None, aliases: dict[str, str], folder: str | None
) -> _FileResult:
    if path.suffix == ".yml":
        return _FileResult(
            [Problem(shown, 1, 1, FILE_FIELD, "entries are named <id>.yaml; rename the file", codes.FILE_UNREADABLE)],
            None,
            None,
            set(),
        )
    document = read_yaml_file(path, shown)
    if document.data is None:
        return _FileResult(document.problems, None, None, set())
    located = Located(shown, document.data)
    entry, model_problems = validate_model(Entry, located)
    problems = [*document.problems, *model_problems, *check_entry(located, path.stem, taxonomy, aliases, folder)]
    if entry is None:
        return _FileResult(problems, None, None, _claimed_ids(document.data))
    return _FileResult(problems, entry, CorpusLocated(located), set())


def _claimed_ids(data: dict) -> set[str]:
    """The ids an invalid file claims, so links to it are not reported twice."""
    formers = data.get("former_ids")
    claimed = [data.get("id"), *(formers if isinstance(formers, list) else ())]
    return {value for value in claimed if isinstance(value, str)}


def load_taxonomy(entries_arg: str | os.PathLike) -> tuple[Taxonomy | None, list[Problem]]:
    """The taxonomy of a folder of entries alone (for `new`), with its problems."""
    problems: list[Problem] = []
    taxonomy = _load_taxonomy(os.fspath(entries_arg), Path(entries_arg), problems)
    return taxonomy, problems


def entries_root(path: Path) -> Path | None:
    """The folder of entries a file belongs to: the nearest parent holding the taxonomy."""
    return next((folder for folder in path.parents if (folder / TAXONOMY_FILE).is_file()), None)


def _load_taxonomy(entries_arg: str, entries_dir: Path, problems: list[Problem]) -> Taxonomy | None:
    path = entries_dir / TAXONOMY_FILE
    shown = display_path(entries_arg, path, entries_dir)
    if not path.is_file():
        problems.append(
            Problem(shown, 1, 1, FILE_FIELD, "the taxonomy file is missing; every entry folder has one", codes.TAXONOMY)
        )
        return None
    document = read_yaml_file(path, shown)
    problems.extend(document.problems)
    if document.data is None:
        return None
    located = Located(shown, document.data)
    taxonomy, model_problems = validate_model(Taxonomy, located)
    problems.extend(model_problems)
    if taxonomy is not None:
        problems.extend(check_taxonomy(taxonomy, located))
    return taxonomy
