"""The compiled signature index: what `diagnose` needs, cached between runs.

Loading and validating thousands of YAML files takes seconds; a diagnosis should
start at once. The index (every signature, and a few fields of each entry) is
cached as JSON under the user's cache folder and rebuilt when the entries
change: the cache is keyed by a fingerprint of every entry file's path, size and
modification time, checked with one `stat` per file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .closest import ERROR_LINE, Closest, closest_entries
from .compat import SLOTS
from .incomplete import TAIL_BLOCKS, TAIL_LINES
from .matcher import Match, Matcher, Result, Signature, Tap
from .rank_lines import EVIDENCE_KEPT, EVIDENCE_LINE, PROGRESS_BLOCKS, PROGRESS_KEPT, PROGRESS_LINE
from .search import SearchIndex
from .triage import Diagnosis, triage
from .urls import entry_src, url_of

if TYPE_CHECKING:  # the index is read without loading the models
    from .encyclopedia import Encyclopedia
    from .problems import Problem

INDEX_FORMAT = 7
# The lines the culprit finder reads (generator.rank_lines), kept while the log is scanned.
RANK_TAPS = (
    Tap("evidence", EVIDENCE_LINE, EVIDENCE_KEPT, EVIDENCE_KEPT),
    Tap("progress", PROGRESS_LINE, 0, PROGRESS_KEPT, end_blocks=PROGRESS_BLOCKS),
)
# Each input's last non-blank lines: where a log stops inside a traceback (generator.incomplete).
TAIL_TAP = Tap("tail", r"\S", 0, TAIL_LINES, tolerant=False, end_blocks=TAIL_BLOCKS, as_printed=True)


@dataclass(frozen=True, **SLOTS)
class EntryInfo:
    title: str
    url: str
    severity: str
    summary: str
    fix: str
    role: str = "failure"
    first_check: str = ""  # an umbrella's first confirmation step: what to collect next
    verdict: str = "unknown"  # code | hardware | infrastructure | unknown (generator.models.Verdict)


@dataclass(frozen=True, **SLOTS)
class SignatureIndex:
    signatures: list[Signature]
    entries: dict[str, EntryInfo]
    causes: list[tuple[str, str]]  # (cause, effect): `causes` relations, declared on either side
    scan_regexes: list[str]  # each signature's `scan_regex`, derived once with the index
    literals: list[list[list[str]]]  # each signature's `literals` (the matcher's first stage), the same

    def matcher(self) -> Matcher:
        """A matcher of every signature, that also keeps the log's last error lines (`closest`), the
        lines the culprit finder reads, and each input's last lines (`incomplete`)."""
        return Matcher(self.signatures, self.scan_regexes, ERROR_LINE, (*RANK_TAPS, TAIL_TAP), self.literals)

    @property
    def roles(self) -> dict[str, str]:
        return {entry_id: info.role for entry_id, info in self.entries.items() if info.role != "failure"}

    def triage(self, results: list[Result]) -> Diagnosis:
        """The matcher's results as a diagnosis: causes first, roles grouped, ranks read."""
        return triage(results, self.causes, self.roles)

    def to_json(self, fingerprint: str) -> dict:
        return {
            "format": INDEX_FORMAT,
            "fingerprint": fingerprint,
            "signatures": [[s.entry_id, s.kind, s.pattern, s.supporting] for s in self.signatures],
            "entries": {entry_id: asdict(info) for entry_id, info in self.entries.items()},
            "causes": [list(pair) for pair in self.causes],
            "scan_regexes": self.scan_regexes,
            "literals": self.literals,
        }

    @classmethod
    def from_json(cls, data: dict) -> SignatureIndex:
        return cls(
            [Signature(*item) for item in data["signatures"]],
            {entry_id: EntryInfo(**info) for entry_id, info in data["entries"].items()},
            [(cause, effect) for cause, effect in data["causes"]],
            data["scan_regexes"],
            data["literals"],
        )

    @classmethod
    def from_encyclopedia(cls, encyclopedia: Encyclopedia) -> SignatureIndex:
        signatures = encyclopedia.signatures
        entries = {
            entry.id: EntryInfo(
                entry.title,
                url_of(entry_src(entry.id)),
                entry.severity,
                entry.summary,
                entry.fix.summary,
                entry.role,
                entry.confirm[0] if entry.role == "umbrella" else "",
                encyclopedia.verdict(entry.id),
            )
            for entry in encyclopedia.entries.values()
        }
        scans = [signature.scan_regex for signature in signatures]
        literals = [[list(group) for group in signature.literals] for signature in signatures]
        return cls(signatures, entries, encyclopedia.causal_pairs, scans, literals)


