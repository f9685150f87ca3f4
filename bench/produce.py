"""Re-run the cases of tests/fixtures/diagnose/produced/ with the pinned releases, and check their logs.

    .venv/bin/python bench/produce.py [--only NAME ...] [--write] [--python PATH] [--timeout SECONDS]

Each case is `<case>.py` (the script), `<case>.log` (what it printed) and `<case>.yaml`
(`made_with`, `command`, `expect`). The releases are those of bench/produce-requirements.txt,
installed into a venv of this script's own, .venv-produce/ at the repository's root (made on
the first run, re-installed when the file changes); `--python` runs an interpreter that already
has them instead (its versions are checked against each case's `made_with`). A release that
`made_with` names and the file does not pin (jax, ray, torchao, bitsandbytes...) is installed
for that case alone, into a venv under .venv-produce/extras/ that sees the pinned set too.

Each case runs its `command` with bash, one case at a time, in a temporary working folder
holding a copy of the script, with the venv's `python` and `torchrun` first on PATH,
OMP_NUM_THREADS=1 (left to torchrun, which sets 1 for each worker and says so, when the command
does not set it itself), unbuffered output (stdout and stderr in one stream, in the order a
terminal shows them), stdin from /dev/null, caches (Hugging Face, Inductor) inside the
folder and a timeout. What a script reads is prepared first, as its own text describes it:
the `./tiny-llama*` checkpoints it loads (a tiny LlamaForCausalLM; the `quantization_config`
its opening comments show is written into its config.json), and the folders of the
`mkdir -p` lines of its docstring.

By default the committed log is checked against the new run. The two cannot be compared byte
for byte (pids, ports, times, temporary paths and addresses differ), so only the lines that
matter are compared, masked (paths, hex addresses, then every number, so times and dates too;
normalised first as the matcher reads a line): every line of the committed log that a signature of the shipped entries matches, and
the last line of each traceback, must appear in the new log; and the new log's first
diagnosis must still be the case's `expect`. A case that differs is run again, up to `--tries`
times (5): the ranks of a torchrun job race, and which rank's words reach the log (gloo's
`Connection closed by peer` or `Read error ... Connection reset by peer`, whether torchrun had
to stop the other worker) changes from run to run. One line per case:

    same | reworded: <line> | diagnosis changed: <old> -> <new> | failed to run: <why>

then a summary; the exit status is 1 when any case differs. `--write` writes the new log over
the committed one instead (unless it failed to run), after printing the same line.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from generator.diagnose import scan_logs  # noqa: E402
from generator.matcher import Matcher  # noqa: E402
from generator.normalise import normalise_text  # noqa: E402
from generator.signature_index import SignatureIndex, load_index  # noqa: E402
from tests.regression_logs import PRODUCED, Case, load_cases  # noqa: E402

REQUIREMENTS = REPO / "bench" / "produce-requirements.txt"
VENV = REPO / ".venv-produce"
TIMEOUT = 300
TRIES = 5
# `made_with` names these with a version, but pip does not install them.
NOT_PACKAGES = {"python", "bash", "cuda", "gcc", "linux"}
_RELEASE = re.compile(r"\b([A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]) v?(\d+(?:\.\d+)+)\b")
_ABSENT = re.compile(r"\b([A-Za-z][\w.-]*)(?: and ([A-Za-z][\w.-]*))? not installed\b")
_CHECKPOINT = re.compile(r"""["'](\./(tiny-llama[\w.-]*))["']""")
_QUANTIZATION = '"quantization_config":'
_TORCHRUN = re.compile(r"\btorchrun\b")
_IPV4 = re.compile(r"\d+\.\d+\.\d+\.\d+")
_MKDIR = re.compile(r"^[ \t]+mkdir -p (/\S+)[ \t]*$", re.MULTILINE)
_TRACEBACK = "Traceback (most recent call last):"
# Masks: paths (absolute, and the tail of relative ones), hex addresses and hex ids, numbers.
_PATH = re.compile(r"""(?:/[^\s/:'"()\[\]{}<>,;|`=]+)+/?""")
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b")
_NUMBER = re.compile(r"[0-9]+")

_INFO = (
    "import importlib.metadata as m, json, sys, sysconfig; paths = sysconfig.get_paths(); print(json.dumps({"
    "'prefix': sys.prefix, 'version': '%d.%d' % sys.version_info[:2],"
    "'site': sorted({paths['purelib'], paths['platlib']}),"
    "'packages': {(d.metadata['Name'] or '').lower(): d.version for d in m.distributions()}}))"
)
_TINY_LLAMA = """import json, sys, torch
from transformers import LlamaConfig, LlamaForCausalLM
torch.manual_seed(0)
folder, quantization = sys.argv[1], json.loads(sys.argv[2])
LlamaForCausalLM(LlamaConfig(hidden_size=64, intermediate_size=128, num_hidden_layers=1,
    num_attention_heads=4, num_key_value_heads=4, vocab_size=128)).save_pretrained(folder)
if quantization:
    with open(folder + "/config.json") as f:
        config = json.load(f)
    config["quantization_config"] = quantization
    with open(folder + "/config.json", "w") as f:
        json.dump(config, f, indent=2)
"""


class Failed(Exception):
    """The case could not be run as its yaml says: why, in a line."""


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class Interpreter:
    python: Path
    prefix: Path
    version: str
    site: list[str]
    packages: dict[str, str] = field(default_factory=dict)  # canonical name -> version

    @classmethod
    def of(cls, python: Path) -> Interpreter:
        done = subprocess.run([str(python), "-c", _INFO], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{python}: cannot be run ({done.stderr.strip().splitlines()[-1:]})")
        info = json.loads(done.stdout)
        packages = {canonical(name): version for name, version in info["packages"].items()}
        return cls(python, Path(info["prefix"]), info["version"], info["site"], packages)

    def has(self, name: str) -> str | None:
        """The installed version of `name`, without its local label (`2.13.0+cpu`: 2.13.0)."""
        version = self.packages.get(canonical(name))
        return version.split("+")[0] if version else None


def pins() -> dict[str, str]:
    pinned = {}
    for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==")
            pinned[canonical(name)] = version.strip()
    return pinned


def run_quietly(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise Failed(f"{what} failed:\n{tail}")


def ensure_venv(venv: Path, base_python: str) -> Path:
    """The venv of the pinned releases, made (or re-installed) when the requirements changed."""
    python = venv / "bin" / "python"
    stamp = venv / ".requirements"
    wanted = REQUIREMENTS.read_text(encoding="utf-8")
    if not python.exists():
        print(f"creating {venv.relative_to(REPO)} with {base_python}", flush=True)
        run_quietly([base_python, "-m", "venv", str(venv)], "python -m venv")
    if not stamp.exists() or stamp.read_text(encoding="utf-8") != wanted:
        print(f"installing {REQUIREMENTS.relative_to(REPO)} into {venv.relative_to(REPO)}", flush=True)
        run_quietly([str(python), "-m", "pip", "install", "--quiet", "--requirement", str(REQUIREMENTS)], "pip install")
        stamp.write_text(wanted, encoding="utf-8")
    return python


def releases(made_with: str) -> dict[str, str]:
    """The packages `made_with` names with a version: canonical name -> version."""
    found = {}
    for name, version in _RELEASE.findall(made_with):
        if canonical(name) not in NOT_PACKAGES and not _IPV4.fullmatch(version):  # `coordinator on 127.0.0.1`
            found[canonical(name)] = version
    return found


def absent(made_with: str) -> list[str]:
    """The packages `made_with` says were not installed."""
    return [canonical(name) for pair in _ABSENT.findall(made_with) for name in pair if name]


def with_extras(base: Interpreter, extras: dict[str, str], root: Path) -> Interpreter:
    """A venv that sees the base interpreter's packages (a .pth file) and has `extras` too."""
    wanted = sorted(f"{name}=={version}" for name, version in extras.items())
    key = hashlib.sha1(f"{base.prefix}\n{wanted}".encode()).hexdigest()[:8]
    folder = root / f"{'+'.join(wanted).replace('==', '-')}-{key}"
    python = folder / "bin" / "python"
    if not (folder / ".ready").exists():
        print(f"installing {' '.join(wanted)} into {folder}", flush=True)
        shutil.rmtree(folder, ignore_errors=True)
        run_quietly([str(base.python), "-m", "venv", str(folder)], "python -m venv")
        for site in Interpreter.of(python).site:
            (Path(site) / "_produce_base.pth").write_text("\n".join(base.site) + "\n", encoding="utf-8")
        install = [str(python), "-m", "pip", "install", "--quiet", "--constraint", str(REQUIREMENTS), *wanted]
        run_quietly(install, "pip install " + " ".join(wanted))
        _wrap_scripts(base.python.parent, folder / "bin")
        (folder / ".ready").touch()
    return Interpreter.of(python)


def _wrap_scripts(base_bin: Path, bin_dir: Path) -> None:
    """The base venv's console scripts (torchrun, accelerate...), run by the overlay's python."""
    for script in base_bin.iterdir():
        target = bin_dir / script.name
        if target.exists() or script.is_symlink() or not script.is_file():
            continue
        with script.open("rb") as opened:
            first = opened.readline()
        if first.startswith(b"#!") and b"python" in first:
            rest = script.read_bytes()[len(first) :]
            target.write_bytes(f"#!{bin_dir / 'python'}\n".encode() + rest)
            target.chmod(0o755)


def interpreter_for(case: Case, base: Interpreter, pinned: dict[str, str], extras_root: Path) -> Interpreter:
    named = releases(case.made_with or "")
    for name, version in named.items():
        if name in pinned and pinned[name] != version:
            raise Failed(f"made with {name} {version}, {REQUIREMENTS.name} pins {pinned[name]}")
    extras = {name: version for name, version in named.items() if name not in pinned}
    interpreter = with_extras(base, extras, extras_root) if extras else base
    for name, version in named.items():
        if interpreter.has(name) != version:
            raise Failed(f"made with {name} {version}, {interpreter.python} has {interpreter.has(name) or 'none'}")
    for name in absent(case.made_with or ""):
        if interpreter.has(name):
            raise Failed(f"made without {name}, {interpreter.python} has {name} {interpreter.has(name)}")
    return interpreter


def prepare(case: Case, work: Path, interpreter: Interpreter, env: dict[str, str]) -> None:
    """The copy of the script, and what it reads that its text describes."""
    script = case.log.with_suffix(".py")
    shutil.copy2(script, work / script.name)
    text = script.read_text(encoding="utf-8")
    for folder in _MKDIR.findall(text):
        os.makedirs(folder, exist_ok=True)
    for path, name in sorted(set(_CHECKPOINT.findall(text))):
        quantization = _quantization_config(text)
        build = [
            str(interpreter.python),
            "-c",
            _TINY_LLAMA,
            name,
            json.dumps(quantization if name != "tiny-llama" else None),
        ]
        done = subprocess.run(build, cwd=work, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise Failed(f"building {path}: {(done.stderr.strip().splitlines() or ['?'])[-1]}")


def _quantization_config(text: str) -> dict | None:
    """The `"quantization_config": {...}` that a script's opening comments show, if any."""
    comments = " ".join(line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#"))
    at = comments.find(_QUANTIZATION)
    if at < 0:
        return None
    config, _ = json.JSONDecoder().raw_decode(comments[at + len(_QUANTIZATION) :].lstrip())
    return config if isinstance(config, dict) else None


def run_case(case: Case, interpreter: Interpreter, work: Path, timeout: float) -> bytes:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(
        PATH=os.pathsep.join(dict.fromkeys([str(interpreter.python.parent), str(interpreter.prefix / "bin")]))
        + os.pathsep
        + env.get("PATH", ""),
        VIRTUAL_ENV=str(interpreter.prefix),
        OMP_NUM_THREADS="1",
        PYTHONUNBUFFERED="1",
        PYTHONDONTWRITEBYTECODE="1",
        HF_HOME=str(work / ".cache" / "huggingface"),
        TORCHINDUCTOR_CACHE_DIR=str(work / ".cache" / "torchinductor"),
        TRITON_CACHE_DIR=str(work / ".cache" / "triton"),
    )
    if _TORCHRUN.search(case.command or "") and "OMP_NUM_THREADS" not in (case.command or ""):
        del env["OMP_NUM_THREADS"]  # torchrun sets 1 for each worker itself, and says so in the log
    prepare(case, work, interpreter, env)
    process = subprocess.Popen(
        ["bash", "-c", case.command or ""],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: torchrun's workers go with it
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _end(process.pid)
        process.communicate()
        raise Failed(f"no end after {timeout:g} s") from None
    finally:
        _end(process.pid)  # what it left behind (a worker, a daemon in its group)
    if (process.returncode in (126, 127) and b"command not found" in output) or not output.strip():
        raise Failed(
            f"exit status {process.returncode}, {(output.decode(errors='replace').strip() or 'no output')[-200:]}"
        )
    return output


def _end(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


def mask(line: str) -> str:
    """A line as compared: normalised as the matcher reads it, then paths, hex and numbers masked."""
    text = normalise_text(line).strip()
    text = _PATH.sub("<path>", text)
    text = _HEX.sub("<hex>", text)
    return _NUMBER.sub("0", text)


def traceback_ends(lines: list[str]) -> list[int]:
    """The index of the last line (the exception) of each traceback: the first line after its
    header, with the header's prefix (`[rank1]: `), that is not indented."""
    ends = []
    for at, line in enumerate(lines):
        start = line.find(_TRACEBACK)
        if start < 0:
            continue
        prefix = line[:start]
        for later in range(at + 1, len(lines)):
            if not lines[later].startswith(prefix):
                continue  # another rank's line
            rest = lines[later][len(prefix) :]
            if rest.strip() and not rest[:1].isspace():
                ends.append(later)
                break
    return ends


def first_diagnosis(index: SignatureIndex, matcher: Matcher, log: Path) -> str:
    findings = index.triage(matcher.rank(scan_logs(matcher, [str(log)]))).findings
    return findings[0].entry_id if findings else "nothing"


def lines_that_matter(matcher: Matcher, log: Path) -> list[str]:
    """The lines a signature matches, and the last line of each traceback, in log order."""
    lines = log.read_bytes().decode("utf-8", errors="replace").split("\n")
    found = scan_logs(matcher, [str(log)])
    numbers = {match.line - 1 for key, matches in found.items() if key < len(matcher.signatures) for match in matches}
    numbers.update(traceback_ends(lines))
    return [lines[number] for number in sorted(numbers) if number < len(lines) and mask(lines[number])]


def compare(case: Case, index: SignatureIndex, matcher: Matcher, fresh: Path) -> tuple[str, str]:
    """(outcome, the line to print after the case's name)."""
    old, new = first_diagnosis(index, matcher, case.log), first_diagnosis(index, matcher, fresh)
    if new != old and new not in case.expect:
        return "diagnosis changed", f"diagnosis changed: {old} -> {new}"
    printed = {mask(line) for line in fresh.read_bytes().decode("utf-8", errors="replace").split("\n")}
    missing = [line for line in lines_that_matter(matcher, case.log) if mask(line) not in printed]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        return "reworded", f"reworded: {normalise_text(missing[0]).strip()[:300]}{more}"
    return "same", "same"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", metavar="NAME", help="this case only (repeatable)")
    parser.add_argument("--write", action="store_true", help="write each new log over the committed one")
    parser.add_argument("--python", type=Path, help="an interpreter that has the pinned releases (no venv is made)")
    parser.add_argument("--base-python", default=sys.executable, help="the Python that makes .venv-produce/ (3.11)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help=f"seconds per case (default {TIMEOUT})")
    parser.add_argument(
        "--tries", type=int, default=TRIES, help=f"runs of a case that differs before it is reported (default {TRIES})"
    )
    parser.add_argument("--keep", action="store_true", help="keep each case's working folder (its new log inside)")
    args = parser.parse_args()

    cases = load_cases((PRODUCED,))
    if args.only:
        unknown = sorted(set(args.only) - {case.name for case in cases})
        if unknown:
            print(f"no such case in {PRODUCED.relative_to(REPO)}: {', '.join(unknown)}", file=sys.stderr)
            return 2
        cases = [case for case in cases if case.name in args.only]
    index, problems = load_index(REPO / "entries")
    if index is None:
        print(f"the shipped entries do not validate ({len(problems)} problems)", file=sys.stderr)
        return 2
    matcher = index.matcher()
    try:
        python = args.python or ensure_venv(VENV, args.base_python)
    except Failed as error:
        print(error, file=sys.stderr)
        return 2
    base = Interpreter.of(python)
    print(f"{len(cases)} cases with {base.python} (Python {base.version})", flush=True)
    pinned = pins()

    counts: dict[str, int] = {}
    differ = []
    for case in cases:
        for attempt in range(1 if args.write else max(args.tries, 1)):
            work = Path(tempfile.mkdtemp(prefix=f"produce-{case.name[:40]}-"))
            try:
                interpreter = interpreter_for(case, base, pinned, VENV / "extras")
                output = run_case(case, interpreter, work, args.timeout)
                fresh = work / case.log.name
                fresh.write_bytes(output)
                outcome, line = compare(case, index, matcher, fresh)
            except Failed as error:
                outcome, line = "failed to run", f"failed to run: {error}"
                output = b""
            if outcome in ("same", "failed to run"):
                break
            if attempt + 1 < args.tries and not args.keep:  # ranks race: run it again, in a new folder
                shutil.rmtree(work, ignore_errors=True)
        if attempt and outcome == "same":
            line = f"same (run {attempt + 1} times)"
        elif attempt:
            line = f"{line} (in each of {attempt + 1} runs)"
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome != "same":
            differ.append(case.name)
        written = ""
        if args.write and outcome != "failed to run":
            case.log.write_bytes(output)
            written = " (written)"
        kept = f" [{work}]" if args.keep else ""
        print(f"{case.name}: {line}{written}{kept}", flush=True)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    summary = ", ".join(f"{counts.get(outcome, 0)} {outcome}" for outcome in ("same", "reworded", "diagnosis changed"))
    print(f"{len(cases)} cases: {summary}, {counts.get('failed to run', 0)} failed to run")
    if args.write:
        return 1 if counts.get("failed to run") else 0
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
