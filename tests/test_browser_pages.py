"""The built site's pages as an engineer reads them under pressure, in Chromium, on a 1280x800
desktop and a 390x844 phone, in the light and the dark palette: the answer and the first fix above
the fold, pictures whose boxes do not overlap or cut their text, tables that become cards on a
phone, a filter, anchors that land below the header, axe-core on every page and a 404 page that
works under any deployment path; on the MkDocs build and on the Zensical build (`built_site`).
Screenshots go to test-artifacts/."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from .browser import ARTIFACTS, WatchedPage, browser, serve, serve_as_host

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# A phone as Chromium emulates one: touch, and scrollbars that overlay the page as a phone's do (a
# desktop scrollbar would take 15 pixels of a 390-pixel screen that no phone gives up).
PHONE_OPTIONS = {"viewport": PHONE, "is_mobile": True, "has_touch": True}
ENTRY = "failures/nccl-watchdog-timeout/"  # many relations on both sides, several signatures


def site_pages(site: Path) -> list[str]:
    """Every page of the built site, as a path below its root (redirect stubs of former ids left out)."""
    pages = []
    for index in sorted(site.rglob("index.html")):
        if 'http-equiv="refresh"' in index.read_text(encoding="utf-8")[:2000]:
            continue
        relative = index.parent.relative_to(site).as_posix()
        pages.append("" if relative == "." else relative + "/")
    return pages


@pytest.fixture(scope="module")
def chromium():
    with browser() as instance:
        yield instance


@pytest.fixture(scope="module")
def base_url(built_site):
    with serve(built_site) as url:
        yield url


def open_page(chromium, base_url: str, path: str, viewport=DESKTOP, scheme: str = "light") -> WatchedPage:
    options = PHONE_OPTIONS if viewport == PHONE else {"viewport": viewport}
    page = WatchedPage(chromium.new_page(**options, color_scheme=scheme), base_url)
    page.page.goto(base_url + path)
    return page


def shoot(page: WatchedPage, name: str, selector: str | None = None) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    if selector:  # the sticky header would lie across a picture taller than the window
        page.page.add_style_tag(content=".md-header, .md-tabs { position: static !important; }")
        page.page.locator(selector).first.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    else:
        page.screenshot(name)


# -- accessibility and width, every kind of page -------------------------------------------------

# Every page that is not an entry (hubs, indexes, hand-written pages, the 404 page) is checked, and
# of the entries: one for each optional part an entry page may show or leave out (so every branch
# of the template is drawn), plus ENTRY_SAMPLE chosen at random with a seed that the run prints.
# `make test-all-pages` (ALL_PAGES=1) checks every entry, for releases.
ENTRY_SAMPLE = 24
CHUNKS = 12  # test items, small enough for parallel workers to share them evenly
FIRST_FIX_BOTTOM = "document.querySelector('article .admonition.tip').getBoundingClientRect().bottom"
# The rows of a table repeat one template: axe's cost grows with their number (half a minute for
# a hub of a thousand rows), what it finds does not. axe runs after the rest are removed.
TRIM_ROWS = "document.querySelectorAll('article tbody tr:nth-child(n+11)').forEach(row => row.remove())"
# The page has laid out: fonts loaded, two frames painted (Material's scripts have run), and every
# CSS transition that started finished (after a resize, the header tabs fade in: a contrast
# check in the middle of the fade fails).
SETTLED = """() => document.fonts.ready
    .then(() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done))))
    .then(() => Promise.all(document.getAnimations().map(animation => animation.finished.catch(() => null))))"""


def entry_features(entry: dict) -> set[str]:
    """The parts of the entry template that this entry's page draws."""
    fix = entry["fix"]
    signatures = entry.get("signatures", [])
    features = {key for key in ("description", "observations", "faq", "prevention", "related") if key in entry}
    features |= {f"fix.{key}" for key in ("steps", "code", "tradeoff") if key in fix}
    features |= {f"signature.{kind}" for signature in signatures for kind in ("literal", "regex") if kind in signature}
    if any(signature.get("supporting") for signature in signatures):
        features.add("signature.supporting")
    if any("examples" in signature for signature in signatures):
        features.add("signature.examples")
    if not signatures:
        features.add("no-signatures")
    if len(fix.get("code", [])) > 1:
        features.add("fix.code.tabs")
    if len(entry["causes"]) == 1:
        features.add("one-cause")
    return features


