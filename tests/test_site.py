"""A real site built from fixture entries with the project's own mkdocs.yml, checked in its HTML."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="builds sites: needs the site extra")
from bs4 import BeautifulSoup

from .site_build import FIXTURE_ENTRIES, REPO, build, make_project, site_url_prefix

ENTRY_SECTIONS = [
    "In the log",
    "What this failure is",
    "Why it happens",
    "What you'll observe",
    "Symptoms and their causes",
    "Affected systems",
    "How to confirm it",
    "Root causes",
    "How to fix it",
    "How to prevent it",
    "FAQ",
    "References",
    "Related failures",
    "More Memory failures",
]


@pytest.fixture(scope="module")
def site(fixture_site) -> Path:
    return fixture_site


def page(site: Path, path: str) -> BeautifulSoup:
    return BeautifulSoup((site / path / "index.html").read_text(encoding="utf-8"), "html.parser")


def article(site: Path, path: str):
    return page(site, path).select_one("article")


def headings(node) -> list[str]:
    return [h.get_text(" ", strip=True).rstrip("¶").strip() for h in node.select("h2")]


def test_entry_page_has_every_section_in_order(site):
    body = article(site, "failures/alpha-failure")
    assert body.select_one("h1").get_text(strip=True).startswith("Alpha failure with CUDA out of memory")
    assert headings(body) == ENTRY_SECTIONS
    assert "The alpha model runs out of GPU memory" in body.select_one(".admonition.abstract").get_text()


def test_entry_page_leads_with_the_answer_the_first_fix_and_the_real_lines(site):
    """Quick answer, then the first thing to do (the fix summary), then the log lines as printed,
    each signature's pattern folded away below its lines."""
    body = article(site, "failures/alpha-failure")
    order = list(body.find_all(True))
    chips, answer, first_fix = body.select_one(".fe-chips"), body.select_one(".abstract"), body.select_one(".tip")
    log_heading = body.select_one("h2#in-the-log")
    assert order.index(chips) < order.index(answer) < order.index(first_fix) < order.index(log_heading)
    assert body.select("h2")[0] is log_heading, "nothing else comes between"
    assert first_fix.select_one(".admonition-title").get_text(strip=True) == "What to do first"
    assert "Lower the batch size or the prefetch buckets." in first_fix.get_text()
    loglines = body.select(".fe-logline")
    assert [code.get_text().strip() for code in loglines[0].select(".fe-logline__lines code")] == [
        "AlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED"
    ], "a literal signature without examples shows the literal itself"
    logline = next(line for line in loglines if line.select_one("details.fe-pattern"))
    lines = [code.get_text() for code in logline.select(".fe-logline__lines code")]
    assert lines and "Tried to allocate" in lines[0]
    pattern = logline.select_one("details.fe-pattern")
    assert pattern.select_one("summary").get_text() == "Pattern (regular expression)"
    assert "Tried to allocate" in pattern.select_one("code").get_text()
    assert pattern.sourceline > logline.select_one(".fe-logline__lines").sourceline, "the lines come first"


def test_chips_link_to_hubs(site):
    chips = article(site, "failures/alpha-failure").select(".fe-chips a")
    targets = {a.get_text(strip=True): a["href"] for a in chips}
    assert targets["Memory"] == "../../categories/memory/"
    assert targets["#alpha-tag"] == "../../tags/alpha-tag/"
    assert article(site, "failures/alpha-failure").select_one(".fe-chips .fe-severity--high")


def test_signatures_are_copyable_code(site):
    body = article(site, "failures/alpha-failure")
    code = [block.get_text() for block in body.select("pre code")]
    assert any("AlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED" in text for text in code)
    assert any(r"Tried to allocate [0-9.]+ [KMG]iB \(alpha\)" in text for text in code)


def test_symptoms_are_paired_with_their_causes(site):
    body = article(site, "failures/alpha-failure")
    table = body.find("h2", id="symptoms-and-their-causes").find_next("table")
    rows = [(tr.select("td")[0].get_text(strip=True), tr.select("td")[1].a["href"]) for tr in table.select("tbody tr")]
    assert rows == [
        ("OOM on the very first step.", "#cause-big-batch"),
        ("Smaller batches do not help.", "#cause-prefetch-buckets"),
    ]
    for _, anchor in rows:
        assert body.find(id=anchor[1:]) is not None


