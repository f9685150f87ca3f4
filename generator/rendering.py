"""Render the encyclopedia into Markdown pages through the Jinja templates in `templates/`.

The renderer knows nothing of MkDocs: it produces `Page`s (Markdown with front
matter, at a source path such as ``failures/<id>/index.md``) and `StaticFile`s (the
JSON API, redirects). The MkDocs plugin adds them to a build in memory;
`python -m generator generate` writes them to a folder for any other engine.

Stable URLs (with directory URLs): ``failures/<id>/``, ``tags/``, ``tags/<tag>/``,
``categories/``, ``categories/<category>/``, ``symptoms/``, ``signatures/``,
``api/entries.json``, ``api/signatures.json``; ``failures/<former-id>/``
redirects to the entry.
"""

from __future__ import annotations

import datetime
import heapq
import json
import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import jinja2

from . import closest, culprit, graphs, incomplete, markdown_text, rank_lines, roles
from .compat import SLOTS
from .encyclopedia import SEVERITY_ORDER, Encyclopedia
from .history import FileHistory
from .limits import MATCHES_KEPT, MAX_LINE_LENGTH
from .models import CONTRACT_VERSION, KEY_PATTERN, SEVERITIES, Entry, LiteralSignature, Taxonomy, entry_json_schema
from .normalise import (
    CORE_DUMPED,
    CORE_DUMPED_PATTERN,
    SHELL_MESSAGE_PATTERNS,
    SHELL_MESSAGES,
    normalise_regex,
    normalise_text,
)
from .problem_codes import PROBLEM_CODES
from .regex_subset import required_literal
from .resources import TEMPLATES_DIR
from .search import (
    CODE,
    CODE_MATCH,
    CODE_SPELLING,
    CODE_WEIGHTS,
    FIELD_WEIGHTS,
    NOISE,
    STEM_SUFFIXES,
    STOPWORDS,
    SYNONYMS,
    SearchIndex,
)
from .triage import RANK_PATTERNS
from .urls import (
    CATEGORIES_INDEX,
    DIAGNOSE,
    DIAGNOSE_API,
    ENTRIES_API,
    ENTRY_FORMAT,
    HOME,
    SEARCH_API,
    SHARED_SCRIPT,
    SIGNATURES_API,
    SIGNATURES_INDEX,
    SYMPTOMS_INDEX,
    TAGS_INDEX,
    category_src,
    entry_src,
    tag_src,
    url_of,
)


@dataclass(frozen=True, **SLOTS)
class Page:
    src_uri: str  # e.g. "failures/cuda-oom-forward/index.md"
    markdown: str


@dataclass(frozen=True, **SLOTS)
class StaticFile:
    dest_uri: str  # e.g. "api/entries.json"
    content: str


@dataclass(frozen=True, **SLOTS)
class SiteOptions:
    repo_url: str | None = None  # e.g. https://github.com/org/repo
    edit_uri: str = "edit/main/"  # appended to repo_url for a file of the repository's root
    entries_path: str = "entries"  # the entries folder, relative to the repository root


def repository_edit_uri(edit_uri: str | None, docs_prefix: str) -> str:
    """The edit base for a file of the repository's root, from mkdocs.yml's `edit_uri`, which is
    the base for the docs folder's files (`edit/main/docs/` -> `edit/main/`): generated pages link
    the YAML files under entries/, hand-written pages use the theme's own edit_uri + path."""
    base = (edit_uri or "edit/main/").strip("/")
    docs = docs_prefix.strip("/")
    if docs and (base == docs or base.endswith("/" + docs)):
        base = base[: -len(docs)].rstrip("/")
    return base + "/"


def environment(templates_dir: Path = TEMPLATES_DIR) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # the output is Markdown; entry text goes through markdown_text filters
    )
    env.filters.update(markdown_text.FILTERS)
    env.filters["json"] = lambda value: json.dumps(value, ensure_ascii=False)
    env.filters["source_label"] = source_label
    return env


