"""PyTorch Flight Recorder dumps: read them safely and name the ranks missing from the first
collective that did not complete, as PyTorch's `fr_trace` does.

A dump is written per rank (`TORCH_FR_DUMP_TEMP_FILE` or `TORCH_NCCL_DEBUG_INFO_TEMP_FILE` prefix
+ the global rank) as a protocol-2 pickle of plain containers (torch 2.13, format version "2.10":
`FlightRecorderDetail.hpp`), or as JSON from `_dump_fr_trace_json`. A pickle can run code when
loaded; these are read by an unpickler that resolves no global at all, so a dump that names any
class or function is refused with an error, never executed.

The analysis compares, per process group, the collectives every rank recorded by sequence
number: the first number that some ranks recorded and others did not names the missing ranks
(they never joined); the first where the ranks disagree on the operation, sizes or dtypes
names the odd ones out. Gloo's dumps key `pg_config` by an empty name (torch 2.13), which stops
`fr_trace` with a KeyError; here a group whose configuration cannot be found is taken to hold
every rank that dumped.
"""

from __future__ import annotations

import ast
import io
import json
import os
import pickle
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .culprit import Event

MAX_DUMP_BYTES = 256 << 20
RANK_SUFFIX = re.compile(r"([0-9]+)(?:\.json|\.pkl|\.pickle)?$")


class DumpError(Exception):
    """A file that is not a Flight Recorder dump that can be read safely."""


class _PlainUnpickler(pickle.Unpickler):
    """Builds only what pickle builds without a global: dicts, lists, tuples, strings, numbers,
    booleans and None. Any class, function or persistent id is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise DumpError(f"it asks to import {module}.{name}; a Flight Recorder dump never does, so it is not loaded")

    def persistent_load(self, pid: Any) -> Any:
        raise DumpError("it refers to a persistent object; a Flight Recorder dump never does")


@dataclass(frozen=True)
class Dump:
    path: str
    rank: int
    version: str
    groups: dict[str, list[int]]  # group name -> its ranks, where the dump says
    collectives: list[dict[str, Any]]  # its entries that are collectives (not point-to-point)


def load(path: str) -> Dump:
    """One rank's dump, read without running code; DumpError says why it cannot be."""
    try:
        size = os.path.getsize(path)
        if size > MAX_DUMP_BYTES:
            raise DumpError(f"{size} bytes, more than a Flight Recorder dump holds")
        with open(path, "rb") as stream:
            data = stream.read()
    except OSError as error:
        raise DumpError(f"cannot be read ({error.strerror or error})") from None
    content = _decoded(data)
    if not isinstance(content, dict) or ("entries" not in content and "pg_config" not in content):
        raise DumpError("no `entries` or `pg_config`: not a Flight Recorder dump")
    name = os.path.basename(path)
    found = RANK_SUFFIX.search(name)
    if found is None:
        raise DumpError("its name does not end with the rank (the dump prefix is followed by the rank)")
    entries = [entry for entry in content.get("entries") or [] if isinstance(entry, dict)]
    return Dump(
        path,
        int(found.group(1)),
        str(content.get("version", "")),
        _groups(content.get("pg_config")),
        [entry for entry in entries if not entry.get("is_p2p")],
    )


def _decoded(data: bytes) -> Any:
    if data[:1] == b"\x80":
        try:
            return _PlainUnpickler(io.BytesIO(data)).load()
        except DumpError:
            raise
        except Exception as error:  # a damaged pickle raises many kinds of error
            raise DumpError(f"a damaged pickle ({type(error).__name__}: {error})") from None
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise DumpError(f"neither a pickle nor JSON ({error})") from None


def _groups(config: Any) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    if not isinstance(config, dict):
        return groups
    for key, value in config.items():
        if not isinstance(value, dict) or not key:
            continue  # gloo (torch 2.13) keys its only entry by an empty name: no use
        ranks = value.get("ranks")
        try:
            parsed = ast.literal_eval(ranks) if isinstance(ranks, str) else ranks
        except (ValueError, SyntaxError):
            continue
        if isinstance(parsed, (list, tuple)) and all(isinstance(rank, int) for rank in parsed):
            groups[str(value.get("name") or key)] = list(parsed)
    return groups


