"""What a log line says about the ranks of a job: one table of line rules, read by the culprit
finder (`generator.culprit`) and, through shared.js, by the diagnose page.

Every rule is a pattern and what its match means. The matcher keeps the lines of all of them
while it scans (one extra pattern in its set, `EVIDENCE_LINE`), so reading them costs no second
pass; `read_line` then tells which rule a kept line belongs to and what it names.

Wordings are those of the releases named beside each rule (PyTorch's ProcessGroupNCCL and
ProcessGroupGloo, gloo's TCP transport, torchrun's error summary); a rule matches a line as the
matcher reads it (`generator.normalise`: colours and carriage returns gone, blanks collapsed).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone

# -- which rank a line belongs to ---------------------------------------------------------------

# The usual rank prefixes of launchers and of PyTorch / NCCL messages, most specific first. The
# first group is the rank. A LoRA or low-rank setting printed in a configuration ("LoRA rank 8",
# "low rank 4") is not a process rank, nor is `rank=16` in a dataclass's printed fields.
RANK_PATTERNS = [
    re.compile(r"\[(?:rank|Rank|RANK) ?([0-9]{1,6})\]"),
    re.compile(r"\[default([0-9]{1,6})\]:"),
    re.compile(r"(?<![Ll][Oo][Rr][Aa] )(?<![Ll]ow )\b(?:rank|Rank|RANK) ?:? ?([0-9]{1,6})\b"),
    re.compile(r"\blocal_rank: ?([0-9]{1,6})"),
]
# A torchrun prefix `[default3]:` names the local rank on its node, not the global rank; so does
# the `[host:3]:` of launchers that prefix each worker's lines with its host.
LOCAL_PREFIX = re.compile(r"^\s*\[(?:default|[A-Za-z0-9_.-]+:)([0-9]{1,6})\]:")
# NCCL's own prefix: `host:pid:tid [device] NCCL INFO|WARN ...`; it names the host.
NCCL_PREFIX = re.compile(r"^\s*(?:\[[^\]]*\]:\s*)?([A-Za-z0-9][A-Za-z0-9_.-]*):[0-9]+:[0-9]+ \[[0-9]+\] NCCL ")


def rank_of(line: str) -> int | None:
    """The rank a log line belongs to, or None when it names none."""
    for pattern in RANK_PATTERNS:
        found = pattern.search(line)
        if found:
            return int(found.group(1))
    return None


# -- timestamps ---------------------------------------------------------------------------------

# Per-line times, so that lines from several files are ordered as they happened: ISO dates
# (Python logging's default `2026-12-02 04:31:22,123`, torchrun's `2026-12-02_04:31:22`), and
# glog's `I1202 04:31:22.123456` (PyTorch's C++ log lines; the year is not printed).
TIMESTAMPS = [
    re.compile(
        r"(?P<y>20[0-9]{2})-(?P<mo>[01][0-9])-(?P<d>[0-3][0-9])[ T_](?P<h>[0-2][0-9]):(?P<mi>[0-5][0-9]):(?P<s>[0-6][0-9])(?:[.,](?P<f>[0-9]{1,9}))?"
    ),
    re.compile(
        r"^\s*(?:\[[^\]]*\]:\s*)?\[?[IWEF](?P<mo>[01][0-9])(?P<d>[0-3][0-9]) (?P<h>[0-2][0-9]):(?P<mi>[0-5][0-9]):(?P<s>[0-6][0-9])(?:\.(?P<f>[0-9]{1,9}))?"
    ),
]
GLOG_YEAR = 2000  # glog prints no year: a fixed one keeps its lines comparable with each other


def time_of(line: str, year: int = GLOG_YEAR) -> float | None:
    """Seconds since the epoch (UTC, as printed: no time zone is assumed) of a line's timestamp;
    `year`: the year of a glog line, which prints none (the year the job's dated lines show)."""
    for pattern in TIMESTAMPS:
        found = pattern.search(line)
        if found:
            parts = found.groupdict()
            try:
                moment = datetime(
                    int(parts.get("y") or year),
                    int(parts["mo"]),
                    int(parts["d"]),
                    int(parts["h"]),
                    int(parts["mi"]),
                    min(int(parts["s"]), 59),
                    tzinfo=timezone.utc,
                )
            except ValueError:
                return None
            fraction = parts.get("f") or "0"
            return moment.timestamp() + int(fraction) / 10 ** len(fraction)
    return None


def year_of(lines: Iterable[str]) -> int:
    """The year of the first dated line (ISO form), for glog lines that print none."""
    for line in lines:
        found = TIMESTAMPS[0].search(line)
        if found:
            return int(found.group("y"))
    return GLOG_YEAR


# -- the rules ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LineRule:
    """One kind of line and what it tells about ranks."""

    name: str
    pattern: str
    means: str  # what the culprit finder reads from it (generator.culprit)
    source: str = ""  # where the wording is printed
    compiled: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.pattern))


