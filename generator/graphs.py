"""Pictures of the encyclopedia's own data, laid out at build time.

This module only computes geometry (where each node, edge and bar goes); the
templates draw it as inline SVG. Nothing is loaded from another host, colours
come from CSS classes so the light and dark palettes both apply, and every
picture comes with the same facts as a list or table for screen readers.

- `entry_graph`: an entry, its relations one step out (declared and derived),
  and a second step along `causes` / `caused-by` chains; radial layout.
- `hub_graph`: the failures of a hub, the relations among them, and the
  symptom tags they share (the clusters); failures on an outer ring, symptoms
  inside.
- `bar_chart`: horizontal bars, optionally split by severity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .encyclopedia import SEVERITY_ORDER, Encyclopedia
from .models import Entry

SYMPTOM_GROUP = "Symptoms"
MAX_HUB_NODES = 30  # beyond this a ring is unreadable; the most severe failures are drawn
LABEL_CHARACTERS = 28


@dataclass(frozen=True, slots=True)
class Node:
    key: str
    label: str
    title: str  # the full name, shown as a tooltip
    kind: str  # "center", "entry" or "symptom"
    severity: str | None
    x: float
    y: float
    target: str  # what the node links to: an entry id or a tag key


@dataclass(frozen=True, slots=True)
class Edge:
    source: Node
    target: Node
    label: str

    @property
    def label_x(self) -> float:
        return (self.source.x + self.target.x) / 2

    @property
    def label_y(self) -> float:
        return (self.source.y + self.target.y) / 2


@dataclass(slots=True)
class Graph:
    width: int
    height: int
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    omitted: int = 0  # failures left out of a crowded hub


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    target: str
    segments: tuple[tuple[str, int], ...]  # (class, count) from left to right

    @property
    def total(self) -> int:
        return sum(count for _, count in self.segments)


def short(text: str, limit: int = LABEL_CHARACTERS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _ring(count: int, radius: float, cx: float, cy: float, start: float = -math.pi / 2) -> list[tuple[float, float]]:
    return [
        (
            cx + radius * math.cos(start + 2 * math.pi * i / max(count, 1)),
            cy + radius * math.sin(start + 2 * math.pi * i / max(count, 1)),
        )
        for i in range(count)
    ]


def _entry_node(entry: Entry, kind: str, x: float, y: float) -> Node:
    return Node(entry.id, short(entry.title), entry.title, kind, entry.severity, round(x, 1), round(y, 1), entry.id)


def entry_graph(encyclopedia: Encyclopedia, entry_id: str) -> Graph | None:
    """The entry in the middle, its relations around it, causal chains one step further."""
    links = encyclopedia.links[entry_id]
    if not links:
        return None
    near = list(dict.fromkeys(link.target for link in links))
    far: dict[str, tuple[str, str]] = {}  # second step: target -> (via, relation)
    for link in links:
        if link.relation in ("causes", "caused-by"):
            for onward in encyclopedia.links[link.target]:
                if (
                    onward.relation == link.relation
                    and onward.target != entry_id
                    and onward.target not in near
                    and onward.target not in far
                ):
                    far[onward.target] = (link.target, onward.relation)
    size = 520 if far else 420
    center = size / 2
    graph = Graph(size, size)
    middle = _entry_node(encyclopedia.entries[entry_id], "center", center, center)
    graph.nodes.append(middle)
    placed = {entry_id: middle}
    for key, (x, y) in zip(near, _ring(len(near), size * 0.3, center, center), strict=True):
        placed[key] = _entry_node(encyclopedia.entries[key], "entry", x, y)
        graph.nodes.append(placed[key])
    for link in links:
        if link.target in placed:
            graph.edges.append(Edge(middle, placed[link.target], link.relation))
    far_keys = list(far)
    for key, (x, y) in zip(
        far_keys, _ring(len(far_keys), size * 0.45, center, center, start=-math.pi / 3), strict=True
    ):
        placed[key] = _entry_node(encyclopedia.entries[key], "entry", x, y)
        graph.nodes.append(placed[key])
        via, relation = far[key]
        graph.edges.append(Edge(placed[via], placed[key], relation))
    return graph


def hub_graph(encyclopedia: Encyclopedia, entries: list[Entry], exclude_tag: str | None = None) -> Graph | None:
    """A hub's failures (outer ring), the symptom tags they share (inner ring), relations among them."""
    if len(entries) < 2:
        return None
    ranked = sorted(entries, key=lambda entry: (SEVERITY_ORDER[entry.severity], entry.title.casefold()))
    shown = ranked[:MAX_HUB_NODES]
    ids = {entry.id for entry in shown}
    taxonomy = encyclopedia.taxonomy
    symptom_tags: dict[str, int] = {}
    for entry in shown:
        for tag in entry.tags:
            if tag != exclude_tag and taxonomy.tags[tag].group == SYMPTOM_GROUP:
                symptom_tags[tag] = symptom_tags.get(tag, 0) + 1
    shared = [tag for tag, count in sorted(symptom_tags.items(), key=lambda item: (-item[1], item[0])) if count > 1][:8]
    size = 640
    center = size / 2
    graph = Graph(size, size, omitted=len(entries) - len(shown))
    placed: dict[str, Node] = {}
    for entry, (x, y) in zip(shown, _ring(len(shown), size * 0.38, center, center), strict=True):
        placed[entry.id] = _entry_node(entry, "entry", x, y)
        graph.nodes.append(placed[entry.id])
    symptom_nodes: dict[str, Node] = {}
    for tag, (x, y) in zip(
        shared, _ring(len(shared), size * 0.14 if len(shared) > 1 else 0, center, center), strict=True
    ):
        info = taxonomy.tags[tag]
        symptom_nodes[tag] = Node(
            f"tag-{tag}", short(info.title, 18), info.title, "symptom", None, round(x, 1), round(y, 1), tag
        )
        graph.nodes.append(symptom_nodes[tag])
    for entry in shown:
        for tag in entry.tags:
            if tag in symptom_nodes:
                graph.edges.append(Edge(placed[entry.id], symptom_nodes[tag], ""))
        for link in encyclopedia.links[entry.id]:
            if link.declared and link.target in ids:
                graph.edges.append(Edge(placed[entry.id], placed[link.target], link.relation))
    return graph


def category_bars(encyclopedia: Encyclopedia) -> list[Bar]:
    """Failures per category, split by severity (most severe first)."""
    bars = []
    for key, info in encyclopedia.taxonomy.categories.items():
        counts = {severity: 0 for severity in SEVERITY_ORDER}
        for entry in encyclopedia.by_category[key]:
            counts[entry.severity] += 1
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
