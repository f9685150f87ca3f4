"""The regression set of real logs: excerpts from public threads (tests/fixtures/diagnose/threads/)
and logs printed by current releases on this machine (tests/fixtures/diagnose/produced/).

A thread case is `<name>.log` (the excerpt, verbatim) and `<name>.yaml` (`url`, `expect`; a case
taken by sampling, `s-<repo>-<number>`, also says `sampled:` (the generic query that found it),
`category`, `launcher`, `posted` and `failure`). `incomplete: traceback` marks an excerpt that stops
inside a traceback, before its error line, and `incomplete: no-error` one whose error is past its
end: nothing can rank first there, and the tool must say so instead (generator/incomplete.py). A release
case is `<name>.log` (what the run printed), `<name>.py` (the script that printed it) and
`<name>.yaml` (`made_with`: the release and launcher, `command`, `expect`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "diagnose"
THREADS = FIXTURES / "threads"
PRODUCED = FIXTURES / "produced"


@dataclass(frozen=True)
class Case:
    name: str
    log: Path
    url: str | None  # the thread, for an excerpt from one
    expect: tuple[str, ...]  # empty: no entry covers this failure yet ("none")
    known_miss: str | None = None  # why the expected entry cannot rank first (yet)
    made_with: str | None = None  # the release that printed it, for a log made on this machine
    command: str | None = None
    sampled: str | None = None  # the generic query that found it, for an excerpt taken by sampling
    category: str | None = None  # the failure's category (for `expect: none`, where its entry would go)
    launcher: str | None = None
    posted: str | None = None  # YYYY-MM of the post, when the excerpt shows it
    failure: str | None = None  # what failed, in a line (always given for `expect: none`)
    incomplete: str | None = None  # "traceback" or "no-error": it cannot show its failure, and the tool must say so

    @property
    def covered(self) -> bool:
        return bool(self.expect)

    @property
    def origin(self) -> str:
        return self.url or f"{self.made_with}: {self.command}"


def load_cases(folders: tuple[Path, ...] = (THREADS, PRODUCED)) -> list[Case]:
    cases = []
    for folder in folders:
        for log in sorted(folder.glob("*.log")):
            meta = yaml.safe_load(log.with_suffix(".yaml").read_text(encoding="utf-8"))
            expect = meta["expect"]
            ids = () if expect == "none" else (expect,) if isinstance(expect, str) else tuple(expect)
            cases.append(
                Case(
                    log.stem,
                    log,
                    meta.get("url"),
                    ids,
                    meta.get("known_miss"),
                    meta.get("made_with"),
                    meta.get("command"),
                    meta.get("sampled"),
                    meta.get("category"),
                    meta.get("launcher"),
                    str(meta["posted"]) if meta.get("posted") else None,
                    meta.get("failure"),
                    meta.get("incomplete"),
                )
            )
    return cases