def entry_pages_to_check(entries: list[dict], seed: int, sample: int = ENTRY_SAMPLE) -> list[str]:
    """Entry URLs: for each part of the template, the first entry (by id) that draws it and the
    first that leaves it out; then `sample` more, drawn with `seed`."""
    entries = sorted(entries, key=lambda entry: entry["id"])
    features = {entry["id"]: entry_features(entry) for entry in entries}
    every = set().union(*features.values())
    chosen: dict[str, None] = {}
    for feature in sorted(every):
        for wanted in (True, False):
            covering = next((entry for entry in entries if (feature in features[entry["id"]]) == wanted), None)
            if covering is not None:
                chosen.setdefault(covering["url"])
    rest = [entry["url"] for entry in entries if entry["url"] not in chosen]
    chosen.update(dict.fromkeys(random.Random(seed).sample(rest, min(sample, len(rest)))))
    return list(chosen)


def pages_to_check(site: Path, seed: int) -> list[str]:
    entries = json.loads((site / "api" / "entries.json").read_text(encoding="utf-8"))
    entry_urls = {entry["url"] for entry in entries}
    others = [path for path in site_pages(site) if path not in entry_urls]
    sampled = (
        [entry["url"] for entry in entries] if os.environ.get("ALL_PAGES") else entry_pages_to_check(entries, seed)
    )
    return [*others, "404.html", *sorted(sampled)]


@pytest.fixture(scope="module")
def axe_context(chromium):
    """A desktop context that loads axe-core (from the pinned axe-playwright-python wheel) into every page."""
    import axe_playwright_python

    context = chromium.new_context(viewport=DESKTOP)
    context.add_init_script((Path(os.path.dirname(axe_playwright_python.__file__)) / "axe.min.js").read_text())
    yield context
    context.close()


@pytest.fixture(scope="module")
def phone_context(chromium):
    context = chromium.new_context(**PHONE_OPTIONS)
    yield context
    context.close()


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_every_kind_of_page_passes_axe_and_fits_a_phone(
    built_site, base_url, axe_context, phone_context, request, chunk
):
    """axe-core (no serious or critical violation) at desktop width in the light palette; then the
    same page at phone width must not scroll sideways. On every entry page checked, the quick
    answer and the first thing to do end above the fold, on the desktop and on the phone."""
    seed = request.config.getoption("randomly_seed", default=None)
    seed = seed if isinstance(seed, int) else 0
    pages = pages_to_check(built_site, seed)
    assert len(pages) > 100
    mine = pages[chunk::CHUNKS]
    violations: dict[str, list] = {}
    too_wide: dict[str, int] = {}
    below_the_fold: dict[str, tuple[str, int]] = {}
    desktop, phone = axe_context.new_page(), phone_context.new_page()  # no resize, so no transitions
    for path in mine:
        phone.goto(base_url + path)
        phone.evaluate(SETTLED)
        width = phone.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            too_wide[path] = width
        if path.startswith("failures/") and phone.evaluate(FIRST_FIX_BOTTOM) > PHONE["height"]:
            below_the_fold[path] = ("phone", round(phone.evaluate(FIRST_FIX_BOTTOM)))
        desktop.goto(base_url + path)
        desktop.evaluate(SETTLED)
        if path.startswith("failures/") and desktop.evaluate(FIRST_FIX_BOTTOM) > DESKTOP["height"]:
            below_the_fold[path] = ("desktop", round(desktop.evaluate(FIRST_FIX_BOTTOM)))
        desktop.evaluate(TRIM_ROWS)
        desktop.evaluate(SETTLED)
        result = desktop.evaluate("axe.run(document, {resultTypes: ['violations']})")
        found = [
            (violation["id"], [node["target"] for node in violation["nodes"]][:2])
            for violation in result["violations"]
            if violation["impact"] in ("serious", "critical")
        ]
        if found:
            violations[path] = found
    desktop.close()
    phone.close()
    assert violations == {}, f"seed {seed}"
    assert too_wide == {}, f"seed {seed}"
    assert below_the_fold == {}, f"seed {seed}"


def test_the_pages_checked_cover_every_part_of_the_entry_template(built_site):
    entries = json.loads((built_site / "api" / "entries.json").read_text(encoding="utf-8"))
    checked = set(entry_pages_to_check(entries, seed=1, sample=0))
    drawn = [entry_features(entry) for entry in entries if entry["url"] in checked]
    every = set().union(*(entry_features(entry) for entry in entries))
    for feature in every:
        assert any(feature in features for features in drawn), feature
        assert any(feature not in features for features in drawn) or all(
            feature in entry_features(entry) for entry in entries
        ), feature
    assert len(checked) < len(entries) / 2, "a sample, not every page"
    assert entry_pages_to_check(entries, seed=1) == entry_pages_to_check(entries, seed=1)
    assert entry_pages_to_check(entries, seed=1) != entry_pages_to_check(entries, seed=2)


