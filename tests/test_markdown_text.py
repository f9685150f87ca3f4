"""The filters that put entry text into pages: what Python-Markdown makes of their output."""

from __future__ import annotations

import pytest

pytest.importorskip("markdown", reason="Python-Markdown comes with the site extra")
import markdown
from bs4 import BeautifulSoup

from generator.markdown_text import code_cell, gist


def _table_cells(rows: list[str]) -> list[str]:
    text = "| Signature | Kind |\n| --- | --- |\n" + "".join(f"| {row} | regex |\n" for row in rows)
    html = markdown.markdown(text, extensions=["tables", "attr_list", "md_in_html"])
    return [td.get_text() for td in BeautifulSoup(html, "html.parser").select("tbody td:first-child")]


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?:NCCL|Process group) watchdog thread terminated",
        r"a\|b and `ticks` and *stars* and _under_ and [link](x)",
        r"\d+ <script>alert(1)</script> &amp; \\",
    ],
)
def test_a_pattern_in_a_table_cell_reads_exactly_as_written(pattern):
    """A `|` escaped for the table used to show as `\\|`, so a copied pattern did not match."""
    assert _table_cells([code_cell(pattern)]) == [pattern]


def test_gist_is_the_first_sentence_cut_at_a_word_and_never_inside_code():
    assert gist("One thing failed. Then another.") == "One thing failed."
    assert gist("Use `torch.cuda.empty_cache()`. Then retry.") == "Use `torch.cuda.empty_cache()`."
    assert gist("Version 2.6. Not a sentence end: e.g. lower case") == "Version 2.6."
    long = "word " * 60 + "`code span that is long` end."
    cut = gist(long, limit=60)
    assert cut.endswith(" …") and len(cut) <= 62 and cut.count("`") % 2 == 0
    assert gist("Short `a. B` sentence. Next") == "Short `a. B` sentence."
