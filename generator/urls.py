"""The site's addresses: where each page lives, relative to the site root.

Stable URLs (with directory URLs): ``failures/<id>/``, ``tags/``, ``tags/<tag>/``,
``categories/``, ``categories/<category>/``, ``symptoms/``, ``signatures/``, ``diagnose/``,
``api/*.json``. Kept apart from the renderer so that whatever only links to pages (the
log matcher's index, `mlfail explain`) need not load the templates.
"""

from __future__ import annotations

HOME = "index.md"
TAGS_INDEX = "tags/index.md"
CATEGORIES_INDEX = "categories/index.md"
SYMPTOMS_INDEX = "symptoms.md"
SIGNATURES_INDEX = "signatures.md"
DIAGNOSE = "diagnose.md"
ENTRY_FORMAT = "contributing/entry-format.md"
ENTRIES_API = "api/entries.json"
SIGNATURES_API = "api/signatures.json"
DIAGNOSE_API = "api/diagnose.json"
SEARCH_API = "api/search-index.json"  # the word search, for the diagnose page's closest entries
SHARED_SCRIPT = "assets/javascripts/shared.js"  # generated: what the browser's scripts share with Python


# Each page is an index.md in its own folder: the URL is the folder whatever the key
# (an entry or tag called "index" cannot collide with the folder's own index page).
def entry_src(entry_id: str) -> str:
    return f"failures/{entry_id}/index.md"


def tag_src(tag: str) -> str:
    return f"tags/{tag}/index.md"


def category_src(category: str) -> str:
    return f"categories/{category}/index.md"


def url_of(src_uri: str) -> str:
    """The directory URL (relative to the site root) of a page source path."""
    if src_uri == HOME:
        return ""
    stem = src_uri.removesuffix(".md")
    return stem.removesuffix("index") if stem.endswith("/index") else stem + "/"
