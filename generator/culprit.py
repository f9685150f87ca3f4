"""Which rank started a multi-rank failure, and which ranks failed because of it.

When one rank of a job fails, the others fail soon after on communication: they time out
waiting in a collective, lose their connection to it, or are stopped by the launcher. The rank
whose line comes first in a log is often one of those victims. The finder reads the lines the
matcher kept for it (`generator.rank_lines`: one table of line rules), gives each line the rank
that printed it (its prefix, else the rank its file's path names), and decides with these rules,
the first that applies winning:

1. **Named by the program.** A rank that PyTorch itself says did not take part: `monitoredBarrier`
   names the ranks that did not arrive; with `TORCH_DISTRIBUTED_DEBUG=DETAIL`, the rank whose
   collective differs from the rest (a minority of at least three ranks compared); NCCL's watchdog
   counters, where a rank's last enqueued collective is behind the one the others timed out in;
   a Flight Recorder analysis (`generator.flight_recorder`) that names the ranks missing from the
   first collective that did not complete.
2. **A failure of its own.** A rank that failed by itself (an exception that is not a
   communication error, a signal, a kill, as its own lines or torchrun's failure summary say),
   while the others only timed out, lost a peer or were stopped. With timestamps (per line, in
   any file), only the ranks whose own failure came first, within `AT_ONCE` seconds of each other.
3. **Absent from a timeout.** The ranks of the job (its world size, or every rank seen) that do
   not report the timeout the others report: they never entered the collective.
4. **Behind.** The ranks whose last progress line (`step N`) is behind the others' when the job
   stopped, when they are fewer than the rest.

When none applies, there is no initiator and the reader is told what to collect.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Optional

from .inputs import LogFile
from .matcher import Match
from .rank_lines import LOCAL_PREFIX, NCCL_PREFIX, RANK_PATTERNS, read_line, time_of, year_of

LAUNCHER_RULES = {
    "launcher-summary",
    "torchrun-failed",
    "srun-task",
    "stopped",
    "flight-recorder",
    "flight-recorder-mismatch",
}
# The failure a rule shows by itself, when no specific finding was seen on the initiating ranks:
# ranks that ran different collectives are a desync, whatever their own lines then printed.
RULE_FAILURES = {
    "collective-mismatch": "collective-mismatch-desync",
    "flight-recorder-mismatch": "collective-mismatch-desync",
    "waited-elsewhere": "collective-mismatch-desync",
}
AT_ONCE = 5.0  # seconds: own failures this close together started the failure together
MIN_COMPARED = 3  # a collective mismatch names a minority only among this many ranks
COLLECT = (
    "the logs of every rank (torchrun --log-dir, or one file per rank), with timestamps; for a hang, "
    "TORCH_NCCL_DUMP_ON_TIMEOUT=1 and TORCH_FR_BUFFER_SIZE=2000 so each rank writes a Flight Recorder dump"
)
# Why the rule that decided named these ranks, in the reader's words (terminal and page alike).
RULE_WORDS = {
    "monitored-barrier": "PyTorch's monitoredBarrier names the ranks that did not arrive",
    "flight-recorder": "the Flight Recorder dumps show they never joined the collective the others waited in",
    "flight-recorder-mismatch": "the Flight Recorder dumps show they ran another collective, size or dtype than the rest",
    "collective-mismatch": "they ran a different collective from the other ranks (TORCH_DISTRIBUTED_DEBUG=DETAIL)",
    "work-counters": "their last enqueued collective is behind the one the others timed out in",
    "own-failure": "they failed on their own; the other ranks failed on communication or were stopped after",
    "absent-from-timeout": "the other ranks timed out waiting in a collective; these report no timeout",
    "waited-elsewhere": "every rank timed out, but these waited in another collective than the rest",
    "behind": "their last progress line is behind the other ranks' when the job stopped",
    "absent-from-stop": "the launcher or scheduler stopped every other rank after these failed",
    "only-exited": "the launcher saw them exit with an error and stopped the other ranks (why they exited, their own log says)",
}
VERDICT_WORDS = {
    "code": "fix the program or its configuration",
    "hardware": "drain the node and have its hardware checked",
    "infrastructure": "fix the network, storage or scheduler limits (not the program)",
    "unknown": "read the failure's page to tell",
}
SIGNAL = re.compile(r"\bSignal (?P<number>[0-9]+) \((?P<name>SIG[A-Z]+)\)")
STOP_SIGNALS = {"SIGTERM", "SIGINT", "SIGHUP"}  # a launcher or scheduler stopping the rank


@dataclass(frozen=True)
class Event:
    """One line that tells something about a rank."""

    rule: str
    means: str
    rank: int | None  # the rank that printed it (or that torchrun's summary is about)
    file: str
    line: int
    text: str
    time: float | None = None
    value: dict[str, Any] = field(default_factory=dict)  # what the rule read: seq, step, ranks...
    host: str | None = None


@dataclass(frozen=True)
class Evidence:
    rule: str
    file: str
    line: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "file": self.file, "line": self.line, "text": self.text}


@dataclass
class Culprit:
    """The finder's answer: the initiating ranks (empty when the logs cannot tell), why, and the rest."""

    initiators: list[int]
    rule: str | None  # the rule that decided
    evidence: list[Evidence]
    collateral: list[int]  # ranks that failed because of it
    world_size: int | None
    ranks_seen: list[int]
    hosts: dict[int, str]
    note: str | None = None  # e.g. "every rank failed the same way"
    launched: bool = False  # a launcher or scheduler reported ranks: a job of several processes

    @property
    def host(self) -> str | None:
        hosts = sorted({self.hosts[rank] for rank in self.initiators if rank in self.hosts})
        return ", ".join(hosts) if hosts else None


