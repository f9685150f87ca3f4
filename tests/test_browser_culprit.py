"""The diagnose page's culprit finder (diagnose-culprit.js) says what the command line says."""

from __future__ import annotations

import pytest

from .site_build import REPO

pytestmark = pytest.mark.browser


def test_the_page_names_the_same_initiator_as_the_cli_on_every_single_log_culprit_case(project_site):
    """The culprit finder in the browser (diagnose-culprit.js) and in Python (culprit.py), on every
    culprit case that is one log (a combined terminal log, a thread's paste): the same first line."""
    from generator.diagnose import culprit_lines, diagnosis_of, scan_inputs
    from generator.loading import load_encyclopedia
    from generator.signature_index import SignatureIndex

    from .browser import page_culprits
    from .culprit_cases import CULPRIT, THREADS

    logs = sorted(CULPRIT.glob("*/combined.log")) + sorted(THREADS.glob("*.log"))
    assert len(logs) >= 25
    index = SignatureIndex.from_encyclopedia(load_encyclopedia(REPO / "entries").encyclopedia)
    matcher = index.matcher()
    cli = {}
    for log in logs:
        diagnosis = diagnosis_of(index, matcher, scan_inputs(matcher, [str(log)]))
        cli[str(log)] = culprit_lines(diagnosis, index)[0] if diagnosis.culprit else None
    page = page_culprits(project_site, {str(log): log.read_text(encoding="utf-8", errors="replace") for log in logs})
    differ = {name: (page[name], cli[name]) for name in cli if page[name] != cli[name]}
    assert not differ, differ
    assert sum(1 for line in cli.values() if line and " started it: " in line) >= 20
