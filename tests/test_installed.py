"""`mlfail` as users get it: a regular (not editable) install into a fresh venv, run from an
empty folder, with no checkout, network or writable cache needed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from .site_build import REPO

pytestmark = pytest.mark.build

OOM_LINE = (
    "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; "
    "14.50 GiB already allocated; 3.44 MiB free; 14.70 GiB reserved in total by PyTorch)"
)
WATCHDOG_LINE = (
    "[rank1]:[E1129 10:42:17.532806824 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=40211, OpType=ALLREDUCE, NumelIn=262144000, NumelOut=262144000, Timeout(ms)=600000) "
    "ran for 600043 milliseconds before timing out."
)
SITE = "https://ml-failure-encyclopedia.github.io/encyclopedia/"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The venv's bin folder, after `pip install <repository>` (a wheel is built and installed)."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    result = subprocess.run(
        [*pip, "--constraint", str(REPO / "constraints.txt"), str(REPO)], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return venv / "bin"


@pytest.fixture
def empty(tmp_path) -> Path:
    folder = tmp_path / "empty"
    folder.mkdir()
    return folder


def environment(empty: Path, **extra: str) -> dict:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("MLFAIL_", "PYTHON"))}
    # A cache folder that cannot be created: the tool must still work, only slower.
    return {**env, "MLFAIL_CACHE_DIR": "/proc/no-cache-here", "HOME": str(empty), **extra}


def launched(bin_dir: Path, empty: Path, *args: str) -> subprocess.Popen:
    """`mlfail ARGS` running in the background, its output readable line by line."""
    return subprocess.Popen(
        [str(bin_dir / "mlfail"), *args],
        cwd=empty,
        env=environment(empty),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def mlfail(bin_dir: Path, empty: Path, *args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(bin_dir / "mlfail"), *args],
        cwd=empty,
        env=environment(empty, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_package_carries_the_encyclopedia_and_no_checkout_is_needed(installed, empty):
    site_packages = next((installed.parent / "lib").glob("python3*/site-packages"))
    shipped = {path.name for path in (REPO / "entries").rglob("*.yaml")}
    packaged = {path.name for path in (site_packages / "generator" / "entries").rglob("*.yaml")}
    assert packaged == shipped
    assert (site_packages / "generator" / "templates" / "entry.md.j2").is_file()
    assert not (site_packages / "generator" / "__editable__").exists()
    assert not list(site_packages.glob("__editable__*")), "a regular install, not an editable one"


def test_diagnose_a_log_from_an_empty_folder(installed, empty):
    log = empty / "slurm-1234.out"
    log.write_text(f"step 10 loss 2.1\n{OOM_LINE}\n")
    result = mlfail(installed, empty, "diagnose", str(log))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("1. CUDA out of memory in the forward pass")
    assert f"{SITE}failures/cuda-oom-forward/" in result.stdout


def test_links_follow_the_site_url_option_and_variable(installed, empty):
    log = empty / "train.log"
    log.write_text(OOM_LINE + "\n")
    by_variable = mlfail(installed, empty, "diagnose", "--json", str(log), MLFAIL_SITE_URL="https://mirror.example/enc")
    assert '"url": "https://mirror.example/enc/failures/cuda-oom-forward/"' in by_variable.stdout
    by_option = mlfail(installed, empty, "diagnose", "--site-url", "https://other.example/", str(log))
    assert "https://other.example/failures/cuda-oom-forward/" in by_option.stdout


def test_the_packaged_site_url_is_the_sites():
    from generator.resources import SITE_URL

    config = (REPO / "mkdocs.yml").read_text().split("\ntheme:")[0]  # plain keys; later ones carry tags
    assert yaml.safe_load(config)["site_url"] == SITE_URL


def test_explain_reads_at_80_columns(installed, empty):
    result = mlfail(installed, empty, "explain", "nccl-watchdog-timeout")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for heading in ("Quick answer", "Symptom → cause → what to do", "Confirm it", "Fix"):
        assert f"\n{heading}\n" in out
    assert out.startswith("NCCL WATCHDOG TIMEOUT")
    assert f"More: {SITE}failures/nccl-watchdog-timeout/" in out
    # Code keeps its own lines and a URL cannot be wrapped: everything else fits.
    prose = [line for line in out.splitlines() if not line.startswith(("      ", "More: "))]
    assert max(len(line) for line in prose) <= 80


def test_explain_suggests_the_closest_ids_for_a_misspelt_one(installed, empty):
    result = mlfail(installed, empty, "explain", "nccl-watchdog-timout")
    assert result.returncode == 2
    assert "no entry 'nccl-watchdog-timout'; did you mean nccl-watchdog-timeout" in result.stderr
    assert "Traceback" not in result.stderr


def test_search_lists_entries_best_first(installed, empty):
    typed = mlfail(installed, empty, "search", "nccl", "timeout")
    assert typed.returncode == 0
    assert typed.stdout.split()[0] == "nccl-watchdog-timeout"
    pasted = mlfail(installed, empty, "search", OOM_LINE)
    first = pasted.stdout.splitlines()[0]
    assert first.startswith("cuda-oom-forward") and first.endswith("[matches this error]")
    assert mlfail(installed, empty, "search", "qwertyuiop").returncode == 1


def test_run_passes_output_through_and_diagnoses_a_failure(installed, empty):
    script = f"import sys; print('step 1', flush=True); print({OOM_LINE!r}, file=sys.stderr); sys.exit(3)"
    result = mlfail(installed, empty, "run", "--", sys.executable, "-c", script)
    assert result.returncode == 3
    assert result.stdout == "step 1\n"
    assert result.stderr.startswith(OOM_LINE + "\n")
    assert "exited with status 3. Diagnosis, best match first:" in result.stderr
    assert "1. CUDA out of memory in the forward pass" in result.stderr


def test_run_says_nothing_when_the_job_succeeds(installed, empty):
    result = mlfail(installed, empty, "run", "--", sys.executable, "-c", f"print({OOM_LINE!r})")
    assert result.returncode == 0
    assert result.stdout == OOM_LINE + "\n" and result.stderr == ""


def test_run_forwards_sigterm_and_exits_with_the_commands_status(installed, empty):
    script = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *_: (print('child got SIGTERM', flush=True), sys.exit(7)))\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    process = launched(installed, empty, "run", "--", sys.executable, "-c", script)
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=30)
    assert out == "child got SIGTERM\n"
    assert process.returncode == 7


def test_run_on_match_reports_a_hang_before_the_job_ends(installed, empty):
    script = f"import time; print({WATCHDOG_LINE!r}, flush=True); time.sleep(60)"
    process = launched(installed, empty, "run", "--on-match", "--", sys.executable, "-c", script)
    assert process.stderr is not None
    try:
        started = time.monotonic()
        first = process.stderr.readline()
        assert first.startswith("mlfail: NCCL watchdog timeout (collective operation timed out)  [high] on rank 1")
        assert time.monotonic() - started < 15
    finally:
        process.terminate()
        process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGTERM


def test_watch_follows_appends_rotation_and_truncation(installed, empty):
    log = empty / "train.log"
    log.write_text("step 1\n")
    process = launched(installed, empty, "watch", str(log), "--interval", "0.1")
    assert process.stdout is not None and process.stderr is not None

    def next_report() -> str:
        started = time.monotonic()
        line = process.stdout.readline()
        assert time.monotonic() - started < 10
        return line

    try:
        assert process.stderr.readline().startswith("mlfail: watching")
        with open(log, "a") as handle:
            handle.write(OOM_LINE + "\n")
        assert next_report().startswith("mlfail: CUDA out of memory in the forward pass")
        log.rename(empty / "train.log.1")  # rotated: a new file appears at the path
        log.write_text(WATCHDOG_LINE + "\n")
        while not (report := next_report()).startswith("mlfail: "):
            pass
        assert report.startswith("mlfail: NCCL watchdog timeout")
        log.write_text("")  # truncated in place, then written again
        time.sleep(0.5)
        with open(log, "a") as handle:
            handle.write("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n")
        while not (report := next_report()).startswith("mlfail: "):
            pass
        assert report.startswith("mlfail: torchrun ChildFailedError")
    finally:
        process.terminate()
        process.communicate(timeout=30)


def test_python_api_and_exception_hook(installed, empty):
    python = str(installed / "python")
    script = (
        "from generator.api import diagnose_text\n"
        f"failures = diagnose_text({WATCHDOG_LINE!r})\n"
        "print(failures[0].id, failures[0].rank, failures[0].url)\n"
    )
    result = subprocess.run([python, "-c", script], cwd=empty, env=environment(empty), capture_output=True, text=True)
    assert result.stdout == f"nccl-watchdog-timeout 1 {SITE}failures/nccl-watchdog-timeout/\n", result.stderr
    hooked = subprocess.run(
        [
            python,
            "-c",
            "from generator.api import install_excepthook\ninstall_excepthook()\n"
            "raise RuntimeError('CUDA error: an illegal memory access was encountered')",
        ],
        cwd=empty,
        env=environment(empty),
        capture_output=True,
        text=True,
    )
    assert hooked.returncode == 1
    assert "RuntimeError: CUDA error: an illegal memory access was encountered" in hooked.stderr
    assert "mlfail diagnosis:" in hooked.stderr and "cuda-illegal-memory-access" in hooked.stderr