# -- reading the kept lines ---------------------------------------------------------------------


def events_of(lines: Iterable[Match], logs: list[LogFile], names: list[str]) -> list[Event]:
    """The kept lines of every input as events, each with the rank that printed it."""
    lines = list(lines)
    width = _local_width(lines, logs)
    events = []
    clock: dict[int, float] = {}  # per input, the time of its latest timestamped line so far
    year = year_of(match.text for match in lines)
    for match in lines:
        stamped = time_of(match.text, year)
        if stamped is not None:
            clock[match.source] = stamped
        read = read_line(match.text)
        if read is None:
            continue
        rule, found = read
        log = logs[match.source] if match.source < len(logs) else LogFile(names[match.source])
        rank = line_rank(match.text, log, width)
        if rule.name == "torchrun-failed":  # a local rank on the launcher's node
            local = int(found.group("local"))
            rank = log.node * width + local if log.node is not None and width else local
        events.append(
            Event(
                rule.name,
                rule.means,
                rank,
                names[match.source],
                match.line,
                match.text,
                clock.get(match.source),  # a traceback's last line has no time: the line above it has
                _values(rule.name, found),
                _host(match.text),
            )
        )
    return _launcher_summaries(_per_task(events))


def _per_task(events: list[Event]) -> list[Event]:
    """A scheduler's or launcher's line about ranks read as one event per rank it names: srun's
    `tasks 0-57,59-63: Terminated` (stopped by srun: victims) or `task 3: Exited with exit code 1`
    (a failure of its own); torchrun's `failed (exitcode: -9) local_rank: 3`."""
    out: list[Event] = []
    for event in events:
        if event.rule == "srun-task":
            what = str(event.value.get("what", ""))
            means = "stopped" if what in ("Killed", "Terminated") else "own-failure"
            for rank in _task_ranks(str(event.value.get("tasks", ""))):
                out.append(
                    Event(
                        event.rule,
                        means,
                        rank,
                        event.file,
                        event.line,
                        event.text,
                        event.time,
                        {},
                        str(event.value["host"]),
                    )
                )
        elif event.rule == "torchrun-failed":
            code = int(event.value["exitcode"])
            means = "exited" if code > 0 else "stopped" if code == -15 else "own-failure"
            out.append(
                Event(event.rule, means, event.rank, event.file, event.line, event.text, event.time, {"exitcode": code})
            )
        else:
            out.append(event)
    return out


