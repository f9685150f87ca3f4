"""Every rule of the entry format, each tested with real YAML text."""

from __future__ import annotations

import pytest

from generator.loading import load_encyclopedia
from generator.problems import Problem

from .conftest import SOURCE, entry_yaml
from .site_build import REPO


def check(corpus) -> list[Problem]:
    return load_encyclopedia(corpus.root).problems


def source_at(problem: Problem) -> str:
    """The source text from the problem's line and column on."""
    with open(problem.path, encoding="utf-8") as handle:
        line = handle.read().split("\n")[problem.line - 1]
    return line[problem.column - 1 :]


def only(corpus) -> Problem:
    problems = check(corpus)
    assert len(problems) == 1, [p.format() for p in problems]
    return problems[0]


def test_valid_corpus_loads(corpus):
    corpus.entry()
    result = load_encyclopedia(corpus.root)
    assert result.problems == []
    assert list(result.encyclopedia.entries) == ["cuda-oom-example"]
    assert result.encyclopedia.sources["cuda-oom-example"] == "memory/cuda-oom-example.yaml"


def test_error_names_file_line_column_and_field(corpus):
    corpus.entry(severity="huge")
    problem = only(corpus)
    assert problem.path.endswith("entries/memory/cuda-oom-example.yaml")
    assert (problem.line, problem.column, problem.field) == (5, 11, "severity")
    assert source_at(problem) == "huge"
    assert "low" in problem.message and "'huge'" in problem.message


@pytest.mark.parametrize(
    "field",
    [
        "id",
        "title",
        "summary",
        "category",
        "severity",
        "tags",
        "mechanism",
        "causes",
        "symptoms",
        "affected",
        "confirm",
        "fix",
        "references",
        "reviewed",
    ],
)
def test_required_fields(corpus, field):
    corpus.entry(**{field: None})
    problem = only(corpus)
    assert problem.field == field
    assert "missing" in problem.message
    assert (problem.line, problem.column) == (1, 1)


def test_unknown_key_suggests_the_right_one(corpus):
    corpus.write("memory/cuda-oom-example.yaml", entry_yaml() + "symtoms: []\n")
    problem = only(corpus)
    assert problem.field == "symtoms"
    assert "did you mean 'symptoms'" in problem.message
    assert problem.column == 1


def test_nested_unknown_key(corpus):
    corpus.entry(fix="\n  summary: Lower it.\n  stepz: [a]")
    problem = only(corpus)
    assert problem.field == "fix.stepz" and "did you mean 'steps'" in problem.message


@pytest.mark.parametrize(
    "value,expected",
    [
        ("''", "must not be empty"),
        ("'   '", "must not be empty"),
        ("null", "null"),
        ("~", "null"),
        ("123", "put it in quotes"),
        ("yes", "put it in quotes"),
        ("[a, b]", "expected text"),
    ],
)
def test_text_fields_are_non_empty_strings(corpus, value, expected):
    corpus.entry(title=value)
    problem = only(corpus)
    assert problem.field == "title" and expected in problem.message


def test_colon_in_list_item_explains_quoting(corpus):
    corpus.entry(confirm="\n  - Look for: the message")
    problem = only(corpus)
    assert problem.field == "confirm[0]" and "quote the text" in problem.message


@pytest.mark.parametrize(
    "field,value",
    [
        ("observations", "[]"),
        ("observations", "null"),
        ("description", "''"),
        ("prevention", "~"),
        ("signatures", "[]"),
        ("related", "[]"),
        ("former_ids", "[]"),
        ("faq", "null"),
    ],
)
def test_optional_fields_are_left_out_not_empty(corpus, field, value):
    corpus.entry(**{field: value})
    problem = only(corpus)
    assert problem.field == field


@pytest.mark.parametrize("field", ["tags", "causes", "symptoms", "affected", "confirm", "references"])
def test_required_lists_need_an_item(corpus, field):
    corpus.entry(**{field: "[]"})
    assert only(corpus).field == field


