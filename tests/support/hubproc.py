"""`battlement venue` as a real child process (HubProcess), and the players of a venue's tables: a thread a
table that plays whatever match the hub put there to its end, through the bridge's host page, pressing
the simulated boards' sensors so the rules referee every move (Players)."""

import json
import pathlib
import subprocess
import threading
import time
import urllib.error
import urllib.request
import zlib

from support.bridgeproc import BATTLEMENT, ROOT, ProcessGroup, Ws
from support.procs import free_port


class HubProcess(ProcessGroup):
    """The venue hub on a free port: .url, .host_code, .venue(), .kill9(), .start() again on its journal."""

    def __init__(self, tmp, broker_url, venue, keys, journal=None, extra=()):
        self.tmp = pathlib.Path(tmp)
        self.args = ["venue", "--mqtt", broker_url, "--venue", venue, "--keys-dir", str(keys)] + list(extra)
        self.journal = journal or str(self.tmp / "hub.sqlite")
        self.port = free_port()
        self.proc = None
        self.log = None
        self.host_code = None
        self.starts = 0

    def start(self):
        self.starts += 1
        path = self.tmp / ("hub-%d.log" % self.starts)
        self.log = open(path, "w+")  # noqa: SIM115 -- closed in stop()
        self.log_path = path
        argv = [BATTLEMENT] + self.args + ["--port", str(self.port), "--journal", self.journal, "--log-file", "-"]
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, cwd=str(ROOT),
                                     start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("the hub exited: " + self.output())
            if "ready in" in self.output():
                self.host_code = self.output().rsplit("/host?code=", 1)[1].split()[0]
                return self
            time.sleep(0.02)
        raise AssertionError("the hub did not start: " + self.output())

    def output(self):
        self.log.flush()
        return self.log_path.read_text()

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return json.loads(r.read())

    def venue(self):
        return self.get("/api/venue")

    def act(self, **action):
        req = urllib.request.Request(self.url + "/api/host", data=json.dumps(action).encode(), method="POST",
                                     headers={"Authorization": "Bearer " + self.host_code})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            return json.loads(e.read())



def choose(st, policy):
    """The move a player makes now: the first the host page offers, or (policy: a number) one picked by
    that number and the game's turn alone, so a game played again from the same turn goes the same way,
    after a restart of its bridge too."""
    moves = [m for m in st["sensed"] if m.get("t") == "move"]
    if not moves:
        raise AssertionError("no move offered on the host page: %s" % st["sensed"][:4])
    if policy is None:
        return moves[0]
    return moves[zlib.crc32(("%d:%d" % (policy, st["view"]["turns"])).encode()) % len(moves)]


def presses(move):
    """The presses that make a move on the table: the move itself (the adapter turns it into its lift, the
    pieces it takes off, a capture out of the castle, and its put)."""
    return [move]


def play_to_end(bridge, table, policy=None, moves=400, gate=lambda st: None):
    """Play the table's game to its end from the host page, a whole move at a time (see choose); the last
    state. gate(state) is called before each move (it may hold the player there, between two moves)."""
    host = Ws(bridge.url, role="host", table=table, code=bridge.host_code)
    try:
        st = host.state()
        for _ in range(moves):
            if st["view"]["over"]:
                return st
            gate(st)
            turns, mark = st["view"]["turns"], len(host.frames)
            for press in presses(choose(st, policy)):
                reply = host.act(action="sense", input=press)
                assert reply["ok"], reply

            # a move is made once every sensor of it is in, whichever board spoke first: the turn has passed
            # and nothing is left in the hand; choosing before that could choose from a half-made move
            def made(s, turns=turns):
                return s.get("type") == "state" and (s["view"]["over"] or (
                    s["view"]["turns"] > turns and s["view"].get("hand") is None))
            early = [m for m in host.frames[mark:] if made(m)]
            st = early[-1] if early else host.state(made, timeout=30)
        raise AssertionError("the game on %s was not over after %d moves" % (table, moves))
    finally:
        host.close()


class Players:
    """A thread for each table: whenever the hub has put a match on it, play that match to its end.
    bridge_of(table) -> the BridgeProcess serving it now (a restarted one too); policy(match id) -> choose's.
    A bridge killed mid-game is waited for, and the game played on once it is back. hold(tables) stops
    those tables' players between two moves, hold_in(match, turns) stops the player of that match once
    its game has had that many turns (.held names its table): a bridge killed then is killed mid-game,
    never mid-move, so the game goes on the same way. release() lets them all play on."""

    def __init__(self, bridge_of, tables, policy=lambda mid: None):
        self.bridge_of, self.policy = bridge_of, policy
        self.stopping = threading.Event()
        self.finished: dict[str, dict] = {}  # venue match -> the table's last state of its game (the rules' end)
        self.errors: list[str] = []
        self.go = {t: threading.Event() for t in tables}
        self.parked = {t: threading.Event() for t in tables}
        self.held: str | None = None
        self._hold_in: tuple[str, int] | None = None
        for ev in self.go.values():
            ev.set()
        self.threads = [threading.Thread(target=self._run, args=(t,), daemon=True, name="player-" + t) for t in tables]
        for th in self.threads:
            th.start()

    def _gate(self, table, match=None, st=None):
        want = self._hold_in
        if want and match and st and match.endswith("/" + want[0]) and st["view"]["turns"] >= want[1]:
            self._hold_in = None
            self.go[table].clear()
            self.held = table
        while not self.go[table].is_set():  # parked: only ever said while held, so hold() cannot read it stale
            self.parked[table].set()
            self.go[table].wait(0.05)
        self.parked[table].clear()

    def hold_in(self, match, turns):
        self._hold_in = (match, turns)

    def hold(self, tables, timeout=30):
        for t in tables:
            self.go[t].clear()
        deadline = time.monotonic() + timeout
        while not all(self.parked[t].is_set() for t in tables):
            if time.monotonic() > deadline:
                raise AssertionError("the players of %s did not stop between two moves" % ", ".join(tables))
            time.sleep(0.02)

    def release(self):
        for ev in self.go.values():
            ev.set()

    def _run(self, table):
        while not self.stopping.is_set():
            try:
                self._gate(table)
                bridge = self.bridge_of(table)
                st = bridge.get("/api/state?table=" + table)
                v = st.get("venue")
                if not v or st["view"]["over"]:
                    time.sleep(0.1)
                    continue
                last = play_to_end(bridge, table, self.policy(v["match"]),
                                   gate=lambda st, mid=v["match"]: self._gate(table, mid, st))
                self.finished.setdefault(v["match"], last)
            except Exception as e:  # noqa: BLE001 -- a bridge killed under the player: wait for it, play on
                self.errors.append("%s: %s: %s" % (table, type(e).__name__, e))
                time.sleep(0.2)

    def stop(self):
        self.stopping.set()
        self.release()
        for th in self.threads:
            th.join(30)
