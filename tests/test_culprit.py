"""The culprit finder: which ranks started a multi-rank failure (generator.culprit), its line
rules (generator.rank_lines), its inputs (folders, ranks from paths), Flight Recorder dumps read
safely (generator.flight_recorder) and the merge of node reports (generator.reports)."""

from __future__ import annotations

import gzip
import io
import json
import pickle
import pickletools
from pathlib import Path

import pytest

from generator.culprit import events_of, find_culprit, ranges
from generator.diagnose import InputError, diagnosis_of, scan_inputs
from generator.flight_recorder import DumpError, analyse, load
from generator.inputs import expand, kind_of, log_file
from generator.matcher import Match
from generator.rank_lines import read_line, time_of

from .culprit_cases import CULPRIT, load_culprit_cases
from .site_build import REPO

CASES = load_culprit_cases()
DUMPS = CULPRIT / "flight-recorder" / "gloo-skip-ws3-rank2"


@pytest.fixture(scope="module")
def shipped():
    from generator.loading import load_encyclopedia
    from generator.signature_index import SignatureIndex

    result = load_encyclopedia(REPO / "entries")
    assert result.ok
    index = SignatureIndex.from_encyclopedia(result.encyclopedia)
    return index, index.matcher()


def culprit_of_lines(*lines: str, files: list[str] | None = None):
    """The finder's answer on lines given as (file, text), or one file's lines."""
    names = files or ["job.log"]
    logs = [log_file(name) for name in names]
    matches = []
    for number, line in enumerate(lines, 1):
        source, _, text = line.partition("|") if files else ("0", "", line)
        matches.append(Match(number, text, 0, int(source)))
    return find_culprit(events_of(matches, logs, names))


# -- the rules, one by one, on real wordings ------------------------------------------------------


def test_monitored_barrier_names_the_ranks_that_did_not_arrive():
    found = culprit_of_lines(
        "[rank0]: RuntimeError: Rank 2 failed to pass monitoredBarrier in 10000 ms",
        "[rank1]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:5",
    )
    assert (found.initiators, found.rule) == ([2], "monitored-barrier")


def test_a_collective_mismatch_names_the_minority_of_at_least_three_ranks():
    line = (
        "[rank{r}]: RuntimeError: Detected mismatch between collectives on ranks. Rank {r} is running collective: "
        "CollectiveFingerPrint(SequenceNumber=7, OpType={mine}), but Rank 0 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=7, OpType=ALLREDUCE)."
    )
    found = culprit_of_lines(line.format(r=2, mine="BROADCAST"), line.format(r=1, mine="ALLREDUCE"))
    assert (found.initiators, found.rule) == ([2], "collective-mismatch")
    two_ranks = culprit_of_lines(line.format(r=1, mine="BROADCAST"))
    assert two_ranks.rule != "collective-mismatch", "between two ranks a mismatch names neither"


def test_nccl_counters_name_the_rank_that_never_enqueued_the_stuck_collective():
    line = (
        "[rank{r}]:[E1202 10:00:00.000000 1 ProcessGroupNCCL.cpp:1] [PG ID 0 PG GUID 0(default_pg) Rank {r}] "
        "Exception (either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {enq}, "
        "last completed NCCL work: {done}."
    )
    found = culprit_of_lines(
        line.format(r=0, seq=469508, enq=469508, done=469507),
        line.format(r=1, seq=469508, enq=469508, done=469507),
        line.format(r=3, seq=469507, enq=469507, done=469506),
    )
    assert (found.initiators, found.rule) == ([3], "work-counters")


def test_a_rank_that_failed_on_its_own_started_it_not_the_ranks_that_lost_it():
    found = culprit_of_lines(
        "[rank0]: RuntimeError: [pair.cc:553] Connection closed by peer [127.0.0.1]:18864.",
        "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        "[rank1]: RuntimeError: [pair.cc:537] Read error [127.0.0.1]:36016: Connection reset by peer.",
    )
    assert (found.initiators, found.rule, found.collateral) == ([3], "own-failure", [0, 1])