@pytest.mark.parametrize("bad_id", ["CUDA-oom", "cuda--oom", "-cuda", "cuda_oom", "cuda oom", "a" * 81, "oom-"])
def test_id_format(corpus, bad_id):
    corpus.write("memory/x.yaml", entry_yaml(f"'{bad_id}'"))
    messages = [p.message for p in check(corpus) if p.field == "id"]
    assert any("not a valid key" in message or "longer than 80" in message for message in messages)


def test_id_must_equal_file_stem(corpus):
    corpus.write("memory/other-name.yaml", entry_yaml("cuda-oom-example"))
    problem = only(corpus)
    assert problem.field == "id" and "other-name.yaml" in problem.message


def test_duplicate_ids_name_both_files(corpus):
    corpus.entry(folder="memory")
    corpus.entry(folder="performance", category="performance")
    problems = check(corpus)
    assert len(problems) == 2
    assert "performance/cuda-oom-example.yaml" in problems[0].message
    assert "memory/cuda-oom-example.yaml" in problems[1].message


def test_severity_enum(corpus):
    corpus.entry(severity="High")
    assert only(corpus).field == "severity"


def test_cause_reference_must_exist(corpus):
    corpus.entry(symptoms="\n  - symptom: OOM.\n    cause: big-batchh\n  - symptom: Slow.\n    cause: prefetch")
    problem = only(corpus)
    assert problem.field == "symptoms[0].cause"
    assert "did you mean 'big-batch'" in problem.message
    assert source_at(problem) == "big-batchh"


def test_cause_ids_unique(corpus):
    corpus.entry(
        causes="\n  - id: a\n    text: A.\n    fix: F.\n  - id: a\n    text: B.\n    fix: G.",
        symptoms="\n  - symptom: S.\n    cause: a\n  - symptom: T.\n    cause: a",
    )
    assert only(corpus).field == "causes[1].id"


def test_unknown_tag_suggests_alias_first(corpus):
    corpus.entry(tags="[zero3]")
    problem = only(corpus)
    assert problem.field == "tags[0]" and "did you mean 'zero-3'" in problem.message


def test_unknown_tag_suggests_closest_key(corpus):
    corpus.entry(tags="[deepspeeed]")
    assert "did you mean 'deepspeed'" in only(corpus).message


def test_an_unknown_tag_without_a_close_match_points_at_the_taxonomy(corpus):
    corpus.entry(tags="[kubernetes]")
    message = only(corpus).message
    assert "unknown tag 'kubernetes'; the tags are keys of `tags` in taxonomy.yaml (deepspeed, oom, zero-3)" in message
    assert "add a new one there first" in message


def test_unknown_category(corpus):
    corpus.entry(category="memroy")
    problem = only(corpus)
    assert problem.field == "category" and "did you mean 'memory'" in problem.message


@pytest.mark.parametrize(
    "url",
    ["ftp://example.org/x", "/docs/page", "javascript:alert(1)", "https://", "example.org", "'https://exa mple.org'"],
)
def test_reference_urls_are_absolute_http(corpus, url):
    corpus.entry(references=f"\n  - title: T\n    url: {url}")
    assert only(corpus).field == "references[0].url"


@pytest.mark.parametrize(
    "value",
    ["2026-02-30", "2026-13-01", "'2026-1-5'", "2026-11-29 10:00:00", "2026-11-29T10:00:00Z", "yesterday", "20261129"],
)
def test_reviewed_is_a_real_calendar_date(corpus, value):
    corpus.entry(reviewed=value)
    assert only(corpus).field == "reviewed"


def test_reviewed_quoted_date_is_fine(corpus):
    corpus.entry(reviewed="'2024-02-29'")
    assert check(corpus) == []


def test_related_resolves_ids_and_former_ids(corpus):
    corpus.entry("a-entry", related="\n  - id: old-b\n    relation: causes")
    corpus.entry("b-entry", former_ids="[old-b]")
    result = load_encyclopedia(corpus.root)
    assert result.problems == []
    links = result.encyclopedia.links
    assert [(link.target, link.relation, link.declared) for link in links["b-entry"]] == [
        ("a-entry", "caused-by", False)
    ]


