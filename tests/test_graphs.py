"""Relation graphs and overview charts: drawn from the fixture entries, linked, with text alternatives."""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from generator.graphs import entry_graph, hub_graph
from generator.loading import load_encyclopedia

from .site_build import FIXTURE_ENTRIES


@pytest.fixture(scope="module")
def site(fixture_site) -> Path:
    return fixture_site


def soup(site: Path, path: str) -> BeautifulSoup:
    return BeautifulSoup((site / path / "index.html").read_text(encoding="utf-8"), "html.parser")


def nodes(figure) -> dict[str, str]:
    """Node tooltip (full title) -> link."""
    # xlink:href: Material's instant navigation rewrites every `href`, which SVG links cannot take.
    return {a.find("title").get_text(): a["xlink:href"] for a in figure.select("svg a")}


def edges(figure) -> list[str]:
    return [text.get_text() for text in figure.select("svg text.fe-graph__edge-label")]


def test_entry_graph_has_the_entry_its_relations_and_links(site):
    figure = soup(site, "failures/alpha-failure").select_one("figure.fe-graph")
    assert nodes(figure) == {
        "Alpha failure with CUDA out of memory": "../../failures/alpha-failure/",
        "Beta fragmentation": "../../failures/beta-failure/",
    }
    assert edges(figure) == ["causes"]
    assert figure.select_one("svg")["role"] == "img" and figure.select_one("svg title").get_text()


def test_inverse_relations_are_drawn_from_the_other_side(site):
    figure = soup(site, "failures/beta-failure").select_one("figure.fe-graph")
    assert set(nodes(figure).values()) == {
        "../../failures/beta-failure/",
        "../../failures/alpha-failure/",
        "../../failures/gamma-failure/",
    }
    assert sorted(edges(figure)) == ["caused-by", "similar"]


def test_every_picture_has_the_same_facts_as_a_list(site):
    page = soup(site, "failures/beta-failure")
    items = [li.get_text(" ", strip=True) for li in page.select("details.fe-graph__text li")]
    assert "Beta fragmentation caused-by Alpha failure with CUDA out of memory" in items


def test_category_hub_graph(site):
    figure = soup(site, "categories/memory").select_one("figure.fe-graph")
    assert set(nodes(figure)) == {"Alpha failure with CUDA out of memory", "Beta fragmentation"}
    assert edges(figure) == ["causes"]


def test_home_charts_link_to_hubs_with_tables(site):
    page = soup(site, "")
    chart = page.select_one("figure.fe-chart")
    links = [a["xlink:href"] for a in chart.select("svg a")]
    assert links == ["categories/memory/", "categories/performance/"]
    table = page.select_one("details.fe-graph__text table")
    rows = [[cell.get_text(strip=True) for cell in row.select("td")] for row in table.select("tbody tr")]
    assert rows == [["Memory", "0", "1", "1", "0"], ["Performance", "0", "0", "0", "1"]]


def test_causal_chains_reach_two_steps_and_hubs_cap_their_rings(tmp_path):
    import shutil

    entries = tmp_path / "entries"
    shutil.copytree(FIXTURE_ENTRIES, entries)
    beta = entries / "memory" / "beta-failure.yaml"
    beta.write_text(beta.read_text() + "related:\n  - id: gamma-failure\n    relation: causes\n")
    gamma = entries / "performance" / "gamma-failure.yaml"
    gamma.write_text(gamma.read_text().replace("relation: similar", "relation: see-also"))
    encyclopedia = load_encyclopedia(entries).encyclopedia
    graph = entry_graph(encyclopedia, "alpha-failure")
    assert {node.key for node in graph.nodes} == {"alpha-failure", "beta-failure", "gamma-failure"}
    assert ("beta-failure", "gamma-failure", "causes") in {(e.source.key, e.target.key, e.label) for e in graph.edges}
    assert hub_graph(encyclopedia, [encyclopedia.entries["alpha-failure"]]) is None


def test_a_crowded_hub_draws_only_its_most_severe_failures(corpus):
    """More failures than MAX_HUB_NODES: the ring holds that many, the most severe first,
    and the graph says how many were left out."""
    from generator.graphs import MAX_HUB_NODES

    count = MAX_HUB_NODES + 7
    for number in range(count):
        severity = "critical" if number < 5 else "low"
        neighbour = f"crowded-{(number + 1) % count:02d}"
        corpus.entry(
            f"crowded-{number:02d}", severity=severity, related=f"\n  - id: {neighbour}\n    relation: similar"
        )
    encyclopedia = load_encyclopedia(corpus.root).encyclopedia
    entries = list(encyclopedia.entries.values())
    graph = hub_graph(encyclopedia, entries)
    drawn = [node.key for node in graph.nodes if node.kind == "entry"]
    assert len(drawn) == MAX_HUB_NODES and graph.omitted == count - MAX_HUB_NODES
    assert {f"crowded-{number:02d}" for number in range(5)} <= set(drawn), "the critical ones are drawn"
