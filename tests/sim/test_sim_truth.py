"""`battlement sim` tells the truth: a broker that is not there is one line and a retry, never a silent run;
it stops when its script and --linger are done, however long it has been retrying; and its boards send the
heartbeat a real board sends, so a bridge shows a last beat for every simulated board."""

import json
import queue
import subprocess
import threading
import time

import pytest
from support.bridgeproc import BATTLEMENT
from support.procs import Broker, free_port
from web.test_health import table_file


class Sim:
    """`battlement sim` as a child process; its output read line by line with a deadline (a silent sim
    fails the test instead of blocking it)."""

    def __init__(self, *args):
        self.proc = subprocess.Popen([BATTLEMENT, "sim", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, start_new_session=True)
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_line(self, needle, timeout):
        """Lines up to the first containing needle."""
        got, deadline = [], time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError("sim never printed %r; printed:\n%s" % (needle, "".join(self.seen + got)))
            got.append(line)
            if needle in line:
                self.seen += got
                return got

    def rest(self, timeout):
        """The rest of the output, once the sim has exited by itself."""
        self.proc.wait(timeout)
        out = []
        while (line := self.lines.get(timeout=5)) is not None:
            out.append(line)
        return "".join(out)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(15)


def _every_board_beats(bridge, timeout=30):
    """The bridge's board health once every mapped board is online with a heartbeat (a real board's is
    every 5 s); fails naming the boards that never beat."""
    deadline = time.monotonic() + timeout
    while True:
        boards = bridge.get("/api/health?code=" + bridge.host_code)["board_health"]["boards"]
        silent = [b["board"] for b in boards if b["state"] != "online" or not b["beat"]]
        if boards and not silent:
            return boards
        if time.monotonic() > deadline:
            raise AssertionError("no heartbeat from %s" % ", ".join(silent))
        time.sleep(0.2)


def test_sim_on_a_missing_broker_says_so_once_retries_and_reaches_a_bridge_when_the_broker_starts(
        bridge_process, tmp_path):
    port = free_port()  # nothing listens here yet
    path = table_file(tmp_path, "late-broker")
    sim = Sim("--table", path, "--mqtt", "mqtt://127.0.0.1:%d" % port)
    broker = Broker(tmp_path / "broker", port=port)
    try:
        said = sim.wait_line("not reachable", timeout=10)
        assert said[-1].strip() == ("sim: broker 127.0.0.1:%d not reachable (connection refused); retrying every 2 s"
                                    % port)
        broker.start()
        lines = sim.wait_line("online", timeout=15)  # the boards retried and got in
        assert lines[-1].strip() == "sim: 6 boards of table late-broker online on broker 127.0.0.1:%d" % port
        assert not any("not reachable" in x for x in lines)  # one line, not one per retry
        bridge = bridge_process("--table", path, "--mqtt", broker.url)
        boards = _every_board_beats(bridge)
        assert {b["board"] for b in boards} == {"castle", "ring-1", "ring-2", "ring-3", "ring-4", "ring-5"}
        assert all(b["beat"]["uptime_ms"] > 0 and b["beat"]["dropped"] == 0 for b in boards)
    finally:
        sim.stop()
        broker.close()


@pytest.mark.parametrize("play", ["script", "random"])
def test_sim_with_nothing_to_reach_stops_when_its_play_and_linger_are_done(tmp_path, play):
    """Four seconds of retrying an absent broker, then the play ends: the sim is gone within --linger
    and a moment, and says its events reached no bridge."""
    script = tmp_path / "late.jsonl"
    script.write_text(json.dumps({"at": 4, "object": "b5", "value": 1}) + "\n")
    how = ["--script", str(script)] if play == "script" else ["--random", "3", "--rate", "0.5"]
    sim = Sim("--table", table_file(tmp_path, "no-broker"), "--mqtt", "mqtt://127.0.0.1:%d" % free_port(),
               "--wait", "0.1", "--linger", "0.5", *how)
    try:
        lines = sim.wait_line("b5 -> 1" if play == "script" else " -> ", timeout=20)
        if play == "random":
            lines += sim.wait_line(" -> ", timeout=10) + sim.wait_line(" -> ", timeout=10)  # the third and last
        last = time.monotonic()
        out = sim.rest(timeout=30)
        took = time.monotonic() - last
    finally:
        sim.stop()
    assert took < 0.5 + 1.2, "the sim ran %.1f s past its last change (--linger 0.5)\n%s" % (took, out)
    assert any("not reachable (connection refused)" in x for x in lines)
    assert "never acknowledged by a bridge" in out, out


def test_a_bridge_with_simulated_boards_shows_a_last_beat_for_every_board(bridge_process, tmp_path):
    bridge = bridge_process("--simulate", "--table", table_file(tmp_path, "beats"))
    boards = _every_board_beats(bridge)
    assert len(boards) == 6
    assert all(b["beat"]["outbox"] == 0 and b["beat"]["reconnects"] == 0 for b in boards)