def test_related_unknown_id(corpus):
    corpus.entry("a-entry", related="\n  - id: b-entri\n    relation: similar")
    corpus.entry("b-entry")
    problem = only(corpus)
    assert problem.field == "related[0].id" and "did you mean 'b-entry'" in problem.message


def test_related_to_itself(corpus):
    corpus.entry("a-entry", related="\n  - id: a-entry\n    relation: similar")
    assert "itself" in only(corpus).message


def test_related_to_itself_via_former_id(corpus):
    corpus.entry("a-entry", former_ids="[old-a]", related="\n  - id: old-a\n    relation: similar")
    assert "itself" in only(corpus).message


def test_related_twice(corpus):
    corpus.entry("a-entry", related="\n  - id: b-entry\n    relation: similar\n  - id: b-entry\n    relation: causes")
    corpus.entry("b-entry")
    assert only(corpus).field == "related[1].id"


def test_related_twice_through_former_id(corpus):
    corpus.entry("a-entry", related="\n  - id: b-entry\n    relation: similar\n  - id: old-b\n    relation: causes")
    corpus.entry("b-entry", former_ids="[old-b]")
    assert only(corpus).field == "related[1].id"


def test_relation_kind_enum(corpus):
    corpus.entry("a-entry", related="\n  - id: b-entry\n    relation: parent")
    corpus.entry("b-entry")
    assert only(corpus).field == "related[0].relation"


def test_former_id_colliding_with_an_id(corpus):
    corpus.entry("a-entry", former_ids="[b-entry]")
    corpus.entry("b-entry")
    assert only(corpus).field == "former_ids[0]"


def test_former_id_claimed_twice(corpus):
    corpus.entry("a-entry", former_ids="[old]")
    corpus.entry("b-entry", former_ids="[old]")
    assert only(corpus).field == "former_ids[0]"


def test_a_literal_its_example_misses_says_where_they_part(corpus):
    corpus.entry(
        signatures=f'\n  - literal: "CUDA out of memory. Tried"\n    source: {SOURCE}'
        '\n    examples: ["torch.OutOfMemoryError: CUDA out of memory; Tried to allocate"]'
    )
    message = only(corpus).message
    assert "does not contain the literal `CUDA out of memory. Tried`" in message
    assert (
        "they agree on `CUDA out of memory`, then the literal has `. Tried` where the example has `; Tried" in message
    )


def test_a_regex_its_example_misses_says_how_far_it_matches(corpus):
    corpus.entry(
        signatures=f"\n  - regex: 'Tried to allocate [0-9.]+ [KMG]iB \\(GPU'\n    source: {SOURCE}"
        "\n    examples: ['CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0']"
    )
    message = only(corpus).message
    assert "its start `Tried to allocate [0-9.]+ [KMG]iB` matches `Tried to allocate 2.00 GiB`" in message
    assert "then ` \\(GPU` does not match `. GPU 0`" in message


# -- the content bar: the rules CI enforces are validate's rules ----------------------------


def test_one_symptom_is_not_enough(corpus):
    corpus.entry(symptoms="\n  - symptom: OOM.\n    cause: big-batch")
    problem = only(corpus)
    assert problem.field == "symptoms" and "at least 2" in problem.message


def test_an_entry_that_prints_errors_needs_signatures(corpus):
    corpus.entry(signatures=None)
    problem = only(corpus)
    assert problem.field == "signatures" and "only performance entries may have none" in problem.message


def test_a_category_can_let_its_entries_go_without_signatures(corpus):
    corpus.entry(folder="performance", category="performance", signatures=None)
    assert check(corpus) == []


def test_the_folder_names_the_category(corpus):
    corpus.entry(folder="performance")  # category: memory
    problem = only(corpus)
    assert problem.field == "category" and source_at(problem) == "memory"
    assert "in the folder 'performance'; move it to memory/" in problem.message


def test_an_entry_at_the_top_of_the_folder_may_have_any_category(corpus):
    corpus.write("cuda-oom-example.yaml", entry_yaml())
    assert check(corpus) == []


