"""Benchmark: `diagnose` against `grep -E -f` over the same patterns, whole process, same run.

    .venv/bin/python bench/diagnose.py [--entries 2000] [--megabytes 200]

Writes N synthetic entries (their signatures are variants of the shipped ones, so
they share the vocabulary of real logs) and a log of realistic training output
(NCCL INFO chatter, rank-prefixed warnings, tracebacks, progress lines) with
matching lines sprinkled through it. Then, best of three with warm caches:
- `python -m generator diagnose --json` (start-up, cached signature index, scan);
- `grep -E -f` with the same signatures translated to POSIX ERE.
Also the peak memory of `diagnose` on a quarter of the log, all of it and twice
it: it levels off once RE2's automaton caches reach their budget (the log is
streamed, never held). Target: <= 1.5x grep's time.

And the closest-entries fallback: a 10 MB log of the same chatter whose error lines match no
signature, against the same log without them (a log with no error line reads no search).
Target: the fallback adds <= 200 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.synthetic import make_corpus  # noqa: E402
from generator.loading import load_encyclopedia  # noqa: E402

LINES = [
    "{host}:{pid}:{pid} [{rank}] NCCL INFO Channel {n:02d}/0 : {rank}[{rank}] -> {peer}[{peer}] via P2P/CUMEM/read",
    "{host}:{pid}:{pid} [{rank}] NCCL INFO Connected all rings, use ring PXN 0 GDR 1",
    "[rank{rank}]:[W1129 10:{m:02d}:{s:02d}.{us:06d} ProcessGroupNCCL.cpp:{n}] Warning: barrier took {t} ms on device cuda:{rank}",
    "{{'loss': {loss:.4f}, 'grad_norm': {g:.4f}, 'learning_rate': {lr:.2e}, 'epoch': {e:.2f}}}",
    " {pct:3d}%|{bar:<20}| {step}/20000 [{m:02d}:{s:02d}<3:{s:02d}:{m:02d}, {it:.2f}it/s]",
    "2026-11-29 10:{m:02d}:{s:02d},{ms:03d} - INFO - train.py:{n} - step {step} loss {loss:.4f} tokens/s {t}",
    '  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", line {n}, in _call_impl',
    "[2026-11-29 10:{m:02d}:{s:02d},{ms:03d}] [INFO] [logging.py:128:log_dist] [Rank 0] step={step}, skipped=0, lr=[{lr:.2e}], mom=[(0.9, 0.95)]",
    "W1129 10:{m:02d}:{s:02d}.{us:06d} {pid} torch/distributed/run.py:{n}] OMP_NUM_THREADS set to 1 for each process",
]


# Error lines that no signature matches: what the fallback looks up.
UNMATCHED_ERRORS = [
    "KeyError: 'labels'",
    "FileNotFoundError: [Errno 2] No such file or directory: 'out/checkpoint-500/trainer_state.json'",
    "RuntimeError: NCCL communicator was aborted on rank 3.",
    "ValueError: too many values to unpack (expected 2)",
]


def write_log(
    path: Path, megabytes: int, examples: list[str], rng: random.Random, share: float = 0.0005, lines: list[str] = LINES
) -> None:
    target = megabytes * 1024 * 1024
    written = 0
    with open(path, "w", encoding="utf-8") as log:
        while written < target:
            if rng.random() < share:
                line = rng.choice(examples)
            else:
                step = rng.randint(0, 20000)
                line = rng.choice(lines).format(
                    host=f"node{rng.randint(1, 64):03d}",
                    pid=rng.randint(1000, 99999),
                    rank=rng.randint(0, 7),
                    peer=rng.randint(0, 7),
                    n=rng.randint(1, 3000),
                    m=rng.randint(0, 59),
                    s=rng.randint(0, 59),
                    us=rng.randint(0, 999999),
                    ms=rng.randint(0, 999),
                    t=rng.randint(1, 99999),
                    loss=rng.random() * 4,
                    g=rng.random() * 9,
                    lr=rng.random() * 1e-4,
                    e=rng.random() * 3,
                    pct=step * 100 // 20000,
                    bar="#" * (step * 20 // 20000),
                    step=step,
                    it=rng.random() * 3,
                )
            log.write(line + "\n")
            written += len(line.encode("utf-8")) + 1


_ERE_SPECIAL = set(".[]()*+?{}|^$\\")


def _posix_replacement(posix: str) -> Callable[[re.Match[str]], str]:
    return lambda match: match.group(1) + posix


def to_ere(pattern: str, literal: bool) -> str:
    """The same pattern in POSIX extended syntax, for `grep -E`."""
    if literal:
        return "".join("\\" + char if char in _ERE_SPECIAL else char for char in pattern)
    out = pattern.replace("(?:", "(")
    for escape, posix in (
        ("d", "[0-9]"),
        ("D", "[^0-9]"),
        ("w", "[A-Za-z0-9_]"),
        ("W", "[^A-Za-z0-9_]"),
        ("s", "[[:space:]]"),
        ("S", "[^[:space:]]"),
    ):
        out = re.sub(rf"(?<!\\)((?:\\\\)*)\\{escape}", _posix_replacement(posix), out)
    out = re.sub(r"([*+?}])\?", r"\1", out)  # lazy quantifiers: the same lines match
    # A backslash before a character that is not special is a warning in grep.
    return re.sub(r"\\([^.\[\]()*+?{}|^$\\a-zA-Z0-9])", r"\1", out)


def timed(command: list[str], env: dict | None = None) -> tuple[float, float]:
    """Wall seconds and peak MiB of one command, measured by a wrapper with a single child."""
    probe = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)\n"
    )
    output = subprocess.run([sys.executable, "-c", probe, *command], capture_output=True, text=True, env=env).stdout
    seconds, peak_kb, code = output.split()
    if int(code) not in (0, 1):
        raise SystemExit(f"{command[0]} failed with exit code {code}")
    return float(seconds), int(peak_kb) / 1024


def best(command: list[str], env: dict | None = None, runs: int = 3) -> tuple[float, float]:
    results = [timed(command, env) for _ in range(runs)]
    return min(r[0] for r in results), max(r[1] for r in results)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=2000)
    parser.add_argument("--megabytes", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        entries = make_corpus(scratch / "entries", args.entries)
        encyclopedia = load_encyclopedia(entries).encyclopedia
        examples = [
            example
            for entry in encyclopedia.entries.values()
            for signature in entry.signatures or ()
            for example in signature.examples or ()
        ]
        log = scratch / "train.log"
        write_log(log, args.megabytes, examples, rng)
        quarter = scratch / "quarter.log"
        with open(log, "rb") as source, open(quarter, "wb") as target:
            target.write(source.read(os.path.getsize(log) // 4))
        # The same log given twice: twice the bytes through one matcher, for the memory check.
        patterns = scratch / "patterns.ere"
        patterns.write_text(
            "".join(to_ere(ref.pattern, ref.kind == "literal") + "\n" for ref in encyclopedia.signatures)
        )

        env = {**os.environ, "MLFAIL_CACHE_DIR": str(scratch / "cache")}
        diagnose = [sys.executable, "-m", "generator", "diagnose", "--entries", str(entries), "--json"]
        started = time.perf_counter()
        subprocess.run([*diagnose, str(quarter)], env=env, stdout=subprocess.DEVNULL, cwd=REPO)
        index_build = time.perf_counter() - started
        ours, ours_peak = best([*diagnose, str(log)], env)
        _, quarter_peak = best([*diagnose, str(quarter)], env, runs=1)
        _, double_peak = best([*diagnose, str(log), str(log)], env, runs=1)
        grep, grep_peak = best(["grep", "-E", "-f", str(patterns), str(log)])
        size = os.path.getsize(log) / 2**20
        plain, with_errors = scratch / "plain.log", scratch / "errors.log"
        quiet = [line for line in LINES if "OMP_NUM_THREADS" not in line]  # torchrun's notice matches a signature
        write_log(plain, 10, [], random.Random(5), share=0.0, lines=quiet)
        write_log(with_errors, 10, UNMATCHED_ERRORS, random.Random(5), share=0.0005, lines=quiet)
        no_fallback, _ = best([*diagnose, str(plain)], env, runs=5)
        fallback, _ = best([*diagnose, str(with_errors)], env, runs=5)
    print(f"{encyclopedia.signatures.__len__()} signatures of {args.entries} entries; log {size:.0f} MiB")
    print(f"first run (builds the signature index): {index_build:.2f} s")
    print(f"{'':>10} {'seconds':>8} {'MiB/s':>7} {'peak MiB':>9}")
    print(f"{'diagnose':>10} {ours:>8.2f} {size / ours:>7.0f} {ours_peak:>9.0f}")
    print(f"{'grep -E':>10} {grep:>8.2f} {size / grep:>7.0f} {grep_peak:>9.0f}")
    print(f"diagnose / grep = {ours / grep:.2f}")
    print(
        f"closest-entries fallback on 10 MiB: {fallback:.2f} s with unmatched error lines, {no_fallback:.2f} s "
        f"without: it adds {1000 * (fallback - no_fallback):.0f} ms"
    )
    print(
        f"diagnose peak memory: {quarter_peak:.0f} MiB on {size / 4:.0f} MiB of log, {ours_peak:.0f} MiB on {size:.0f} MiB, "
        f"{double_peak:.0f} MiB on {2 * size:.0f} MiB"
    )


if __name__ == "__main__":
    main()