def test_each_symptom_row_says_what_to_do_about_its_cause(site):
    table = article(site, "failures/alpha-failure").find("h2", id="symptoms-and-their-causes").find_next("table")
    assert [th.get_text(strip=True) for th in table.select("thead th")] == ["Symptom", "Why it happens", "What to do"]
    rows = [[td.get_text(" ", strip=True) for td in tr.select("td")] for tr in table.select("tbody tr")]
    assert rows[0] == [
        "OOM on the very first step.",
        "The batch is too large for the card.",
        "Halve the micro-batch and accumulate gradients over two steps.",
    ]
    assert rows[1][2] == "Lower stage3_prefetch_bucket_size to a tenth."


def test_each_root_cause_shows_its_fix(site):
    body = article(site, "failures/alpha-failure")
    causes = body.find("h2", id="root-causes").find_next("ol").find_all("li", recursive=False)
    texts = [item.get_text(" ", strip=True) for item in causes]
    assert texts[0].startswith("The batch is too large for the card.")
    assert "What to do: Halve the micro-batch" in texts[0]
    assert "What to do: Lower stage3_prefetch_bucket_size to a tenth." in texts[1]
    assert causes[1].find(id="cause-prefetch-buckets") is not None


def test_each_signature_links_its_source_and_context_lines_are_labelled(site):
    body = article(site, "failures/alpha-failure")
    links = body.select("a.fe-source")
    assert [a["href"] for a in links] == [
        "https://github.com/example/alpha/blob/v1.0.0/src/alloc.c#L42",
        "https://github.com/example/alpha/blob/v1.0.0/src/alloc.c#L42",
        "https://github.com/example/alpha/blob/v1.0.0/src/model.py#L88",
    ]
    assert links[0].get_text() == "github.com · example/alpha · alloc.c (v1.0.0, line 42)"
    labels = body.select(".fe-context")
    assert len(labels) == 1  # only the supporting frame
    assert labels[0].find_parent("p").find("a", class_="fe-source")["href"].endswith("model.py#L88")


def test_hub_symptom_tables_say_what_to_do(site):
    for path in ("tags/alpha-tag", "categories/memory", "symptoms"):
        cells = []
        for head in article(site, path).find_all("th", string="What to do"):
            table = head.find_parent("table")
            heads = [th.get_text(strip=True) for th in table.select("thead th")]
            assert heads == ["Symptom", "Likely cause", "What to do", "Failure"], path
            cells += [tr.select("td")[2].get_text(" ", strip=True) for tr in table.select("tbody tr")]
        assert "Halve the micro-batch and accumulate gradients over two steps." in cells, path


def test_confirm_is_a_checklist_and_fix_has_tabs(site):
    body = article(site, "failures/alpha-failure")
    boxes = body.select("ul.fe-checklist input[type=checkbox]")
    assert len(boxes) == 2
    for box in boxes:  # each checkbox has its own label (accessibility)
        assert body.find("label", attrs={"for": box["id"]}).get_text(strip=True)
    labels = [label.get_text(strip=True) for label in body.select(".tabbed-labels label")]
    assert labels == ["PyTorch", "DeepSpeed config"]


def test_declared_and_inverse_relations(site):
    alpha = article(site, "failures/alpha-failure")
    rows = alpha.find("h2", id="related-failures").find_next("table").select("tbody tr")
    assert [(r.select("td")[0].get_text(strip=True), r.select("td")[1].get_text(strip=True)) for r in rows] == [
        ("causes", "Beta fragmentation")
    ]
    beta = article(site, "failures/beta-failure")
    rows = beta.find("h2", id="related-failures").find_next("table").select("tbody tr")
    related = {r.select("td")[1].a["href"]: r.select("td")[0].get_text(strip=True) for r in rows}
    assert related == {"../alpha-failure/": "caused-by", "../gamma-failure/": "similar"}


def test_edit_link_opens_the_yaml_file(site):
    body = article(site, "failures/alpha-failure")
    expected = f"{site_url_prefix()}/edit/main/entries/memory/alpha-failure.yaml"
    assert expected in [a.get("href") for a in body.select("a")]
    assert page(site, "failures/alpha-failure").select_one(f'a.md-content__button[href="{expected}"]')


def test_former_id_redirects(site):
    html = (site / "failures" / "old-beta" / "index.html").read_text()
    assert 'http-equiv="refresh" content="0; url=../beta-failure/"' in html


