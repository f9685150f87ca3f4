"""One site, two engines: the shipped entries built by MkDocs + Material (the plugin) and by
Zensical (`make site-zensical`'s steps: generate --with-docs, zensical build, finish-site) give the
same pages: each page's article HTML, title and edit link are equal, and both are finished (a
Pagefind index, a relocatable 404 page)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urljoin

import pytest

pytest.importorskip("bs4", reason="compares built sites: needs the site extra")
from bs4 import BeautifulSoup, NavigableString, Tag


def _pages(site: Path) -> list[str]:
    return sorted(
        path.relative_to(site).as_posix()
        for path in site.rglob("*.html")
        if path.relative_to(site).parts[0] not in {"pagefind", "assets"}
    )


def _read(site: Path, page: str) -> tuple[str, list[str], Tag | None]:
    soup = BeautifulSoup((site / page).read_text(encoding="utf-8"), "html.parser")
    title = soup.title.get_text() if soup.title else ""
    edits = [link.get("href", "") for link in soup.select('a.md-content__button[rel="edit"]')]
    article = soup.select_one("article")
    if article is not None:
        # Zensical's 404 template adds a skip-link target inside the article; MkDocs' has none.
        for button in article.select(".md-content__button, a#__skip"):
            button.decompose()
        # The engines write the same link in different forms ("../" or "../../categories/"):
        # compared by the address each one resolves to.
        page_url = "https://site.test/" + page
        for element in article.select("[href], [src]"):
            for attribute in ("href", "src"):
                if element.has_attr(attribute):
                    element[attribute] = _resolved(page_url, str(element[attribute]))
        for child in list(article.children):  # the blank lines the removed elements leave
            if isinstance(child, NavigableString) and not child.strip():
                child.extract()
    return title, edits, article


def _resolved(page_url: str, link: str) -> str:
    address = urljoin(page_url, link)
    return address[: -len("index.html")] if address.endswith("/index.html") else address


def _first_difference(a: Tag, b: Tag) -> str:
    """The first child element (depth first) whose HTML differs, for a readable failure."""
    for child_a, child_b in zip(a.find_all(recursive=False), b.find_all(recursive=False)):
        if str(child_a) != str(child_b):
            deeper = _first_difference(child_a, child_b)
            return deeper or f"MkDocs: {str(child_a)[:300]}\nZensical: {str(child_b)[:300]}"
    return ""


def test_both_engines_build_the_same_pages(project_site: Path, zensical_site: Path) -> None:
    pages = _pages(project_site)
    assert len(pages) > 269
    assert _pages(zensical_site) == pages
    for page in pages:
        title_a, edits_a, article_a = _read(project_site, page)
        title_b, edits_b, article_b = _read(zensical_site, page)
        assert title_b == title_a, page
        assert edits_b == edits_a, page
        if article_a is None or article_b is None:
            assert article_a is article_b is None, page
            continue
        assert str(article_b) == str(article_a), f"{page}: {_first_difference(article_a, article_b)}"


def test_entries_link_their_yaml_and_hubs_have_no_edit_link(zensical_site: Path) -> None:
    _, edits, _ = _read(zensical_site, "failures/nccl-watchdog-timeout/index.html")
    assert edits == [
        f"{'https://github.com/ml-failure-encyclopedia/encyclopedia'}/edit/main/entries/distributed/nccl-watchdog-timeout.yaml"
    ]
    assert _read(zensical_site, "tags/nccl/index.html")[1] == []
    assert _read(zensical_site, "diagnose/index.html")[1][0].endswith("/edit/main/docs/diagnose.md")


def test_the_zensical_site_is_finished(zensical_site: Path) -> None:
    assert (zensical_site / "pagefind" / "pagefind.js").is_file()
    assert "data-fe-relocatable" in (zensical_site / "404.html").read_text(encoding="utf-8")
    assert (zensical_site / "search.json").stat().st_size < 1000  # the theme's own index is off