# What `means` says, in the finder's words:
#   names-initiators  the line names ranks that did not take part (group `ranks`)
#   mismatch          two ranks ran different collectives (groups a, fa, b, fb)
#   counters          a rank's own count of collectives enqueued and completed
#   timeout           the printing rank waited for a collective that did not finish (a victim)
#   mismatch-seen     the rank received a collective of another size than its own: two ranks disagree
#   peer-lost         the printing rank lost a peer (a victim of whichever rank went away)
#   stopped           the launcher or scheduler stopped the rank (SIGTERM): a victim
#   own-failure       the rank failed on its own: an exception, a signal, a kill
#   launcher-field    a line of torchrun's failure summary (`rank :`, `exitcode :`, ...)
#   root-cause        the start of torchrun's "Root Cause" block
#   in-collective     a traceback's code line: the collective the rank waited in
#   scheduler-task    srun's line for tasks (ranks) that exited, were killed or terminated
#   launcher-failed   torchrun's first line for a failed local rank, with its exit code
#   world-size        the job's world size
#   progress          a training-progress line (step N)
LINE_RULES = (
    # torchrun's failure summary first: its `exitcode :` and `traceback :` lines are read as fields
    LineRule(
        "root-cause",
        r"^\s*Root Cause \(first observed failure\):",
        "root-cause",
        "torch/distributed/elastic/multiprocessing/errors/__init__.py (_MSG_FORMAT_TEMPLATE), v2.13.0",
    ),
    LineRule(
        "launcher-field",
        r"^\s*(?:\[[0-9]+\]:\s*$|(?P<field>time|host|rank|exitcode|error_file|traceback)\s+: (?P<value>.*))",
        "launcher-field",
        "torch/distributed/elastic/multiprocessing/errors/__init__.py (_FAILURE_FORMAT_TEMPLATE), v2.13.0",
    ),
    LineRule(
        "monitored-barrier",
        r"\b(?:Rank|Ranks) (?P<ranks>[0-9][0-9, ]*?) failed to pass monitoredBarrier\b",
        "names-initiators",
        "torch/csrc/distributed/c10d/ProcessGroupGloo.cpp (monitoredBarrier), v2.13.0",
    ),
    LineRule(
        "collective-mismatch",
        r"Detected mismatch between collectives on ranks\. Rank (?P<a>[0-9]+) is running collective: "
        r"(?P<fa>.*?), but Rank (?P<b>[0-9]+) is running collective: (?P<fb>.*?)(?:\.\s|$|\. Collectives)",
        "mismatch",
        "torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp (TORCH_DISTRIBUTED_DEBUG=DETAIL), v2.13.0",
    ),
    LineRule(
        "work-counters",
        r"(?:Timeout at NCCL work|detected by watchdog at work): (?P<seq>[0-9]+), last enqueued NCCL work: "
        r"(?P<enqueued>-?[0-9]+), last completed NCCL work: (?P<completed>-?[0-9]+)",
        "counters",
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (watchdog): 'Timeout at NCCL work' in v2.2-v2.4, "
        "'Exception (either an error or timeout) detected by watchdog at work' later",
    ),
    LineRule(
        "watchdog-timeout",
        r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>[0-9]+), OpType=(?P<op>[A-Z_]+)",
        "timeout",
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (WorkNCCL::checkTimeout), v1.13 and later",
    ),
    LineRule(
        "gloo-timeout",
        r"Timed out waiting [0-9]+ ?ms for (?:recv|send) operation to complete"
        r"|\bTimed out waiting [0-9]+ ?ms for (?:send|recv|connect)"
        r"|ProcessGroupGloo.*(?:timed out|Timed out)"
        r"|Some NCCL operations have failed or timed out",
        "timeout",
        "third_party/gloo/gloo/transport/tcp/unbound_buffer.cc, pair.cc (gloo in torch v2.13.0)",
    ),
    LineRule(
        "dump-signal",
        r"First PG on this rank to signal dumping|Observed flight recorder dump signal from another rank"
        r"|Received a dump signal due to a collective timeout from",
        "timeout",
        "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (heartbeat monitor), v2.3 and later",
    ),
    LineRule(
        "mismatch-seen",
        r"Received data size doesn't match expected size|Is there a distributed collective mismatch",
        "mismatch-seen",
        "third_party/gloo/gloo/transport/tcp/pair.cc (enforce on the preamble length), gloo in torch v2.13.0",
    ),
    LineRule(
        "peer-lost",
        r"Connection closed by peer|Connection reset by peer|\bBroken pipe\b|\bECONNRESET\b"
        r"|NCCL communicator was aborted|\bncclRemoteError\b|remote process exited or there was a network error"
        r"|\bDistNetworkError\b|failed to recv, got 0 bytes|Connection refused",
        "peer-lost",
        "gloo/transport/tcp/pair.cc; c10d TCPStore; NCCL (ncclRemoteError), torch v2.13.0",
    ),
    LineRule(
        "collective-call",
        # A traceback's code line of the collective a rank waits in: `dist.all_reduce(flat)`.
        r"^\s*(?:\[[^\]]*\]:\s*)*(?:[A-Za-z_][A-Za-z0-9_.]*\s*=\s*)?(?:dist|torch\.distributed)\."
        r"(?P<op>all_reduce|all_gather|all_gather_into_tensor|all_gather_object|reduce_scatter|reduce_scatter_tensor"
        r"|broadcast|broadcast_object_list|barrier|monitored_barrier|all_to_all|all_to_all_single|gather|scatter|reduce"
        r"|send|recv|isend|irecv)\(",
        "in-collective",
        "the script's own call, printed as a traceback's code line by CPython",
    ),
    LineRule(
        "srun-task",
        r"\bsrun: error: (?P<host>[^:\s]+): tasks? (?P<tasks>[0-9][0-9,-]*): (?P<what>Exited with exit code [0-9]+|Killed|Terminated|Segmentation fault|Aborted)",
        "scheduler-task",
        "Slurm srun (src/srun/step_launch), 20.x-24.x",
    ),
    LineRule(
        "torchrun-failed",
        r"\bfailed \(exitcode: (?P<exitcode>-?[0-9]+)\) local_rank: (?P<local>[0-9]+) \(pid: [0-9]+\)",
        "launcher-failed",
        "torch/distributed/elastic/agent/server/api.py (_exit_barrier / failure log), v1.10 and later",
    ),
    LineRule(
        "stopped",
        r"Signal 15 \(SIGTERM\) received by PID|Received (?:15|SIGTERM) death signal|exitcode\s*: -15\b"
        r"|Sending process [0-9]+ closing signal SIGTERM",
        "stopped",
        "torch/distributed/elastic (agent and api.py), v2.13.0",
    ),
    LineRule(
        "world-size",
        r"\b(?:WORLD_SIZE|world_size|world size|World size)\s*[=:]?\s*(?P<size>[0-9]{1,6})\b",
        "world-size",
        "printed by training scripts and launchers (torchrun's WORLD_SIZE, Lightning, accelerate)",
    ),
    LineRule(
        "own-failure",
        # An exception's class on its own line (the last line of a traceback), a signal by name, a
        # kill, an out-of-memory message: what a process prints when it fails by itself.
        r"^\s*(?:\[[^\]]*\]:?\s*)*(?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception|Interrupt)\b(?::|$)"
        r"|\bSignal (?:[0-9]+) \(SIG[A-Z]+\) received by PID\b"
        r"|\b(?:Segmentation fault|Bus error|Aborted|Killed)(?: \(core dumped\))?$"
        r"|\bFatal Python error\b|\bterminate called\b|\bis killed by signal\b",
        "own-failure",
        "CPython tracebacks; the shell; torchrun's failure summary",
    ),
    LineRule(
        "progress",
        r"\b(?:step|Step|STEP|iteration|Iteration|iter|global_step)\s*[:=#]?\s*(?P<step>[0-9]{1,9})\b"
        r"|\|\s*(?P<done>[0-9]{1,9})/(?P<total>[0-9]{1,9}) \[",
        "progress",
        "training loops, Trainer and tqdm progress",
    ),
)
RULES = {rule.name: rule for rule in LINE_RULES}
# A launcher's own exception reports a worker's failure; it is not the failure of the rank whose
# file it is printed in (a node's launcher output in `slurm-1234_0.out`).
LAUNCHER_EXCEPTION = re.compile(
    r"\b(?:ChildFailedError|ProcessExitedException|ProcessRaisedException|CalledProcessError)\b"
)
_NAMED_GROUP = re.compile(r"\(\?P<[a-z]+>")


