"""Find entries for a typed or pasted query (`mlfail search TEXT`).

A query is first read as a log: entries whose signatures match it come first, marked as
matching the error. Then the words count, as an engineer means them:
- numbers, sizes, hex addresses, paths and rank prefixes are dropped (they differ per run);
- identifiers are found whole and by their parts (`torch.cuda.OutOfMemoryError` is also
  `OutOfMemoryError`, `out of memory error`);
- tag keys and their aliases stand for their tag (`zero3` is ZeRO-3, `oom` is out of memory);
- a word weighs more in a title, a tag or a signature than in a symptom, more there than in
  the quick answer or a cause; each place it appears adds (with diminishing returns), and
  the rarer it is across the encyclopedia, the more it counts;
- a code (`ncclSystemError`, `CUBLAS_STATUS_ALLOC_FAILED`, `Xid 79`, `EADDRINUSE`) names its
  failure however short the query: the entries whose title or signatures carry it rank above
  word matches, the fewer such entries the higher;
- ties are broken by title, so the same query always lists the same entries in the same order.
"""

from __future__ import annotations

import io
import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .compat import SLOTS
from .matcher import Matcher
from .normalise import normalise_text
from .triage import triage

if TYPE_CHECKING:  # a search read back from the cache needs no models (`diagnose` starts faster)
    from .encyclopedia import Encyclopedia
    from .models import Entry, Signature

# How much a word counts where it is found.
FIELD_WEIGHTS = {"title": 6.0, "tag": 5.0, "signature": 4.0, "symptom": 2.0, "summary": 1.5, "cause": 1.0}
SIGNATURE_MATCH = 1000.0  # above any word score: the query is the failure's own text
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "from",
        "has",
        "have",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "not",
        "of",
        "on",
        "or",
        "so",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "this",
        "to",
        "was",
        "were",
        "when",
        "which",
        "while",
        "will",
        "with",
    ]
)
# What a code is (the browser's search reads the same patterns, from shared.js): identifiers that
# name one error, and numbered codes. A code found in an entry's title counts most, then in its
# primary signatures, then anywhere else in its text (examples, supporting lines, symptoms).
CODE = re.compile(
    r"\b(?:[a-z]+[A-Z][A-Za-z0-9]*"  # lowerCamel: ncclSystemError, cudaErrorIllegalAddress
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+){2,}"  # three humps or more: ChildFailedError, OutOfMemoryError
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"  # CUBLAS_STATUS_ALLOC_FAILED, IBV_WC_RETRY_EXC_ERR
    r"|E(?:ADDRINUSE|CONNREFUSED|CONNRESET|NOSPC|NOMEM|TIMEDOUT|DQUOT|STALE|ACCES|NOENT|PIPE|HOSTUNREACH|NETUNREACH)"
    r"|SIG(?:SEGV|KILL|TERM|ABRT|BUS|ILL|FPE|INT|HUP|PIPE)"
    r"|[A-Z]{2,}[0-9]{2,}"  # FE203
    r"|Xid(?: \(PCI:[0-9A-Fa-f:.]+\))?[ :,]+[0-9]{1,3})\b"  # Xid 79; NVRM: Xid (PCI:0000:3b:00): 79
)
CODE_SPELLING = re.compile(r"\s*\(pci:[^)]*\)|[^a-z0-9_]+")  # Xid (PCI:...): 79 and Xid 79 are one code
CODE_WEIGHTS = {"title": 3.0, "signature": 2.0, "text": 1.0}
CODE_MATCH = 50.0  # a code in one entry's title: 150, above what words add up to
# Word endings that do not change what is meant ("recompiling" finds "recompile"), stripped
# before words are compared here and in the browser (Pagefind stems its own index likewise).
STEM_SUFFIXES = ("ing", "ed", "es", "s")
# Common ways of writing a failure that no tag alias spells.
SYNONYMS = {"oom": ("out", "memory"), "ooms": ("out", "memory"), "nans": ("nan",), "hang": ("hangs",)}