def _task_ranks(text: str) -> list[int]:
    ranks: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        if low.isdigit() and (not high or high.isdigit()):
            ranks.extend(range(int(low), int(high or low) + 1))
    return ranks[:100_000]


def line_rank(text: str, log: LogFile, width: int | None = None) -> int | None:
    """The global rank that printed a line: its `[rankN]` prefix, a torchrun `[defaultN]:` prefix
    (a local rank, made global from the file's node), the file's own rank, then a rank the line names."""
    found = RANK_PATTERNS[0].search(text)
    if found:
        return int(found.group(1))
    local = LOCAL_PREFIX.search(text)
    if local:
        rank = int(local.group(1))
        return log.node * width + rank if log.node is not None and width else rank
    if log.rank is not None:
        return log.rank
    for pattern in RANK_PATTERNS[2:]:
        found = pattern.search(text)
        if found:
            return int(found.group(1))
    return None


def _local_width(lines: Iterable[Match], logs: list[LogFile]) -> int | None:
    """Ranks per node, for `[defaultN]:` prefixes in the launcher logs of several nodes."""
    nodes = {log.node for log in logs if log.node is not None}
    if len(nodes) < 2:
        return None
    seen = [int(found.group(1)) for match in lines for found in [LOCAL_PREFIX.search(match.text)] if found]
    return max(seen) + 1 if seen else None


def _values(rule: str, found: re.Match) -> dict[str, Any]:
    groups = {key: value for key, value in found.groupdict().items() if value is not None}
    if rule == "monitored-barrier":
        return {"ranks": [int(rank) for rank in re.findall(r"[0-9]+", groups["ranks"])]}
    if rule == "collective-mismatch":
        return {
            "a": int(groups["a"]),
            "fa": _fingerprint(groups["fa"]),
            "b": int(groups["b"]),
            "fb": _fingerprint(groups["fb"]),
        }
    if rule == "progress":
        return {"step": int(groups.get("step") or groups.get("done") or 0)}
    return {key: (int(value) if value.lstrip("-").isdigit() else value) for key, value in groups.items()}


def _fingerprint(text: str) -> str:
    """A collective's fingerprint without its sequence number, so ranks that ran the same kind of
    collective compare equal whatever number each counted."""
    return re.sub(r"SequenceNumber=[0-9]+,?\s*", "", text).strip()


def _host(text: str) -> str | None:
    found = NCCL_PREFIX.search(text)
    return found.group(1) if found else None


def _launcher_summaries(events: list[Event]) -> list[Event]:
    """torchrun's failure summary (`rank : 3 (local_rank: 3)`, `exitcode : -9`, `traceback : Signal 9
    ...`, one field a line) read as one event per failed rank, classified by what it says."""
    out: list[Event] = []
    block: dict[str, Any] = {}
    root = False

    def close() -> None:
        nonlocal block
        if "rank" in block:
            out.append(_summary_event(block, root))
        block = {}

    previous: Event | None = None
    for event in events:
        if event.rule == "root-cause":
            close()
            root = True
            out.append(event)
        elif event.rule == "launcher-field":
            contiguous = previous is not None and previous.rule == "launcher-field" and event.file == previous.file
            field_name = event.value.get("field")
            if field_name is None or not contiguous or field_name in block:
                close()
            if field_name is not None:
                block[field_name] = str(event.value.get("value", "")).strip()
                block.setdefault("first", event)
        else:
            close()
            out.append(event)
        previous = event
    close()
    return out


