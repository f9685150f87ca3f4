"""Which browser the browser tests drive (tests/browser.py): $BROWSER_PATH, else Debian's Chromium,
else Google Chrome or a Chromium on PATH, as on GitHub's hosted runners."""

from __future__ import annotations

from pathlib import Path

from .browser import find_browser


def on_path(*names: str):
    return lambda name: f"/opt/bin/{name}" if name in names else None


def test_the_variable_wins(tmp_path):
    debian = tmp_path / "chromium"
    debian.touch()
    assert find_browser({"BROWSER_PATH": "/x/chrome"}, debian, on_path("chromium")) == "/x/chrome"


def test_then_debians_chromium(tmp_path):
    debian = tmp_path / "chromium"
    debian.touch()
    assert find_browser({}, debian, on_path("google-chrome")) == str(debian)


def test_then_chrome_or_chromium_on_path(tmp_path):
    missing = tmp_path / "no-chromium"
    assert find_browser({}, missing, on_path("chromium-browser", "google-chrome")) == "/opt/bin/google-chrome"
    assert find_browser({"BROWSER_PATH": ""}, missing, on_path("chromium")) == "/opt/bin/chromium"
    assert find_browser({}, missing, on_path()) is None


def test_the_default_here_is_a_file_that_exists():
    found = find_browser()
    assert found is None or Path(found).exists()
