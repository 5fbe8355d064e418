"""The soak table: each soak run records what it tried, how many survived, lost and leaked, and
`make soak` prints them as one table at the end.

    def test_something_for_long(soak_record):
        ...
        soak_record("1M fuzzed frames", tried=1_000_000, survived=..., lost=0, leaked=0, note="...")

tried: attempts (frames, kill cycles, seconds of overload); survived: those after which everything
still ran; lost: events that should have been kept and were not; leaked: what was left behind
(file descriptors, tasks, memory growth in MB, rounded) once the run was over.
"""

import pytest

_ROWS = []


@pytest.fixture
def soak_record():
    def record(name, tried, survived, lost, leaked, note=""):
        _ROWS.append((name, tried, survived, lost, leaked, note))
    return record


def pytest_terminal_summary(terminalreporter):
    if not _ROWS:
        return
    w = terminalreporter
    w.section("soak")
    w.line("%-34s %12s %12s %8s %8s  %s" % ("run", "tried", "survived", "lost", "leaked", "note"))
    for name, tried, survived, lost, leaked, note in _ROWS:
        w.line("%-34s %12s %12s %8s %8s  %s" % (name, tried, survived, lost, leaked, note))