@pytest.mark.parametrize(
    "override",
    [
        {
            "fix": "\n  summary: Lower it.\n  code:\n    - label: Py\n      language: python\n      source: |\n        x = 1  # TODO"
        },
        {"mechanism": "The allocator fails (TODO, explain)."},
        {"signatures": f"\n  - regex: 'TODO|fail'\n    source: {SOURCE}\n    examples: ['it did fail']"},
    ],
)
def test_a_todo_anywhere_fails(corpus, override):
    corpus.entry(**override)
    assert "TODO placeholder" in only(corpus).message


def test_a_misspelt_required_field_is_one_problem(corpus):
    corpus.entry(symptoms=None, symtoms="\n  - symptom: S.\n    cause: big-batch")
    problem = only(corpus)
    assert problem.field == "symtoms" and source_at(problem).startswith("symtoms:")
    assert "did you mean 'symptoms'? (a required field)" in problem.message


def test_a_missing_review_date_gives_its_format(corpus):
    corpus.entry(reviewed=None)
    assert "(YYYY-MM-DD)" in only(corpus).message


def test_a_tab_does_not_hide_the_files_other_problems(corpus):
    corpus.entry(severity="huge", fix="\n\tsummary: Lower the batch size.", confirm="\n  - Run it.\n\t- Again.")
    problems = check(corpus)
    tabs = [problem.line for problem in problems if "tab character in indentation" in problem.message]
    assert len(tabs) == 2, [problem.format() for problem in problems]
    assert any(problem.field == "severity" and source_at(problem) == "huge" for problem in problems)


def test_a_colon_in_unquoted_text_says_to_quote_it(corpus):
    corpus.entry(mechanism="The allocator says: no free block.")
    problem = only(corpus)
    assert "mapping values are not allowed" in problem.message
    assert "put the value in quotes" in problem.message


def test_an_entry_nothing_links_to_is_reported_once_links_resolve(corpus):
    corpus.entry("a-entry")
    corpus.entry("b-entry", related="\n  - id: a-entry\n    relation: similar")
    corpus.entry("c-entry")
    problem = only(corpus)
    assert problem.path.endswith("c-entry.yaml") and problem.field == "id"
    assert "add a `related` entry" in problem.message


def test_a_single_entry_needs_no_neighbour(corpus):
    corpus.entry()
    assert check(corpus) == []


# -- signatures --------------------------------------------------------------------------


def with_sources(text: str) -> str:
    """Signature items as YAML text, each given a valid `source` first."""
    return text.replace("\n  - ", f"\n  - source: {SOURCE}\n    ")


def sig(corpus, text: str) -> Problem:
    corpus.entry(signatures=with_sources(text))
    return only(corpus)


def test_literal_must_be_non_empty(corpus):
    assert sig(corpus, "\n  - literal: ''").field == "signatures[0].literal"


def test_regex_needs_examples(corpus):
    problem = sig(corpus, "\n  - regex: 'abc'")
    assert problem.field == "signatures[0].examples" and "missing" in problem.message


def test_regex_must_match_its_examples(corpus):
    problem = sig(corpus, "\n  - regex: 'abc [0-9]+'\n    examples: ['abc 12', 'abc x']")
    assert problem.field == "signatures[0].examples[1]"
    assert source_at(problem).startswith("'abc x'")


def test_an_example_in_another_language_is_checked_as_the_matcher_reads_it(corpus):
    """bash in German prints `Getötet` for Killed; the matcher reads it as `Killed` (normalise.py)."""
    corpus.entry(signatures=with_sources("\n  - regex: '^Killed$'\n    examples: ['Killed', 'Getötet', '已杀死']"))
    assert check(corpus) == []
    problem = sig(corpus, "\n  - regex: '^Killed$'\n    examples: ['Getötet und mehr']")
    assert problem.field == "signatures[0].examples[0]" and "not even its first part matches" in problem.message


def test_literal_examples_must_contain_it(corpus):
    problem = sig(corpus, "\n  - literal: 'abc'\n    examples: ['xyz']")
    assert problem.field == "signatures[0].examples[0]"


def test_signature_needs_one_kind(corpus):
    assert "exactly one" in sig(corpus, "\n  - note: only a note").message


