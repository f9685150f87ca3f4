"""The thin MkDocs adapter: validated entries in, pages added to the build in memory.

Everything of substance happens in the core (`loading`, `rendering`); this module
only speaks MkDocs: it loads the entries before the build (stopping it with the
validator's own lines if they are invalid), adds the rendered pages and static
files to the build's file collection, points each entry page's edit link at its
YAML file, and asks `mkdocs serve` to watch the entries and templates.
Nothing is ever written into `docs/`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from mkdocs.config import config_options
from mkdocs.config.base import Config
from mkdocs.exceptions import Abort
from mkdocs.plugins import BasePlugin
from mkdocs.structure.files import File, Files, InclusionLevel

from .loading import EntriesFolderError, load_encyclopedia
from .rendering import HOME, Renderer, SiteOptions

log = logging.getLogger("mkdocs.plugins.encyclopedia")


class EncyclopediaConfig(Config):
    entries = config_options.Type(str, default="entries")
    templates = config_options.Type(str, default="templates")


class EncyclopediaPlugin(BasePlugin[EncyclopediaConfig]):
    def on_config(self, config):
        root = Path(config.config_file_path).resolve().parent
        self.entries_dir = (root / self.config.entries).resolve()
        self.templates_dir = (root / self.config.templates).resolve()
        self.options = SiteOptions(
            repo_url=config.repo_url,
            edit_uri=config.edit_uri or "edit/main/",
            entries_path=Path(self.config.entries).as_posix(),
        )
        self.docs_prefix = Path(config.docs_dir).resolve().relative_to(root).as_posix()
        return config

    def on_files(self, files: Files, config) -> Files:
        renderer = Renderer(self._load(), self.options, self.templates_dir)
        for docs_file in list(files):
            # Edit links of hand-written pages point into docs/ (edit_uri is the repository root).
            if docs_file.edit_uri is not None:
                docs_file.edit_uri = f"{self.docs_prefix}/{docs_file.src_uri}"
        for page in renderer.pages():
            if page.src_uri in files.src_uris:
                if page.src_uri == HOME:
                    continue  # a hand-written home page wins
                raise Abort(f"docs/{page.src_uri} would hide a generated page; rename or remove it")
            inclusion = InclusionLevel.INCLUDED if page.src_uri == HOME else InclusionLevel.NOT_IN_NAV
            generated = File.generated(config, page.src_uri, content=page.markdown, inclusion=inclusion)
            generated.edit_uri = page.edit_path
            files.append(generated)
        for static in renderer.static_files():
            files.append(File.generated(config, static.dest_uri, content=static.content))
        return files

    def on_serve(self, server, config, builder):
        server.watch(str(self.entries_dir))
        server.watch(str(self.templates_dir))
        return server

    def _load(self):
        # Problems name files as the contributor sees them: entries/memory/x.yaml.
        shown = os.path.relpath(self.entries_dir)
        try:
            result = load_encyclopedia(self.entries_dir if shown.startswith("..") else shown)
        except EntriesFolderError as error:
            raise Abort(f"encyclopedia: {error}") from None
        if not result.ok:
            for problem in result.problems:
                log.error(problem.format())
            raise Abort(f"encyclopedia: {len(result.problems)} problem(s) in the entries; nothing was built")
        return result.encyclopedia