def _unnamed(pattern: str) -> str:
    """A rule's pattern without group names, to be joined with the others into one."""
    return _NAMED_GROUP.sub("(?:", pattern)


# The patterns the matcher keeps lines of: every rule but progress, which has its own budget.
EVIDENCE_LINE = "|".join(f"(?:{_unnamed(rule.pattern)})" for rule in LINE_RULES if rule.means != "progress")
PROGRESS_LINE = _unnamed(RULES["progress"].pattern)
EVIDENCE_KEPT = 256  # first and last evidence lines kept per input
PROGRESS_KEPT = 512  # last progress lines kept per input: every live rank's latest step
# Progress lines come every step: looking for them in every block would cost more than the rest of
# the scan, and only each rank's latest step counts, which is near the end of whatever its log
# holds when the job stopped. So only the last PROGRESS_BLOCKS blocks (64 KiB each) of an input
# are read for them, once the input ends.
PROGRESS_BLOCKS = 4


def read_line(text: str) -> tuple[LineRule, re.Match] | None:
    """The first rule, in table order, that a kept line matches, and its match."""
    for rule in LINE_RULES:
        found = rule.compiled.search(text)
        if found:
            if rule.means == "own-failure" and LAUNCHER_EXCEPTION.search(text):
                return None
            return rule, found
    return None


def _js(pattern: str) -> str:
    """A pattern in JavaScript's syntax: named groups are written `(?<name>`."""
    return pattern.replace("(?P<", "(?<")


def shared_table() -> dict:
    """The part of shared.js the diagnose page reads: the same rules and readers."""
    return {
        "rankLines": [{"name": rule.name, "pattern": _js(rule.pattern), "means": rule.means} for rule in LINE_RULES],
        "evidenceLine": EVIDENCE_LINE,
        "progressLine": PROGRESS_LINE,
        "evidenceKept": EVIDENCE_KEPT,
        "progressKept": PROGRESS_KEPT,
        "timestamps": [_js(pattern.pattern) for pattern in TIMESTAMPS],
        "glogYear": GLOG_YEAR,
        "localPrefix": LOCAL_PREFIX.pattern,
        "launcherException": LAUNCHER_EXCEPTION.pattern,
        "ncclPrefix": NCCL_PREFIX.pattern,
    }