def _summary_event(block: dict[str, Any], root: bool) -> Event:
    first: Event = block["first"]
    rank_text = re.match(r"([0-9]+)", block["rank"])
    rank = int(rank_text.group(1)) if rank_text else None
    code_text = re.match(r"(-?[0-9]+)", block.get("exitcode", ""))
    exitcode = int(code_text.group(1)) if code_text else None
    message = block.get("traceback", "")
    signal = SIGNAL.search(message) or SIGNAL.search(block.get("exitcode", ""))
    if signal is not None:
        means = "stopped" if signal.group("name") in STOP_SIGNALS else "own-failure"
    else:
        read = read_line(message) if message else None
        means = (
            read[0].means if read and read[0].means in ("timeout", "peer-lost", "stopped", "own-failure") else "exited"
        )
    text = f"rank {rank}: exitcode {exitcode}" + (f", {message}" if message else "")
    host = block.get("host") or None
    value = {"exitcode": exitcode, "root": root}
    return Event(
        "launcher-summary", means, rank, first.file, first.line, text, time_of(block.get("time", "")), value, host
    )


# -- deciding -----------------------------------------------------------------------------------


def find_culprit(events: list[Event], extra: Iterable[Event] = ()) -> Culprit:
    """The initiating ranks from the events of every input (and of other nodes' reports, `extra`)."""
    events = [*events, *extra]
    world = _world_size(events)
    ranks_seen = sorted({event.rank for event in events if event.rank is not None})
    hosts = {event.rank: event.host for event in events if event.rank is not None and event.host}
    launched = any(event.rule in LAUNCHER_RULES for event in events)
    failing = sorted(
        {
            e.rank
            for e in events
            if e.rank is not None and e.means in ("own-failure", "timeout", "peer-lost", "stopped", "exited")
        }
    )
    mismatch_seen = [event for event in events if event.means == "mismatch-seen"]
    for decide in (_named, _own_failures, _absent_from_timeout, _behind, _only_exited, _absent_from_stop):
        decided = decide(events, world, ranks_seen)
        if decided is not None:
            initiators, rule, evidence, note = decided
            if mismatch_seen and rule in ("own-failure", "only-exited"):
                # A rank that received a collective of the wrong size aborts first: the one that
                # sent it, the culprit, may be any other. The logs do not say which.
                note = (
                    "two ranks ran different collectives (gloo: "
                    + mismatch_seen[0].text[:80]
                    + "); which one is wrong the logs do not say"
                )
                return Culprit([], None, _evidence(mismatch_seen, 1), failing, world, ranks_seen, hosts, note, launched)
            collateral = [rank for rank in failing if rank not in initiators]
            return Culprit(sorted(initiators), rule, evidence, collateral, world, ranks_seen, hosts, note, launched)
    return Culprit([], None, [], failing, world, ranks_seen, hosts, launched=launched)


Decision = tuple[list[int], str, list[Evidence], Optional[str]]  # Optional: this line runs on Python 3.9


def _evidence(events: Iterable[Event], limit: int = 5) -> list[Evidence]:
    return [Evidence(event.rule, event.file, event.line, event.text) for event in list(events)[:limit]]


def _named(events: list[Event], world: int | None, seen: list[int]) -> Decision | None:
    barrier = [event for event in events if event.rule == "monitored-barrier"]
    if barrier:
        ranks = sorted({rank for event in barrier for rank in event.value["ranks"]})
        return ranks, "monitored-barrier", _evidence(barrier), None
    for event in events:
        if event.rule.startswith("flight-recorder") and event.value.get("ranks"):
            flight = [e for e in events if e.rule.startswith("flight-recorder")]
            return sorted(event.value["ranks"]), event.rule, _evidence(flight), None
    mismatch = _mismatch_minority(events)
    if mismatch is not None:
        return mismatch
    return _behind_in_counters(events)


def _mismatch_minority(events: list[Event]) -> Decision | None:
    reports = [event for event in events if event.rule == "collective-mismatch"]
    if not reports:
        return None
    ran: dict[int, str] = {}
    for event in reports:
        ran.setdefault(event.value["a"], event.value["fa"])
        ran.setdefault(event.value["b"], event.value["fb"])
    groups: dict[str, list[int]] = {}
    for rank, fingerprint in ran.items():
        groups.setdefault(fingerprint, []).append(rank)
    if len(ran) < MIN_COMPARED or len(groups) < 2:
        return None
    ordered = sorted(groups.values(), key=len)
    if len(ordered[0]) * 2 >= len(ran):
        return None
    # The ranks a report compares against rank 0's collective stand for everyone they did not name.
    return sorted(ordered[0]), "collective-mismatch", _evidence(reports), None


