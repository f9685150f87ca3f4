"""Build a real site, with the project's own mkdocs.yml, from a folder of entries."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
FIXTURE_ENTRIES = Path(__file__).resolve().parent / "fixtures" / "site" / "entries"
BUILD_EPOCH = "1700000000"  # 2023-11-14, the date test builds stamp on the sitemap


def make_project(root: Path, entries: Path) -> Path:
    """A copy of the project's site sources around `entries`; returns the mkdocs.yml path."""
    for folder in ("docs", "overrides"):
        shutil.copytree(REPO / folder, root / folder)
    shutil.copytree(entries, root / "entries")
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    config = config.replace("templates: templates", f"templates: {REPO / 'templates'}")
    (root / "mkdocs.yml").write_text(config, encoding="utf-8")
    return root / "mkdocs.yml"


def build(
    project: Path, *extra: str, timeout: float = 600, env: dict[str, str | None] | None = None
) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of `project` into project/site; `env` adds variables to the
    environment (None removes one). Test builds are dated BUILD_DATE, not by the clock, so two
    builds compare equal whenever they run."""
    given = {"NO_MKDOCS_2_WARNING": "1", "SOURCE_DATE_EPOCH": BUILD_EPOCH, **(env or {})}
    env = {key: value for key, value in {**os.environ, **given}.items() if value}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(project / "site"), *extra],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


ZENSICAL = Path(sys.executable).parent / "zensical"


def zensical_installed() -> bool:
    return ZENSICAL.is_file()


def build_with_zensical(project: Path) -> Path:
    """`make site-zensical`'s steps in `project` (from `make_project`): generate the pages beside
    a copy of docs/, `zensical build`, then the shared post-build step; returns the site folder."""
    shutil.copy(REPO / "zensical.yml", project / "zensical.yml")
    python = sys.executable
    for command in (
        [python, "-m", "generator", "generate", "--out", "build/zensical-docs", "--with-docs", "docs"],
        [str(ZENSICAL), "build", "--clean", "-f", "zensical.yml"],
        [python, "-m", "generator", "finish-site", "site-zensical"],
    ):
        env = {**os.environ, "SOURCE_DATE_EPOCH": BUILD_EPOCH, "NO_MKDOCS_2_WARNING": "1"}
        result = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, f"{' '.join(command)}:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    return project / "site-zensical"


def start_preview(project: Path, mode: list[str], port: int, log: Path | None = None) -> subprocess.Popen:
    """`mkdocs serve` on 127.0.0.1:`port` in the background (`mode`: e.g. ["--dirty"]);
    its terminal output goes to `log` when given."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    output = open(log, "w") if log else subprocess.DEVNULL  # noqa: SIM115 - the child keeps it open
    return subprocess.Popen(
        [sys.executable, "-m", "mkdocs", "serve", *mode, "--dev-addr", f"127.0.0.1:{port}"],
        cwd=project,
        env=env,
        stdout=output,
        stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
    )


def site_url_prefix() -> str:
    return yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["repo_url"]
