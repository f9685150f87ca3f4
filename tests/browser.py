"""A real browser (Debian's Chromium, driven by Playwright) against a site served on localhost."""

from __future__ import annotations

import functools
import gzip
import http.server
import io
import os
import shutil
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

DEBIAN_CHROMIUM = Path("/usr/bin/chromium")
# Google Chrome (GitHub's hosted runners carry it) or another Chromium, looked up on PATH.
OTHER_BROWSERS = ("google-chrome", "google-chrome-stable", "chromium", "chromium-browser")


def find_browser(environ=os.environ, debian: Path = DEBIAN_CHROMIUM, which=shutil.which) -> str | None:
    """The browser the tests drive: $BROWSER_PATH when set, else Debian's Chromium, else the first
    of OTHER_BROWSERS on PATH; None when there is none."""
    if environ.get("BROWSER_PATH"):
        return environ["BROWSER_PATH"]
    if debian.exists():
        return str(debian)
    return next((found for found in map(which, OTHER_BROWSERS) if found), None)


CHROMIUM = find_browser() or str(DEBIAN_CHROMIUM)
# Chromium's background services would try to reach the network; this machine has none.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


def require_chromium() -> None:
    if os.environ.get("BROWSER_PATH") and not Path(CHROMIUM).exists():
        pytest.fail(f"BROWSER_PATH names {CHROMIUM}, which does not exist")
    if not Path(CHROMIUM).exists():
        pytest.skip("no Chromium or Chrome found (make test installs Debian's chromium; or set BROWSER_PATH)")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


class _GzipHandler(_QuietHandler):
    """Compresses text with gzip when the browser accepts it, as static hosts (GitHub Pages,
    Netlify, nginx's gzip_static) do; Pagefind's own files are already compressed."""

    COMPRESSED = (".html", ".css", ".js", ".json", ".xml", ".svg", ".txt", ".map")

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir() and self.path.split("?")[0].endswith("/"):
            path = path / "index.html"
        wants_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (wants_gzip and path.suffix in self.COMPRESSED and path.is_file()):
            return super().send_head()  # also the redirect of a folder without its slash, and 404s
        body = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


class _StaticHostHandler(_QuietHandler):
    """Serves the site under a deployment path (`mount`), and its 404.html with status 404 for any
    address without a file, as GitHub Pages and most static hosts do."""

    mount = "/"

    def send_head(self):
        path = self.path.split("?")[0]
        if not path.startswith(self.mount):
            return self._not_found()
        self.path = "/" + path[len(self.mount) :]
        target = Path(self.translate_path(self.path))
        if not target.exists() or (target.is_dir() and not (target / "index.html").exists()):
            return self._not_found()
        return super().send_head()

    def _not_found(self):
        body = (Path(self.directory) / "404.html").read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return io.BytesIO(body)


@contextmanager
def serve_as_host(directory: Path, mount: str):
    """Serve a built site at http://127.0.0.1:<port>`mount` (e.g. "/a/deployment/path/") with a
    static host's 404 handling; yields the server's root URL (without the mount)."""
    handler = type("Handler", (_StaticHostHandler,), {"mount": mount})
    with _running(functools.partial(handler, directory=str(directory))) as url:
        yield url


@contextmanager
def _running(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serve(directory: Path, compress: bool = False):
    """Serve a built site on a free port of 127.0.0.1; yields its base URL. With `compress`,
    text is sent gzip-compressed as a real host sends it (bench/search.py)."""
    handler = functools.partial(_GzipHandler if compress else _QuietHandler, directory=str(directory))
    with _running(handler) as url:
        yield url


@contextmanager
def browser():
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


class WatchedPage:
    """A page that records console errors and every request to a host other than ours."""

    def __init__(self, page, base_url: str, label: str = ""):
        self.page = page
        self.base_url = base_url
        self.label = label  # added to screenshot names: which build the page is from
        self.errors: list[str] = []
        self.foreign_requests: list[str] = []
        page.on("console", lambda message: self.errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("request", self._request)

    def _request(self, request) -> None:
        if not request.url.startswith((self.base_url, "data:", "blob:")):
            self.foreign_requests.append(request.url)

    def screenshot(self, name: str) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}{self.label}.png"), full_page=True)


PAGE_RANKINGS = """async ({texts, withCuts}) => {
    const signatures = await (await fetch('../api/signatures.json')).json();
    const extra = await (await fetch('../api/diagnose.json')).json();
    const matcher = new DiagnoseMatcher.Matcher(signatures, extra.causes);
    const out = {};
    for (const [name, text] of Object.entries(texts)) {
        const results = matcher.scan(text);
        out[name] = withCuts ? [results.map(r => r.id), results.incomplete] : results.map(r => r.id);
    }
    return out;
}"""


def page_rankings(site: Path, texts: dict[str, str], with_cuts: bool = False) -> dict:
    """The diagnose page's matcher, on a built site's API, over each text: the entry ids it ranks;
    `with_cuts`: (those ids, the {line, text} of the last frame of a traceback it stops inside)."""
    with serve(site) as base_url, browser() as chromium:
        page = WatchedPage(chromium.new_page(), base_url)
        page.page.goto(base_url + "diagnose/")
        page.page.add_script_tag(url=base_url + "assets/javascripts/diagnose-matcher.js")
        rankings = page.page.evaluate(PAGE_RANKINGS, {"texts": texts, "withCuts": with_cuts})
        assert page.errors == []
    return rankings


PAGE_CULPRITS = """async texts => {
    const signatures = await (await fetch('../api/signatures.json')).json();
    const extra = await (await fetch('../api/diagnose.json')).json();
    const matcher = new DiagnoseMatcher.Matcher(signatures, extra.causes);
    const out = {};
    for (const [name, text] of Object.entries(texts)) {
        const results = matcher.scan(text);
        out[name] = results.culprit ? DiagnoseCulprit.culpritLines(results.culprit, results).first : null;
    }
    return out;
}"""


def page_culprits(site: Path, texts: dict[str, str]) -> dict[str, str | None]:
    """The diagnose page's culprit finder over each text: the first line it shows, or None."""
    with serve(site) as base_url, browser() as chromium:
        page = WatchedPage(chromium.new_page(), base_url)
        page.page.goto(base_url + "diagnose/")
        found = page.page.evaluate(PAGE_CULPRITS, texts)
        assert page.errors == []
    return found