def test_timestamps_order_own_failures_across_files_not_the_file_order():
    found = culprit_of_lines(
        "0|2026-12-02 10:00:09,000 INFO step 41 loss 0.2",
        "0|ValueError: batch 17 has no labels",
        "1|2026-12-02 10:00:01,500 INFO step 40 loss 0.3",
        "1|KeyError: 'input_ids'",
        files=["rank0.log", "rank1.log"],
    )
    assert found.initiators == [1], "rank 1's error came 7.5 s before rank 0's, though rank 0's file comes first"
    assert found.collateral == [0]
    assert time_of("[I1202 04:31:22.123456 1234 x.cpp:12] hi") is not None


def test_ranks_absent_from_a_timeout_never_entered_the_collective():
    timeout = "[rank{r}]: RuntimeError: [unbound_buffer.cc:81] Timed out waiting 15000ms for recv operation to complete"
    found = culprit_of_lines(
        "[rank0]: world_size 4 rank 0 starting",
        timeout.format(r=0),
        timeout.format(r=1),
        timeout.format(r=3),
    )
    assert (found.initiators, found.rule, found.world_size) == ([2], "absent-from-timeout", 4)


def test_when_every_rank_timed_out_the_one_in_another_collective_is_named():
    found = culprit_of_lines(
        "[rank0]:     dist.all_reduce(flat)",
        "[rank0]: RuntimeError: Timed out waiting 15000ms for recv operation to complete",
        "[rank1]:     dist.broadcast(flat, src=RANK)",
        "[rank1]: RuntimeError: Timed out waiting 15000ms for send operation to complete",
        "[rank2]:     dist.all_reduce(flat)",
        "[rank2]: RuntimeError: Timed out waiting 15000ms for recv operation to complete",
    )
    assert (found.initiators, found.rule) == ([1], "waited-elsewhere")


def test_a_rank_behind_in_progress_when_the_job_stopped():
    found = culprit_of_lines(
        "[rank0]: step 41 loss 0.2",
        "[rank1]: step 41 loss 0.3",
        "[rank2]: step 40 loss 0.3",
        "[rank3]: step 41 loss 0.2",
    )
    assert (found.initiators, found.rule) == ([2], "behind")


def test_torchruns_summary_a_signal_is_its_own_failure_sigterm_is_the_launchers():
    block = [
        "Failures:",
        "[1]:",
        "  time      : 2026-12-02_04:35:11",
        "  host      : gpu-12",
        "  rank      : 0 (local_rank: 0)",
        "  exitcode  : -15 (pid: 25063)  (SIGTERM)",
        "  error_file: <N/A>",
        "  traceback : Signal 15 (SIGTERM) received by PID 25063",
        "Root Cause (first observed failure):",
        "[0]:",
        "  time      : 2026-12-02_04:35:10",
        "  host      : gpu-12",
        "  rank      : 7 (local_rank: 3)",
        "  exitcode  : -9 (pid: 25066)",
        "  error_file: <N/A>",
        "  traceback : Signal 9 (SIGKILL) received by PID 25066",
    ]
    found = culprit_of_lines(*block)
    assert (found.initiators, found.host, found.collateral) == ([7], "gpu-12", [0])


def test_srun_names_the_task_it_did_not_terminate():
    found = culprit_of_lines(
        "srun: error: nid002888: tasks 0-57,59-63: Terminated",
        "srun: Force Terminated StepId=52222788.0",
    )
    assert (found.initiators, found.rule) == ([58], "absent-from-stop")


def test_every_rank_ending_on_the_same_signal_names_none():
    block = []
    for rank in range(4):
        block += [f"[{rank}]:", f"  rank      : {rank} (local_rank: {rank})", f"  exitcode  : -6 (pid: {rank})"]
        block += [f"  traceback : Signal 6 (SIGABRT) received by PID {rank}"]
    assert (
        find_culprit(events_of([Match(n, t, 0) for n, t in enumerate(block, 1)], [log_file("a")], ["a"])).initiators
        == []
    )


