"""Benchmark: a full `mkdocs build` of N synthetic entries with the project's own mkdocs.yml.

    .venv/bin/python bench/build.py [N ...]      (default: 200 2000)

For each N: build time and peak memory of the whole `mkdocs build` process; the
generator's own stage (load + validate + render every page, timed in-process)
and its share of the build; mean and largest entry page size; search index size.
Targets: generator stage <= 10% of the build; build time linear in N; mean entry
page size at 2,000 within 1.1x of that at 200; search index <= 2 KB per entry.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.synthetic import make_corpus  # noqa: E402
from generator.loading import load_encyclopedia  # noqa: E402
from generator.rendering import Renderer, SiteOptions  # noqa: E402
from tests.site_build import make_project  # noqa: E402


def generator_stage(entries: Path) -> float:
    started = time.perf_counter()
    result = load_encyclopedia(entries)
    renderer = Renderer(result.encyclopedia, SiteOptions(repo_url="https://example.org/repo"))
    for _ in renderer.pages():
        pass
    for _ in renderer.static_files():
        pass
    return time.perf_counter() - started


def mkdocs_build(project: Path) -> tuple[float, float]:
    """Wall time (s) and peak resident memory (MiB) of one `mkdocs build`."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [
        sys.executable,
        "-c",
        "import resource, runpy, sys; sys.argv = ['mkdocs', 'build', '--strict', '-q', '--site-dir', 'site'];"
        "\ntry: runpy.run_module('mkdocs', run_name='__main__')"
        "\nfinally: print('PEAK_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)",
    ]
    started = time.perf_counter()
    result = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(result.stderr[-2000:])
    peak_kb = int(result.stderr.rsplit("PEAK_KB", 1)[1].split()[0])
    return elapsed, peak_kb / 1024


def sizes(site: Path, count: int) -> tuple[float, int, int]:
    pages = [path.stat().st_size for path in (site / "failures").glob("synthetic-*/index.html")]
    assert len(pages) == count, (len(pages), count)
    index = (site / "search" / "search_index.json").stat().st_size
    return sum(pages) / len(pages), max(pages), index


def main(counts: list[int]) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for count in counts:
            entries = make_corpus(Path(scratch, f"entries-{count}"), count)
            project = Path(scratch, f"project-{count}")
            make_project(project, entries)
            stage = generator_stage(project / "entries")
            build, peak = mkdocs_build(project)
            mean_page, largest_page, index = sizes(project / "site", count)
            rows.append((count, build, peak, stage, mean_page, largest_page, index))
    print(
        f"{'N':>6} {'build s':>8} {'peak MiB':>9} {'generator s':>12} {'share':>6} "
        f"{'mean page KB':>13} {'max page KB':>12} {'index KB':>9} {'index KB/entry':>15}"
    )
    for count, build, peak, stage, mean_page, largest_page, index in rows:
        print(
            f"{count:>6} {build:>8.1f} {peak:>9.0f} {stage:>12.2f} {stage / build:>6.1%} "
            f"{mean_page / 1024:>13.1f} {largest_page / 1024:>12.1f} {index / 1024:>9.0f} {index / 1024 / count:>15.2f}"
        )
    if len(rows) > 1:
        print(
            f"build({rows[-1][0]}) / build({rows[0][0]}) = {rows[-1][1] / rows[0][1]:.1f} for {rows[-1][0] / rows[0][0]:.0f}x entries; "
            f"mean page ratio = {rows[-1][4] / rows[0][4]:.2f}"
        )


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [200, 2000])
