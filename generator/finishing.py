"""The last step of a site build, the same whichever engine built the HTML.

MkDocs runs it from the plugin's `on_post_build`; the Zensical build (`make site-zensical`),
which runs no plugin, runs `python -m generator finish-site SITE` after `zensical build`. It
indexes the failure pages for search with Pagefind and makes the 404 page work under any path
(`relocatable`). Nothing here imports an engine.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .relocatable import relocatable_404

log = logging.getLogger("mkdocs.plugins.encyclopedia")

NOT_FOUND_PAGE = "404.html"
# Heading permalinks (the ¶ after each title) and the edit button are not content.
SEARCH_EXCLUDED = ".headerlink, .md-content__button"


class FinishingError(Exception):
    """A step of finishing the site failed; the message says which and why."""


def finish_site(site_dir: Path, base_path: str, *, search: bool = True) -> None:
    """Finish the built site in `site_dir`, configured to be served under `base_path`
    (site_url's path, such as "/encyclopedia/")."""
    if not (site_dir / "index.html").is_file():
        raise FinishingError(f"{site_dir} holds no built site (no index.html)")
    relocate_404(site_dir, base_path)
    if search:
        index_for_search(site_dir)


def relocate_404(site_dir: Path, base_path: str) -> None:
    """Rewrite the theme's 404.html so that it works under any deployment path. Idempotent: a page
    already rewritten is left as it is."""
    page = site_dir / NOT_FOUND_PAGE
    if not page.is_file():
        return
    html = page.read_text(encoding="utf-8")
    rewritten = relocatable_404(html, base_path)
    if rewritten != html:
        _write_atomically(page, rewritten)


def index_for_search(site_dir: Path) -> None:
    """Index the built failure pages with Pagefind (`python -m pagefind`, its binary from the
    `pagefind[bin]` wheel): a chunked index the browser loads piece by piece, so a query
    downloads a few hundred KiB however large the encyclopedia."""
    started = time.monotonic()
    command = [sys.executable, "-m", "pagefind", "--site", str(site_dir), "--silent"]
    result = subprocess.run([*command, "--exclude-selectors", SEARCH_EXCLUDED], capture_output=True, text=True)
    if result.returncode != 0:
        raise FinishingError(f"indexing the site for search failed: {(result.stderr or result.stdout).strip()}")
    log.info("encyclopedia: search index written in %.1f s", time.monotonic() - started)


def _write_atomically(path: Path, text: str) -> None:
    """Replace the file whole: a failure leaves the old one, never half of the new one."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
