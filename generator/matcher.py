"""Match a log against every signature of the encyclopedia in one pass.

The log is streamed in blocks of whole lines, never held whole. Each block goes
through one RE2 `Set` of the literals the signatures contain (`prefilter`: a single
automaton, so the cost of a pass barely depends on how many signatures there are);
only the signatures whose literals a block holds are looked for in it, line by line.
Each match is checked against its line cut to `MAX_LINE_LENGTH` characters, the rule
shared with the browser's matcher.

Ranking, the same as the diagnose page's: an entry is a result only when one of
its primary (not `supporting`) signatures matched; then more distinct signatures
matched first, then the more specific (the summed length of the matched
patterns), then the earliest matching line, then the id.
"""

from __future__ import annotations

import functools
import os
import re
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol, Union

import re2

from .compat import SLOTS
from .limits import ERROR_LINES_KEPT, MATCHES_KEPT, MAX_LINE_LENGTH
from .normalise import clean_block, finish_line, normalise_regex, normalise_text, tolerant_regex
from .prefilter import Groups, LiteralFilter
from .regex_subset import required_literals

BLOCK_BYTES = 64 * 1024  # small: a block where a signature hits is searched again for its lines
WORKERS = min(4, os.cpu_count() or 1)
LOOKAHEAD_BLOCKS = 2 * WORKERS
LONG_LINE_BYTES = 64 * 1024  # a line is cut to 4,096 characters: at most 16 KiB of UTF-8
LINE_PATTERNS_CACHED = 1024  # matched lines kept per signature (ranking needs only the first)
_RE2_MEMORY = 256 << 20  # bounds the DFA cache: memory stays flat however long the log


@dataclass(frozen=True, **SLOTS)
class Signature:
    """One signature of one entry: what the matcher, the site's API and its indexes share."""

    entry_id: str
    kind: str  # "literal" or "regex"
    pattern: str
    supporting: bool = False  # a context line: it raises an entry found otherwise, never finds one
    source: str = ""  # where the wording is printed (a URL); not needed for matching

    @property
    def regex(self) -> str:
        """The pattern as it is matched: against lines read as a person would (`normalise`)."""
        return re.escape(normalise_text(self.pattern)) if self.kind == "literal" else normalise_regex(self.pattern)

    @property
    def scan_regex(self) -> str:
        """The pattern that finds this signature's candidate lines in a block (`tolerant_regex`)."""
        return tolerant_regex(self.regex)

    @property
    def literals(self) -> list[tuple[str, ...]]:
        """Literal groups every line it matches contains, as a block holds it (`prefilter`)."""
        return required_literals(self.regex)


@dataclass(frozen=True, **SLOTS)
class Tap:
    """Lines no signature finds but a later reader needs, kept while the log is scanned: the
    first `first` and the last `last` of them, per input when `per_input`, else over all inputs."""

    name: str
    pattern: str
    first: int = 0
    last: int = 0
    per_input: bool = True
    tolerant: bool = True  # matched as signatures are (`tolerant_regex`); False: as written
    # For lines so frequent (a progress line per step) that looking for them in every block would
    # cost the scan more than the rest of its work: when set, the pattern is not in the scan at all,
    # and only the last `end_blocks` blocks of each input are read for it, once the input ends.
    end_blocks: int = 0
    # Only with `end_blocks`: each line as printed (after `clean_block`: colours, carriage returns,
    # backticks gone) with its blanks and quote marker kept, for a reader of indentation.
    as_printed: bool = False


@dataclass(frozen=True, **SLOTS)
class Match:
    line: int  # 1-based
    text: str  # the line, cut to MAX_LINE_LENGTH characters
    signature: int  # index into the matcher's signatures
    source: int = 0  # which input, when several logs are scanned together

    def position(self) -> tuple[int, int]:
        return (self.source, self.line)


class Readable(Protocol):
    """A binary stream that reads into a buffer: a file, standard input, a gzip stream."""

    def readinto(self, buffer: Any, /) -> int | None: ...


Block = Union[bytes, bytearray]  # whole lines of a log, cleaned (`clean_block`)
Hits = dict[int, list[Match]]  # signature index -> its first matches, in log order
Spans = dict[int, list[tuple[int, str]]]  # signature index -> (start, normalised text) of its lines in a block