_GITHUB_FILE = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/(?:blob|tree|raw)/(?P<ref>[^/]+)/(?P<path>[^#?]+)$")
_GITHUB_THREAD = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/(?:issues|pull|discussions)/(?P<number>[0-9]+)")
_LINE_ANCHOR = re.compile(r"^L(?P<line>[0-9]+)")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def source_label(url: str) -> str:
    """A short name for a signature's source: the host and the file or page, not a bare URL.

    ``https://github.com/pytorch/pytorch/blob/v2.5.0/c10/cuda/CUDACachingAllocator.cpp#L1234``
    reads ``github.com · pytorch/pytorch · CUDACachingAllocator.cpp (v2.5.0, line 1234)``."""
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    path = unquote(parts.path)
    if host == "github.com":
        file = _GITHUB_FILE.match(path)
        if file:
            ref = file["ref"][:10] if _COMMIT.match(file["ref"]) else file["ref"]
            line = _LINE_ANCHOR.match(parts.fragment)
            where = f"{ref}, line {line['line']}" if line else ref
            return f"{host} · {file['repo']} · {posixpath.basename(file['path'].rstrip('/'))} ({where})"
        thread = _GITHUB_THREAD.match(path)
        if thread:
            return f"{host} · {thread['repo']}#{thread['number']}"
    segments = [segment for segment in path.split("/") if segment]
    if segments and segments[-1] in ("index.html", "index.htm", "index"):
        segments.pop()  # a folder's index page is named by its folder
    return f"{host} · {segments[-1]}" if segments else host


def render_scaffold(
    entry_id: str, schema_path: str, category: str | None = None, templates_dir: Path = TEMPLATES_DIR
) -> str:
    template = environment(templates_dir).get_template("new-entry.yaml.j2")
    return template.render(id=entry_id, schema_path=schema_path, category=category)


RECENT_CHANGES = 10  # entries listed under "Recently added or updated" on the home page


@dataclass(frozen=True, **SLOTS)
class RecentChange:
    entry: Entry
    date: datetime.date
    kind: str  # "added", "updated", or "reviewed" when git has no history of the file


class Renderer:
    """Renders every page of the site from one encyclopedia."""

    def __init__(
        self,
        encyclopedia: Encyclopedia,
        options: SiteOptions = SiteOptions(),
        templates_dir: Path = TEMPLATES_DIR,
        history: Mapping[str, FileHistory] | None = None,
    ):
        self.encyclopedia = encyclopedia
        self.options = options
        self.env = environment(templates_dir)
        self.history = history or {}  # by entry source path (history.entry_history)

    # -- what a build gets ---------------------------------------------------------

    # -- the page set, in one place: every page's source path and how it is rendered --------

    def _page_kinds(self) -> list[tuple[list[str], Callable[[str], Page]]]:
        """(source paths, renderer of one of them), in the order a build lists pages."""
        encyclopedia = self.encyclopedia

        def index(template: str) -> Callable[[str], Page]:
            return lambda src_uri: self._render(template, src_uri)

        def keyed(render: Callable[[str], Page]) -> Callable[[str], Page]:
            return lambda src_uri: render(src_uri.split("/")[1])  # failures/<key>/index.md

        return [
            ([HOME], lambda _: self.home_page()),
            ([ENTRY_FORMAT], lambda _: self.format_page()),
            ([entry_src(entry_id) for entry_id in encyclopedia.entries], keyed(self.entry_page)),
            ([TAGS_INDEX], index("tags.md.j2")),
            ([tag_src(tag) for tag in encyclopedia.tags_in_use], keyed(self.tag_page)),
            ([CATEGORIES_INDEX], index("categories.md.j2")),
            ([category_src(key) for key in encyclopedia.taxonomy.categories], keyed(self.category_page)),
            ([SYMPTOMS_INDEX], index("symptoms.md.j2")),
            ([SIGNATURES_INDEX], index("signatures.md.j2")),
        ]

    def pages(self) -> Iterator[Page]:
        for sources, render in self._page_kinds():
            for src_uri in sources:
                yield render(src_uri)

    def page_sources(self) -> list[str]:
        """The source path of every page `pages()` yields, without rendering them."""
        return [src_uri for sources, _ in self._page_kinds() for src_uri in sources]

    def page(self, src_uri: str) -> Page:
        """One page by its source path (the live preview renders only what changed)."""
        for sources, render in self._page_kinds():
            if src_uri in sources:
                return render(src_uri)
        raise KeyError(src_uri)

    def pages_touched_by(self, changed: set[str], before: Encyclopedia) -> tuple[set[str], set[str]]:
        """The pages that show something of the `changed` entries, before or after the change,
        as (entry pages, hub pages): the entries themselves and those they link to, then
        their tags' and category's hubs and the small indexes. A live preview shows the
        first at once and catches up on the second right after. The symptom and signature
        indexes, seconds to convert at 2,000 entries, wait for the next full build."""
        entries: set[str] = set()
        hubs = {HOME, TAGS_INDEX, CATEGORIES_INDEX}
        for encyclopedia in (before, self.encyclopedia):
            for entry_id in changed & encyclopedia.entries.keys():
                entry = encyclopedia.entries[entry_id]
                entries.add(entry_src(entry_id))
                entries.update(entry_src(link.target) for link in encyclopedia.links[entry_id])
                hubs.update(map(tag_src, entry.tags))
                hubs.add(category_src(entry.category))
        existing = set(self.page_sources())
        return entries & existing, hubs & existing

    def format_page(self) -> Page:
        """The entry format, documented from the models' JSON Schema so the page cannot drift."""
        return self._render(
            "entry-format.md.j2",
            ENTRY_FORMAT,
            entry_schema=describe_schema(entry_json_schema()),
            taxonomy_schema=describe_schema(Taxonomy.model_json_schema()),
            contract_version=CONTRACT_VERSION,
            reported_by=roles.REPORTED_BY,
            problem_codes=list(PROBLEM_CODES.values()),
        )

    def static_files(self, api: bool = True) -> Iterator[StaticFile]:
        """The JSON API (unless `api` is False) and the redirects of former ids."""
        if api:
            yield StaticFile(ENTRIES_API, json.dumps(self.entries_api(), ensure_ascii=False, separators=(",", ":")))
            yield StaticFile(
                SIGNATURES_API, json.dumps(self.signatures_api(), ensure_ascii=False, separators=(",", ":"))
            )
            yield StaticFile(DIAGNOSE_API, json.dumps(self.diagnose_api(), ensure_ascii=False, separators=(",", ":")))
            search = SearchIndex.from_encyclopedia(self.encyclopedia).to_json()
            yield StaticFile(SEARCH_API, json.dumps(search, ensure_ascii=False, separators=(",", ":")))
        yield StaticFile(SHARED_SCRIPT, self.shared_script())
        for former, entry_id in self.encyclopedia.former_ids.items():
            html = self.env.get_template("redirect.html.j2").render(
                target=f"../{entry_id}/", title=self.encyclopedia.entries[entry_id].title
            )
            yield StaticFile(f"failures/{former}/index.html", html)

    # -- pages -----------------------------------------------------------------------

    def home_page(self) -> Page:
        encyclopedia = self.encyclopedia
        tag_counts = _tag_counts(encyclopedia.entries.values())
        return self._render(
            "home.md.j2",
            HOME,
            top_tags=_most_common(tag_counts, 12),
            tag_counts=tag_counts,
            recent=self.recent_changes(RECENT_CHANGES),
            signature_count=len(encyclopedia.signatures),
            category_bars=graphs.category_bars(encyclopedia),
            severities_shown=sorted(
                {entry.severity for entry in encyclopedia.entries.values()}, key=SEVERITY_ORDER.__getitem__
            ),
            symptom_bars=graphs.symptom_bars(encyclopedia),
        )

    def recent_changes(self, limit: int) -> list[RecentChange]:
        """The entries most recently added or changed (git history), newest first; an entry git
        does not know yet counts by its `reviewed` date."""
        changes = []
        for entry_id, entry in self.encyclopedia.entries.items():
            dates = self.history.get(self.encyclopedia.sources[entry_id])
            if dates is None:
                changes.append(RecentChange(entry, entry.reviewed, "reviewed"))
            else:
                changes.append(
                    RecentChange(entry, dates.updated, "added" if dates.added == dates.updated else "updated")
                )
        return heapq.nsmallest(limit, changes, key=lambda change: (-change.date.toordinal(), change.entry.title))

    def entry_page(self, entry_id: str) -> Page:
        entry = self.encyclopedia.entries[entry_id]
        source = self.encyclopedia.sources[entry_id]
        edit_path = posixpath.join(self.options.entries_path, source)
        return self._render(
            "entry.md.j2",
            entry_src(entry_id),
            edit_url=self._edit_url(edit_path),
            entry=entry,
            links=self.encyclopedia.links[entry_id],
            search_terms=search_terms(entry, self.encyclopedia.taxonomy),
            search_symptoms=" · ".join(" ".join(symptom.symptom.split()) for symptom in entry.symptoms),
            relations=graphs.relation_map(self.encyclopedia, entry_id),
            same_category=self.encyclopedia.same_category(entry),
            source=edit_path,
        )

    def tag_page(self, tag: str) -> Page:
        entries = self._ranked(self.encyclopedia.by_tag[tag])
        return self._render(
            "tag.md.j2",
            tag_src(tag),
            tag=tag,
            info=self.encyclopedia.taxonomy.tags[tag],
            entries=entries,
            related_tags=self.encyclopedia.related_tags(tag),
            chains=graphs.hub_chains(self.encyclopedia, entries),
        )

    def category_page(self, category: str) -> Page:
        entries = self._ranked(self.encyclopedia.by_category[category])
        tag_counts = _tag_counts(entries)
        return self._render(
            "category.md.j2",
            category_src(category),
            category=category,
            info=self.encyclopedia.taxonomy.categories[category],
            entries=entries,
            tags=_most_common(tag_counts, 10),
            tag_counts=tag_counts,
            chains=graphs.hub_chains(self.encyclopedia, entries),
        )

    # -- the JSON API -------------------------------------------------------------------

    def entries_api(self) -> list[dict]:
        result = []
        for entry in self.encyclopedia.entries.values():
            data = entry.model_dump(mode="json", exclude_none=True)
            data["url"] = url_of(entry_src(entry.id))
            data["source"] = posixpath.join(self.options.entries_path, self.encyclopedia.sources[entry.id])
            result.append(data)
        return result

    def signatures_api(self) -> list[dict]:
        """Every signature with its entry: what the diagnose page matches logs against."""
        entries = self.encyclopedia.entries
        return [
            {
                "id": ref.entry_id,
                "kind": ref.kind,
                "pattern": ref.pattern,
                # A literal every match contains: the page searches for all of them at once.
                # Both sides of a match are normalised (`normalise`), so the needle is too.
                "needle": normalise_text(ref.pattern)
                if ref.kind == "literal"
                else required_literal(normalise_regex(ref.pattern)),
                "supporting": ref.supporting,
                "source": ref.source,
                "title": entries[ref.entry_id].title,
                "severity": entries[ref.entry_id].severity,
                "role": entries[ref.entry_id].role,
                "verdict": self.encyclopedia.verdict(ref.entry_id),
                "url": url_of(entry_src(ref.entry_id)),
            }
            for ref in self.encyclopedia.signatures
        ]

    def shared_script(self) -> str:
        """What the browser's matcher and search share with the Python side, generated from it so
        nothing is copied by hand: line and match limits, rank prefixes, search words."""
        shared = {
            "maxLineLength": MAX_LINE_LENGTH,
            "matchesKept": MATCHES_KEPT,
            "rankPatterns": [pattern.pattern for pattern in RANK_PATTERNS],
            "stopwords": sorted(STOPWORDS),
            "synonyms": {word: list(expansion) for word, expansion in SYNONYMS.items()},
            "noise": NOISE.pattern,
            "code": CODE.pattern,
            "codeSpelling": CODE_SPELLING.pattern,
            "codeWeights": CODE_WEIGHTS,
            "codeMatch": CODE_MATCH,
            "stemSuffixes": list(STEM_SUFFIXES),
            "fieldWeights": {field: FIELD_WEIGHTS[field] for field in ("title", "signature", "symptom")},
            "shellMessages": SHELL_MESSAGES,
            "shellMessagePatterns": list(SHELL_MESSAGE_PATTERNS),
            "coreDumped": CORE_DUMPED,
            "coreDumpedPattern": CORE_DUMPED_PATTERN,
            **roles.shared_table(),
            **closest.shared_table(),
            **incomplete.shared_table(),
            **rank_lines.shared_table(),
            **culprit.shared_table(),
        }
        body = json.dumps(shared, ensure_ascii=False, separators=(",", ":"))
        return f"/* Generated from generator/ by the site build: do not edit. */\nself.FeShared = {body};\n"

    def diagnose_api(self) -> dict:
        """What the diagnose page adds to the signatures: which entry causes which (a cause
        ranks above its effect), and each entry's quick answer and fix to show with a result."""
        return {
            "causes": [list(pair) for pair in self.encyclopedia.causal_pairs],
            "answers": {
                entry.id: {
                    "summary": entry.summary,
                    "fix": entry.fix.summary,
                    # An umbrella's first confirmation step: what to collect next (roles.UMBRELLA_ALONE).
                    **({"next": entry.confirm[0]} if entry.role == "umbrella" else {}),
                }
                for entry in self.encyclopedia.entries.values()
            },
        }

    # -- helpers --------------------------------------------------------------------------

    def _render(self, template: str, src_uri: str, edit_url: str | None = None, **context: Any) -> Page:
        """The page from its template; `edit_url` (the repository file behind it, for the edit
        link) goes into the template's context and the page's front matter."""
        url_to = _url_linker(src_uri)
        markdown = self.env.get_template(template).render(
            enc=self.encyclopedia,
            taxonomy=self.encyclopedia.taxonomy,
            link=_linker(src_uri),
            url_to=url_to,
            entry_src=entry_src,
            node_url=lambda node: url_to(entry_src(node.entry_id)),
            category_url=lambda bar: url_to(category_src(bar.target)),
            tag_url=lambda bar: url_to(tag_src(bar.target)),
            tag_src=tag_src,
            category_src=category_src,
            is_literal=lambda signature: isinstance(signature, LiteralSignature),
            severities=SEVERITIES,
            pages={
                "home": HOME,
                "format": ENTRY_FORMAT,
                "tags": TAGS_INDEX,
                "categories": CATEGORIES_INDEX,
                "symptoms": SYMPTOMS_INDEX,
                "signatures": SIGNATURES_INDEX,
                "diagnose": DIAGNOSE,
            },
            edit_url=edit_url,
            **context,
        )
        return Page(src_uri, _with_edit_url(markdown, edit_url))

    def _edit_url(self, edit_path: str) -> str | None:
        if not self.options.repo_url:
            return None
        base = self.options.repo_url.rstrip("/") + "/" + self.options.edit_uri.strip("/")
        return f"{base}/{edit_path}"

    @staticmethod
    def _ranked(entries: list[Entry]) -> list[Entry]:
        return sorted(entries, key=lambda entry: (SEVERITY_ORDER[entry.severity], entry.title.casefold()))


_REGEX_TOKEN = re.compile(r"\\(.)|\[(?:\\.|[^\]])*\]|\(\?:|\{[0-9,]*\}|([(){}|*+?^$.])|(.)", re.DOTALL)


def _with_edit_url(markdown: str, edit_url: str | None) -> str:
    """The page with its edit link in its front matter (`edit_url`, empty for none), which
    overrides/partials/actions.html shows under either engine: MkDocs with this project's plugin
    and Zensical, which runs no plugin, read the same page."""
    head, separator, rest = markdown.partition("\n")
    if head != "---" or not separator:
        raise ValueError("a generated page must begin with front matter ('---')")
    return f"---\nedit_url: {json.dumps(edit_url or '')}\n{rest}"


def _tag_counts(entries: Iterable[Entry]) -> Counter[str]:
    """How many of the entries have each tag (a tag written twice counts once)."""
    return Counter(tag for entry in entries for tag in dict.fromkeys(entry.tags))


def _most_common(counts: Counter[str], limit: int) -> list[str]:
    """The `limit` commonest keys, ties by key: never by insertion or hash order, so every
    build of a commit writes the same page."""
    return [key for key, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]]


def search_terms(entry: Entry, taxonomy: Taxonomy) -> str:
    """What search should find the entry by, beyond its visible text: the words its primary
    signatures print (a regex's fixed words, not its syntax or the varying parts of example lines), its
    tags with their titles and aliases, and its category. The page carries them in a hidden,
    heavily weighted block for the site's search index."""
    words: dict[str, None] = {}
    for signature in entry.signatures or ():
        if signature.supporting:
            continue  # a traceback frame or a prefix names nothing to search for
        text = signature.literal if isinstance(signature, LiteralSignature) else _readable(signature.regex)
        words.setdefault(" ".join(text.split()))
    for key in entry.tags:
        tag = taxonomy.tags[key]
        words.setdefault(" ".join((key, tag.title, *(tag.aliases or ()))))
    words.setdefault(taxonomy.categories[entry.category].title)
    return " · ".join(word for word in words if word)


def _readable(pattern: str) -> str:
    """A regex's fixed text: classes, kinds of characters (`\\d`) and operators become blanks."""
    out = []
    for token in _REGEX_TOKEN.finditer(pattern):
        escaped, _, plain = token.groups()
        if plain is not None:
            out.append(plain)
        elif escaped is not None and not escaped.isalnum():
            out.append(escaped)  # an escaped punctuation mark is itself
        else:
            out.append(" ")
    return " ".join("".join(out).split())


@dataclass(frozen=True, **SLOTS)
class SchemaField:
    name: str
    required: bool
    type: str
    description: str


def describe_schema(schema: dict) -> dict[str, list[SchemaField]]:
    """The fields of each object in a JSON Schema, the root first, for the format page."""
    objects = {schema.get("title", "Entry"): schema, **schema.get("$defs", {})}
    described = {}
    for name, definition in objects.items():
        if definition.get("type") != "object" or "properties" not in definition:
            continue
        required = set(definition.get("required", ()))
        described[name] = [
            SchemaField(field, field in required, _type_of(spec), spec.get("description", ""))
            for field, spec in definition["properties"].items()
        ]
    return described


def _type_of(spec: dict) -> str:
    """A short, readable type for a JSON Schema property."""
    if "$ref" in spec:
        return spec["$ref"].rsplit("/", 1)[-1]
    if "enum" in spec:
        return " or ".join(str(value) for value in spec["enum"])
    if "const" in spec:
        return str(spec["const"])
    for key in ("anyOf", "oneOf"):
        if key in spec:
            return " or ".join(_type_of(option) for option in spec[key])
    kind = spec.get("type", "any")
    if kind == "array":
        return f"list of {_type_of(spec.get('items', {}))}"
    if kind == "object" and "additionalProperties" in spec:
        return f"mapping of key to {_type_of(spec['additionalProperties'])}"
    if kind == "string" and spec.get("format") == "date":
        return "date (YYYY-MM-DD)"
    if kind == "string" and spec.get("pattern") == KEY_PATTERN:
        return "key"
    if kind == "string" and spec.get("format") == "uri":
        return "http(s) URL"
    return {"string": "text"}.get(kind, kind)


def _url_linker(from_src: str) -> Callable[[str], str]:
    """Like `_linker`, for raw HTML (pictures): relative site URLs, which no engine rewrites."""
    up = "../" * url_of(from_src).count("/")

    def url_to(to_src: str) -> str:
        return up + url_of(to_src)

    return url_to


def _linker(from_src: str) -> Callable[..., str]:
    """A function giving the relative Markdown link from `from_src` to another page.

    Up to the root, then down: always valid, and far cheaper than `relpath` on the
    hundreds of thousands of links a large site has."""
    up = "../" * from_src.count("/")

    def link(to_src: str, anchor: str | None = None) -> str:
        path = up + to_src
        return f"{path}#{anchor}" if anchor else path

    return link
