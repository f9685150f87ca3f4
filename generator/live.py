"""Diagnosis while a job runs: `mlfail run -- CMD` and `mlfail watch LOG`.

Both feed output to a `LiveScan` as it arrives. It keeps only the matches (a few per
signature, as `Matcher.scan` does), never the output itself, so a job may print for
days; whole lines are scanned in batches, so a chatty job costs one matcher pass per
batch rather than per line.
"""

from __future__ import annotations

import contextlib
import io
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from .matcher import Hits, Matcher, Result
from .signature_index import SignatureIndex

BATCH_BYTES = 64 * 1024  # scan once this much output has arrived...
BATCH_SECONDS = 0.2  # ...or this long after the oldest unscanned line
READ_BYTES = 64 * 1024
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# The child in a process group of its own: Popen's process_group=0 (3.11) is setpgid(0, 0) in the
# child, which is what os.setpgrp does there on older Pythons.
OWN_PROCESS_GROUP: dict[str, Any] = {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}


@dataclass
class LiveScan:
    """Matches output that arrives piece by piece; reports each failure once, when first found."""

    matcher: Matcher
    on_found: Callable[[Result], None] | None = None  # called for each newly found failure
    found: Hits = field(default_factory=dict)
    lines: int = 0  # complete lines scanned so far
    _partial: dict[int, bytes] = field(default_factory=dict)  # per stream: a line not yet ended
    _pending: list[bytes] = field(default_factory=list)  # complete lines not yet scanned
    _pending_bytes: int = 0
    _pending_since: float = 0.0
    _reported: set[str] = field(default_factory=set)
    _reported_lines: set[tuple[int, int]] = field(default_factory=set)  # evidence already reported

    def feed(self, data: bytes, stream: int = 0) -> None:
        """Output of one stream (stdout and stderr keep their own unfinished lines)."""
        data = self._partial.pop(stream, b"") + data
        cut = data.rfind(b"\n") + 1
        if cut < len(data):
            self._partial[stream] = data[cut:]
        if cut:
            if not self._pending:
                self._pending_since = time.monotonic()
            self._pending.append(data[:cut])
            self._pending_bytes += cut
            if self._pending_bytes >= BATCH_BYTES:
                self.flush()

    def due(self) -> bool:
        return bool(self._pending) and time.monotonic() - self._pending_since >= BATCH_SECONDS

    def flush(self, final: bool = False) -> None:
        """Scan what has arrived; with `final`, also the unfinished last lines."""
        if final:
            self._pending.extend(self._partial.pop(stream) + b"\n" for stream in list(self._partial))
        if not self._pending:
            return
        chunk = b"".join(self._pending)
        self._pending, self._pending_bytes = [], 0
        self.matcher.scan(io.BytesIO(chunk), found=self.found, lines_before=self.lines)
        self.lines += chunk.count(b"\n")
        if self.on_found:
            self._report_new()

    def _report_new(self) -> None:
        """Each failure once, best first; one whose lines were all shown under a better-ranked
        failure is not repeated (five OOM entries share an OOM line: the best one speaks)."""
        assert self.on_found is not None
        for result in self.matcher.rank(self.found):
            if result.entry_id in self._reported:
                continue
            self._reported.add(result.entry_id)
            if result.evidence - self._reported_lines:
                self._reported_lines |= result.evidence
                self.on_found(result)

    def results(self) -> list[Result]:
        self.flush(final=True)
        return self.matcher.rank(self.found)


# -- mlfail run ---------------------------------------------------------------------------------


def run_command(command: list[str], scan: LiveScan, stdout: BinaryIO, stderr: BinaryIO) -> int:
    """Run `command`, passing its output through unchanged as it comes and scanning it.

    The child runs in a process group of its own, so a Ctrl-C reaches it once, through
    us; SIGINT, SIGTERM and SIGHUP are forwarded to its whole group (a launcher and its
    workers). Returns the command's exit status (128 + N when signal N ended it)."""
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")  # Python children print as they go, not per 8 KiB
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, **OWN_PROCESS_GROUP)
    previous = {number: signal.signal(number, _forward_to(process)) for number in FORWARDED_SIGNALS}
    try:
        _pump(process, scan, {process.stdout: (1, stdout), process.stderr: (2, stderr)})
        status = process.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return status if status >= 0 else 128 - status


def _forward_to(process: subprocess.Popen) -> Callable[[int, object], None]:
    def forward(number: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.killpg(process.pid, number)

    return forward


def _pump(process: subprocess.Popen, scan: LiveScan, outputs: dict) -> None:
    selector = selectors.DefaultSelector()
    for pipe in outputs:
        os.set_blocking(pipe.fileno(), False)
        selector.register(pipe, selectors.EVENT_READ)
    while selector.get_map():
        for key, _ in selector.select(timeout=BATCH_SECONDS):
            stream, target = outputs[key.fileobj]
            try:
                data = os.read(key.fd, READ_BYTES)
            except BlockingIOError:
                continue
            if not data:
                selector.unregister(key.fileobj)
                continue
            target.write(data)
            target.flush()
            scan.feed(data, stream)
        if scan.due():
            scan.flush()
    selector.close()


# -- mlfail watch -------------------------------------------------------------------------------


def follow(path: Path, from_end: bool = False, interval: float = 0.25) -> Iterator[bytes]:
    """What is appended to `path`, like `tail -F`: waits for the file to exist, goes on after
    it is rotated (a new file at the path: read from its start) or truncated (read again
    from the start). Yields b"" when nothing new arrived, so a caller can flush; never ends."""
    handle, inode = None, None
    while True:
        if handle is None:
            try:
                handle = open(path, "rb")  # noqa: SIM115 - reopened on rotation, closed below
            except FileNotFoundError:
                yield b""
                time.sleep(interval)
                continue
            inode = os.fstat(handle.fileno()).st_ino
            if from_end:
                handle.seek(0, os.SEEK_END)
                from_end = False  # only the first file: a rotated one is new output
        data = handle.read(READ_BYTES)
        if data:
            yield data
            continue
        try:
            status = os.stat(path)
        except FileNotFoundError:
            status = None
        if status is not None and status.st_ino == inode and status.st_size < handle.tell():
            handle.seek(0)  # truncated in place
        elif status is None or status.st_ino != inode:
            handle.close()  # rotated or removed: what was written before the move was read above
            handle = None
            continue
        yield b""
        time.sleep(interval)


def watch(
    path: Path,
    scan: LiveScan,
    from_end: bool = False,
    interval: float = 0.25,
    on_caught_up: Callable[[], None] | None = None,
) -> None:
    """Scan `path` as it grows, until interrupted; `scan.on_found` reports each failure;
    `on_caught_up` is called once, when what the file held at the start has been scanned."""
    for data in follow(path, from_end, interval):
        if data:
            scan.feed(data)
        if scan.due() or not data:
            scan.flush()
        if not data and on_caught_up is not None:
            on_caught_up()
            on_caught_up = None


def live_scan(index: SignatureIndex, on_found: Callable[[Result], None] | None = None) -> LiveScan:
    return LiveScan(index.matcher(), on_found)


def write_text(stream: BinaryIO | None, text: str) -> None:
    """Text on a binary stream (the diagnosis goes to stderr, next to the job's own output)."""
    target = stream or sys.stderr.buffer
    target.write(text.encode("utf-8", "replace"))
    target.flush()