def test_each_hub_lists_exactly_its_entries(site):
    def listed(path: str) -> set[str]:
        table = article(site, path).find("h2", id="compare-them-side-by-side").find_next("table")
        return {tr.select("td")[0].a["href"].split("/")[-2] for tr in table.select("tbody tr")}

    assert listed("tags/alpha-tag") == {"alpha-failure", "gamma-failure"}
    assert listed("tags/beta-tag") == {"beta-failure"}
    assert listed("categories/memory") == {"alpha-failure", "beta-failure"}
    assert listed("categories/performance") == {"gamma-failure"}
    assert not (site / "tags" / "unused-tag").exists(), "a tag without entries gets no hub"


def test_hub_comparison_columns(site):
    """Short columns: the first sentence of the quick answer and of the fix; the category under
    the title on a tag hub, not on a category hub where every row would repeat it."""
    table = article(site, "tags/alpha-tag").find("h2", id="compare-them-side-by-side").find_next("table")
    assert [th.get_text(strip=True) for th in table.select("thead th")] == [
        "Failure",
        "Severity",
        "In short",
        "First thing to do",
    ]
    first = table.select_one("tbody tr").select("td")
    assert first[0].select_one(".fe-table__in").get_text(" ", strip=True) == "in Memory"
    assert first[2].get_text(" ", strip=True).startswith("The alpha model runs out of GPU memory")
    assert first[2].get_text().count(". ") == 0, "one sentence"
    category = article(site, "categories/memory").find("h2", id="compare-them-side-by-side").find_next("table")
    assert category.select_one(".fe-table__in") is None


def test_tags_index_groups_and_counts(site):
    body = article(site, "tags")
    assert headings(body) == ["Frameworks", "Symptoms"]
    rows = {
        tr.select("td")[0].get_text(strip=True): tr.select("td")[1].get_text(strip=True)
        for tr in body.select("tbody tr")
    }
    assert rows == {"Alpha tag": "2", "Beta tag": "1"}, "a tag without entries is not listed"


def test_symptom_index_covers_every_symptom(site):
    body = article(site, "symptoms")
    texts = [tr.select("td")[0].get_text(strip=True) for tr in body.select("tbody tr")]
    assert len(texts) == 6
    assert "A pipe | inside a symptom." in texts
    links = [tr.select("td")[1].a["href"] for tr in body.select("tbody tr")]
    assert "../failures/alpha-failure/#cause-big-batch" in links


def test_signature_index_and_api(site):
    assert "ALPHA_STATUS_ALLOC_FAILED" in article(site, "signatures").get_text()
    shown = [tr.select_one("td code").get_text() for tr in article(site, "signatures").select("tbody tr")]
    assert r"Tried to allocate [0-9.]+ [KMG]iB \(alpha\)" in shown, "the pattern exactly as written"
    assert "GammaError: <script>" in shown
    signatures = json.loads((site / "api" / "signatures.json").read_text())
    assert {
        "id": "alpha-failure",
        "kind": "literal",
        "pattern": "AlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED",
    }.items() <= signatures[0].items()
    assert {
        "supporting": False,
        "source": "https://github.com/example/alpha/blob/v1.0.0/src/alloc.c#L42",
    }.items() <= signatures[0].items()
    assert [item["supporting"] for item in signatures if item["id"] == "alpha-failure"] == [False, False, True]
    sources = article(site, "signatures").select("a.fe-source")
    assert len(sources) == len(signatures) and sources[0]["href"] == signatures[0]["source"]
    entries = json.loads((site / "api" / "entries.json").read_text())
    assert [entry["id"] for entry in entries] == ["alpha-failure", "beta-failure", "gamma-failure"]
    assert entries[0]["causes"][0]["fix"] == "Halve the micro-batch and accumulate gradients over two steps."
    assert entries[0]["signatures"][2] == {
        "literal": "in alpha_forward",
        "source": "https://github.com/example/alpha/blob/v1.0.0/src/model.py#L88",
        "supporting": True,
    }
    assert entries[0]["url"] == "failures/alpha-failure/"
    assert entries[1]["former_ids"] == ["old-beta"]