def test_signature_with_both_kinds(corpus):
    assert "exactly one" in sig(corpus, "\n  - literal: a\n    regex: b\n    examples: [ab]").message


@pytest.mark.parametrize(
    "pattern,reason",
    [
        ("(a+)+b", "nested quantifiers"),
        ("(a*)*b", "empty string"),
        ("x(a|a)*", "same character"),
        ("a*", "empty string"),
        ("(?=a)b", "look-ahead"),
        ("(?<=a)b", "look-behind"),
        ("(?P<n>a)", "named groups"),
        ("(a)\\\\1", "back-references"),
        ("(?i)abc", "inline flags"),
        ("\\\\Aabc", r"'\A'"),
        ("abc\\\\Z", r"'\Z'"),
        ("(?>abc)", "atomic"),
        ("a++", "possessive"),
        ("(?#note)abc", "comments"),
        ("[abc", "missing ']'"),
        ("abc(", "missing ')'"),
    ],
)
def test_regex_portable_subset(corpus, pattern, reason):
    problem = sig(corpus, f'\n  - regex: "{pattern}"\n    examples: ["abc aab b"]')
    assert problem.field == "signatures[0].regex"
    assert reason in problem.message


def test_bounded_repeat_is_fine(corpus):
    corpus.entry(
        signatures=with_sources(
            "\n  - regex: '(?:[0-9]{1,3}\\.){3}[0-9]{1,3}'\n    examples: ['peer 10.0.0.12 closed']"
        )
    )
    assert check(corpus) == []


def test_a_broken_file_does_not_hide_others(corpus):
    corpus.write("memory/broken.yaml", "id: [unclosed\n")
    corpus.entry(severity="huge")
    problems = check(corpus)
    assert {p.path.rsplit("/", 1)[-1] for p in problems} == {"broken.yaml", "cuda-oom-example.yaml"}


def test_yml_extension_is_reported(corpus):
    corpus.write("memory/x.yml", entry_yaml("x"))
    assert "rename" in only(corpus).message


def test_missing_taxonomy(corpus):
    (corpus.root / "taxonomy.yaml").unlink()
    corpus.entry()
    problem = only(corpus)
    assert problem.path.endswith("taxonomy.yaml")


def test_taxonomy_errors_are_located(corpus):
    corpus.write("taxonomy.yaml", "categories:\n  Memory:\n    title: M\ntags:\n  oom:\n    titel: O\n")
    fields = {p.field for p in check(corpus)}
    assert "categories.Memory" in fields and "tags.oom.titel" in fields


def test_alias_that_is_a_tag_is_an_error(corpus):
    corpus.write(
        "taxonomy.yaml",
        "categories:\n  memory:\n    title: M\ntags:\n  oom:\n    title: O\n    aliases: [oom2]\n  oom2:\n    title: O2\n",
    )
    assert only(corpus).field == "tags.oom.aliases[0]"


def test_placeholders_from_new_fail(corpus):
    corpus.entry(title="'TODO: the title'", category="TODO")
    fields = {p.field: p.message for p in check(corpus)}
    assert "placeholder" in fields["title"] and "placeholder" in fields["category"]


def test_raw_values_stay_text(corpus):
    corpus.entry(tags="[oom, deepspeed]", title="'<script>alert(1)</script>'")
    result = load_encyclopedia(corpus.root)
    assert result.encyclopedia.entries["cuda-oom-example"].title == "<script>alert(1)</script>"


def test_code_language_is_a_pygments_lexer(corpus):
    corpus.entry(fix="\n  summary: Fix.\n  code:\n    - label: L\n      language: notalanguage\n      source: x")
    problem = only(corpus)
    assert problem.field == "fix.code[0].language" and "Pygments" in problem.message


def test_url_with_a_broken_port(corpus):
    corpus.entry(references="\n  - title: T\n    url: https://example.org:99999/x")
    assert only(corpus).field == "references[0].url"


# -- contract version 2: causes[].fix, signatures[].source and .supporting ---------------------


