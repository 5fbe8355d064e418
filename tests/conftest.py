"""Fixtures shared by every test area: real Mosquitto, real pty pairs, real MicroPython.

Each pytest-xdist worker is its own process, so session-scoped fixtures give each
worker its own broker on its own free port.
"""

import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

from support.bridgeproc import BridgeProcess
from support.procs import MICROPYTHON, Broker, PtyPair
from support.soak import pytest_terminal_summary, soak_record  # noqa: F401 -- `make soak` prints their table


def pytest_collection_modifyitems(config, items):
    """Soak variants run only when asked for (-m soak): CI stays well under its time budget."""
    if "soak" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="soak test: run with -m soak")
    for item in items:
        if "soak" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def _worker_broker(tmp_path_factory):
    broker = Broker(tmp_path_factory.mktemp("mosquitto")).start()
    yield broker
    broker.close()


@pytest.fixture
def mosquitto(_worker_broker):
    """A private broker for this worker: .host .port .url, .restart() .stop() .start().

    Shared by the worker's tests: use distinct table ids per test, and use
    `mosquitto_fresh` if the test stops or restarts the broker. (If an earlier
    test left it stopped, it is started again here.) For a broker in a
    module- or session-scoped fixture, use support.procs.Broker directly.
    """
    return _worker_broker.start()


@pytest.fixture
def mosquitto_fresh(tmp_path):
    """A broker of this test's own, free to stop/restart without disturbing others."""
    broker = Broker(tmp_path / "mosquitto-fresh").start()
    yield broker
    broker.close()


@pytest.fixture
def pty_pair(tmp_path):
    """A linked pair of pty paths: .a and .b (or `a, b = pty_pair`); .unplug()/.replug()."""
    d = tmp_path / "pty"
    d.mkdir()
    pair = PtyPair(d).start()
    yield pair
    pair.close()


@pytest.fixture(scope="session")
def micropython():
    """Path to the real MicroPython unix binary installed in the venv."""
    if not MICROPYTHON:
        pytest.fail("micropython binary not found; run `make setup`")
    return MICROPYTHON


@pytest.fixture
def bridge_process(tmp_path):
    """`battlement run` as a child process: bridge_process(*args) starts one and returns its BridgeProcess."""
    made = []

    def make(*args, journal=None, command=None):
        b = BridgeProcess(tmp_path, *args, journal=journal, command=command)
        made.append(b)
        return b.start()

    yield make
    for b in made:
        b.stop()


@pytest.fixture
def browser():
    """Debian's headless Chromium driven by Playwright (no browser download: the Debian package)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                              args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield b
        b.close()