def test_rank_lines_that_are_not_process_ranks():
    assert read_line("LoRA rank 8, alpha 16") is None or read_line("LoRA rank 8, alpha 16")[0].name == "progress"
    from generator.culprit import line_rank

    for line in ("LoRA rank 8, alpha 16", "lora rank: 16", "low rank 4", "Config(rank=16, r=8)", "r=8"):
        assert line_rank(line, log_file("train.log")) is None, line


def test_ranges_collapse_ranks():
    assert ranges([0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 15]) == "0-6, 8-10, 15"


# -- inputs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path,rank,local,node",
    [
        ("logs/rank3.log", 3, None, None),
        ("out/node1-rank11.out", 11, None, 1),
        ("slurm-1234_7.out", 7, None, None),
        ("run/train.rank_3.txt", 3, None, None),
        ("job/abc_x/attempt_0/2/stderr.log", None, 2, None),
        ("node1/abc/attempt_0/2/stdout.log", None, 2, 1),
        ("fr/fr_rank_5", 5, None, None),
        ("logs/train.log", None, None, None),
    ],
)
def test_the_rank_of_a_file_from_its_path(path, rank, local, node):
    log = log_file(path)
    assert (log.rank, log.local_rank, log.node) == (rank, local, node)


def test_a_folder_is_read_recursively_in_order_local_ranks_made_global(tmp_path):
    for node in (0, 1):
        for local in (0, 1):
            folder = tmp_path / f"node{node}" / "run" / "attempt_0" / str(local)
            folder.mkdir(parents=True)
            (folder / "stderr.log").write_text("x\n")
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 10)
    logs = expand([str(tmp_path)]).logs
    assert [(Path(log.path).relative_to(tmp_path).parts[0], log.rank) for log in logs] == [
        ("node0", 0),
        ("node0", 1),
        ("node1", 2),
        ("node1", 3),
    ]


def test_an_empty_folder_is_a_clear_error(tmp_path, shipped):
    _, matcher = shipped
    with pytest.raises(InputError, match="no log files found"):
        scan_inputs(matcher, [str(tmp_path)])


def test_files_are_told_by_their_first_bytes(tmp_path):
    (tmp_path / "a.log").write_text("Traceback\n")
    (tmp_path / "dump").write_bytes(pickle.dumps({"entries": []}, protocol=2))
    (tmp_path / "node.json").write_text(json.dumps({"mlfail-report": 1, "inputs": []}))
    (tmp_path / "fr.json").write_text(json.dumps({"version": "2.10", "pg_config": {}, "entries": []}))
    assert [kind_of(str(tmp_path / name)) for name in ("a.log", "dump", "node.json", "fr.json")] == [
        "log",
        "dump",
        "report",
        "dump",
    ]


# -- Flight Recorder dumps ------------------------------------------------------------------------


def test_real_gloo_dumps_name_the_rank_that_skipped_the_collective():
    """torch 2.13 gloo dumps (pickle, and the JSON of _dump_fr_trace_json) of a 3-rank job where
    rank 2 skipped the third all_reduce; their pg_config is keyed by '' (fr_trace's KeyError)."""
    for kind in ("pickle", "json"):
        dumps = [load(str(path)) for path in sorted((DUMPS / kind).iterdir())]
        assert [dump.rank for dump in dumps] == [0, 1, 2]
        events = analyse(dumps)
        assert [event.value.get("ranks") for event in events] == [[2]], kind
        assert "all_reduce" in events[0].text and "[[16]]" in events[0].text