def test_hostile_html_shows_as_text(site):
    soup = page(site, "failures/gamma-failure")
    body = soup.select_one("article")
    body.select_one("a.md-content__button").decompose()  # the theme's edit button and its icon
    for figure in body.select("figure.fe-map, details.fe-pattern"):  # our pictures and folded patterns: text too
        assert figure.find(["script", "iframe", "img", "style", "foreignobject", "b"]) is None
        figure.decompose()
    assert body.find(["script", "iframe", "img", "svg", "style", "b", "details"]) is None
    text = body.get_text()
    for visible in (
        "<script>alert('title')</script>",
        "<img src=x onerror=alert('summary')>",
        "<iframe src='https://evil.example/'></iframe>",
        "<b onmouseover=alert('cause')>bold</b>",
    ):
        assert visible in text
    assert "<script>alert" not in soup.title.decode() and "alert('title')" in soup.title.get_text()
    for tag in soup.find_all(True):
        for name, value in tag.attrs.items():
            assert not name.lower().startswith("on"), tag
            values = value if isinstance(value, list) else [value]
            assert not any(str(v).strip().lower().startswith("javascript:") for v in values), tag


def test_no_javascript_links_anywhere(site):
    for path in site.rglob("*.html"):
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        for element in soup.find_all(href=True):
            assert not element["href"].strip().lower().startswith("javascript:"), f"{path}: {element}"


def test_unicode_title(site):
    assert "Überlauf — 溢出 ✓" in article(site, "failures/gamma-failure").select_one("h1").get_text()


def test_nothing_is_loaded_from_other_hosts(site):
    for path in site.rglob("*.html"):
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        for tag, attribute in (
            ("script", "src"),
            ("link", "href"),
            ("img", "src"),
            ("iframe", "src"),
            ("source", "src"),
            ("video", "src"),
            ("audio", "src"),
        ):
            for element in soup.find_all(tag):
                value = element.get(attribute, "")
                if tag == "link" and element.get("rel") and set(element["rel"]) & {"canonical", "alternate"}:
                    continue
                assert not re.match(r"^(https?:)?//", value), f"{path}: {element}"
    for path in list(site.rglob("*.css")) + list(site.rglob("*.js")):
        text = path.read_text(encoding="utf-8", errors="replace")
        assert "fonts.googleapis.com" not in text and "fonts.gstatic.com" not in text, path


def test_entries_stay_out_of_the_sidebar(site):
    soup = page(site, "failures/alpha-failure")
    nav_links = [a["href"] for a in soup.select("nav.md-nav--primary a[href]")]
    assert not any("failures/" in href for href in nav_links)


def test_only_failure_pages_are_searched(site):
    entry = json.loads((site / "pagefind" / "pagefind-entry.json").read_text())
    assert sum(language["page_count"] for language in entry["languages"].values()) == 3  # the three entries
    assert page(site, "failures/alpha-failure").select_one("[data-pagefind-body]") is not None
    for path in ("", "tags/alpha-tag", "categories/memory", "symptoms", "signatures", "diagnose"):
        assert page(site, path).select_one("[data-pagefind-body]") is None, path
    assert not (site / "search" / "search_index.json").exists(), "Material's own index is off"


def test_symptom_index_is_grouped_by_what_one_observes_with_jump_links(site):
    """Groups are the symptom tags (beta has `beta-tag`, of the Symptoms group); entries without
    one come last, under Other. The jump links reach each group; the filter box is there."""
    body = article(site, "symptoms")
    assert headings(body) == ["Beta tag", "Other"]
    jumps = [(a.get_text(strip=True), a["href"]) for a in body.select("nav.fe-jump a")]
    assert jumps == [("Beta tag (1)", "#symptom-beta-tag"), ("Other (2)", "#symptom-other")]
    for _, anchor in jumps:
        assert body.select_one(anchor).name == "h2"
    beta_rows = body.select_one("#symptom-beta-tag").find_parent("section").select("tbody tr")
    assert {tr.select("td")[3].get_text(strip=True) for tr in beta_rows} == {"Beta fragmentation"}
    assert body.select_one("[data-fe-filter] input[type=search]")


