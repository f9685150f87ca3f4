"""`mlfail diagnose` on a folder of rank logs: one pass per file, bounded memory, and the
throughput of a single file.

    .venv/bin/python bench/folder.py [--ranks 64] [--mib 50] [--keep DIR]

Writes a folder of `--ranks` logs of `--mib` MiB each (training progress, NCCL and warning
lines, one rank failing at the end and the others timing out after it), then runs the
command-line tool as a child process, on one of the files and on the whole folder, and prints
wall time, throughput (MiB/s) and peak resident memory (the child's maxrss). The targets: the
folder at ≥ 80% of one file's throughput, ≤ 300 MB resident. Run it with the machine otherwise idle.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CULPRIT = 17


def write_rank_log(path: Path, rank: int, ranks: int, size: int) -> None:
    """A log of about `size` bytes, as one rank of a long job prints it."""
    chance = random.Random(rank)
    lines = [
        f"[rank{rank}]:2026-12-02 10:00:00,000 INFO world_size {ranks} rank {rank} local_rank {rank % 8}\n",
    ]
    written, step = 0, 0
    with open(path, "w", encoding="utf-8") as out:
        out.write(lines[0])
        while written < size:
            step += 1
            clock = (
                f"2026-12-02 {10 + step // 36000 % 14:02d}:{step // 600 % 60:02d}:{step // 10 % 60:02d},{step % 10}00"
            )
            chunk = [f"[rank{rank}]:{clock} INFO step {step} loss {chance.random():.4f} lr 3.0e-04 grad_norm 1.02\n"]
            if step % 50 == 0:
                chunk.append(
                    f"gpu-{rank // 8}:{4000 + rank}:{4100 + rank} [{rank % 8}] NCCL INFO Channel 00/0 : {rank} -> {(rank + 1) % ranks} via P2P/IPC\n"
                )
            if step % 997 == 0:
                chunk.append(f"[rank{rank}]:{clock} WARNING dataloader worker 3 is slow: 1.2 s for batch {step}\n")
            text = "".join(chunk)
            out.write(text)
            written += len(text)
        if rank == CULPRIT:
            out.write(f"[rank{rank}]: Traceback (most recent call last):\n")
            out.write(f"[rank{rank}]: RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x17 and 16x32)\n")
        else:
            out.write(
                f"[rank{rank}]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] "
                "Connection closed by peer [10.0.0.17]:41234\n"
            )


def run(paths: list[str], cache: Path) -> tuple[float, int, str]:
    """Wall seconds, peak resident KiB and first output line of one diagnose in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    env = dict(os.environ, MLFAIL_CACHE_DIR=str(cache))
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "generator", "diagnose", *paths], capture_output=True, text=True, env=env, cwd=REPO
    )
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:
        peak = before  # maxrss of children is the largest child so far: report at least that
    return elapsed, peak, (result.stdout.splitlines() or [""])[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--mib", type=int, default=50)
    parser.add_argument("--keep", help="write the folder here and keep it")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="mlfail-folder-"))
    folder.mkdir(parents=True, exist_ok=True)
    size = args.mib << 20
    try:
        for rank in range(args.ranks):
            path = folder / f"rank{rank}.log"
            if not path.exists() or path.stat().st_size < size:
                write_rank_log(path, rank, args.ranks, size)
        total = sum(path.stat().st_size for path in folder.iterdir())
        cache = folder.parent / (folder.name + "-cache")
        run([str(folder / "rank0.log")], cache)  # build the signature index cache, warm the files
        one_time, _, _ = run([str(folder / "rank0.log")], cache)
        one_size = (folder / "rank0.log").stat().st_size
        all_time, peak, first = run([str(folder)], cache)
        one_rate, all_rate = one_size / one_time / 2**20, total / all_time / 2**20
        print(f"one file: {one_size / 2**20:.0f} MiB in {one_time:.2f} s ({one_rate:.0f} MiB/s)")
        print(
            f"folder of {args.ranks}: {total / 2**20:.0f} MiB in {all_time:.2f} s ({all_rate:.0f} MiB/s, "
            f"{all_rate / one_rate:.0%} of one file's throughput); peak resident {peak / 1024:.0f} MiB"
        )
        print(f"its first line: {first}")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(folder.parent / (folder.name + "-cache"), ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
