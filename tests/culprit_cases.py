"""The culprit test set: multi-rank failures made here with torchrun + gloo
(tests/fixtures/culprit/<case>/, each with its `case.yaml`) and real multi-rank pastes from
public threads (tests/fixtures/culprit/threads/<case>.log + .yaml), each with the true
initiating ranks (`initiators`, or `unknown` when the logs cannot tell)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

CULPRIT = Path(__file__).resolve().parent / "fixtures" / "culprit"
THREADS = CULPRIT / "threads"


@dataclass(frozen=True)
class CulpritCase:
    name: str
    inputs: list[str]  # what `mlfail diagnose` is given: the case folder, or the thread's excerpt
    initiators: tuple[int, ...] | None  # None: the logs cannot tell
    victims: tuple[int, ...]
    kind: str
    origin: str
    tellable: bool = True  # False: the true culprit is known, but not from these logs' lines
    known_miss: str | None = None  # why the finder cannot name it (yet): it must then name no victim


def load_culprit_cases() -> list[CulpritCase]:
    cases = []
    for meta_path in sorted(CULPRIT.glob("*/case.yaml")):
        meta = yaml.safe_load(meta_path.read_text(encoding="utf-8"))
        cases.append(_case(meta_path.parent.name, [str(meta_path.parent)], meta, meta.get("command", "")))
    for meta_path in sorted(THREADS.glob("*.yaml")):
        meta = yaml.safe_load(meta_path.read_text(encoding="utf-8"))
        log = meta_path.with_suffix(".log")
        cases.append(_case(f"threads/{meta_path.stem}", [str(log)], meta, meta.get("url", "")))
    return cases


def _case(name: str, inputs: list[str], meta: dict, origin: str) -> CulpritCase:
    initiators = meta.get("initiators")
    known = None if initiators in (None, "unknown") else tuple(sorted(initiators))
    victims = tuple(sorted(meta.get("victims") or ()))
    tellable = known is not None and meta.get("tellable", True) is not False
    kind = str(meta.get("kind", "thread"))
    return CulpritCase(name, inputs, known, victims, kind, origin, tellable, meta.get("known_miss"))
