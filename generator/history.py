"""When each entry file was added and last changed, from the git history at build time.

The home page lists what changed recently. An entry's own `reviewed` date says when
someone last checked it, which is not when it was added or edited (a batch review
gives forty entries one date), so the dates come from git: one `git log` over the
entries folder, read newest commit first, following renames. Outside a git
checkout, without git, or for files not committed yet, there is no history and the
caller falls back to `reviewed`.
"""

from __future__ import annotations

import datetime
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .compat import SLOTS


@dataclass(frozen=True, **SLOTS)
class FileHistory:
    added: datetime.date
    updated: datetime.date


def entry_history(entries_dir: Path) -> dict[str, FileHistory]:
    """{path relative to `entries_dir`: its dates}, for the YAML files git knows."""
    try:
        result = subprocess.run(
            ["git", "log", "--format=%x00%as", "--name-status", "-M", "--relative", "--", "."],
            cwd=entries_dir,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    if result.returncode != 0:
        return {}
    return parse_log(result.stdout)


def commit_epoch(folder: Path) -> str | None:
    """The commit time of the checkout's HEAD (seconds since the epoch, as text), or None outside
    a git checkout: the date a reproducible build stamps on its output (SOURCE_DATE_EPOCH)."""
    try:
        result = subprocess.run(
            ["git", "log", "-1", "--format=%ct"], cwd=folder, capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None
    epoch = result.stdout.strip()
    return epoch if result.returncode == 0 and epoch.isdigit() else None


def parse_log(output: str) -> dict[str, FileHistory]:
    """Read `git log --format=%x00%as --name-status -M`, newest commit first. A file renamed in
    a commit keeps its history: older commits of its former path count for its current one."""
    newest: dict[str, datetime.date] = {}
    oldest: dict[str, datetime.date] = {}
    current_name: dict[str, str] = {}  # a former path -> the path it has today
    deleted: set[str] = set()
    for commit in output.split("\0")[1:]:
        lines = commit.strip("\n").split("\n")
        try:
            day = datetime.date.fromisoformat(lines[0].strip())
        except ValueError:
            continue
        for line in lines[1:]:
            fields = line.split("\t")
            if len(fields) < 2 or not fields[-1].endswith(".yaml"):
                continue
            status, path = fields[0], current_name.get(fields[-1], fields[-1])
            if status.startswith("D"):
                deleted.add(path)  # gone today, unless added back in a newer commit
                continue
            if status.startswith("R") and len(fields) == 3:
                current_name[fields[1]] = path
            if path in deleted:
                continue
            newest.setdefault(path, day)
            oldest[path] = day
    return {path: FileHistory(added=oldest[path], updated=newest[path]) for path in newest}