def test_dumps_built_as_pytorchs_own_tests_build_them():
    """The event shape of PyTorch's test helper (test/distributed/flight_recorder: create_one_event):
    sequence ids as strings, dtypes as plain strings, pg_config keyed by group name."""

    def event(seq: int, name: str = "all_reduce", sizes=((4, 4),)):
        return {
            "profiling_name": f"nccl:{name}",
            "state": "scheduled",
            "process_group": ("0", "default"),
            "input_sizes": [list(size) for size in sizes],
            "output_sizes": [list(size) for size in sizes],
            "input_dtypes": "float32",
            "output_dtypes": "float32",
            "collective_seq_id": str(seq),
            "p2p_seq_id": "0",
            "time_created_ns": 0,
            "frames": [],
            "is_p2p": False,
        }

    config = {"0": {"name": "0", "desc": "default", "ranks": "[0, 1, 2, 3]"}}

    def dump(rank: int, entries):
        from generator.flight_recorder import Dump

        return Dump(f"trace_{rank}", rank, "2.8", {"0": [0, 1, 2, 3]} if config else {}, entries)

    same = [event(1), event(2)]
    odd = analyse([dump(0, same), dump(1, same), dump(2, [event(1), event(2, sizes=((8,),))]), dump(3, same)])
    assert [e.value["ranks"] for e in odd if e.value.get("ranks")] == [[2]]
    missing = analyse([dump(0, same), dump(1, same), dump(2, same)])
    assert missing[0].value == {"undumped": [3]}, "a rank of the group that wrote no dump is reported"


class _Boom:
    def __reduce__(self):
        return (Path.touch, (Path("/tmp/mlfail-unpickled-this"),))


def test_a_dump_that_tries_to_import_anything_is_refused_and_runs_nothing(tmp_path):
    target = Path("/tmp/mlfail-unpickled-this")
    target.unlink(missing_ok=True)
    crafted = tmp_path / "trace_rank_0"
    crafted.write_bytes(pickle.dumps({"entries": [_Boom()]}, protocol=2))
    assert any(op.name in ("GLOBAL", "STACK_GLOBAL") for op, _, _ in pickletools.genops(crafted.read_bytes()))
    with pytest.raises(DumpError, match="asks to import"):
        load(str(crafted))
    assert not target.exists(), "nothing in the dump ran"


def test_a_damaged_dump_is_a_clear_error(tmp_path, shipped):
    _, matcher = shipped
    broken = tmp_path / "trace_rank_1"
    broken.write_bytes(b"\x80\x02}q\x00(X\x07")
    with pytest.raises(DumpError, match="damaged pickle"):
        load(str(broken))
    scanned = scan_inputs(matcher, [str(broken)])
    assert scanned.problems and "not read as a Flight Recorder dump: a damaged pickle" in scanned.problems[0]


# -- the real cases, and the merge of node reports ------------------------------------------------


def _named(shipped, inputs: list[str]) -> list[int]:
    index, matcher = shipped
    diagnosis = diagnosis_of(index, matcher, scan_inputs(matcher, inputs))
    return diagnosis.culprit.initiators if diagnosis.culprit else []


def _param(case):
    marks = [pytest.mark.xfail(reason=case.known_miss, strict=True)] if case.known_miss else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(case) for case in CASES if case.tellable])
def test_the_initiators_of_every_case_are_named(shipped, case):
    assert _named(shipped, case.inputs) == list(case.initiators), case.origin


@pytest.mark.parametrize("case", [pytest.param(case, id=case.name) for case in CASES])
def test_no_case_names_a_victim(shipped, case):
    """The error that matters most: a rank that failed because of another, named as its cause."""
    wrong = set(_named(shipped, case.inputs)) - set(case.initiators or ())
    assert not wrong, f"named {sorted(wrong)} ({case.origin})"


def test_the_culprit_set_is_large_and_varied():
    made = [case for case in CASES if not case.name.startswith("threads/")]
    assert len(made) >= 30 and len(CASES) - len(made) >= 15
    assert {"combined", "folder", "nodes", "named-files"} <= {
        __import__("yaml").safe_load((Path(case.inputs[0]) / "case.yaml").read_text())["layout"] for case in made
    }


