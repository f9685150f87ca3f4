"""Pictures of the encyclopedia's own data, computed at build time.

This module only decides what a picture shows; the templates draw it in HTML and CSS
(`_graphs.md.j2`), so its text is real text at body size that wraps, reads on a
phone, follows the light and dark palettes and is found by the browser's find.
Nothing is loaded from another host.

- `relation_map`: an entry with what causes it on one side (arrows into it), what
  it causes on the other (arrows out), and the failures it is seen with or
  resembles below; each side capped, the rest is in the table under the picture.
- `hub_chains`: the cause-to-effect pairs among a hub's failures, capped.
- `category_bars`, `symptom_bars`: counts, split by severity where that helps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .compat import SLOTS
from .encyclopedia import SEVERITY_ORDER, SYMPTOM_GROUP, Encyclopedia
from .models import Entry

MAX_PER_SIDE = 6  # boxes on each side of a relation map before "N more"
MAX_CHAINS = 12  # cause-to-effect rows in a hub's picture


@dataclass(frozen=True, **SLOTS)
class Node:
    entry_id: str
    title: str
    severity: str


@dataclass(**SLOTS)
class RelationMap:
    center: Node
    causes: list[Node] = field(default_factory=list)  # failures that lead to this one
    effects: list[Node] = field(default_factory=list)  # failures this one leads to
    others: list[tuple[str, Node]] = field(default_factory=list)  # (relation, failure): co-occurs, similar, see-also
    omitted: int = 0  # relations left out of the picture (the table lists them all)

    @property
    def severities(self) -> list[str]:
        """The severities drawn, most severe first: the legend names only these."""
        shown = {self.center.severity, *(node.severity for node in self.causes + self.effects)}
        shown.update(node.severity for _, node in self.others)
        return sorted(shown, key=SEVERITY_ORDER.__getitem__)


@dataclass(frozen=True, **SLOTS)
class Chain:
    cause: Node
    effect: Node


def _node(entry: Entry) -> Node:
    return Node(entry.id, entry.title, entry.severity)


def _rank(node: Node) -> tuple:
    return (SEVERITY_ORDER[node.severity], node.title.casefold())


def relation_map(encyclopedia: Encyclopedia, entry_id: str, per_side: int = MAX_PER_SIDE) -> RelationMap | None:
    """The entry between its causes and its effects, its other relations below."""
    links = encyclopedia.links[entry_id]
    if not links:
        return None
    picture = RelationMap(_node(encyclopedia.entries[entry_id]))
    seen: set[str] = set()
    others: list[tuple[str, Node]] = []
    for link in links:
        if link.target in seen:
            continue
        seen.add(link.target)
        node = _node(encyclopedia.entries[link.target])
        if link.relation == "caused-by":
            picture.causes.append(node)
        elif link.relation == "causes":
            picture.effects.append(node)
        else:
            others.append((link.relation, node))
    total = len(picture.causes) + len(picture.effects) + len(others)
    picture.causes = sorted(picture.causes, key=_rank)[:per_side]
    picture.effects = sorted(picture.effects, key=_rank)[:per_side]
    picture.others = sorted(others, key=lambda item: (item[0], _rank(item[1])))[:per_side]
    picture.omitted = total - len(picture.causes) - len(picture.effects) - len(picture.others)
    return picture


@dataclass(**SLOTS)
class Chains:
    chains: list[Chain]
    omitted: int  # pairs beyond the cap

    @property
    def severities(self) -> list[str]:
        shown = {node.severity for chain in self.chains for node in (chain.cause, chain.effect)}
        return sorted(shown, key=SEVERITY_ORDER.__getitem__)


def hub_chains(encyclopedia: Encyclopedia, entries: list[Entry], limit: int = MAX_CHAINS) -> Chains | None:
    """The (cause, effect) pairs with both failures in the hub, the most severe effects first, at
    most `limit` of them; None when the hub has none."""
    ids = {entry.id for entry in entries}
    chains = [
        Chain(_node(encyclopedia.entries[cause]), _node(encyclopedia.entries[effect]))
        for cause, effect in encyclopedia.causal_pairs
        if cause in ids and effect in ids
    ]
    if not chains:
        return None
    chains.sort(key=lambda chain: (_rank(chain.effect), _rank(chain.cause)))
    return Chains(chains[:limit], len(chains) - min(limit, len(chains)))


@dataclass(frozen=True, **SLOTS)
class Bar:
    label: str
    target: str
    segments: tuple[tuple[str, int], ...]  # (class, count) from left to right

    @property
    def total(self) -> int:
        return sum(count for _, count in self.segments)


def category_bars(encyclopedia: Encyclopedia) -> list[Bar]:
    """Failures per category, split by severity (most severe first)."""
    bars = []
    for key, info in encyclopedia.taxonomy.categories.items():
        counts = {severity: 0 for severity in SEVERITY_ORDER}
        for entry in encyclopedia.by_category[key]:
            counts[entry.severity] += 1
        if not encyclopedia.by_category[key]:
            continue
        bars.append(Bar(info.title, key, tuple((severity, counts[severity]) for severity in SEVERITY_ORDER)))
    return bars


def symptom_bars(encyclopedia: Encyclopedia, limit: int = 8) -> list[Bar]:
    """The symptom tags that most failures share."""
    taxonomy = encyclopedia.taxonomy
    counts = [
        (len(encyclopedia.by_tag[key]), key) for key, info in taxonomy.tags.items() if info.group == SYMPTOM_GROUP
    ]
    counts.sort(key=lambda item: (-item[0], item[1]))
    return [Bar(taxonomy.tags[key].title, key, (("count", count),)) for count, key in counts[:limit] if count]
