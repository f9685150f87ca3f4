"""The command line, run as a user runs it: a real process, real files, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "generator", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_validate_ok(corpus):
    corpus.entry()
    result = run("validate", "entries", cwd=corpus.root.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "OK: 1 entries valid"


def test_validate_reports_every_problem_sorted_with_paths_as_given(corpus):
    corpus.entry("b-entry", severity="huge", tags="[zero3]")
    corpus.entry("a-entry", folder="performance", category="performance", symtoms="[]")
    corpus.write("memory/broken.yaml", "id: [\n")
    result = run("validate", "entries", cwd=corpus.root.parent)
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    problems, summary = lines[:-1], lines[-1]
    assert problems == sorted(
        problems, key=lambda line: (line.split(":")[0], int(line.split(":")[1]), int(line.split(":")[2]))
    )
    assert any(line.startswith("entries/memory/b-entry.yaml:5:11: error[FE203]: severity: ") for line in problems)
    assert any(
        line.startswith(
            "entries/memory/b-entry.yaml:6:8: error[FE307]: tags[0]: unknown tag 'zero3'; did you mean 'zero-3'?"
        )
        for line in problems
    )
    assert any(line.startswith("entries/performance/a-entry.yaml:") and "symtoms" in line for line in problems)
    assert any(line.startswith("entries/memory/broken.yaml:") for line in problems)
    assert summary.startswith("FAILED: 4 problems in 3 files")
    assert "Traceback" not in result.stderr


def test_validate_default_folder_is_entries(corpus):
    corpus.entry()
    assert run("validate", cwd=corpus.root.parent).returncode == 0


def test_validate_missing_folder_is_a_usage_error(tmp_path):
    result = run("validate", "nowhere", cwd=tmp_path)
    assert result.returncode == 2 and "nowhere" in result.stderr and "Traceback" not in result.stderr


def test_usage_errors(tmp_path):
    assert run("validate", "--format", "xml", cwd=tmp_path).returncode == 2
    assert run(cwd=tmp_path).returncode == 2
    assert run("frobnicate", cwd=tmp_path).returncode == 2


def test_github_annotations(corpus):
    corpus.entry(severity="huge")
    result = run("validate", "entries", "--format", "github", cwd=corpus.root.parent)
    assert result.returncode == 1
    line = result.stdout.strip().splitlines()[0]
    assert line.startswith("::error file=entries/memory/cuda-oom-example.yaml,line=5,col=11,title=FE203 severity::")


def test_new_writes_a_scaffold_that_fails_until_filled(corpus):
    root = corpus.root.parent
    corpus.entry()
    result = run("new", "my-new-failure", "--category", "memory", cwd=root)
    assert result.returncode == 0, result.stderr
    path = corpus.root / "memory" / "my-new-failure.yaml"
    text = path.read_text()
    assert text.startswith("# yaml-language-server: $schema=")
    for field in (
        "id:",
        "title:",
        "summary:",
        "category:",
        "severity:",
        "tags:",
        "description:",
        "mechanism:",
        "causes:",
        "observations:",
        "symptoms:",
        "signatures:",
        "affected:",
        "confirm:",
        "fix:",
        "prevention:",
        "faq:",
        "references:",
        "related:",
        "reviewed:",
    ):
        assert f"\n{field}" in text
    check = run("validate", "entries", cwd=root)
    assert check.returncode == 1
    flagged = {line.split("]: ")[1].split(":")[0] for line in check.stdout.splitlines() if "my-new-failure" in line}
    assert {
        "title",
        "summary",
        "severity",
        "mechanism",
        "reviewed",
        "references[0].url",
        "fix.code[0].source",
    } <= flagged
    assert "\ncategory: memory " in text and "category" not in flagged


def test_new_refuses_an_unknown_category_with_the_known_ones(corpus):
    result = run("new", "my-new-failure", "--category", "memroy", cwd=corpus.root.parent)
    assert result.returncode == 2
    assert "unknown category 'memroy'; did you mean 'memory'? (categories: memory, performance;" in result.stderr
    assert not (corpus.root / "memroy").exists()


def test_validate_files_checks_them_against_their_whole_folder(corpus):
    corpus.entry("a-entry", related="\n  - id: b-entri\n    relation: similar")
    corpus.entry("b-entry")
    corpus.entry("c-entry", severity="huge", related="\n  - id: a-entry\n    relation: similar")
    inside = corpus.root / "memory"
    result = run("validate", "a-entry.yaml", "b-entry.yaml", cwd=inside)
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("a-entry.yaml:") and "no entry has the id 'b-entri'" in lines[0]
    assert lines[1:] == ["FAILED: 1 problem in 2 files checked"], "c-entry's problem is not among the files named"
    assert run("validate", "b-entry.yaml", cwd=inside).stdout.strip() == "OK: 1 entry valid"
    corpus.entry("d-entry", related="\n  - id: b-entry\n    relation: similar")
    assert run("validate", "b-entry.yaml", "d-entry.yaml", cwd=inside).stdout.strip() == "OK: 2 entries valid"


def test_validate_refuses_a_file_outside_a_folder_of_entries(tmp_path):
    (tmp_path / "x.yaml").write_text("id: x\n")
    result = run("validate", "x.yaml", cwd=tmp_path)
    assert result.returncode == 2 and "no taxonomy.yaml in a parent folder" in result.stderr


def test_new_refuses_to_overwrite(corpus):
    corpus.entry()
    result = run("new", "cuda-oom-example", cwd=corpus.root.parent)
    assert result.returncode == 2 and "already exists" in result.stderr
    assert "cuda-oom-example" in (corpus.root / "memory" / "cuda-oom-example.yaml").read_text()


def test_new_rejects_a_bad_id(corpus):
    result = run("new", "Bad_Id", cwd=corpus.root.parent)
    assert result.returncode == 2 and "not a valid key" in result.stderr


def test_schema_is_json_schema_of_the_model(corpus):
    result = run("schema", cwd=corpus.root.parent)
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) >= {"id", "title", "summary", "causes", "symptoms", "fix", "references", "reviewed"}
    assert "signatures" in schema["properties"] and "signatures" not in schema["required"]
    assert schema["properties"]["category"]["enum"] == ["memory", "performance"], "the taxonomy's, for editors"
    assert schema["properties"]["tags"]["items"]["enum"] == ["deepspeed", "oom", "zero-3"]


def test_schema_without_a_taxonomy_says_so(tmp_path):
    result = run("schema", cwd=tmp_path)
    assert result.returncode == 1 and "taxonomy file is missing" in result.stderr


def test_committed_schema_matches_the_models(tmp_path):
    committed = json.loads((REPO / "schema" / "entry.schema.json").read_text())
    assert committed == json.loads(run("schema", cwd=REPO).stdout), "run `make schema` to refresh it"