def _behind_in_counters(events: list[Event]) -> Decision | None:
    counters = [event for event in events if event.rule == "work-counters" and event.rank is not None]
    if not counters:
        return None
    stuck = max(event.value["seq"] for event in counters)
    behind = {event.rank for event in counters if event.value["enqueued"] < stuck}
    if not behind or len(behind) == len({event.rank for event in counters}):
        return None
    shown = [event for event in counters if event.rank in behind] + [e for e in counters if e.rank not in behind][:1]
    return sorted(r for r in behind if r is not None), "work-counters", _evidence(shown), None


def _own_failures(events: list[Event], world: int | None, seen: list[int]) -> Decision | None:
    own = [event for event in events if event.means == "own-failure" and event.rank is not None]
    if not own:
        return None
    first_time: dict[int, float] = {}
    for event in own:
        if event.time is not None and event.rank is not None:
            first_time[event.rank] = min(first_time.get(event.rank, event.time), event.time)
    ranks = sorted({event.rank for event in own if event.rank is not None})
    if len(ranks) > 1 and set(ranks) >= set(seen) and all(event.rule == "launcher-summary" for event in own):
        return None  # every rank ended on the same kind of signal: a watchdog abort after a timeout does that
    if first_time and len(first_time) == len(ranks):
        start = min(first_time.values())
        ranks = sorted(rank for rank, time in first_time.items() if time - start <= AT_ONCE)
    note = None
    everyone = world if world is not None else len(seen)
    if len(ranks) > 1 and len(ranks) >= everyone:
        note = f"every rank ({len(ranks)}) failed the same way: not one rank's fault"
    chosen = [event for event in own if event.rank in ranks]
    chosen.sort(key=lambda event: (event.rule != "own-failure", event.time or 0.0))
    return ranks, "own-failure", _evidence(chosen), note


def _absent_from_timeout(events: list[Event], world: int | None, seen: list[int]) -> Decision | None:
    timeouts = [event for event in events if event.means == "timeout" and event.rank is not None]
    if not timeouts:
        return None
    waited = {event.rank for event in timeouts}
    everyone = set(range(world)) if world is not None else set(seen)
    absent = sorted(rank for rank in everyone - waited if rank is not None)
    if absent and len(absent) < len(everyone):
        return absent, "absent-from-timeout", _evidence(timeouts, 3), None
    return _waited_elsewhere(events)


def _waited_elsewhere(events: list[Event]) -> Decision | None:
    """Every rank timed out, but not in the same collective: the minority that waited in another
    one (NCCL's `WorkNCCL(SeqNum=..., OpType=...)`, else the collective call of its traceback)
    is where the ranks parted."""
    waited_in: dict[int, tuple[str, Event]] = {}
    calls: dict[int, Event] = {}  # each rank's latest collective call before its timeout
    for event in events:
        if event.rank is None or event.rank in waited_in:
            continue
        if event.rule == "collective-call":
            calls[event.rank] = event
        elif event.rule == "watchdog-timeout":
            waited_in[event.rank] = (f"{event.value.get('op')} #{event.value.get('seq')}", event)
        elif event.means == "timeout" and event.rank in calls:
            waited_in[event.rank] = (str(calls[event.rank].value.get("op")), calls[event.rank])
    groups: dict[str, list[int]] = {}
    for rank, (where, _) in waited_in.items():
        groups.setdefault(where, []).append(rank)
    if len(waited_in) < MIN_COMPARED or len(groups) < 2:
        return None
    smallest = min(groups.values(), key=len)
    if len(smallest) * 2 >= len(waited_in):
        return None
    shown = [waited_in[rank][1] for rank in smallest] + [e for r, (_, e) in waited_in.items() if r not in smallest][:1]
    return sorted(smallest), "waited-elsewhere", _evidence(shown), None


