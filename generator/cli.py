"""The command line: `python -m generator COMMAND` (or the `mlfail` script).

Exit codes: 0 success, 1 the input is invalid (or, for `diagnose`, nothing
matched), 2 a usage error or a folder/file that cannot be used.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .problems import EntriesFolderError

if TYPE_CHECKING:  # imported when used: `diagnose` starts without pydantic
    from .encyclopedia import Encyclopedia
    from .formats import Report
    from .loading import LoadResult
    from .signature_index import SignatureIndex

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
DEFAULT_ENTRIES = "entries"
SCHEMA_FILE = Path("schema") / "entry.schema.json"


class UsageError(Exception):
    pass


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.run(args)
    except (UsageError, EntriesFolderError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. piped into `head`
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mlfail", description="The ML training failure encyclopedia's tools.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    validate = commands.add_parser("validate", help="check every entry; one line per problem")
    validate.add_argument(
        "paths",
        nargs="*",
        default=[DEFAULT_ENTRIES],
        metavar="PATH",
        help="a folder of entries with taxonomy.yaml at its top (default: entries), or entry files, "
        "each checked against the whole folder it belongs to",
    )
    validate.add_argument(
        "--format", choices=("text", "github"), default="text", help="'github' prints GitHub Actions annotations"
    )
    validate.set_defaults(run=_validate)

    new = commands.add_parser("new", help="write a scaffold for a new entry")
    new.add_argument("id", help="the new entry's id, e.g. nccl-watchdog-timeout")
    new.add_argument("--entries", default=DEFAULT_ENTRIES, metavar="DIR", help="folder of entries (default: entries)")
    new.add_argument(
        "--category", metavar="KEY", help="the entry's category (a key of taxonomy.yaml), also its folder, e.g. memory"
    )
    new.set_defaults(run=_new)

    schema = commands.add_parser("schema", help="print the JSON Schema of an entry, with the taxonomy's keys")
    schema.add_argument(
        "--entries", default=DEFAULT_ENTRIES, metavar="DIR", help="folder whose taxonomy.yaml gives the enums"
    )
    schema.set_defaults(run=_schema)

    generate = commands.add_parser("generate", help="write the generated pages as Markdown files, for any engine")
    generate.add_argument("--out", required=True, metavar="DIR", help="folder to write (replaced as a whole)")
    generate.add_argument(
        "--entries", default=DEFAULT_ENTRIES, metavar="DIR", help="folder of entries (default: entries)"
    )
    generate.add_argument("--repo-url", help="repository URL for edit links (default: repo_url of mkdocs.yml)")
    generate.add_argument(
        "--with-docs",
        metavar="DIR",
        help="copy this folder of hand-written pages and assets (docs) in too: a whole docs folder for an engine",
    )
    generate.set_defaults(run=_generate)

    finish = commands.add_parser(
        "finish-site", help="finish a built site: search index, a 404 page that works under any path"
    )
    finish.add_argument("site", metavar="SITE", help="the built site's folder")
    finish.add_argument("--base-path", help="the path the site is served under (default: site_url's, mkdocs.yml)")
    finish.add_argument("--no-search", dest="search", action="store_false", help="do not index for search")
    finish.set_defaults(run=_finish_site)

    diagnose = commands.add_parser("diagnose", help="find the failures whose error signatures a log contains")
    diagnose.add_argument(
        "logs",
        nargs="*",
        default=["-"],
        metavar="LOG",
        help="log files (plain or gzip); '-' or nothing reads standard input",
    )
    _reader_options(diagnose)
    _format_option(diagnose, FORMATS)
    diagnose.add_argument("--top", type=_positive, default=5, metavar="N", help="show the N best matches (default: 5)")
    diagnose.set_defaults(run=_diagnose)

    run = commands.add_parser(
        "run",
        help="run a command (a torchrun, deepspeed or python job), pass its output through, diagnose it if it fails",
        usage="%(prog)s [--on-match] [--entries DIR] [--site-url URL] [--top N] -- COMMAND [ARG ...]",
    )
    _reader_options(run)
    run.add_argument("--on-match", action="store_true", help="report each failure as soon as its first line appears")
    _format_option(run, FORMATS)
    run.add_argument(
        "--top", type=_positive, default=5, metavar="N", help="diagnose with the N best matches (default: 5)"
    )
    run.add_argument("command", nargs=argparse.REMAINDER, help="the command and its arguments, after --")
    run.set_defaults(run=_run)

    watch = commands.add_parser("watch", help="follow a growing log (like tail -F) and report each failure it shows")
    watch.add_argument("log", metavar="LOG", help="the log file; it may not exist yet, be rotated or truncated")
    _reader_options(watch)
    watch.add_argument("--from-end", action="store_true", help="report only what is written from now on")
    watch.add_argument("--interval", type=float, default=0.25, help="seconds between checks (default: 0.25)")
    _format_option(watch, LIVE_FORMATS)
    watch.set_defaults(run=_watch)

    explain = commands.add_parser("explain", help="show one entry in the terminal")
    explain.add_argument("id", help="the entry's id (or a former id), e.g. nccl-watchdog-timeout")
    _reader_options(explain)
    explain.set_defaults(run=_explain)

    search = commands.add_parser("search", help="find entries for words, an identifier or a pasted error line")
    search.add_argument("text", nargs="+", help="what to look for")
    _reader_options(search)
    search.add_argument("--top", type=_positive, default=10, metavar="N", help="show the N best (default: 10)")
    search.set_defaults(run=_search)

    links = commands.add_parser(
        "check-links",
        help="report reference URLs that no longer answer: dead (HTTP 4xx/5xx) or unreachable (no answer: network)",
    )
    links.add_argument("entries", nargs="?", default=DEFAULT_ENTRIES, metavar="ENTRIES_DIR")
    links.add_argument("--format", choices=("text", "github"), default="text")
    links.add_argument("--timeout", type=float, default=15.0, help="seconds to wait for each URL (default: 15)")
    links.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when a link is dead; unreachable ones never fail (default: report)",
    )
    links.set_defaults(run=_check_links)

    return parser


# -- validate ---------------------------------------------------------------------


def load_or_report(entries: str, output_format: str = "text") -> LoadResult:
    """Load the entries; print their problems (if any) to stdout."""
    from .loading import load_encyclopedia  # imported here: `diagnose` starts without pydantic

    result = load_encyclopedia(entries)
    for problem in result.problems:
        print(problem.format_github() if output_format == "github" else problem.format())
    return result


def _validate(args: argparse.Namespace) -> int:
    summary_stream = sys.stderr if args.format == "github" else sys.stdout
    folders = [path for path in args.paths if Path(path).is_dir()]
    if folders:
        if len(args.paths) > 1:
            raise UsageError("give one folder of entries, or entry files")
        result = load_or_report(folders[0], args.format)
        print(_summary(result), file=summary_stream)
        return EXIT_OK if result.ok else EXIT_INVALID
    return _validate_files(args.paths, args.format, summary_stream)


def _validate_files(paths: list[str], output_format: str, summary_stream: Any) -> int:
    """Each file's problems, found by loading the whole folder it belongs to (ids and links
    are checked across entries), printed with the path as given."""
    from .loading import load_encyclopedia

    by_root: dict[Path, dict[str, str]] = {}
    for path in paths:
        if not Path(path).is_file():
            raise UsageError(f"{path}: no such file or folder")
        root = _root_of(Path(os.path.abspath(path)))
        by_root.setdefault(root, {})[os.path.abspath(path)] = path
    shown = 0
    for root, files in by_root.items():
        result = load_encyclopedia(root)
        for problem in result.problems:
            given = files.get(os.path.abspath(problem.path))
            if given is not None:
                problem = dataclasses.replace(problem, path=given)
                print(problem.format_github() if output_format == "github" else problem.format())
                shown += 1
    checked = sum(len(files) for files in by_root.values())  # a file named twice counts once
    if shown:
        print(f"FAILED: {_count(shown, 'problem')} in {_count(checked, 'file')} checked", file=summary_stream)
        return EXIT_INVALID
    print(f"OK: {_count(checked, 'entry', 'entries')} valid", file=summary_stream)
    return EXIT_OK


def _root_of(path: Path) -> Path:
    from .loading import TAXONOMY_FILE, entries_root

    if path.suffix not in (".yaml", ".yml"):
        raise UsageError(f"{path}: an entry is a .yaml file")
    root = entries_root(path)
    if root is None:
        raise UsageError(f"{path}: not inside a folder of entries (no {TAXONOMY_FILE} in a parent folder)")
    return root


def _summary(result: LoadResult) -> str:
    if result.ok:
        return f"OK: {result.files} entries valid"
    files = len({problem.path for problem in result.problems})
    return f"FAILED: {_count(len(result.problems), 'problem')} in {_count(files, 'file')} ({result.files} entries read)"


def _count(number: int, noun: str, plural: str | None = None) -> str:
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


# -- new ------------------------------------------------------------------------------


def _new(args: argparse.Namespace) -> int:
    from pydantic import TypeAdapter, ValidationError

    from .models import Key
    from .rendering import render_scaffold

    try:
        TypeAdapter(Key).validate_python(args.id)
    except ValidationError as error:
        raise UsageError(f"cannot be an id: {error.errors()[0]['msg']}") from None
    if not Path(args.entries).is_dir():
        raise UsageError(f"{args.entries}: no such folder")
    if args.category:
        _known_category(args.entries, args.category)
    folder = Path(args.entries, args.category) if args.category else Path(args.entries)
    existing = sorted(Path(args.entries).rglob(f"{args.id}.yaml"))
    if existing:
        raise UsageError(f"{existing[0]} already exists; refusing to overwrite it")
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{args.id}.yaml"
    schema = os.path.relpath(SCHEMA_FILE.resolve(), target.parent.resolve())
    text = render_scaffold(args.id, Path(schema).as_posix(), args.category)
    with open(target, "x", encoding="utf-8") as handle:  # "x": never overwrite, even in a race
        handle.write(text)
    print(f"wrote {target.as_posix()}; fill in every TODO, then run: python -m generator validate {target.as_posix()}")
    return EXIT_OK


def _known_category(entries: str, category: str) -> None:
    """Refuse a category the taxonomy does not have, rather than create a stray folder."""
    from .loading import TAXONOMY_FILE, load_taxonomy
    from .validation import suggest

    taxonomy, problems = load_taxonomy(entries)
    if taxonomy is None:
        detail = problems[0].format() if problems else f"{entries}/{TAXONOMY_FILE} cannot be read"
        raise UsageError(f"cannot check --category against the taxonomy: {detail}")
    if category not in taxonomy.categories:
        known = ", ".join(sorted(taxonomy.categories))
        raise UsageError(
            f"unknown category '{category}'{suggest(category, taxonomy.categories)} (categories: {known}; "
            f"a new one is added to {entries}/{TAXONOMY_FILE} first)"
        )


# -- generate -----------------------------------------------------------------------------


def _generate(args: argparse.Namespace) -> int:
    from .history import entry_history
    from .publishing import PublishingError, write_pages
    from .rendering import Renderer, SiteOptions, repository_edit_uri

    result = load_or_report(args.entries)
    if result.encyclopedia is None:
        print(_summary(result))
        return EXIT_INVALID
    docs = Path(args.with_docs) if args.with_docs else None
    settings = _mkdocs_settings()
    options = SiteOptions(
        repo_url=args.repo_url or settings.get("repo_url"),
        edit_uri=repository_edit_uri(settings.get("edit_uri"), settings.get("docs_dir") or "docs"),
        entries_path=Path(args.entries).as_posix(),
    )
    renderer = Renderer(result.encyclopedia, options, history=entry_history(Path(args.entries)))
    try:
        count = write_pages(Path(args.out), renderer.pages(), renderer.static_files(), docs=docs)
    except PublishingError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {count} files into {args.out}")
    return EXIT_OK


def _finish_site(args: argparse.Namespace) -> int:
    from urllib.parse import urlsplit

    from .finishing import FinishingError, finish_site

    base_path = args.base_path or urlsplit(_mkdocs_settings().get("site_url") or "/").path or "/"
    try:
        finish_site(Path(args.site), base_path, search=args.search)
    except FinishingError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_INVALID
    print(f"finished {args.site}: {'search index, ' if args.search else ''}404 page for any path")
    return EXIT_OK


def _mkdocs_settings() -> dict[str, str]:
    """The top-level one-line settings of ./mkdocs.yml (repo_url, edit_uri, ...), read as plain
    text: its other keys may carry tags that a safe YAML loader refuses."""
    settings: dict[str, str] = {}
    try:
        with open("mkdocs.yml", encoding="utf-8") as handle:
            for line in handle:
                key, colon, value = line.partition(":")
                value = value.split(" #", 1)[0].strip().strip("'\"")
                if colon and value and key.isidentifier():
                    settings.setdefault(key, value)
    except OSError:
        pass
    return settings


# -- diagnose, run, watch, explain, search: reading the encyclopedia ---------------------------


FORMATS = ("text", "json", "github", "sarif", "short")
LIVE_FORMATS = ("text", "json", "github", "short")  # one finding at a time: no SARIF document
FORMAT_HELP = (
    "text (default, for a person); json; github (GitHub Actions annotations and job summary); "
    "sarif (SARIF 2.1.0, for code scanning); short (LOG:LINE: LEVEL: ID: title (url), for editors and grep)"
)


def _format_option(command: argparse.ArgumentParser, choices: tuple[str, ...]) -> None:
    command.add_argument("--format", choices=choices, default="text", help=FORMAT_HELP)
    command.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")


def _reader_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--entries",
        metavar="DIR",
        help="a folder of entries, e.g. a working tree's entries/ (default: the encyclopedia installed with mlfail)",
    )
    command.add_argument(
        "--site-url", metavar="URL", help="where links point (default: $MLFAIL_SITE_URL, else the published site)"
    )


def _entries_dir(args: argparse.Namespace) -> Path:
    from .resources import shipped_entries

    entries = Path(args.entries) if args.entries else shipped_entries()
    if not entries.is_dir():
        raise UsageError(f"{entries}: no such folder of entries")
    return entries


def _index(args: argparse.Namespace) -> SignatureIndex:
    from .signature_index import load_index

    entries = _entries_dir(args)
    index, problems = load_index(entries)
    if index is None:
        for problem in problems:
            print(problem.format(), file=sys.stderr)
        raise UsageError(f"the entries in {entries} are invalid; run: python -m generator validate {entries}")
    return index


def _encyclopedia(args: argparse.Namespace) -> Encyclopedia:
    from .loading import load_encyclopedia

    entries = _entries_dir(args)
    result = load_encyclopedia(entries)
    if result.encyclopedia is None:
        for problem in result.problems:
            print(problem.format(), file=sys.stderr)
        raise UsageError(f"the entries in {entries} are invalid; run: python -m generator validate {entries}")
    return result.encyclopedia


def _site(args: argparse.Namespace) -> str:
    from .resources import site_url

    return site_url(args.site_url)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def _diagnose(args: argparse.Namespace) -> int:
    from .diagnose import InputError, check_inputs, diagnosis_of, incomplete_of, scan_inputs
    from .formats import Report
    from .signature_index import closest_for

    try:
        check_inputs(args.logs)
    except InputError as error:
        raise UsageError(str(error)) from None
    index = _index(args)
    matcher = index.matcher()
    try:
        scanned = scan_inputs(matcher, args.logs, progress_to=sys.stderr)
    except InputError as error:
        raise UsageError(str(error)) from None
    for problem in scanned.problems:
        print(f"mlfail: {problem}", file=sys.stderr)
    diagnosis = diagnosis_of(index, matcher, scanned)
    diagnosis.findings = diagnosis.findings[: args.top]
    closest = [] if diagnosis.findings else closest_for(_entries_dir(args), matcher.error_lines(scanned.found))
    incomplete = incomplete_of(diagnosis, matcher, scanned.found)
    site = _site(args)
    report = Report(diagnosis, closest, index, matcher, scanned.names, site, scanned, incomplete)
    print(_formatted(report, args.format))
    return EXIT_OK if diagnosis.findings else EXIT_INVALID


def _formatted(report: Report, output: str) -> str:
    """The diagnosis in the format asked for (`generator.formats`)."""
    from .diagnose import as_text, closest_as_text, incomplete_as_text, report_object
    from .formats import as_github, as_sarif, as_short, write_github_summary

    diagnosis, index, paths, site = report.diagnosis, report.index, report.paths, report.site
    logs = report.scanned.logs if report.scanned else None
    if output == "json":
        assert report.matcher is not None, "a whole diagnosis keeps its matcher"
        whole = report_object(
            diagnosis, report.closest, index, report.matcher, report.scanned, paths, site, report.incomplete
        )
        return json.dumps(whole, ensure_ascii=False, indent=2)
    if output == "sarif":
        return as_sarif(report, _version())
    if output == "short":
        return as_short(report)
    if output == "github":
        write_github_summary(report)
        return as_github(report)
    if diagnosis.findings:
        return as_text(diagnosis, index, paths, site, logs)
    text = "No known failure signature found in the log."
    if report.incomplete:
        text += "\n\n" + incomplete_as_text(report.incomplete, paths)
    return text + ("\n\n" + closest_as_text(report.closest, index, paths, site) if report.closest else "")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ml-failure-encyclopedia")
    except PackageNotFoundError:
        return "0+unknown"


def _run(args: argparse.Namespace) -> int:
    from .formats import Report
    from .live import live_scan, run_command, write_text

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise UsageError("no command to run; write it after --, e.g. mlfail run -- torchrun train.py")
    index, site = _index(args), _site(args)
    # GitHub reads workflow commands from standard output; everything else goes beside the job's errors.
    target = sys.stdout.buffer if args.format == "github" else None
    on_found = _live_reporter(index, site, args.format, "-", target) if args.on_match else None
    scan = live_scan(index, on_found)
    try:
        status = run_command(command, scan, sys.stdout.buffer, sys.stderr.buffer)
    except FileNotFoundError:
        raise UsageError(f"{command[0]}: command not found") from None
    except PermissionError:
        raise UsageError(f"{command[0]}: permission denied") from None
    if status == 0:
        return 0  # a job that succeeded gets no diagnosis
    diagnosis = index.triage(scan.results())
    diagnosis.findings = diagnosis.findings[: args.top]
    if args.format != "text":
        report = Report(diagnosis, [], index, scan.matcher, ["-"], site)
        write_text(target, _formatted(report, args.format) + "\n")
        return status
    header = f"\nmlfail: `{' '.join(command)}` exited with status {status}."
    if diagnosis.findings:
        from .diagnose import as_text

        write_text(None, f"{header} Diagnosis, best match first:\n\n{as_text(diagnosis, index, ['-'], site)}\n")
    else:
        write_text(None, f"{header} No known failure signature in its output.\n")
    return status


def _live_reporter(index: SignatureIndex, site: str, output: str, path: str, target: Any) -> Callable[[Any], None]:
    """What prints each failure as soon as it is found, in the format asked for."""
    from .diagnose import found_now
    from .formats import live_line
    from .live import write_text

    if output == "text":
        return lambda result: write_text(target, found_now(result, index, site) + "\n")
    return lambda result: write_text(target, live_line(result, index, site, output, path) + "\n")


def _watch(args: argparse.Namespace) -> int:
    from .live import live_scan, watch

    index, site = _index(args), _site(args)
    scan = live_scan(index, _live_reporter(index, site, args.format, args.log, sys.stdout.buffer))
    # The first line and the caught-up line are the begin and end markers of the VS Code problem
    # matcher (docs/assets/vscode/tasks.json): findings reported between them are the log's so far.
    print(f"mlfail: watching {args.log} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    caught_up = lambda: print(f"mlfail: caught up with {args.log}", file=sys.stderr, flush=True)  # noqa: E731
    watch(Path(args.log), scan, from_end=args.from_end, interval=args.interval, on_caught_up=caught_up)
    return EXIT_OK


def _explain(args: argparse.Namespace) -> int:
    from .explain import closest_ids, explain

    encyclopedia = _encyclopedia(args)
    entry_id = encyclopedia.resolve(args.id)
    if entry_id not in encyclopedia.entries:
        close = closest_ids(encyclopedia, args.id)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `mlfail search WORDS` finds entries"
        raise UsageError(f"no entry '{args.id}'{hint}")
    print(explain(encyclopedia.entries[entry_id], _site(args)))
    return EXIT_OK


def _search(args: argparse.Namespace) -> int:
    from .search import SearchIndex

    encyclopedia = _encyclopedia(args)
    hits = SearchIndex.from_encyclopedia(encyclopedia, _index(args).matcher()).search(
        " ".join(args.text), limit=args.top
    )
    for hit in hits:
        print(f"{hit.entry_id:<40} {hit.title}" + ("  [matches this error]" if hit.matches_error else ""))
    if not hits:
        print("No entry found.", file=sys.stderr)
    return EXIT_OK if hits else EXIT_INVALID


# -- check-links ---------------------------------------------------------------------------


def _check_links(args: argparse.Namespace) -> int:
    from .links import dead_links, references

    if not Path(args.entries).is_dir():
        raise UsageError(f"{args.entries}: no such folder")
    found = dead_links(args.entries, timeout=args.timeout)
    for link in found:
        print(link.format_github() if args.format == "github" else link.format())
    dead = [link for link in found if link.kind == "dead"]
    unreachable = len(found) - len(dead)
    print(f"{_count(len(dead), 'dead link')}, {unreachable} unreachable", file=sys.stderr)
    if unreachable > 1 and unreachable == sum(1 for _ in references(args.entries)):
        print("no link could be reached: is this machine offline? nothing was judged dead", file=sys.stderr)
    return EXIT_INVALID if dead and args.strict else EXIT_OK


# -- schema -----------------------------------------------------------------------------


def _schema(args: argparse.Namespace) -> int:
    from .loading import load_taxonomy
    from .models import entry_json_schema

    taxonomy, problems = load_taxonomy(args.entries)
    if taxonomy is None:
        for problem in problems:
            print(problem.format(), file=sys.stderr)
        return EXIT_INVALID
    print(json.dumps(entry_json_schema(taxonomy), indent=2, ensure_ascii=False))
    return EXIT_OK