def cache_dir() -> Path:
    explicit = os.environ.get("MLFAIL_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ml-failure-encyclopedia"


def fingerprint(entries_dir: Path) -> str:
    """Changes whenever an entry file is added, removed, resized or touched."""
    digest = hashlib.sha256(f"format {INDEX_FORMAT}\n".encode())
    for root, dirs, files in os.walk(entries_dir):
        dirs.sort()
        for name in sorted(files):
            if name.endswith((".yaml", ".yml")):
                status = os.stat(os.path.join(root, name))
                relative = os.path.relpath(os.path.join(root, name), entries_dir)
                digest.update(f"{relative}\0{status.st_size}\0{status.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _cache_file(entries_dir: Path, kind: str) -> Path:
    return cache_dir() / f"{kind}-{hashlib.sha256(str(entries_dir).encode()).hexdigest()[:16]}.json"


def _read_cache(path: Path, current: str) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") == INDEX_FORMAT and data.get("fingerprint") == current:
            return data
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # missing, stale or damaged: rebuild it
    return None


def load_index(entries_dir: Path) -> tuple[SignatureIndex | None, list[Problem]]:
    """The index for a folder of entries: from the cache, or built (then cached).

    Returns (index, problems): problems is non-empty when the entries are invalid."""
    entries_dir = entries_dir.resolve()
    current = fingerprint(entries_dir)
    data = _read_cache(_cache_file(entries_dir, "signatures"), current)
    if data is not None:
        try:
            return SignatureIndex.from_json(data), []
        except (KeyError, TypeError, ValueError):
            pass
    built, problems = _rebuild(entries_dir, current)
    return (built[0] if built else None), problems


def load_search(entries_dir: Path) -> SearchIndex | None:
    """The word search of a folder of entries (`mlfail search` without its signature step),
    from its own cache file: only a diagnosis that matched nothing reads it."""
    entries_dir = entries_dir.resolve()
    current = fingerprint(entries_dir)
    data = _read_cache(_cache_file(entries_dir, "search"), current)
    if data is not None:
        try:
            return SearchIndex.from_json(data["search"])
        except (KeyError, TypeError, ValueError):
            pass
    built, _ = _rebuild(entries_dir, current)
    return built[1] if built else None


def closest_for(entries_dir: Path, error_lines: list[Match]) -> list[Closest]:
    """The closest entries to a log's error lines (`generator.closest`), from the cached search;
    none, and nothing read, for a log without error lines."""
    if not error_lines:
        return []
    search = load_search(entries_dir)
    return closest_entries(search, error_lines) if search else []


def _rebuild(entries_dir: Path, current: str) -> tuple[tuple[SignatureIndex, SearchIndex] | None, list[Problem]]:
    """Load the entries once and cache both indexes built from them."""
    from .loading import load_encyclopedia

    result = load_encyclopedia(entries_dir)
    if result.encyclopedia is None:
        return None, result.problems
    index = SignatureIndex.from_encyclopedia(result.encyclopedia)
    search = SearchIndex.from_encyclopedia(result.encyclopedia)
    _write_atomically(_cache_file(entries_dir, "signatures"), json.dumps(index.to_json(current), ensure_ascii=False))
    search_data = {"format": INDEX_FORMAT, "fingerprint": current, "search": search.to_json()}
    _write_atomically(_cache_file(entries_dir, "search"), json.dumps(search_data, ensure_ascii=False))
    return (index, search), []


def _write_atomically(path: Path, text: str) -> None:
    """Write the cache in one step; a cache that cannot be written is only a slower next run."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".signatures-", dir=path.parent)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except OSError:
        pass