def test_search_card_holds_signature_words_and_tag_aliases_not_log_noise(site):
    body = page(site, "failures/alpha-failure").select_one("[data-pagefind-body]")
    card = body.select_one(".fe-search-terms")
    assert card["data-pagefind-weight"] == "10" and card.has_attr("hidden")
    text = card.get_text()
    assert "AlphaOutOfMemoryError: ALPHA_STATUS_ALLOC_FAILED" in text  # a literal signature
    assert "Tried to allocate" in text and "(alpha)" in text  # a regex's fixed words, without its syntax
    assert "alpha_forward" not in text  # a supporting frame names nothing
    assert "[0-9.]" not in text and "2.00 GiB" not in text  # no pattern syntax, no example-line values
    assert "alpha-tag" in text and "Alpha tag" in text  # the tag, its title (and aliases)
    meta = body.select_one("[data-pagefind-meta]")["data-pagefind-meta"]
    assert meta.startswith("terms:") and "ALPHA_STATUS_ALLOC_FAILED" in meta


def test_search_weights(site):
    body = page(site, "failures/alpha-failure").select_one("[data-pagefind-body]")
    assert body.select_one("section.fe-prose")["data-pagefind-weight"] == "0.5"  # long prose counts little
    examples = body.select(".fe-logline__lines[data-pagefind-ignore] code")
    assert examples, "example log lines (paths, user names) stay out of the index"
    assert not body.select_one("details.fe-pattern").find_parent(attrs={"data-pagefind-ignore": True})
    # No Pagefind filters: no search UI uses them, and Pagefind writes them in hash order, which
    # would make two builds of one commit differ (test_reproducible.py).
    assert not body.select("[data-pagefind-filter]")
    related = body.find("h2", id="related-failures").find_parent("div")
    assert related.has_attr("data-pagefind-ignore"), "other entries' titles are not this entry's words"


def test_invalid_entries_stop_the_build_with_located_lines(tmp_path):
    project = tmp_path / "project"
    make_project(project, FIXTURE_ENTRIES)
    broken = project / "entries" / "memory" / "beta-failure.yaml"
    broken.write_text(broken.read_text().replace("severity: medium", "severity: huge"))
    result = build(project)
    assert result.returncode != 0
    assert "entries/memory/beta-failure.yaml:5:11: error[FE203]: severity: " in result.stderr
    assert "Traceback" not in result.stderr
    assert not (project / "site" / "failures").exists()
    assert not any(path.name.endswith(".md") and "failures" in str(path) for path in (project / "docs").rglob("*"))


def test_the_browsers_scripts_share_the_python_sides_limits_and_words(site):
    """shared.js is generated from generator/ (no copy by hand): the matcher and search read it."""
    from generator.limits import MATCHES_KEPT, MAX_LINE_LENGTH
    from generator.search import NOISE, STOPWORDS
    from generator.triage import RANK_PATTERNS

    text = (site / "assets" / "javascripts" / "shared.js").read_text()
    shared = json.loads(text.split("self.FeShared = ", 1)[1].rstrip().rstrip(";"))
    assert (shared["maxLineLength"], shared["matchesKept"]) == (MAX_LINE_LENGTH, MATCHES_KEPT)
    assert shared["rankPatterns"] == [pattern.pattern for pattern in RANK_PATTERNS]
    assert set(shared["stopwords"]) == STOPWORDS and shared["noise"] == NOISE.pattern
    for name in ("diagnose-matcher.js", "search.js"):
        source = (REPO / "docs" / "assets" / "javascripts" / name).read_text()
        assert "4096" not in source and "FeShared" in source, name


def test_entry_format_page_lists_every_problem_code(site):
    from generator.problem_codes import PROBLEM_CODES

    body = article(site, "contributing/entry-format")
    rows = body.find("h2", id="problem-codes").find_next("table").select("tbody tr")
    assert [row.select_one("code")["id"] for row in rows] == [code.lower() for code in PROBLEM_CODES]
    assert "What to do" in body.find("h2", id="problem-codes").find_next("table").get_text()


def test_pages_for_readers_name_the_command_readers_have(site):
    """Readers run `mlfail`; `python -m generator` is for contributors in a checkout (the
    contributor pages may use it)."""
    reader_commands = re.compile(r"python -m generator (diagnose|run|watch|search|explain)\b")
    found = []
    for index in sorted(site.rglob("*.html")):
        if index.relative_to(site).parts[0] == "contributing":
            continue
        text = BeautifulSoup(index.read_text(encoding="utf-8"), "html.parser").get_text(" ")
        if reader_commands.search(text):
            found.append(index.relative_to(site).as_posix())
    assert found == []
    assert "mlfail diagnose train.log" in page(site, "").get_text(" ")
