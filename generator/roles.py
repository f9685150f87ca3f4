"""What an entry's role (`role:` in its YAML) means to a diagnosis: one table, read by the
command line, the Python API and the diagnose page (through shared.js).

- `failure`: a failure in its own right; the default.
- `umbrella`: a generic error code (`ncclSystemError`, `unspecified launch failure`, a bare
  `Killed`) with many specific causes. It ranks below every specific failure found in the same
  log, and when it is the best there is, the reader is told it is generic and what to collect next.
- `wrapper`: a launcher's or scheduler's summary of a failure it reports (torchrun's
  `ChildFailedError`, `srun: error: ... Exited with exit code`). It ranks below every other
  finding, however many of its signatures matched, and is shown under the failure it reports.
"""

from __future__ import annotations

from typing import Any

DEFAULT_ROLE = "failure"

# The order findings are grouped in, best first; within a group the matcher's order stands.
ROLE_ORDER = {"failure": 0, "umbrella": 1, "wrapper": 2}

# What the reader is told, the same words in the terminal and on the page.
REPORTED_BY = "Reported by the launcher"
WRAPPER_ALONE = (
    "A launcher's summary: the failure it reports printed nothing this tool knows here; "
    "read the first rank's own error above it, or that rank's log."
)
UMBRELLA_NOTE = "A generic error code with many causes: the lines around it name the specific one."
UMBRELLA_ALONE = (
    "A generic error code with many causes, and no specific cause was found here: "
    "collect what the entry's checklist names (its first step is below) and diagnose again."
)


def role_order(role: str) -> int:
    return ROLE_ORDER.get(role, 0)


def shared_table() -> dict[str, Any]:
    """The part of shared.js that the diagnose page reads."""
    return {
        "roleOrder": ROLE_ORDER,
        "reportedBy": REPORTED_BY,
        "wrapperAlone": WRAPPER_ALONE,
        "umbrellaNote": UMBRELLA_NOTE,
        "umbrellaAlone": UMBRELLA_ALONE,
    }