def _group_of(entry: dict[str, Any]) -> str:
    group = entry.get("process_group")
    if isinstance(group, (list, tuple)) and group:
        return str(group[0])
    return str(entry.get("pg_id", ""))


def _seq(entry: dict[str, Any]) -> int:
    try:
        return int(entry.get("collective_seq_id", -1))
    except (TypeError, ValueError):
        return -1


def _shape(entry: dict[str, Any]) -> tuple[str, str, str]:
    return (str(entry.get("profiling_name")), str(entry.get("input_sizes")), str(entry.get("input_dtypes")))


def analyse(dumps: list[Dump]) -> list[Event]:
    """What the dumps say: the ranks missing from, or odd in, the first collective not all ranks
    recorded alike, per process group; and the ranks of a group that wrote no dump."""
    by_rank = {dump.rank: dump for dump in dumps}
    events: list[Event] = []
    members: dict[str, set[int]] = {}
    for dump in dumps:
        for name, ranks in dump.groups.items():
            members.setdefault(name, set()).update(ranks)
    group_names = sorted({_group_of(entry) for dump in dumps for entry in dump.collectives})
    for group in group_names:
        expected = members.get(group) or set(by_rank)
        dumped = sorted(rank for rank in expected if rank in by_rank)
        undumped = sorted(expected - set(by_rank))
        if undumped:
            events.append(
                _event(dumps[0].path, f"group {group}: ranks {undumped} wrote no dump", {"undumped": undumped})
            )
        per_rank = {
            rank: {_seq(entry): entry for entry in by_rank[rank].collectives if _group_of(entry) == group}
            for rank in dumped
        }
        found = _first_disagreement(dumps[0].path, group, per_rank)
        if found is not None:
            events.append(found)
            break  # later collectives only repeat the first one's consequence
    return events


def _first_disagreement(path: str, group: str, per_rank: dict[int, dict[int, dict[str, Any]]]) -> Event | None:
    """The first collective sequence number the ranks of `group` did not record alike; `path`:
    the dump the event is shown as coming from."""
    if len(per_rank) < 2:
        return None
    start = max(min(seqs) for seqs in per_rank.values() if seqs) if any(per_rank.values()) else 0
    last = max((max(seqs) for seqs in per_rank.values() if seqs), default=-1)
    for seq in range(start, last + 1):
        having = {rank: seqs[seq] for rank, seqs in per_rank.items() if seq in seqs}
        if not having:
            continue
        missing = sorted(set(per_rank) - set(having))
        some = next(iter(having.values()))
        described = (
            f"collective #{seq} ({some.get('profiling_name')}, sizes {some.get('input_sizes')}) of group {group}"
        )
        if missing:
            text = f"{described}: ranks {missing} never joined it"
            return _event(path, text, {"ranks": missing, "seq": seq, "group": group})
        shapes = Counter(_shape(entry) for entry in having.values())
        if len(shapes) > 1:
            common, count = shapes.most_common(1)[0]
            odd = sorted(rank for rank, entry in having.items() if _shape(entry) != common)
            if count * 2 > len(having):  # a majority tells what was expected
                name, sizes, dtypes = _shape(having[odd[0]])
                text = (
                    f"collective #{seq} of group {group}: ranks {odd} ran {name} on sizes {sizes} ({dtypes}) "
                    f"where the others ran {common[0]} on sizes {common[1]} ({common[2]})"
                )
                return _event(path, text, {"ranks": odd, "seq": seq, "group": group}, "flight-recorder-mismatch")
            return _event(path, f"{described}: the ranks disagree on the collective", {"ranks": [], "seq": seq})
    return None


def _event(path: str, text: str, value: dict[str, Any], rule: str = "flight-recorder") -> Event:
    return Event(rule, "names-initiators", None, path, 0, text, None, value)


def events_from(paths: list[str]) -> tuple[list[Event], list[str]]:
    """The analysis of every dump given, and one line per dump that could not be read."""
    dumps, problems = [], []
    for path in paths:
        try:
            dumps.append(load(path))
        except DumpError as error:
            problems.append(f"{path}: not read as a Flight Recorder dump: {error}")
    return (analyse(dumps) if dumps else []), problems
