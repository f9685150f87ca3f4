"""The regression set of real logs from public threads (tests/fixtures/diagnose/threads/).

Each case is `<name>.log` (the excerpt, verbatim) and `<name>.yaml` (`url`, `expect`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

THREADS = Path(__file__).resolve().parent / "fixtures" / "diagnose" / "threads"


@dataclass(frozen=True)
class Case:
    name: str
    log: Path
    url: str
    expect: tuple[str, ...]  # empty: no entry covers this failure yet ("none")
    known_miss: str | None = None  # why the expected entry cannot rank first (yet)

    @property
    def covered(self) -> bool:
        return bool(self.expect)


def load_cases(folder: Path = THREADS) -> list[Case]:
    cases = []
    for log in sorted(folder.glob("*.log")):
        meta = yaml.safe_load(log.with_suffix(".yaml").read_text(encoding="utf-8"))
        expect = meta["expect"]
        ids = () if expect == "none" else (expect,) if isinstance(expect, str) else tuple(expect)
        cases.append(Case(log.stem, log, meta["url"], ids, meta.get("known_miss")))
    return cases