NOISE = re.compile(
    r"\[(?:rank|Rank|RANK) ?\d+\]:?|\[default\d+\]:"  # rank prefixes
    r"|\b[EWIF]\d{4}\b"  # glog severity and date: E1129
    r"|0x[0-9a-fA-F]+"  # addresses
    r"|\S*[/\\]\S*"  # paths
    r"|\b\d+(?:\.\d+)?\s*(?:[KMGT]i?B|bytes)\b"  # sizes
    r"|\b\d+(?:[.:]\d+)*\b"  # numbers, versions, times
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.-][A-Za-z_][A-Za-z0-9_]*)*")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def terms(text: str) -> list[str]:
    """The words of a text as search terms: identifiers whole and by their parts, lowercased."""
    found: list[str] = []
    for identifier in _IDENTIFIER.findall(NOISE.sub(" ", normalise_text(text))):
        whole = identifier.lower()
        parts = [piece for chunk in re.split(r"[._-]", identifier) for piece in _CAMEL.findall(chunk) or [chunk]]
        for term in dict.fromkeys([whole, *(part.lower() for part in parts)]):
            if term not in STOPWORDS and len(term) > 1:
                found.append(term)
    return found


def stem(term: str) -> str:
    """A word without the ending of its inflection: `recompiling`, `recompiles`, `recompile` are one."""
    if len(term) <= 5 or term.startswith("tag:"):
        return term
    for suffix in STEM_SUFFIXES:
        if term.endswith(suffix) and not term.endswith("ss") and len(term) - len(suffix) >= 4:
            term = term[: -len(suffix)]
            break
    return term[:-1] if term.endswith("e") and len(term) > 4 else term


def codes(text: str) -> list[str]:
    """The codes a text names, in a canonical spelling (lowercase, one space between parts)."""
    found = (" ".join(CODE_SPELLING.sub(" ", code.lower()).split()) for code in CODE.findall(normalise_text(text)))
    return list(dict.fromkeys(found))


@dataclass(frozen=True, **SLOTS)
class Hit:
    entry_id: str
    title: str
    score: float
    matches_error: bool  # a signature of the entry matched the query itself


class SearchIndex:
    """Word postings of every entry, by field, and the tag each alias stands for.

    Built from an encyclopedia (`from_encyclopedia`), or read back from the JSON that the
    signature cache keeps (`from_json`), so `diagnose` can search without loading entries."""

    def __init__(
        self,
        postings: dict[str, dict[str, float]],
        code_postings: dict[str, dict[str, float]],
        tag_terms: dict[str, str],
        tag_phrases: dict[tuple[str, ...], str],
        titles: dict[str, str],
        matcher: Matcher | None = None,
        triage_rules: tuple[list[tuple[str, str]], dict[str, str]] = ([], {}),
    ):
        self.postings = postings  # term -> entry -> its weight (log of the summed field weights)
        self.code_postings = code_postings  # code -> entry -> CODE_WEIGHTS of its best place
        self.tag_terms = tag_terms  # a tag key or alias, without hyphens -> the tag key
        self.tag_phrases = tag_phrases  # a tag title of several words -> the tag key
        self.titles = titles  # entry -> title, for the order of ties
        self.matcher = matcher
        self.triage_rules = triage_rules  # (causal pairs, roles): how matched entries are ordered
        total = len(titles) or 1
        self.idf = {term: math.log(1 + total / len(found)) for term, found in postings.items()}

    @classmethod
    def from_encyclopedia(cls, encyclopedia: Encyclopedia, matcher: Matcher | None = None) -> SearchIndex:
        postings: dict[str, dict[str, float]] = defaultdict(dict)
        code_postings: dict[str, dict[str, float]] = defaultdict(dict)
        tag_terms: dict[str, str] = {}
        tag_phrases: dict[tuple[str, ...], str] = {}
        for key, tag in encyclopedia.taxonomy.tags.items():
            for spelling in (key, *(tag.aliases or ())):
                tag_terms[spelling.replace("-", "")] = key
            title_words = tuple(terms(tag.title))
            if len(title_words) > 1:
                tag_phrases[title_words] = key
        for entry in encyclopedia.entries.values():
            for key in entry.tags:
                postings[f"tag:{key}"][entry.id] = math.log1p(FIELD_WEIGHTS["tag"])  # as a word in one field
            weights: dict[str, float] = defaultdict(float)
            for field, text in _fields(entry, encyclopedia):
                for term in {stem(term) for term in terms(text)}:
                    weights[term] += FIELD_WEIGHTS[field]  # found in the title and a signature: both count
            for term, weight in weights.items():
                postings[term][entry.id] = math.log1p(weight)  # more mentions help, with diminishing returns
            for code, weight in _code_weights(entry).items():
                code_postings[code][entry.id] = weight
        titles = {entry_id: entry.title for entry_id, entry in sorted(encyclopedia.entries.items())}
        rules = (encyclopedia.causal_pairs, encyclopedia.roles)
        return cls(_canonical(postings), _canonical(code_postings), tag_terms, tag_phrases, titles, matcher, rules)

    def to_json(self) -> dict:
        return {
            "postings": self.postings,
            "code_postings": self.code_postings,
            "tag_terms": self.tag_terms,
            "tag_phrases": [[list(phrase), key] for phrase, key in self.tag_phrases.items()],
            "titles": self.titles,
            "idf": self.idf,  # the browser multiplies by these, so both sides add the same numbers
        }

    @classmethod
    def from_json(cls, data: dict, matcher: Matcher | None = None) -> SearchIndex:
        phrases = {tuple(phrase): key for phrase, key in data["tag_phrases"]}
        return cls(data["postings"], data["code_postings"], data["tag_terms"], phrases, data["titles"], matcher)

    def query_terms(self, query: str) -> list[str]:
        """The query's terms, each followed by the tag it spells (`zero3`, or a tag's title such as
        "out of memory" written out) and its synonyms."""
        words = terms(query)
        found: list[str] = []
        for position, term in enumerate(words):
            found.append(term)
            tag = self.tag_terms.get(term.replace("-", ""))
            if tag:
                found.append(f"tag:{tag}")
            for phrase, key in self.tag_phrases.items():
                start = position + 1 - len(phrase)
                if start >= 0 and tuple(words[start : position + 1]) == phrase:
                    found.append(f"tag:{key}")
            found.extend(SYNONYMS.get(term, ()))
        return list(dict.fromkeys(found))

    def search(self, query: str, limit: int = 10) -> list[Hit]:
        scores: dict[str, float] = defaultdict(float)
        for term in dict.fromkeys(stem(term) for term in self.query_terms(query)):
            for entry_id, weight in self.postings.get(term, {}).items():
                scores[entry_id] += weight * self.idf[term]
        for code in codes(query):
            found = self.code_postings.get(code, {})
            for entry_id, weight in found.items():
                scores[entry_id] += CODE_MATCH * weight / len(found)
        matched = self._matching_error(query)
        for entry_id in matched:
            scores[entry_id] += SIGNATURE_MATCH
        titles = self.titles
        ranked = sorted(scores.items(), key=lambda item: (-item[1], titles[item[0]].casefold()))
        return [Hit(entry_id, titles[entry_id], score, entry_id in matched) for entry_id, score in ranked[:limit]]

    def _matching_error(self, query: str) -> list[str]:
        if self.matcher is None:
            return []
        results = self.matcher.rank(self.matcher.scan(io.BytesIO(query.encode("utf-8", "replace"))))
        return [finding.entry_id for finding in triage(results, *self.triage_rules).findings]


