"""A log that stops inside a traceback is said to, with its last frame; a complete traceback, a
healthy log and frames printed without an exception by design are not (generator/incomplete.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from generator.incomplete import cut_traceback

from .site_build import REPO


def cut(text: str):
    lines = [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]
    found = cut_traceback(lines)
    return (found.line, found.text) if found else None


PYTHON_CUT = """\
Traceback (most recent call last):
  File "/opt/train.py", line 88, in <module>
    main()
  File "/opt/train.py", line 60, in main
    trainer.train()
"""

STOPPING = {
    "after a frame's source line": (PYTHON_CUT, 4),
    "inside a frame line": (PYTHON_CUT + '  File "/opt/venv/lib/python3.11/site-packages/tra', 6),
    "after caret markers": (PYTHON_CUT.replace("trainer.train()", "trainer.train()\n    ^^^^^^^^^^^^^^^"), 4),
    "inside a rank's prefixed frames": (
        "[rank3]: Traceback (most recent call last):\n"
        '[rank3]:   File "/opt/train.py", line 60, in main\n'
        "[rank3]:     loss.backward()\n"
        "[rank3]:     ^^^^^^^^^^^^^^^\n"
        "[ran",
        2,
    ),
    "inside Ray's prefixed frames": (
        '(RayTrainWorker pid=552, ip=10.0.0.7)   File "/opt/x.py", line 3, in f\n'
        "(RayTrainWorker pid=552, ip=10.0.0.7)     raise",
        1,
    ),
    "inside a quoted paste": (
        '> Traceback (most recent call last):\n>   File "/opt/x.py", line 3, in f\n>     g()\n',
        2,
    ),
    "inside a rich traceback": (
        "╭──────────── Traceback (most recent call last) ────────────╮\n"
        "│ /usr/lib/python3/site-packages/accelerate/launch.py:1168 in launch_command │\n"
        "│ ❱ 1168 │   simple_launcher(args)                           │\n"
        "│                                                            │\n"
        "│ /usr/lib/python3/dis",
        2,
    ),
    "inside an IPython traceback": (
        "---------------------------------------------------------------------------\n"
        "RuntimeError                              Traceback (most recent call last)\n"
        "Cell In[3], line 1\n"
        "----> 1 trainer.train()\n"
        "File /opt/venv/lib/python3.11/site-packages/transformers/trainer.py:1539, in Trainer.train(self)\n"
        "   1537     hf_hub_utils.enable_progress_bars()\n"
        "-> 1539 return inner_training_loop(\n",
        5,
    ),
    "inside glog-prefixed frames": (
        'W0916 19:14:38.825000 9120 torch/_dynamo/convert_frame.py:1280]   File "/opt/x.py", line 9, in f\n'
        "W0916 19:14:38.825000 9120 torch/_dynamo/convert_frame.py:1280]     return compile_fx(model_)\n"
        "W0916 19:14:38.825000 9120 Lib\\",
        1,
    ),
}


@pytest.mark.parametrize("name", list(STOPPING))
def test_a_log_that_stops_inside_a_traceback_names_its_last_frame(name):
    text, frame_line = STOPPING[name]
    found = cut(text)
    assert found is not None, name
    assert found[0] == frame_line, found
    assert found[1] == text.splitlines()[frame_line - 1].strip()


NOT_STOPPING = {
    "a complete traceback": PYTHON_CUT + "RuntimeError: CUDA error: an illegal memory access was encountered\n",
    "a rank's complete traceback": '[rank0]:   File "/opt/x.py", line 3, in f\n[rank0]:     g()\n[rank0]: ValueError: bad\n',
    "one ended by an interrupt": PYTHON_CUT + "KeyboardInterrupt\n",
    "one whose message has indented lines": PYTHON_CUT
    + "RuntimeError: Error(s) in loading state_dict:\n\tMissing key(s)\n",
    "a warning's source line": "/opt/x.py:12: UserWarning: TypedStorage is deprecated\n  warnings.warn(\n",
    "torch.compile's user frames": (
        "torch._dynamo.exc.Unsupported: call_function\n\nfrom user code:\n"
        '   File "/opt/model.py", line 30, in forward\n    return self.block(x)\n'
    ),
    "logging's stack_info": 'Stack (most recent call last):\n  File "/opt/x.py", line 3, in <module>\n    log.info("x", stack_info=True)\n',
    "faulthandler's dump": (
        "Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):\n"
        '  File "/opt/x.py", line 3 in forward\n'
    ),
    "a healthy run": "Epoch 3: 100%|██████████| 100/100 [00:12<00:00, 8.1it/s, loss=0.31]\nTraining finished.\n",
    "C++ frames": "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43\nframe #0: c10::Error::Error()\n",
}


@pytest.mark.parametrize("name", list(NOT_STOPPING))
def test_a_log_that_does_not_stop_inside_a_traceback_gets_no_notice(name):
    assert cut(NOT_STOPPING[name]) is None


def mlfail(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generator", "diagnose", *args], capture_output=True, text=True, cwd=REPO, timeout=120
    )


def test_the_command_line_says_where_the_log_stops_and_what_to_paste(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("step 10 loss 2.31\n" * 20_000 + PYTHON_CUT)  # the end of a log of several blocks
    text = mlfail(str(log))
    assert text.returncode == 1
    assert "The log stops inside a traceback (its last frame, line 20004: " in text.stdout
    assert "diagnose the lines that follow" in text.stdout
    report = json.loads(mlfail("--format", "json", str(log)).stdout)
    assert report["findings"] == []
    assert report["incomplete"]["line"] == 20004
    assert report["incomplete"]["text"] == 'File "/opt/train.py", line 60, in main'


def test_no_notice_when_a_signature_matched(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n" + PYTHON_CUT)
    report = json.loads(mlfail("--format", "json", str(log)).stdout)
    assert report["findings"] and report["incomplete"] is None


def test_a_log_in_which_no_line_reports_an_error_says_where_else_to_look(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("[INFO] loading checkpoint shards: 100%\nstep 1 loss 2.31\nstep 2 loss 2.29\n")
    text = mlfail(str(log))
    assert (
        'No line of this log reports an error.\n   No exception, "error:", "FAILED" or signal is in it.' in text.stdout
    )
    assert "Slurm's .err file" in text.stdout
    assert json.loads(mlfail("--format", "json", str(log)).stdout)["incomplete"]["kind"] == "no-error"


def test_a_log_with_an_error_line_that_nothing_matched_gets_no_notice(tmp_path):
    log = tmp_path / "job.log"
    log.write_text("step 1 loss 2.31\nFrobnicatorError: the frobnicator is out of order\n")
    assert json.loads(mlfail("--format", "json", str(log)).stdout)["incomplete"] is None


def test_github_format_puts_the_notice_on_the_last_frame_and_in_the_job_summary(tmp_path):
    log, summary = tmp_path / "job.log", tmp_path / "summary.md"
    log.write_text(PYTHON_CUT)
    ran = subprocess.run(
        [sys.executable, "-m", "generator", "diagnose", "--format", "github", str(log)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert ran.stdout.startswith(f"::notice file={log},line=4,col=1,title=The log stops inside a traceback::")
    assert "The log stops inside a traceback. The line that names the error" in summary.read_text()


def test_the_python_api_says_it_for_a_job(tmp_path):
    from generator.api import diagnose_job

    cut_log, oom_log = tmp_path / "rank0.log", tmp_path / "oom.log"
    cut_log.write_text(PYTHON_CUT)
    oom_log.write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    job = diagnose_job([cut_log])
    assert job.failures == []
    assert (job.incomplete.kind, job.incomplete.line) == ("traceback", 4)
    assert job.incomplete.heading == "The log stops inside a traceback"
    assert diagnose_job([oom_log]).incomplete is None