def _behind(events: list[Event], world: int | None, seen: list[int]) -> Decision | None:
    last: dict[int, tuple[int, Event]] = {}
    for event in events:
        if event.rule == "progress" and event.rank is not None:
            last[event.rank] = (event.value["step"], event)
    if len(last) < 2:
        return None
    ahead = max(step for step, _ in last.values())
    behind = sorted(rank for rank, (step, _) in last.items() if step < ahead)
    if not behind or len(behind) * 2 >= len(last):
        return None
    shown = [last[rank][1] for rank in behind] + [event for step, event in last.values() if step == ahead][:1]
    return behind, "behind", _evidence(shown), None


def _only_exited(events: list[Event], world: int | None, seen: list[int]) -> Decision | None:
    """The ranks a launcher saw exit with an error while it stopped the others (SIGTERM), when
    nothing else is known: an exit status alone does not say why, so no rank that waited in a
    collective or lost a peer counts."""
    if any(event.means in ("timeout", "peer-lost") and event.rank is None for event in events):
        return None  # some rank timed out or lost a peer: the exited one may be that victim
    exited = [event for event in events if event.means == "exited" and event.rank is not None]
    waited = {event.rank for event in events if event.means in ("timeout", "peer-lost") and event.rank is not None}
    stopped = {event.rank for event in events if event.means == "stopped" and event.rank is not None}
    ranks = sorted({event.rank for event in exited if event.rank is not None} - waited - stopped)
    if not ranks or (len(ranks) > 1 and not waited and not stopped):
        return None
    return ranks, "only-exited", _evidence(e for e in exited if e.rank in ranks), None


def _absent_from_stop(events: list[Event], world: int | None, seen: list[int]) -> Decision | None:
    """The launcher or scheduler stopped every rank but a few (srun's `tasks 0-57,59-63:
    Terminated`): those few failed first, though their own lines are not here."""
    stopped = {rank for event in events if event.means == "stopped" and (rank := event.rank) is not None}
    if len(stopped) < 2:
        return None
    everyone = set(range(world)) if world is not None else set(range(max(stopped) + 1))
    absent = sorted(everyone - stopped)
    if not absent or len(absent) * 2 >= len(everyone):
        return None
    return absent, "absent-from-stop", _evidence(e for e in events if e.means == "stopped"), None


def _world_size(events: list[Event]) -> int | None:
    sizes = [
        size for event in events if event.rule == "world-size" and isinstance(size := event.value.get("size"), int)
    ]
    sizes = [size for size in sizes if size > 0]
    return max(sizes) if sizes else None


# -- words --------------------------------------------------------------------------------------


def ranges(ranks: Iterable[int]) -> str:
    """`0-6, 8-15` for a list of ranks."""
    ordered = sorted(set(ranks))
    parts: list[str] = []
    start = previous = None
    for rank in ordered:
        if start is None:
            start = previous = rank
        elif rank == previous + 1:  # type: ignore[operator]
            previous = rank
        else:
            parts.append(_span(start, previous))
            start = previous = rank
    if start is not None:
        parts.append(_span(start, previous))
    return ", ".join(parts)


def _span(start: int, end: int | None) -> str:
    return str(start) if end is None or end == start else f"{start}-{end}"


def shared_table() -> dict[str, Any]:
    """The part of shared.js the diagnose page's culprit finder reads (diagnose-culprit.js)."""
    return {
        "culpritRuleWords": RULE_WORDS,
        "verdictWords": VERDICT_WORDS,
        "culpritCollect": COLLECT,
        "atOnce": AT_ONCE,
        "minCompared": MIN_COMPARED,
        "stopSignals": sorted(STOP_SIGNALS),
        "launcherRules": sorted(LAUNCHER_RULES),
        "ruleFailures": RULE_FAILURES,
        "signalPattern": SIGNAL.pattern.replace("(?P<", "(?<"),
    }
