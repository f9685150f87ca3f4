"""A problem found in a contributor's file, and the ways it is printed."""

from __future__ import annotations

from dataclasses import dataclass

from .compat import SLOTS


@dataclass(frozen=True, order=True, **SLOTS)
class Problem:
    """One mistake, at one place: ``path:line:column: error[FE201]: field: message``.

    ``path`` is the file as the user reached it (relative to where they ran the
    command); ``line`` and ``column`` are 1-based; ``field`` is a dotted path
    such as ``symptoms[1].cause``, or ``(file)`` for the file as a whole; ``code``
    is the kind of mistake (`problem_codes`), documented on the entry-format page.
    """

    path: str
    line: int
    column: int
    field: str
    message: str
    code: str

    def format(self) -> str:
        return _one_line(f"{self.path}:{self.line}:{self.column}: error[{self.code}]: {self.field}: {self.message}")

    def format_github(self) -> str:
        return github_annotation("error", self.path, self.line, self.column, f"{self.code} {self.field}", self.message)


def github_annotation(level: str, path: str, line: int, column: int, title: str, message: str) -> str:
    """A GitHub Actions workflow command (`::error file=…::message`), escaped: workflow commands
    end at a newline and treat '%' specially, and properties also ':' and ','."""

    def escape(text: str) -> str:
        return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    def escape_property(text: str) -> str:
        return escape(text).replace(":", "%3A").replace(",", "%2C")

    return (
        f"::{level} file={escape_property(path)},line={line},col={column},"
        f"title={escape_property(title)}::{escape(message)}"
    )


FILE_FIELD = "(file)"


def _one_line(text: str) -> str:
    """Keep a problem on one line whatever text it quotes."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


class EntriesFolderError(Exception):
    """The folder of entries itself cannot be used (missing, not a folder, unreadable)."""
