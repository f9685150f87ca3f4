"""When a log cannot show its failure: it stops inside a traceback, or no line reports an error.

A Python traceback ends with the line that names the exception (`RuntimeError: ...`); the
frames above it only say where it was raised. An excerpt cut before that line (a paste that
stopped at the screen's end, a terminal's scroll-back, a launcher's rich frames copied without
the rest) holds no error for a signature to match and no error line for the closest-entries
search. Instead of "nothing found", the diagnosis then says that the log stops inside a
traceback, at which frame, and that the line after the frames is the one to paste.

The rule reads the last non-blank lines of each input as printed (the matcher keeps them, tap
`tail`), from the end backwards. Lines of a traceback's body are passed over: frames (Python's,
IPython's, rich's), the source lines under them, caret markers and the box of a rich traceback.
The first other line ends the walk. The log is cut when the walk passed over a frame: a complete traceback
ends with its exception line, which is not a body line, so the walk stops before any frame.
Frame lists that end without an exception by design (torch.compile's `from user code:`,
logging's `Stack (most recent call last):`) are not cuts. A rank's or a worker's prefix
(`[rank0]:`, `[default3]:`, `0: ` of `srun -l`, Ray's `(Worker pid=12)`) is read past first.

A log in which nothing matched and no line reports an error (none of the closest-entry search's
error lines: an exception, `error:`, `FAILED`, a signal) gets a notice too: if the run failed,
its error is after these lines or in another file, and where to look.

The diagnose page applies the same rules to its pasted log (shared.js: `shared_table`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .compat import SLOTS

TAIL_LINES = 40  # the last non-blank lines of an input that the rule reads
TAIL_BLOCKS = 2  # the matcher's last blocks they are read from (a last block may be short)
# What launchers, workers and loggers put before each line of a rank's output. Read past, with
# the one blank after each, after a quote marker (`> `); what follows keeps its indentation.
LINE_PREFIXES = (
    r"\d{4}-\d\d-\d\d[ T][\d:.,]+(?: \| [A-Z]+ \| [\w.]+ \|)?",  # a timestamp, a logger's `| ERROR | stderr |`
    r"\[[^\]\n]{1,60}\]:?",  # torchrun's `[rank0]:` and `[default3]:`, `[host:3]:`
    r"\([A-Za-z_][\w.]* pid=\d+[^)\n]{0,60}\)",  # Ray's `(RayTrainWorker pid=12, ip=10.0.0.1)`
    r"\d{1,5}:",  # `srun -l`'s task number
    r"[IWEF]\d{4} [\d:.]+ +\d+ [^\]\n]{1,200}:\d+\]",  # glog's `W0916 19:14:38.825000 9120 file.py:12]`
    r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d [\d:]+ [^\]\n]{1,100}:\d+\]",  # vLLM's logger
)
PREFIX = r"^(?:[ \t]*>)*[ \t]?(?:(?:" + "|".join(LINE_PREFIXES) + r") ?)*"
# A frame: Python's `File "path", line N, in name` (or its start, where the log is cut inside it),
# IPython's `File path:N, in name`, `Cell In[N], line N` and older `path in name(args)`, rich's
# `│ path:N in name │`.
FRAME = (
    r'^[ \t]*(?:File "|File [^ "]+:\d+, in |Cell In\[\d+\], \[?line \d+'
    r"|(?:/|~/|[A-Za-z]:\\)\S* in \S+\(|[│|] (?:[^ │|]+:\d+ in |in [^ │|]+:\d+))"
)
# The rest of a traceback's body: source lines (indented), IPython's `--> 12` marker lines, caret
# and tilde markers, the box lines of a rich traceback.
BODY = r"^(?:[ \t]|-*> ?\d|[\^~]+$|[│|╭╰❱─━┃])"
# The last line may be cut anywhere (`[rank`, `retu`): it is passed over unless it reads as an
# exception's line (`RuntimeError: ...`, `KeyboardInterrupt`), which a complete traceback ends with.
EXCEPTION = r"^[A-Za-z_][\w.]*(?:: |:?$)"
# Frames printed without an exception by design: the walk stops there without a cut.
NOT_A_TRACEBACK = r"^[ \t]*(?:from user code:|Stack \(most recent call last\):|.*\(most recent call first\):)"
ADVICE = (
    'The line that names the error comes after a traceback\'s frames ("RuntimeError: ...", say) '
    "and is not in this log: diagnose the lines that follow, up to the end of the traceback."
)
HEADING = "The log stops inside a traceback"
NO_ERROR_HEADING = "No line of this log reports an error"
NO_ERROR_ADVICE = (
    'No exception, "error:", "FAILED" or signal is in it. If the run failed, its error was '
    "printed after these lines or elsewhere: the end of the failing rank's output, the job's error "
    "file (Slurm's .err file, a pod's previous logs), or the kernel's log (dmesg) for a process "
    "killed without a word."
)

_PREFIX, _FRAME, _BODY, _EXCEPTION = (re.compile(pattern) for pattern in (PREFIX, FRAME, BODY, EXCEPTION))
_NOT_A_TRACEBACK = re.compile(NOT_A_TRACEBACK)


@dataclass(frozen=True, **SLOTS)
class Incomplete:
    """Why a log cannot show its failure. "traceback": it stops inside one, whose last frame is
    `text`, at `line` of input `source`; "no-error": no line of it reports an error."""

    kind: str
    source: int = 0
    line: int = 0
    text: str = ""

    @property
    def heading(self) -> str:
        return HEADING if self.kind == "traceback" else NO_ERROR_HEADING

    @property
    def advice(self) -> str:
        return ADVICE if self.kind == "traceback" else NO_ERROR_ADVICE


def cut_traceback(tail: list[tuple[int, str]], source: int = 0) -> Incomplete | None:
    """`tail`: an input's last non-blank lines as (line number, text as printed), in order. The
    innermost frame of the traceback the input stops in, or None when it does not stop in one."""
    last_frame: tuple[int, str] | None = None
    for place, (number, text) in enumerate(reversed(tail)):
        line = _PREFIX.sub("", text, count=1)
        if _FRAME.match(line):
            last_frame = last_frame or (number, text.strip())
        elif _NOT_A_TRACEBACK.match(line):
            return None
        elif not (_BODY.match(line) or (place == 0 and not _EXCEPTION.match(line))):
            break
    return Incomplete("traceback", source, *last_frame) if last_frame else None


def cut_in(tail: list) -> Incomplete | None:
    """The first input, in order, that stops inside a traceback: `tail` is the matcher's `tail`
    tap (Match objects of every input, each input's lines in order)."""
    by_source: dict[int, list[tuple[int, str]]] = {}
    for match in tail:
        by_source.setdefault(match.source, []).append((match.line, match.text))
    return next((cut for source in sorted(by_source) if (cut := cut_traceback(by_source[source], source))), None)


def incomplete_log(tail: list, error_lines: list) -> Incomplete | None:
    """For a log in which nothing matched: where it stops inside a traceback, else whether no
    line of it reports an error (`error_lines`: the matcher's error lines), else None."""
    return cut_in(tail) or (None if error_lines else Incomplete("no-error"))


def shared_table() -> dict:
    """The part of shared.js the diagnose page reads."""
    return {
        "tailLines": TAIL_LINES,
        "cutPrefix": PREFIX,
        "cutFrame": FRAME,
        "cutBody": BODY,
        "cutException": EXCEPTION,
        "cutNotATraceback": NOT_A_TRACEBACK,
        "cutHeading": HEADING,
        "cutAdvice": ADVICE,
        "noErrorHeading": NO_ERROR_HEADING,
        "noErrorAdvice": NO_ERROR_ADVICE,
    }
