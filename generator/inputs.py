"""What `diagnose` is given, made into a list of inputs: log files (plain or gzip), Flight
Recorder dumps and the JSON reports of other `mlfail diagnose` runs (one per node).

A folder is read recursively, in sorted order (the same answer on every file system), taking
the files a job's logs are kept in (`LOG_NAMES`). A file is told by its first bytes, not its
name: a pickle is a Flight Recorder dump, a JSON object that says it is an mlfail report is a
node report, anything else is a log. The rank of a log file is read from its path when its
lines do not say it (`PATH_RANKS`): `rank3.log`, `node1-rank11.out`, `slurm-1234_7.out`, and
torchrun's `--log-dir` layout `.../attempt_0/<local rank>/stderr.log`, whose local rank becomes
a global one when the node is known too (a `node1/` folder above it, or, for a node diagnosing
its own logs, `NODE_RANK`, `GROUP_RANK` or `SLURM_NODEID`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

GZIP_MAGIC = b"\x1f\x8b"
PICKLE_MAGIC = b"\x80"  # protocol 2 and later start with PROTO
REPORT_MARKER = b'"mlfail-report"'
HEAD_BYTES = 4096

# The files of a log folder that are read; others (checkpoints, images) are left alone.
LOG_NAMES = re.compile(
    r"(?:\.(?:log|out|err|txt|json|pkl|pickle)(?:\.gz)?|\.gz|(?:^|[_.-])(?:stdout|stderr)|(?:^|[_.-])rank_?[0-9]+)$",
    re.I,
)

# A file's rank from its name or its folders: (pattern over the path with `/` separators, what
# the group is). Most specific first.
PATH_RANKS = [
    (re.compile(r"(?:^|/)attempt_[0-9]+/(?P<rank>[0-9]+)/(?:stdout|stderr)\.log(?:\.gz)?$"), "local"),
    (re.compile(r"(?:^|/)attempt_[0-9]+/(?P<rank>[0-9]+)/error\.json$"), "local"),
    (re.compile(r"(?:^|[/_.-])rank[_-]?(?P<rank>[0-9]{1,6})(?=[^0-9/]*$)", re.I), "global"),
    (re.compile(r"(?:^|/)slurm-[0-9]+_(?P<rank>[0-9]{1,6})\.(?:out|err)(?:\.gz)?$"), "global"),
]
# A node's own logs name no node in their paths; a job's environment does (`srun mlfail ...`).
NODE_VARIABLES = ("NODE_RANK", "GROUP_RANK", "SLURM_NODEID")
PATH_NODE = re.compile(r"(?:^|/|[_.-])node[_-]?(?:rank[_-]?)?(?P<node>[0-9]{1,6})(?=[/_.-]|$)", re.I)


@dataclass(frozen=True)
class LogFile:
    """One log to scan, with what its path says of the rank that wrote it."""

    path: str
    rank: int | None = None  # the global rank, when the path tells it
    local_rank: int | None = None  # torchrun's --log-dir folder name, when no global rank is known
    node: int | None = None


@dataclass
class Inputs:
    logs: list[LogFile]
    dumps: list[str]  # Flight Recorder dumps
    reports: list[str]  # other runs' JSON reports (`mlfail diagnose --format json`)


def expand(paths: list[str]) -> Inputs:
    """Every input, folders read recursively; a file given by name is always read."""
    inputs = Inputs([], [], [])
    for path in paths:
        if path != "-" and os.path.isdir(path):
            for found in _folder_files(path):
                _add(inputs, found)
        else:
            _add(inputs, path)
    _globalise(inputs.logs)
    return inputs


def _folder_files(folder: str) -> list[str]:
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(name for name in dirs if not name.startswith("."))
        for name in sorted(files):
            if not name.startswith(".") and LOG_NAMES.search(name):
                found.append(os.path.join(root, name))
    return found


def _add(inputs: Inputs, path: str) -> None:
    kind = "log" if path == "-" else kind_of(path)
    if kind == "dump":
        inputs.dumps.append(path)
    elif kind == "report":
        inputs.reports.append(path)
    else:
        inputs.logs.append(log_file(path))


def kind_of(path: str) -> str:
    """`log`, `dump` (a Flight Recorder pickle or JSON dump) or `report` (an mlfail JSON report)."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(HEAD_BYTES)
    except OSError:
        return "log"  # the scan reports why it cannot be read
    if head.startswith(PICKLE_MAGIC) and len(head) > 1 and 2 <= head[1] <= 5:
        return "dump"
    if head.lstrip().startswith(b"{"):
        if REPORT_MARKER in head:
            return "report"
        if b'"pg_config"' in head or (b'"entries"' in head and b'"version"' in head):
            return "dump"
    return "log"


def log_file(path: str) -> LogFile:
    """A log with the rank its path names, if any."""
    if path == "-":
        return LogFile(path)
    normal = path.replace(os.sep, "/")
    nodes = [int(found.group("node")) for found in PATH_NODE.finditer(normal)]
    node = nodes[-1] if nodes else None  # the innermost node folder counts
    for pattern, meaning in PATH_RANKS:
        found = pattern.search(normal)
        if found:
            rank = int(found.group("rank"))
            if meaning == "global":
                return LogFile(path, rank=rank, node=node)
            return LogFile(path, local_rank=rank, node=node if node is not None else _node_of_this_job())
    return LogFile(path, node=node)


def _node_of_this_job() -> int | None:
    for name in NODE_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return None


def _globalise(logs: list[LogFile]) -> None:
    """Local ranks of torchrun's --log-dir folders made global where the node is known:
    global = node × (local ranks on a node) + local rank, the numbering torchrun assigns."""
    per_node: dict[int, set[int]] = {}
    for log in logs:
        if log.local_rank is not None and log.node is not None:
            per_node.setdefault(log.node, set()).add(log.local_rank)
    if not per_node:
        for position, log in enumerate(logs):
            if log.local_rank is not None and log.node is None:
                logs[position] = LogFile(log.path, rank=log.local_rank)  # one node: local is global
        return
    width = max(max(ranks) + 1 for ranks in per_node.values())
    for position, log in enumerate(logs):
        if log.local_rank is not None and log.node is not None:
            logs[position] = LogFile(log.path, rank=log.node * width + log.local_rank, node=log.node)
