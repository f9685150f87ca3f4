"""A shell that reports signals in another language is diagnosed as in English: real bash 5.2
logs in eight languages (fixtures/diagnose/locale/), in the terminal and on the diagnose page."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.diagnose import diagnose
from generator.signature_index import SignatureIndex

from .site_build import REPO

LOCALE = Path(__file__).resolve().parent / "fixtures" / "diagnose" / "locale"
LANGUAGES = ["zh_CN", "ja", "de", "fr", "es", "ru", "pt_BR"]


@pytest.fixture(scope="module")
def index() -> SignatureIndex:
    from generator.loading import load_encyclopedia

    result = load_encyclopedia(REPO / "entries")
    assert result.ok
    return SignatureIndex.from_encyclopedia(result.encyclopedia)


def ranking(index: SignatureIndex, log: Path) -> list[str]:
    return [finding.entry_id for finding in index.triage(diagnose(index.matcher(), [str(log)])).findings]


def test_the_english_log_finds_the_kill_and_the_crash(index):
    assert set(ranking(index, LOCALE / "shell-signals-en.log")) >= {
        "process-killed-sigkill",
        "native-crash-segfault-abort",
    }


@pytest.mark.parametrize("language", LANGUAGES)
def test_each_language_is_diagnosed_as_english(index, language):
    log = LOCALE / f"shell-signals-{language}.log"
    assert "Killed" not in log.read_text(encoding="utf-8"), "the log is in its own language"
    assert ranking(index, log) == ranking(index, LOCALE / "shell-signals-en.log")


@pytest.mark.browser
def test_the_page_reads_them_alike(index, project_site):
    from .browser import page_rankings

    texts = {language: (LOCALE / f"shell-signals-{language}.log").read_text() for language in ["en", *LANGUAGES]}
    found = page_rankings(project_site, texts)
    english = ranking(index, LOCALE / "shell-signals-en.log")
    assert found == dict.fromkeys(texts, english)