def test_cause_needs_a_fix(corpus):
    corpus.entry(
        causes="\n  - id: big-batch\n    text: The batch is too large.\n  - id: prefetch\n    text: P.\n    fix: F."
    )
    problem = only(corpus)
    assert problem.field == "causes[0].fix" and "required field 'fix' is missing" in problem.message
    assert source_at(problem).startswith("id: big-batch")  # the cause that lacks it


def test_signature_needs_a_source(corpus):
    corpus.entry(signatures="\n  - literal: 'CUDA out of memory.'")
    problem = only(corpus)
    assert problem.field == "signatures[0].source" and "required field 'source' is missing" in problem.message
    assert source_at(problem).startswith("literal:")


@pytest.mark.parametrize("value", ["github.com/pytorch/pytorch", "ftp://example.org/x", "/pytorch/x.cpp", "'https://'"])
def test_signature_source_is_an_absolute_http_url(corpus, value):
    corpus.entry(signatures=f"\n  - literal: 'CUDA out of memory.'\n    source: {value}")
    problem = only(corpus)
    assert problem.field == "signatures[0].source" and "absolute http" in problem.message
    assert source_at(problem) == value


@pytest.mark.parametrize("value,found", [("'true'", "'true'"), ("1", "a number"), ("[true]", "a list")])
def test_supporting_is_true_or_false(corpus, value, found):
    problem = sig(corpus, f"\n  - literal: 'CUDA out of memory.'\n    supporting: {value}")
    assert problem.field == "signatures[0].supporting"
    assert "expected true or false" in problem.message and found in problem.message
    assert source_at(problem) == value


def test_supporting_and_primary_signatures_together_are_fine(corpus):
    corpus.entry(
        signatures=with_sources(
            "\n  - literal: 'CUDA out of memory.'\n  - literal: 'in forward'\n    supporting: true"
            "\n  - literal: 'Tried to allocate'\n    supporting: false"
        )
    )
    assert check(corpus) == []


def test_an_entry_needs_one_signature_that_is_not_supporting(corpus):
    corpus.entry(
        signatures=with_sources(
            "\n  - literal: 'in forward'\n    supporting: true\n  - literal: 'loss.backward()'\n    supporting: true"
        )
    )
    problem = only(corpus)
    assert problem.field == "signatures" and "every signature is `supporting: true`" in problem.message
    assert source_at(problem).startswith("- source:")  # the list's first item: where the list begins


def test_a_real_field_at_the_wrong_level_is_not_suggested_as_itself(corpus):
    corpus.entry(signatures=with_sources("\n  - literal: 'CUDA out of memory.'\n    fix: Lower the batch."))
    problem = only(corpus)
    assert problem.field == "signatures[0].fix"
    assert "did you mean 'fix'" not in problem.message
    assert "'fix' is a field of the entry and a cause" in problem.message
    assert source_at(problem).startswith("fix:")


def test_every_problem_code_is_documented_and_used():
    """The codes the validator can print are exactly the documented ones: each name in
    problem_codes maps to a documented code, and each documented code is reported somewhere."""
    import re

    from generator import problem_codes

    source = "\n".join(path.read_text() for path in (REPO / "generator").glob("*.py"))
    names = set(re.findall(r"\bcodes\.([A-Z_]+)\b", source))
    named = {name: getattr(problem_codes, name) for name in names}
    assert set(named.values()) == set(problem_codes.PROBLEM_CODES), "a code nobody reports, or one not documented"


def test_problem_lines_carry_their_code(corpus):

    corpus.entry("a-entry", severity="huge", tags="[zero3]")
    corpus.write("memory/broken.yaml", "id: [\n")
    corpus.write("memory/tabbed.yaml", "id: tabbed\n\ttitle: x\n")
    lines = [problem.format() for problem in load_encyclopedia(corpus.root).problems]
    assert any(":5:11: error[FE203]: severity: must be one of" in line for line in lines)
    assert any(": error[FE307]: tags[0]: unknown tag 'zero3'" in line for line in lines)
    assert any("broken.yaml" in line and "error[FE102]: (file): invalid YAML" in line for line in lines)
    assert any("tabbed.yaml:2:1: error[FE103]: (file): tab character" in line for line in lines)