@pytest.mark.parametrize("path", ["", ENTRY, "categories/distributed/", "symptoms/", "signatures/", "diagnose/"])
def test_the_dark_palette_passes_axe(chromium, base_url, path):
    from axe_playwright_python.sync_playwright import Axe

    page = open_page(chromium, base_url, path, scheme="dark")
    page.page.evaluate(TRIM_ROWS)
    page.page.evaluate(SETTLED)
    result = Axe().run(page.page).response
    assert [v["id"] for v in result["violations"] if v["impact"] in ("serious", "critical")] == []
    page.page.close()


# -- the entry page ------------------------------------------------------------------------------


def test_log_lines_come_first_wrapped_and_copyable(chromium, base_url):
    page = open_page(chromium, base_url, ENTRY, viewport=PHONE)
    first = page.page.locator("article .fe-logline").first
    line = first.locator(".fe-logline__lines pre code").first
    assert "Watchdog caught collective operation timeout" in line.inner_text()
    box = line.bounding_box()
    assert box["width"] <= PHONE["width"], "a long line wraps instead of running off the screen"
    assert line.evaluate("code => code.scrollWidth <= code.clientWidth + 1"), "nothing hidden to the right"
    assert first.locator("button[data-md-type=copy]").count() >= 1, "each line has a copy button"
    pattern = first.locator("details.fe-pattern")
    assert not pattern.evaluate("details => details.open"), "the pattern is folded away"
    assert pattern.evaluate(
        "(details) => details.compareDocumentPosition(details.parentElement.querySelector('.fe-logline__lines'))"
        " & Node.DOCUMENT_POSITION_PRECEDING"
    )
    shoot(page, "entry-phone-top")
    assert page.errors == [] and page.foreign_requests == []
    page.page.close()


def test_a_link_to_a_cause_lands_below_the_header_and_shows_it(chromium, base_url):
    page = open_page(chromium, base_url, ENTRY)
    cause = page.page.locator("article [id^='cause-']").nth(2)
    anchor = cause.get_attribute("id")
    page.page.goto(base_url + ENTRY + "#" + anchor)
    page.page.wait_for_timeout(200)
    header = page.page.locator("header.md-header").bounding_box()
    target = page.page.locator(f"#{anchor}").bounding_box()
    assert header["y"] + header["height"] <= target["y"] < DESKTOP["height"] / 2
    style = page.page.locator(f"#{anchor}").evaluate(
        "e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).outlineStyle]"
    )
    assert style[0] not in ("rgba(0, 0, 0, 0)", "transparent") and style[1] == "solid"
    shoot(page, "entry-anchor-target")
    page.page.close()


# -- pictures ------------------------------------------------------------------------------------


