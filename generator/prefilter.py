"""Which patterns can match in a block: the matcher's first stage, found by literals.

Every signature contains some text as written: `checkTimeout` and `ProcessGroupNCCL.cpp:`
in `Exception raised from checkTimeout at \\S*ProcessGroupNCCL\\.cpp:\\d+`
(`regex_subset.required_literals`). One RE2 `Set` of those literals says which of them
a block holds, and a pattern is a candidate only where the block holds one literal of
each of its groups; the matcher then looks for its lines. A set of plain literals costs
RE2 little to build and to run on any text, where a set of thousands of full patterns
spends most of a first pass building automaton states. The few patterns without a
usable literal are matched by a second, small set of whole patterns.

Two groups per pattern are enough to rule out nearly every block (a common word such as
`RuntimeError` is rare beside a second, rarer one), and fewer literals keep the set fast:
the groups kept are those least shared with other patterns, then the longest.

Shell messages printed in another language are read as English before anything is
matched (`normalise`): their words are literals of the same set, so a block is translated,
and looked at again, only when it holds one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import re2

from .normalise import TRANSLATED_WORDS, english_bytes

GROUPS_KEPT = 2
Groups = Sequence[Sequence[str]]  # a pattern's literal groups: of each, one literal is in every match


class LiteralFilter:
    def __init__(self, literals: Sequence[Groups], patterns: Sequence[str], skipped: frozenset[int], options: Any):
        """`literals[i]`: the literal groups of pattern i (`regex_subset.required_literals`);
        `patterns[i]`: what pattern i is matched with in a block, for those without literals.
        `skipped`: indices matched elsewhere, never candidates here."""
        groups = _kept_groups(literals)
        atoms: dict[str, int] = {}
        # literal -> (pattern, its other groups as literal numbers): a pattern is filed under the
        # literals of its first group only, and its other groups are checked on the block.
        self._filed: dict[int, list[tuple[int, tuple[tuple[int, ...], ...]]]] = {}
        unfiltered: list[int] = []
        for index, kept in enumerate(groups):
            if index in skipped:
                continue
            if not kept:
                unfiltered.append(index)
                continue
            numbered = [tuple(atoms.setdefault(atom, len(atoms)) for atom in group) for group in kept]
            for number in numbered[0]:
                self._filed.setdefault(number, []).append((index, tuple(numbered[1:])))
        self._translated = frozenset(atoms.setdefault(word, len(atoms)) for word in TRANSLATED_WORDS)
        self._atoms = re2.Set.SearchSet(options)
        for atom in atoms:  # in the order of their numbers
            self._atoms.Add(re2.escape(atom))
        self._atoms.Compile()
        self._unfiltered = unfiltered
        self._whole: Any = None
        if unfiltered:
            self._whole = re2.Set.SearchSet(options)
            for index in unfiltered:
                # Multi-line anchors, so ^ and $ mean a line's start and end inside a block.
                self._whole.Add("(?m)" + patterns[index])
            self._whole.Compile()

    def candidates(self, block: bytes | bytearray) -> tuple[bytes | bytearray, set[int]]:
        """The block, its shell messages read as English; the patterns that may match in it."""
        held = set(self._atoms.Match(block) or ())
        if not self._translated.isdisjoint(held):
            block = english_bytes(block)
            held = set(self._atoms.Match(block) or ())
        found = {
            index
            for atom in held
            for index, others in self._filed.get(atom, ())
            if all(any(other in held for other in group) for group in others)
        }
        if self._whole is not None:
            found.update(self._unfiltered[position] for position in self._whole.Match(block) or ())
        return block, found


def _kept_groups(literals: Sequence[Groups]) -> list[list[Sequence[str]]]:
    """Each pattern's GROUPS_KEPT groups that the fewest patterns share, then the longest."""
    shared = Counter(atom for groups in literals for group in groups for atom in set(group))
    return [
        sorted(groups, key=lambda group: (max(shared[atom] for atom in group), -min(map(len, group))))[:GROUPS_KEPT]
        for groups in literals
    ]
