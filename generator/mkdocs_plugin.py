"""The thin MkDocs adapter: validated entries in, pages added to the build in memory.

Everything of substance happens in the core (`loading`, `rendering`); this module
only speaks MkDocs: it loads the entries before the build (stopping it with the
validator's own lines if they are invalid), adds the rendered pages and static
files to the build's file collection, asks `mkdocs serve` to watch the entries and
templates, and finishes the built site (`finishing`: the search index, a 404 page that
works under any path) as the Zensical build does after `zensical build`. Edit links are
in the pages' front matter, which both engines read.
Nothing is ever written into `docs/`.

Live preview (`mkdocs serve --dirty`, what `make serve` runs): the plugin keeps
its state between rebuilds (it has `on_startup`, so MkDocs keeps the instance),
re-reads only the entry files that changed and marks every page it did not
re-render unmodified, so MkDocs converts and writes just those. An edit is shown
in two rebuilds: the first renders the changed entries' pages and those they link
to (about a second at 2,000 entries); it then touches a file in a folder of its own
that `mkdocs serve` watches, and the second rebuild catches up on the tag and
category hubs, the home page and the JSON API. The site-wide symptom and signature
indexes (seconds each at 2,000 entries) are redone by a full build or a restart.
"""

from __future__ import annotations

import html
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from mkdocs.config import config_options
from mkdocs.config.base import Config
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import Abort
from mkdocs.livereload import LiveReloadServer
from mkdocs.plugins import BasePlugin, event_priority
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page as MkDocsPage

from .encyclopedia import Encyclopedia
from .finishing import FinishingError, finish_site
from .history import commit_epoch, entry_history
from .loading import TAXONOMY_FILE, FileCache, load_encyclopedia
from .problems import EntriesFolderError, Problem
from .rendering import HOME, Renderer, SiteOptions, repository_edit_uri
from .urls import entry_src, url_of

log = logging.getLogger("mkdocs.plugins.encyclopedia")


def _date_builds_by_commit(root: Path) -> None:
    """Two builds of one commit write the same bytes: MkDocs dates the sitemap (and the gzip
    header of sitemap.xml.gz) with SOURCE_DATE_EPOCH when it is set, else with the clock, so
    a build of a git checkout takes the commit's time. A value given by the caller wins."""
    if "SOURCE_DATE_EPOCH" not in os.environ:
        epoch = commit_epoch(root)
        if epoch is not None:
            os.environ["SOURCE_DATE_EPOCH"] = epoch


class EncyclopediaConfig(Config):
    entries = config_options.Type(str, default="entries")
    templates = config_options.Type(str, default="templates")
    search = config_options.Type(bool, default=True)  # index the built site with Pagefind


@dataclass
class _Preview:
    """What the previous build of a live preview produced, and what it still owes."""

    files: FileCache = field(default_factory=dict)
    encyclopedia: Encyclopedia | None = None
    markdown: dict[str, str] = field(default_factory=dict)  # page source path -> Markdown
    static: dict[str, str] = field(default_factory=dict)  # static file path -> content
    pending: set[str] = field(default_factory=set)  # hub pages to redo in the next rebuild
    wake: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="encyclopedia-preview-")))