def _canonical(postings: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Terms and their entries in sorted order: an entry's terms are gathered through sets and the
    entries in the order they were loaded, and the site must be the same bytes on every build.
    (A score is a sum over the query's terms, so the order of a term's entries changes no score.)"""
    return {term: dict(sorted(postings[term].items())) for term in sorted(postings)}


def _signature_text(signature: Signature) -> str:
    """A signature's words: a literal as written, a regex without its escapes."""
    from .models import LiteralSignature

    return signature.literal if isinstance(signature, LiteralSignature) else re.sub(r"\\.", " ", signature.regex)


def _code_weights(entry: Entry) -> dict[str, float]:
    """Each code of the entry with the weight of the best place it appears in."""
    places = [("title", entry.title)]
    for signature in entry.signatures or ():
        places.append(("text" if signature.supporting else "signature", _signature_text(signature)))
        places.extend(("text", example) for example in signature.examples or ())
    places.extend(("text", symptom.symptom) for symptom in entry.symptoms)
    places.append(("text", entry.summary))
    weights: dict[str, float] = {}
    for place, text in places:
        for code in codes(text):
            weights[code] = max(weights.get(code, 0.0), CODE_WEIGHTS[place])
    return weights


def _fields(entry: Entry, encyclopedia: Encyclopedia) -> Iterable[tuple[str, str]]:
    yield "title", entry.title
    for key in entry.tags:
        tag = encyclopedia.taxonomy.tags[key]
        yield "tag", " ".join((key, tag.title, *(tag.aliases or ())))
    for signature in entry.signatures or ():
        yield "signature", " ".join((_signature_text(signature), *(signature.examples or ())))
    for symptom in entry.symptoms:
        yield "symptom", symptom.symptom
    yield "summary", entry.summary
    for cause in entry.causes:
        yield "cause", cause.text