def _overlaps(boxes: list[dict]) -> list[tuple[int, int]]:
    pairs = []
    for i, a in enumerate(boxes):
        for j, b in enumerate(boxes[i + 1 :], i + 1):
            if (
                a["x"] < b["x"] + b["width"] - 1
                and b["x"] < a["x"] + a["width"] - 1
                and a["y"] < b["y"] + b["height"] - 1
                and b["y"] < a["y"] + a["height"] - 1
            ):
                pairs.append((i, j))
    return pairs


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("path", [ENTRY, "categories/distributed/"], ids=["entry", "hub"])
def test_relation_pictures_are_readable(chromium, base_url, built_site, path, viewport, scheme):
    """Every box shows its failure's whole title at a readable size, no two boxes overlap, the
    arrows are drawn, and the legend names only the severities drawn."""
    import json

    titles = {entry["url"]: entry["title"] for entry in json.loads((built_site / "api/entries.json").read_text())}
    page = open_page(chromium, base_url, path, viewport=viewport, scheme=scheme)
    figure = page.page.locator("article figure.fe-map").first
    nodes = figure.locator(".fe-map__node")
    assert nodes.count() >= 4
    boxes = [nodes.nth(i).bounding_box() for i in range(nodes.count())]
    assert _overlaps(boxes) == []
    assert all(box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"] for box in boxes)
    for i in range(nodes.count()):
        node = nodes.nth(i)
        title = node.locator(".fe-map__title")
        href = node.get_attribute("href")
        if href:
            url = href.split("failures/", 1)[1]
            assert title.inner_text() == titles["failures/" + url], "the whole title, not cut"
        assert title.evaluate("t => t.scrollWidth <= t.clientWidth + 1 && t.scrollHeight <= t.clientHeight + 1")
        assert float(title.evaluate("t => parseFloat(getComputedStyle(t).fontSize)")) >= 12
    assert figure.locator(".fe-map__arrow").count() >= 1
    arrow_head = figure.locator(".fe-map__arrow").first.evaluate(
        "a => getComputedStyle(a, '::after').borderLeftWidth + ' ' + getComputedStyle(a, '::after').borderTopWidth"
    )
    assert arrow_head != "0px 0px", "the arrow has a head"
    drawn = {
        node.split("--")[-1] for node in figure.locator(".fe-map__node").evaluate_all("ns => ns.map(n => n.className)")
    }
    legend = figure.locator("figcaption .fe-severity").all_inner_texts()
    assert {word.lower() for word in legend} == {cls for cls in drawn if cls in ("low", "medium", "high", "critical")}
    name = "graph-" + ("entry" if path == ENTRY else "hub") + f"-{viewport['width']}-{scheme}"
    shoot(page, name, "article figure.fe-map")
    page.page.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_home_charts_have_body_size_text(chromium, base_url, viewport):
    page = open_page(chromium, base_url, "", viewport=viewport)
    labels = page.page.locator("article figure.fe-bars a.fe-bars__label")
    assert labels.count() >= 10
    sizes = labels.evaluate_all("ls => ls.map(l => parseFloat(getComputedStyle(l).fontSize))")
    body = page.page.locator("article p").first.evaluate("p => parseFloat(getComputedStyle(p).fontSize)")
    assert min(sizes) >= 12 and min(sizes) >= body * 0.7
    assert page.page.locator("article figure.fe-bars .fe-bars__bar[role=img][aria-label]").count() == labels.count()
    shoot(page, f"home-charts-{viewport['width']}", "article figure.fe-bars")
    page.page.close()


# -- hubs and indexes ----------------------------------------------------------------------------


def test_hub_tables_are_cards_on_a_phone(chromium, base_url):
    page = open_page(chromium, base_url, "categories/memory/", viewport=PHONE)
    table = page.page.locator("article .fe-table--compare table").first
    assert table.evaluate("t => getComputedStyle(t.querySelector('tr')).display") == "block"
    label = (
        table.locator("tbody tr").first.locator("td").nth(2).evaluate("td => getComputedStyle(td, '::before').content")
    )
    assert label == '"In short"'
    assert table.evaluate("t => t.getBoundingClientRect().right") <= PHONE["width"]
    shoot(page, "hub-phone-cards")
    desktop = open_page(chromium, base_url, "categories/memory/")
    widths = desktop.page.locator("article .fe-table--compare thead th").evaluate_all(
        "ths => ths.map(th => th.getBoundingClientRect().width)"
    )
    assert min(widths[2:]) >= 200, "the answer and the fix get room to wrap"
    page.page.close()
    desktop.page.close()


def test_filter_keeps_only_the_matching_rows(chromium, base_url):
    page = open_page(chromium, base_url, "symptoms/")
    rows = page.page.locator("article .fe-table tbody tr")
    total = rows.count()
    page.page.fill("[data-fe-filter] input", "watchdog")
    visible = page.page.locator("article .fe-table tbody tr:not([hidden])")
    assert 0 < visible.count() < total
    assert all("watchdog" in text.lower() for text in visible.all_inner_texts())
    assert page.page.inner_text("[data-fe-filter] .fe-filter__count") == f"{visible.count()} of {total} rows"
    assert page.page.locator("article section.fe-filter-group[hidden]").count() >= 1, "empty groups fold away"
    shoot(page, "symptoms-filtered")
    page.page.fill("[data-fe-filter] input", "")
    assert page.page.locator("article .fe-table tbody tr:not([hidden])").count() == total
    page.page.click("nav.fe-jump a >> nth=1")
    page.page.wait_for_timeout(200)
    target = page.page.locator("article section.fe-filter-group h2").nth(1).bounding_box()
    assert 0 < target["y"] < DESKTOP["height"] / 2, "a jump link lands on its group"
    assert page.errors == []
    page.page.close()


# -- the 404 page ----------------------------------------------------------------------------------


@pytest.mark.parametrize("mount", ["/", "/encyclopedia/", "/a/fork/deployed/here/"])
def test_the_404_page_works_under_any_deployment_path(chromium, built_site, mount):
    with serve_as_host(built_site, mount) as root:
        page = chromium.new_page(viewport=DESKTOP)
        response = page.goto(root + mount.lstrip("/") + "no/such/page/at/depth/")
        assert response.status == 404
        header = page.evaluate("getComputedStyle(document.querySelector('.md-header')).backgroundColor")
        assert header not in ("rgba(0, 0, 0, 0)", "transparent"), "the stylesheet loaded"
        categories = page.locator(".md-tabs a", has_text="Browse").first.evaluate("a => a.href")
        assert categories.startswith(root + mount.lstrip("/")) and "no/such" not in categories
        page.locator(".md-tabs a", has_text="Browse").first.click()
        page.wait_for_load_state()
        assert page.locator("article h1").inner_text().rstrip("¶").strip() == "Categories"
        page.close()