def test_node_reports_merge_into_the_verdict_of_the_whole_folder(shipped, tmp_path):
    from .test_diagnose import diagnose

    case = CULPRIT / "nodes-exception-ws4-rank3"
    whole = json.loads(diagnose("--format", "json", str(case), cache=tmp_path / "c", entries=REPO / "entries").stdout)
    reports = []
    for node in ("node0", "node1"):
        result = diagnose("--format", "json", str(case / node), cache=tmp_path / "c", entries=REPO / "entries")
        (tmp_path / f"{node}.json").write_bytes(result.stdout)
        reports.append(str(tmp_path / f"{node}.json"))
    merged = json.loads(diagnose("--format", "json", *reports, cache=tmp_path / "c", entries=REPO / "entries").stdout)
    assert merged["initiator"]["ranks"] == whole["initiator"]["ranks"] == [3]
    assert merged["initiator"]["failure"] == whole["initiator"]["failure"]
    assert [item["id"] for item in merged["findings"]] == [item["id"] for item in whole["findings"]]
    line = merged["initiator"]["evidence"][0]
    assert line["file"].startswith(reports[1] + ":") and line["line"] > 1, "evidence keeps its node's file and line"


def test_a_broken_report_is_a_clear_error(tmp_path):
    from .test_diagnose import diagnose

    bad = tmp_path / "node.json"
    bad.write_text(json.dumps({"mlfail-report": 1, "inputs": [{"file": "a", "lines": [["x", "y"]]}]}))
    result = diagnose(str(bad), cache=tmp_path / "c", entries=REPO / "entries")
    assert result.returncode == 2
    assert (
        result.stderr.decode().strip().endswith("not a report that can be merged: a: a line that is not [number, text]")
    )


def test_gzip_rank_files_in_a_folder_and_a_launchers_exception_in_a_rank_file(shipped, tmp_path):
    """Per-rank files name no rank in their lines: the path does. Task 0's file also holds the
    node's launcher output, whose ChildFailedError reports rank 2's failure, not its own."""
    texts = {
        0: "step 7 loss 0.2\nRuntimeError: [pair.cc:553] Connection closed by peer [127.0.0.1]:18864.\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n",
        1: "step 7 loss 0.3\nRuntimeError: [pair.cc:537] Read error [127.0.0.1]:36016: Connection reset by peer.\n",
        2: "step 7 loss 0.3\nValueError: batch 17 has no labels\n",
    }
    for rank, text in texts.items():
        with gzip.open(tmp_path / f"slurm-1234_{rank}.out.gz", "wb") as out:
            out.write(text.encode())
    assert _named(shipped, [str(tmp_path)]) == [2]


def test_text_names_the_initiator_first_and_collapses_repeated_lines(tmp_path):
    from .test_diagnose import diagnose

    case = CULPRIT / "sigkill-ws4-rank1"
    text = diagnose(str(case), cache=tmp_path / "c", entries=REPO / "entries").stdout.decode()
    first = text.splitlines()[0]
    assert first.startswith("Rank 1 (node localhost) started it: ") and "failed because of it (collateral)" in first
    assert "Connection reset by peer" in text and "(on ranks 0, 2)" in text, "one line for the same error on two ranks"
    assert io.StringIO(text).readline().count("Rank") == 1


def test_the_lines_kept_for_the_finder_stay_bounded_and_the_last_step_is_read(shipped):
    """Progress lines are read from the ends of the last blocks only: the latest step of a long
    log is found, and a log grown piece by piece (`mlfail watch`) keeps one bounded budget."""
    from generator.rank_lines import EVIDENCE_KEPT, PROGRESS_KEPT

    _, matcher = shipped
    long = b"".join(b"[rank3]: step %d loss 0.25\n" % step for step in range(120_000)) + b"[rank3]: done\n"
    found = matcher.scan(io.BytesIO(long))
    assert matcher.tapped(found, "progress")[-1].text == "[rank3]: step 119999 loss 0.25"
    assert matcher.tapped(found, "progress")[-1].line == 120_000
    found, before = {}, 0
    for piece in range(600):
        text = b"".join(b"[rank0]: step %d loss 0.1\n[rank1]: RuntimeError: boom %d\n" % (piece, i) for i in range(5))
        matcher.scan(io.BytesIO(text), found=found, lines_before=before)
        before += 10
    assert len(matcher.tapped(found, "progress")) <= PROGRESS_KEPT
    assert len(matcher.tapped(found, "evidence")) <= 2 * EVIDENCE_KEPT
    assert matcher.tapped(found, "evidence")[0].line == 2, "the first evidence lines are kept"
