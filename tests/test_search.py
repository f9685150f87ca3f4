"""`mlfail search` on the shipped encyclopedia: the same questions as the site's search box
(tests/search_queries.py), and the rules they rely on."""

from __future__ import annotations

import pytest

from generator.loading import load_encyclopedia
from generator.search import SearchIndex, codes
from generator.signature_index import load_index

from .search_queries import PASTED, QUESTIONS, SEED_QUESTIONS, TYPED
from .site_build import REPO

ALL_TYPED = TYPED + SEED_QUESTIONS + QUESTIONS


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    encyclopedia = load_encyclopedia(REPO / "entries").encyclopedia
    assert encyclopedia is not None
    signatures, problems = load_index(REPO / "entries")
    assert signatures is not None, problems
    return SearchIndex.from_encyclopedia(encyclopedia, signatures.matcher())


@pytest.mark.parametrize("query,expected", ALL_TYPED, ids=[query for query, _ in ALL_TYPED])
def test_typed_searches_list_the_entry_in_the_first_three(index, query, expected):
    found = [hit.entry_id for hit in index.search(query, limit=8)]
    assert expected & set(found[:3]), found


@pytest.mark.parametrize("query,expected", PASTED, ids=[query[:40] for query, _ in PASTED])
def test_a_pasted_error_line_lists_its_entry_first(index, query, expected):
    first = index.search(query, limit=3)[0]
    assert (first.entry_id, first.matches_error) == (expected, True)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("ncclSystemError", ["ncclsystemerror"]),
        ("[rank0]: ncclInternalError: Internal check failed.", ["ncclinternalerror"]),
        (
            "CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)",
            ["cublas_status_alloc_failed", "cublascreate"],
        ),
        ("GPU has fallen off the bus (Xid 79)", ["xid 79"]),
        ("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.", ["xid 79"]),
        ("error[FE203]: a code of ours", ["fe203"]),
        ("code: -98, name: EADDRINUSE", ["eaddrinuse"]),
        ("Signal 9 (SIGKILL) received by PID 1234", ["sigkill"]),
        ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:", ["childfailederror"]),
        ("RuntimeError: ERROR: something failed", []),  # two humps and a shout are words, not codes
    ],
)
def test_codes_are_read_in_one_spelling(text, expected):
    assert codes(text) == expected


def test_a_code_ranks_the_entry_that_names_it_above_word_matches(index):
    hits = index.search("ncclSystemError", limit=5)
    assert hits[0].entry_id == "nccl-unhandled-system-error"
    assert hits[0].score > 2 * hits[1].score


def test_ties_are_broken_by_title(index):
    hits = index.search("zzz-no-such-word nccl", limit=50)
    for before, after in zip(hits, hits[1:]):
        assert (-before.score, before.title.casefold()) <= (-after.score, after.title.casefold())


def test_the_same_query_gives_the_same_list(index):
    assert index.search("cuda error", limit=20) == index.search("cuda error", limit=20)
