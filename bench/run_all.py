"""`make bench`: every benchmark in one run, results written as a table.

    .venv/bin/python bench/run_all.py [--quick]

Runs bench/validate.py (2,000 and 10,000 entries), bench/build.py (200, 2,000 and
10,000; --quick stops at 2,000), bench/diagnose.py (2,000 entries, 200 MB log),
bench/search.py and bench/preview.py (2,000 entries),
prints their tables and writes them to bench/results/latest.md with the machine's
description. Several minutes; nothing here is run by the test suite.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def run(script: str, *args: str) -> str:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{script} failed:\n{result.stderr[-3000:]}")
    return (
        f"### {script} {' '.join(args)}  ({time.perf_counter() - started:.0f} s)\n\n```\n{result.stdout.strip()}\n```\n"
    )


def main() -> None:
    quick = "--quick" in sys.argv
    sections = [
        run("validate.py", "2000", "10000"),
        run("build.py", "200", "2000", *(() if quick else ("10000",))),
        run("diagnose.py", "--entries", "2000", "--megabytes", "200"),
        run("search.py", "2000"),
        run("preview.py", "2000"),
    ]
    header = (
        f"# Benchmarks\n\n{platform.platform()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}\n\n"
    )
    report = header + "\n".join(sections)
    out = BENCH / "results" / "latest.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(report)
    print(report)
    print(f"written to {out.relative_to(BENCH.parent)}")


if __name__ == "__main__":
    main()