@dataclass(**SLOTS)
class Result:
    entry_id: str
    signatures: set[int] = field(default_factory=set)  # distinct signatures matched
    specificity: int = 0  # summed length of the matched patterns
    first: tuple[int, int] = (0, 0)  # (input, line) of the earliest match
    matches: list[Match] = field(default_factory=list)
    primary: bool = False  # a signature that is not `supporting` matched
    evidence: set[tuple[int, int]] = field(default_factory=set)  # (input, line) of its primary matches

    def sort_key(self) -> tuple:
        return (-len(self.signatures), -self.specificity, self.first, self.entry_id)


class Matcher:
    def __init__(
        self,
        signatures: list[Signature],
        scan_regexes: list[str] | None = None,
        error_line: str | None = None,
        taps: tuple[Tap, ...] = (),
        literals: Sequence[Groups] | None = None,
    ):
        """`scan_regexes`, `literals`: each signature's `scan_regex` and `literals`, when already
        known (the cached index keeps them: deriving thousands of them is a noticeable part of a
        start-up).
        `error_line`: a pattern of the lines that report an error, whatever the failure; the
        last ERROR_LINES_KEPT of them are kept under `error_index` (`generator.closest`).
        `taps`: more kinds of lines to keep (`Tap`), read back with `tapped`."""
        self.signatures = signatures
        self._scan_regexes = list(scan_regexes or [signature.scan_regex for signature in signatures])
        # Patterns using `^`, where a line's single leading space tells tolerant from exact.
        self._anchored = ["^[ \\t>]*" in regex for regex in self._scan_regexes]
        self.error_index: int | None = None
        self.taps: dict[int, Tap] = {}  # pattern index -> the tap it keeps lines for
        if error_line is not None:
            self.error_index = len(self._scan_regexes)
            taps = (Tap("error", error_line, 0, ERROR_LINES_KEPT, per_input=False, tolerant=False), *taps)
        # Taps read at the end of an input come last, outside the set: the set's indices stay the
        # indices of `_scan_regexes`.
        for tap in sorted(taps, key=lambda tap: tap.end_blocks > 0):
            self.taps[len(self._scan_regexes)] = tap
            self._scan_regexes.append(tolerant_regex(tap.pattern) if tap.tolerant else tap.pattern)
            self._anchored.append(False)
        self._at_end = {index: tap for index, tap in self.taps.items() if tap.end_blocks}
        all_literals = list(literals or [signature.literals for signature in signatures])
        all_literals.extend(required_literals(tap.pattern) for tap in self.taps.values())
        options = re2.Options()
        options.max_mem = _RE2_MEMORY
        self._filter = LiteralFilter(all_literals, self._scan_regexes, frozenset(self._at_end), options)
        self._line_patterns: dict[int, Any] = {}  # insertion order = least recently used first

    def scan(
        self,
        stream: Readable,
        progress: Callable[[int], None] | None = None,
        source: int = 0,
        found: Hits | None = None,
        lines_before: int = 0,
    ) -> Hits:
        """Match every line of a binary stream, adding to `found` (several inputs share one).

        `lines_before`: lines of the same input already scanned, when a growing log is
        scanned piece by piece (`mlfail run`, `mlfail watch`)."""
        found = {} if found is None else found
        # Where this input's lines of each tap start in its list (a tap over all inputs: at 0); a
        # growing log scanned piece by piece (`mlfail watch`) keeps one budget over all its pieces.
        starts = {
            index: self._start_of(found.get(index, []), source) if tap.per_input else 0
            for index, tap in self.taps.items()
        }
        last_blocks: deque[tuple[Block, int]] = deque(
            maxlen=max((t.end_blocks for t in self._at_end.values()), default=0)
        )
        read = 0
        for block, spans in self._scanned_blocks(stream, found):
            read += len(block)
            if last_blocks.maxlen:
                last_blocks.append((block, lines_before))
            if spans:
                for match in self._matches(block, lines_before, spans, source):
                    kept = found.setdefault(match.signature, [])
                    tap = self.taps.get(match.signature)
                    if tap is not None:
                        start = starts[match.signature]
                        if len(kept) - start >= tap.first + tap.last:
                            del kept[start + tap.first]  # past the first ones, the last ones count
                    elif len(kept) >= MATCHES_KEPT:
                        continue
                    kept.append(match)
            lines_before += block.count(b"\n")
            if progress:
                progress(read)
        for index, tap in self._at_end.items():
            self._read_at_end(index, tap, list(last_blocks)[-tap.end_blocks :], found, starts[index], source)
        return found

    def _read_at_end(
        self, index: int, tap: Tap, blocks: list[tuple[Block, int]], found: Hits, start: int, source: int
    ) -> None:
        """A tap read at the end of an input: its lines in the input's last blocks, the last ones kept."""
        kept = found.setdefault(index, [])
        for block, lines_before in blocks:
            for begin, text in self._line_spans(index, block, len(block), finished=not tap.as_printed):
                if len(kept) - start >= tap.last:
                    del kept[start]
                kept.append(Match(lines_before + block.count(b"\n", 0, begin) + 1, text, index, source))

    @staticmethod
    def _start_of(kept: list[Match], source: int) -> int:
        return next((place for place, match in enumerate(kept) if match.source == source), len(kept))

    def _scanned_blocks(self, stream: Readable, found: Hits) -> Iterator[tuple[Block, Spans]]:
        """(block cleaned, the matched lines of each signature in it), in order.

        Each block is cleaned (`clean_block`) and matched by a small pool while this thread reads
        the next ones and reports: RE2 releases the GIL while it matches, so both run at once.
        The lookahead bounds memory. Signatures that have all the matches they keep are left out
        of the line search; that set is rebuilt only when it grows."""
        in_flight: deque[Future] = deque()
        full: frozenset[int] = frozenset()
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            for block in _blocks(stream):
                if len(in_flight) >= LOOKAHEAD_BLOCKS:
                    done = in_flight.popleft().result()
                    yield done
                    full = self._full(found, full, done[1])
                in_flight.append(pool.submit(self._scan_block, block, full))
            while in_flight:
                yield in_flight.popleft().result()

    def _full(self, found: Hits, full: frozenset[int], spans: Spans) -> frozenset[int]:
        """The signatures that keep no more matches, after a block whose `spans` were added."""
        grown = [
            index
            for index in spans
            if index not in full and index not in self.taps and len(found.get(index, ())) >= MATCHES_KEPT
        ]
        return full.union(grown) if grown else full

    def _scan_block(self, block: Block, full: frozenset[int]) -> tuple[Block, Spans]:
        """The block cleaned; the signatures whose literals it holds, then the lines they match."""
        block, candidates = self._filter.candidates(clean_block(block, english=False))
        spans: Spans = {}
        for index in candidates:
            tap = self.taps.get(index)
            if tap is not None:  # the block's first and last lines of a tap are all it can need
                lines = list(self._line_spans(index, block, len(block)))
                lines = lines if len(lines) <= tap.first + tap.last else lines[: tap.first] + lines[-tap.last :]
            elif index not in full:
                lines = list(self._line_spans(index, block, MATCHES_KEPT))
            else:
                continue
            if lines:
                spans[index] = lines
        return block, spans

    def _matches(self, block: Block, lines_before: int, spans: Spans, source: int) -> Iterator[Match]:
        """Matches with their line numbers, counted once through the block."""
        ordered = sorted((start, index, text) for index, found in spans.items() for start, text in found)
        line_number, counted_to = lines_before, 0
        for start, index, text in ordered:
            line_number += block.count(b"\n", counted_to, start)
            counted_to = start
            yield Match(line_number + 1, text, index, source)

    def _line_spans(self, index: int, block: Block, wanted: int, finished: bool = True) -> Iterator[tuple[int, str]]:
        """(start, normalised text) of up to `wanted` lines that signature `index` matches.

        The tolerant pattern finds candidate lines in the block; each is then read in full
        (`finish_line`) and cut to MAX_LINE_LENGTH characters, and matched again on its own:
        in a block, `\\s` or `[^ ]` could have matched across a line end. On a line read in
        full (no blank runs, no tabs, no quote marker) the tolerant pattern means what the
        exact one means, except that its `^` also takes one leading space: only then is the
        exact pattern compiled and asked. Not `finished`: the line is given as the block holds it.
        """
        tolerant = self._line_pattern(index)
        position = 0
        while wanted and position < len(block):
            match = tolerant.search(block, position)
            if match is None:
                return
            start = block.rfind(b"\n", 0, match.start()) + 1
            end = block.find(b"\n", match.start())
            if not finished:
                wanted -= 1
                yield start, bytes(block[start:end]).decode("utf-8", "replace")[:MAX_LINE_LENGTH]
                position = end + 1
                continue
            text = finish_line(block[start:end]).decode("utf-8", "replace")[:MAX_LINE_LENGTH]
            if text.startswith(" ") and self._anchored[index]:
                found = self._exact_pattern(index).search(text)
            else:
                found = tolerant.search(text)
            if found:
                wanted -= 1
                yield start, text
            position = end + 1

    def _line_pattern(self, index: int) -> Any:
        """The signature's tolerant pattern; a bounded cache keeps memory flat on any log."""
        pattern = self._line_patterns.pop(index, None)
        if pattern is None:
            pattern = re2.compile("(?m)" + self._scan_regexes[index])
            if len(self._line_patterns) >= LINE_PATTERNS_CACHED:
                del self._line_patterns[next(iter(self._line_patterns))]  # the least recently used
        self._line_patterns[index] = pattern
        return pattern

    @functools.lru_cache(maxsize=64)  # noqa: B019 - one matcher per run; anchored signatures are few
    def _exact_pattern(self, index: int) -> Any:
        return re2.compile(self.signatures[index].regex)

    def error_lines(self, found: Hits) -> list[Match]:
        """The last error lines of the scanned log, in order (empty without `error_line`)."""
        return list(found.get(self.error_index, ())) if self.error_index is not None else []

    def tapped(self, found: Hits, name: str) -> list[Match]:
        """The lines kept for the tap called `name`, in log order (empty without that tap)."""
        index = next((index for index, tap in self.taps.items() if tap.name == name), None)
        return list(found.get(index, ())) if index is not None else []

    def rank(self, found: Hits) -> list[Result]:
        """One result per entry, best first."""
        results: dict[str, Result] = {}
        for index, matches in found.items():
            if not matches or index in self.taps:
                continue
            signature = self.signatures[index]
            result = results.setdefault(signature.entry_id, Result(signature.entry_id))
            result.signatures.add(index)
            if not signature.supporting:
                result.primary = True
                result.evidence.update(match.position() for match in matches)
            result.specificity += len(signature.pattern)
            first = matches[0].position()
            result.first = first if not result.matches else min(result.first, first)
            result.matches.extend(matches)
        found_by_primary = [result for result in results.values() if result.primary]
        for result in found_by_primary:
            result.matches.sort(key=lambda match: (match.position(), match.signature))
        return sorted(found_by_primary, key=Result.sort_key)


