"""Relation pictures and overview charts, drawn in HTML from the fixture entries: boxes that link,
arrows that say which way a relation goes, severities named from the data, capped sizes."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from generator.graphs import hub_chains, relation_map
from generator.loading import load_encyclopedia

from .site_build import FIXTURE_ENTRIES

if TYPE_CHECKING:  # BeautifulSoup comes with the test extra; only the site's tests need it
    from bs4 import BeautifulSoup


@pytest.fixture(scope="module")
def site(fixture_site) -> Path:
    return fixture_site


def soup(site: Path, path: str) -> BeautifulSoup:
    from bs4 import BeautifulSoup

    return BeautifulSoup((site / path / "index.html").read_text(encoding="utf-8"), "html.parser")


def sides(figure) -> dict[str, list[tuple[str, str | None]]]:
    """Heading of each side of a relation map -> its boxes as (title, link or None)."""
    result = {}
    for head in figure.select(".fe-map__head"):
        box_list = head.find_next_sibling(["ul", "span", "a"])
        boxes = box_list.select(".fe-map__node") if box_list.name == "ul" else [box_list]
        result[head.get_text(strip=True)] = [
            (box.select_one(".fe-map__title").get_text(strip=True), box.get("href")) for box in boxes
        ]
    return result


def test_an_entry_sits_between_its_causes_and_its_effects(site):
    figure = soup(site, "failures/alpha-failure").select_one("figure.fe-map")
    assert sides(figure) == {
        "This failure": [("Alpha failure with CUDA out of memory", None)],
        "Leads to": [("Beta fragmentation", "../../failures/beta-failure/")],
    }
    arrows = figure.select(".fe-map__arrow")
    assert [arrow.get_text(strip=True) for arrow in arrows] == ["causes"]
    assert arrows[0].find_next_sibling(class_="fe-map__side").select_one(".fe-map__head").get_text() == "Leads to"


def test_inverse_relations_are_drawn_from_the_other_side(site):
    figure = soup(site, "failures/beta-failure").select_one("figure.fe-map")
    assert sides(figure) == {
        "Caused by": [("Alpha failure with CUDA out of memory", "../../failures/alpha-failure/")],
        "This failure": [("Beta fragmentation", None)],
        "Looks similar": [("<script>alert('title')</script> Überlauf — 溢出 ✓ | a|b", "../../failures/gamma-failure/")],
    }


def test_the_legend_names_only_the_severities_drawn(site):
    """beta (medium) between alpha (high) and gamma (low); alpha's picture has no low one."""
    legend = soup(site, "failures/alpha-failure").select_one("figure.fe-map figcaption")
    assert [badge.get_text() for badge in legend.select(".fe-severity")] == ["high", "medium"]
    assert "Arrows point from a cause to what it causes" in legend.get_text()
    every_box = soup(site, "failures/beta-failure").select("figure.fe-map .fe-map__node")
    assert all(box.select_one(".fe-severity") for box in every_box), "each box names its severity in words"


def test_a_category_hub_shows_which_failure_causes_which(site):
    figure = soup(site, "categories/memory").select_one("figure.fe-map--chains")
    rows = [
        [box.select_one(".fe-map__title").get_text() for box in chain.select(".fe-map__node")]
        for chain in figure.select(".fe-map__chain")
    ]
    assert rows == [["Alpha failure with CUDA out of memory", "Beta fragmentation"]]
    assert figure.select_one(".fe-visually-hidden").get_text() == "causes", "screen readers hear the relation"
    assert soup(site, "categories/performance").select_one("figure.fe-map--chains") is None, "no pairs, no picture"


def test_home_bars_link_to_the_hubs_and_say_their_counts(site):
    figure = soup(site, "").select_one("figure.fe-bars")
    bars = [(a["href"], a.find_next_sibling(class_="fe-bars__track")) for a in figure.select("a.fe-bars__label")]
    assert [href for href, _ in bars] == ["categories/memory/", "categories/performance/"]
    assert [track.select_one(".fe-bars__bar")["aria-label"] for _, track in bars] == [
        "2 failures: 1 high, 1 medium",
        "1 failures: 1 low",
    ]


def _encyclopedia_with(tmp_path: Path, extra_relations: int):
    """The fixture corpus plus `extra_relations` entries that alpha causes."""
    entries = tmp_path / "entries"
    shutil.copytree(FIXTURE_ENTRIES, entries)
    beta = (entries / "memory" / "beta-failure.yaml").read_text()
    for number in range(extra_relations):
        (entries / "memory" / f"effect-{number:02d}.yaml").write_text(
            beta.replace("id: beta-failure", f"id: effect-{number:02d}")
            .replace("title: Beta fragmentation", f"title: Effect {number:02d}")
            .replace("severity: medium", "severity: critical" if number == extra_relations - 1 else "severity: low")
            .replace("former_ids: [old-beta]\n", "")
        )
    alpha = entries / "memory" / "alpha-failure.yaml"
    note = "    note: Alpha leaves the allocator fragmented.\n"
    more = "".join(f"  - id: effect-{number:02d}\n    relation: causes\n" for number in range(extra_relations))
    alpha.write_text(alpha.read_text().replace(note, note + more))
    result = load_encyclopedia(entries)
    assert result.encyclopedia is not None, result.problems
    return result.encyclopedia


def test_crowded_pictures_are_capped_most_severe_first(tmp_path):
    encyclopedia = _encyclopedia_with(tmp_path, 9)
    picture = relation_map(encyclopedia, "alpha-failure", per_side=4)
    assert [node.entry_id for node in picture.effects][:2] == ["effect-08", "beta-failure"], "critical, then medium"
    assert len(picture.effects) == 4 and picture.omitted == 10 - 4
    chains = hub_chains(encyclopedia, list(encyclopedia.by_category["memory"]), limit=5)
    assert len(chains.chains) == 5 and chains.omitted == 5
    assert chains.chains[0].effect.entry_id == "effect-08"
    assert hub_chains(encyclopedia, [encyclopedia.entries["alpha-failure"]]) is None
