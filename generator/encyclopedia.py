"""The in-memory encyclopedia: validated entries and the indexes built from them.

Everything here is derived once from valid data and then only read: the page
renderer, the JSON API, the log matcher and the CLI all ask the same object.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from typing import cast

from .compat import SLOTS
from .matcher import Signature
from .models import SEVERITIES, Entry, LiteralSignature, Taxonomy

# A declared relation seen from the other side.
INVERSE_RELATION = {
    "causes": "caused-by",
    "caused-by": "causes",
    "co-occurs": "co-occurs",
    "similar": "similar",
    "see-also": "see-also",
}
# The taxonomy group of the tags that name what one observes (hang, crash, NaN...).
SYMPTOM_GROUP = "Symptoms"
SEVERITY_ORDER = {severity: rank for rank, severity in enumerate(SEVERITIES)}


@dataclass(frozen=True, **SLOTS)
class Link:
    """A relation as shown on one entry's page."""

    target: str  # entry id
    relation: str
    note: str | None
    declared: bool  # False when derived from the other entry's declaration


class Encyclopedia:
    def __init__(self, taxonomy: Taxonomy, entries: list[Entry], sources: dict[str, str]):
        """`sources` maps each entry id to its file, relative to the entries folder (POSIX)."""
        self.taxonomy = taxonomy
        self.entries: dict[str, Entry] = {entry.id: entry for entry in sorted(entries, key=lambda e: e.id)}
        self.sources = sources
        self.former_ids: dict[str, str] = {
            former: entry.id for entry in self.entries.values() for former in entry.former_ids or ()
        }

    def __len__(self) -> int:
        return len(self.entries)

    def resolve(self, entry_id: str) -> str:
        """The current id for an id or a former id."""
        return self.former_ids.get(entry_id, entry_id)

    @cached_property
    def links(self) -> dict[str, list[Link]]:
        """Each entry's relations: its own declarations, then those derived from others."""
        links: dict[str, list[Link]] = {entry_id: [] for entry_id in self.entries}
        derived: dict[str, list[Link]] = defaultdict(list)
        for entry in self.entries.values():
            for relation in entry.related or ():
                target = self.resolve(relation.id)
                links[entry.id].append(Link(target, relation.relation, relation.note, True))
                derived[target].append(Link(entry.id, INVERSE_RELATION[relation.relation], relation.note, False))
        for entry_id, inverse in derived.items():
            declared_targets = {link.target for link in links[entry_id]}
            # When both sides declared the link, the page shows it once.
            links[entry_id].extend(link for link in inverse if link.target not in declared_targets)
        return links

    @cached_property
    def causal_pairs(self) -> list[tuple[str, str]]:
        """Every (cause, effect) pair of entries, from `causes` and `caused-by` on either side."""
        pairs = set()
        for entry_id, links in self.links.items():
            for link in links:
                if link.relation == "causes":
                    pairs.add((entry_id, link.target))
                elif link.relation == "caused-by":
                    pairs.add((link.target, entry_id))
        return sorted(pairs)

    def verdict(self, entry_id: str) -> str:
        """What to do about this failure when it starts a multi-rank failure: the entry's own
        `verdict`, else its category's."""
        entry = self.entries[entry_id]
        category = self.taxonomy.categories.get(entry.category)
        own = cast("str | None", entry.verdict)  # an optional field: None when left out
        if own is not None:
            return own
        return category.verdict if category else "unknown"

    @cached_property
    def roles(self) -> dict[str, str]:
        """The entries that are not plain failures (`role:` wrapper or umbrella), by id."""
        return {entry_id: entry.role for entry_id, entry in self.entries.items() if entry.role != "failure"}

    @cached_property
    def by_tag(self) -> dict[str, list[Entry]]:
        index: dict[str, list[Entry]] = {tag: [] for tag in self.taxonomy.tags}
        for entry in self.entries.values():
            for tag in dict.fromkeys(entry.tags):
                index[tag].append(entry)
        return index

    @cached_property
    def tags_in_use(self) -> list[str]:
        """The taxonomy's tags that at least one entry has, in taxonomy order: only these get a
        hub and a line in the tag index (an empty hub leads nowhere)."""
        return [tag for tag, entries in self.by_tag.items() if entries]

    @cached_property
    def symptom_groups(self) -> dict[str, list[Entry]]:
        """Entries by what one observes: each under its most specific symptom tag (the one
        fewest entries share, so `oom` wins over `crash`), taxonomy order; entries without a
        symptom tag under "" at the end."""
        symptom_tags = [key for key, tag in self.taxonomy.tags.items() if tag.group == SYMPTOM_GROUP]
        groups: dict[str, list[Entry]] = {tag: [] for tag in symptom_tags}
        groups[""] = []
        for entry in self.entries.values():
            own = [tag for tag in symptom_tags if tag in entry.tags]
            best = min(own, key=lambda tag: (len(self.by_tag[tag]), symptom_tags.index(tag))) if own else ""
            groups[best].append(entry)
        return {
            tag: sorted(entries, key=lambda entry: (SEVERITY_ORDER[entry.severity], entry.title))
            for tag, entries in groups.items()
            if entries
        }

    @cached_property
    def by_category(self) -> dict[str, list[Entry]]:
        index: dict[str, list[Entry]] = {category: [] for category in self.taxonomy.categories}
        for entry in self.entries.values():
            index[entry.category].append(entry)
        return index

    @cached_property
    def signatures(self) -> list[Signature]:
        refs = []
        for entry in self.entries.values():
            for signature in entry.signatures or ():
                if isinstance(signature, LiteralSignature):
                    kind, pattern = "literal", signature.literal
                else:
                    kind, pattern = "regex", signature.regex
                refs.append(Signature(entry.id, kind, pattern, bool(signature.supporting), signature.source))
        return refs

    @cached_property
    def _by_category_and_tag(self) -> dict[tuple[str, str], list[Entry]]:
        index: dict[tuple[str, str], list[Entry]] = defaultdict(list)
        for entry in self.entries.values():
            for tag in set(entry.tags):
                index[entry.category, tag].append(entry)
        return index

    def same_category(self, entry: Entry, limit: int = 5) -> list[Entry]:
        """Other entries of the entry's category, most shared tags first (then severity, title).

        Counted through the (category, tag) postings rather than by comparing the entry
        with its whole category, which made a 10,000-entry build quadratic."""
        shared: dict[str, int] = defaultdict(int)
        for tag in set(entry.tags):
            for other in self._by_category_and_tag[entry.category, tag]:
                shared[other.id] += 1
        shared.pop(entry.id, None)

        def rank(other: Entry) -> tuple:
            return (-shared.get(other.id, 0), SEVERITY_ORDER[other.severity], other.title)

        best = heapq.nsmallest(limit, (self.entries[other_id] for other_id in shared), key=rank)
        if len(best) < limit:  # too few share a tag: fill with the category's most severe others
            chosen = {other.id for other in best} | {entry.id}
            rest = (other for other in self.by_category[entry.category] if other.id not in chosen)
            best += heapq.nsmallest(limit - len(best), rest, key=rank)
        return best

    def related_tags(self, tag: str, limit: int = 8) -> list[tuple[str, int]]:
        """Tags that appear most often beside `tag`, with their counts."""
        counts: dict[str, int] = defaultdict(int)
        for entry in self.by_tag[tag]:
            for other in set(entry.tags) - {tag}:
                counts[other] += 1
        return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]