def _blocks(stream: Readable) -> Iterator[bytes | bytearray]:
    """Blocks of whole lines, about BLOCK_BYTES each, as read (`_scan_block` cleans them); a last
    line without a newline gets one.

    Each block is read straight into its own buffer, so the only bytes ever copied
    are the partial line carried over to the next block. A line longer than
    LONG_LINE_BYTES is kept only up to there (far past the 4,096 characters that
    are ever matched), so no input makes a block grow without bound."""
    rest = b""
    skipping = False  # inside the unkept end of an enormous line
    while True:
        block = bytearray(len(rest) + BLOCK_BYTES)
        block[: len(rest)] = rest
        read = stream.readinto(memoryview(block)[len(rest) :])
        if not read:
            break
        size = len(rest) + read
        if skipping:
            newline = block.find(b"\n", 0, size)
            if newline < 0:
                continue
            del block[: newline + 1]
            size -= newline + 1
            skipping = False
        cut = block.rfind(b"\n", 0, size) + 1
        if cut == 0:
            rest = bytes(block[:size])
            if size > LONG_LINE_BYTES:
                yield bytearray(rest[:LONG_LINE_BYTES] + b"\n")
                rest, skipping = b"", True
            continue
        rest = bytes(block[cut:size])
        del block[cut:]
        yield block
    if rest:
        yield bytearray(rest[:LONG_LINE_BYTES] + b"\n")