class EncyclopediaPlugin(BasePlugin[EncyclopediaConfig]):
    preview: _Preview | None = None
    serving = False
    last_valid: Encyclopedia | None = None  # what `mkdocs serve` shows while the entries are invalid
    problems: tuple[Problem, ...] = ()  # the entries' problems now (serve only)
    flagged: frozenset[str] = frozenset()  # pages that show them

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.serving = command == "serve"
        self.preview = _Preview() if self.serving and dirty else None

    def on_shutdown(self) -> None:
        if self.preview is not None:  # the folder that wakes `mkdocs serve` for catch-up rebuilds
            shutil.rmtree(self.preview.wake, ignore_errors=True)

    def on_config(self, config: MkDocsConfig) -> MkDocsConfig:
        root = Path(config.config_file_path).resolve().parent
        _date_builds_by_commit(root)
        self.entries_dir = (root / self.config.entries).resolve()
        self.templates_dir = (root / self.config.templates).resolve()
        docs_prefix = Path(config.docs_dir).resolve().relative_to(root).as_posix()
        self.options = SiteOptions(
            repo_url=config.repo_url,
            edit_uri=repository_edit_uri(config.edit_uri, docs_prefix),
            entries_path=Path(self.config.entries).as_posix(),
        )
        address, path = config.dev_addr, urlsplit(config.site_url or "/").path or "/"
        self.preview_url = f"http://{address.host}:{address.port}{path.rstrip('/')}/"
        return config

    # Early, so that later plugins (and MkDocs' own link checks) see the generated pages as files.
    @event_priority(50)
    def on_files(self, files: Files, config: MkDocsConfig) -> Files:
        encyclopedia = self._load()
        renderer = Renderer(encyclopedia, self.options, self.templates_dir, entry_history(self.entries_dir))
        markdown, rendered = self._markdown(renderer)
        markdown |= self._placeholders(markdown)
        # Pages that show the problems now, or showed them in the last build, are made again.
        flagged = self._pages_to_flag(markdown)
        redo, self.flagged = flagged | self.flagged, flagged
        for src_uri, text in markdown.items():
            if src_uri in files.src_uris:
                if src_uri == HOME:
                    continue  # a hand-written home page wins
                raise Abort(f"docs/{src_uri} would hide a generated page; rename or remove it")
            inclusion = InclusionLevel.INCLUDED if src_uri == HOME else InclusionLevel.NOT_IN_NAV
            generated = File.generated(config, src_uri, content=text, inclusion=inclusion)
            self._mark_unchanged(generated, src_uri not in rendered and src_uri not in redo)
            files.append(generated)
        static = self._static_files(renderer, bool(rendered) and len(rendered) < len(markdown))
        for dest_uri, content in static.items():
            generated = File.generated(config, dest_uri, content=content)
            self._mark_unchanged(generated, self.preview is not None and self.preview.static.get(dest_uri) == content)
            files.append(generated)
        if self.preview is not None:
            self.preview.encyclopedia, self.preview.static = encyclopedia, static
            self.preview.markdown = markdown
        return files

    def on_page_content(self, html: str, *, page: MkDocsPage, config: MkDocsConfig, files: Files) -> str:
        # MkDocs keeps every page in memory until the build ends; a generated page's
        # Markdown is not needed once converted (a third of the peak at 10,000 entries).
        if self.preview is None and page.file.generated_by:
            page.markdown = None
            page.file.content_string = ""
        if self.problems and page.file.src_uri in self.flagged:
            return _problems_banner(self.problems) + html
        return html

    # Last, so that the search index sees every page as the other plugins left it.
    @event_priority(-100)
    def on_post_build(self, config: MkDocsConfig) -> None:
        try:
            finish_site(Path(config.site_dir), urlsplit(config.site_url or "/").path, search=self.config.search)
        except FinishingError as error:
            raise Abort(f"encyclopedia: {error}") from None
        if self.preview is not None and self.preview.pending:
            # Wake `mkdocs serve` for a second rebuild that catches up on the hubs.
            (self.preview.wake / "pending").write_text(str(len(self.preview.pending)))

    def on_serve(self, server: LiveReloadServer, config: MkDocsConfig, builder: Callable) -> LiveReloadServer:
        server.watch(str(self.entries_dir))
        server.watch(str(self.templates_dir))
        if self.preview is not None:
            server.watch(str(self.preview.wake))
        return server

    def _markdown(self, renderer: Renderer) -> tuple[dict[str, str], set[str]]:
        """Every page's Markdown, and which pages were rendered in this build.

        In a live preview after the first build, only the pages that show something of
        the entries that changed are rendered now (hubs one rebuild later); the others
        keep their previous Markdown."""
        preview = self.preview
        previous = preview.encyclopedia if preview else None
        if previous is None or previous.taxonomy != renderer.encyclopedia.taxonomy:
            pages = list(renderer.pages())
            if preview:
                preview.pending = set()
            return {page.src_uri: page.markdown for page in pages}, {page.src_uri for page in pages}
        assert preview is not None  # a previous encyclopedia exists only in a preview
        current = renderer.encyclopedia
        changed = {
            entry_id
            for entry_id in previous.entries.keys() | current.entries.keys()
            if previous.entries.get(entry_id) != current.entries.get(entry_id)
            or previous.sources.get(entry_id) != current.sources.get(entry_id)
        }
        entry_pages, hub_pages = renderer.pages_touched_by(changed, previous) if changed else (set(), set())
        now = entry_pages | (preview.pending & set(renderer.page_sources()))
        preview.pending = hub_pages - now
        markdown = {}
        for src_uri in renderer.page_sources():
            if src_uri in now or src_uri not in preview.markdown:
                markdown[src_uri] = renderer.page(src_uri).markdown
                now.add(src_uri)
            else:  # unchanged, and so is its source file (a moved file counts as a change)
                markdown[src_uri] = preview.markdown[src_uri]
        log.info(
            "encyclopedia: preview rebuilt %d of %d pages; %d hub pages follow",
            len(now),
            len(markdown),
            len(preview.pending),
        )
        for entry_id in sorted(changed & current.entries.keys())[:10]:
            log.info("encyclopedia: edited %s", self.preview_url + url_of(entry_src(entry_id)))
        return markdown, now

    def _static_files(self, renderer: Renderer, partial: bool) -> dict[str, str]:
        """The JSON API and redirects. A preview's quick rebuild keeps the previous API files
        (serialising every entry again takes half a second at 2,000 entries); the
        catching-up rebuild that follows it writes them."""
        preview = self.preview
        if partial and preview is not None and preview.static and preview.pending:
            static = dict(preview.static)
            for item in renderer.static_files(api=False):
                static[item.dest_uri] = item.content
            return static
        return {item.dest_uri: item.content for item in renderer.static_files()}

    def _mark_unchanged(self, generated: File, unchanged: bool) -> None:
        """Let a dirty (preview) build skip a page whose output is already on disk."""
        if self.preview is not None and unchanged and os.path.isfile(generated.abs_dest_path):
            generated.is_modified = lambda: False  # type: ignore[method-assign]  # MkDocs' own hook for this

    def _load(self) -> Encyclopedia:
        # Problems name files as the contributor sees them: entries/memory/x.yaml.
        shown = os.path.relpath(self.entries_dir)
        cache = self.preview.files if self.preview else None
        try:
            result = load_encyclopedia(self.entries_dir if shown.startswith("..") else shown, cache)
        except EntriesFolderError as error:
            raise Abort(f"encyclopedia: {error}") from None
        if result.encyclopedia is None:
            shown_instead = self.last_valid or result.partial
            if self.serving and shown_instead is not None:
                # A preview never stops or hangs on a mistake: it keeps the last valid
                # entries (or, when it starts on a mistake, the entries valid on their own),
                # shows the problems on the pages concerned and recovers on the next save.
                # Logged as info: a warning would abort a strict build, and the preview with it.
                for problem in result.problems:
                    log.info(problem.format())
                log.info("encyclopedia: the preview shows the last valid entries until these are fixed")
                self.problems = tuple(result.problems)
                return shown_instead
            for problem in result.problems:
                log.error(problem.format())
            raise Abort(f"encyclopedia: {len(result.problems)} problem(s) in the entries; nothing was built")
        self.problems, self.last_valid = (), result.encyclopedia
        return result.encyclopedia

    def _placeholders(self, markdown: dict[str, str]) -> dict[str, str]:
        """A page for each entry with problems that has no valid version to show yet (the preview
        started on it): the address `make serve` printed answers with the validator's lines."""
        files = {Path(problem.path) for problem in self.problems if Path(problem.path).name != TAXONOMY_FILE}
        missing = {entry_src(path.stem) for path in files} - markdown.keys()
        text = "This entry has no valid version yet: fix the problems above and save."
        return {src_uri: f"# {src_uri.split('/')[1]}\n\n{text}\n" for src_uri in sorted(missing)}

    def _pages_to_flag(self, markdown: dict[str, str]) -> frozenset[str]:
        """The home page and the pages of the entries that have problems."""
        if not self.problems:
            return frozenset()
        pages = {entry_src(Path(problem.path).stem) for problem in self.problems} | {HOME}
        return frozenset(pages & markdown.keys())


def _problems_banner(problems: tuple[Problem, ...]) -> str:
    lines = "\n".join(html.escape(problem.format()) for problem in problems)
    return (
        '<div class="admonition failure" data-pagefind-ignore>'
        f'<p class="admonition-title">{len(problems)} problem(s) in the entries: '
        "this preview shows the last valid version</p>"
        f"<pre><code>{lines}</code></pre><p>Fix them and save: the preview rebuilds.</p></div>\n"
    )
