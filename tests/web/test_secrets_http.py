"""The secrets test's smaller slice over real HTTP and websockets (the bulk is in-process:
tests/bridge/test_secrets.py). Two bridges with simulated boards, each serving its page on its own
port, play the same games through their websockets, except that one side's secret placements
go to two swapped towers on the second. After every action, the last bytes each other viewer's
websocket got, and every /api/* answer and page, are the same on both."""

import asyncio
import json
import random
import re
import threading
import time
import urllib.request

from battlement.bridge import Bridge
from battlement.table import maps as tables
from support import secrets
from support.procs import free_port


class Served:
    """A Bridge (simulated boards) and its page, served by uvicorn on a free port in a thread."""

    def __init__(self, tmp, name):
        import uvicorn
        from battlement.web.app import create_app

        self.port = free_port()
        self.bridge = Bridge([tables.for_game("medieval-pong")], str(tmp / (name + ".sqlite")), simulate=True,
                             host_code="hostcode-0123456789")
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()

        async def serve():
            await self.bridge.start()
            self.server = uvicorn.Server(uvicorn.Config(create_app(self.bridge), host="127.0.0.1", port=self.port,
                                                        log_level="warning", lifespan="off"))
            task = asyncio.ensure_future(self.server.serve())
            while not self.server.started:
                await asyncio.sleep(0.01)
            self.ready.set()
            await task
            await self.bridge.stop()

        self.thread = threading.Thread(target=lambda: self.loop.run_until_complete(serve()), daemon=True)
        self.thread.start()
        assert self.ready.wait(20), "the page did not start"
        self.url = "http://127.0.0.1:%d" % self.port

    def call(self, fn):
        """Run fn() on the bridge's loop (the session is the loop's) and return what it returns."""
        done, out = threading.Event(), []
        self.loop.call_soon_threadsafe(lambda: (out.append(fn()), done.set()))
        assert done.wait(10)
        return out[0]

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return r.read()

    def stop(self):
        self.server.should_exit = True
        self.thread.join(20)


class Socket:
    def __init__(self, url, **query):
        from urllib.parse import urlencode

        from websockets.sync.client import connect

        self.conn = connect(url.replace("http://", "ws://") + "/ws?" + urlencode(query), open_timeout=10).__enter__()
        self.last = None

    def settle(self, quiet=0.15):
        """The last state frame, once nothing more arrives for `quiet` seconds (raw bytes as sent)."""
        while True:
            try:
                text = self.conn.recv(timeout=quiet)
            except TimeoutError:
                return self.last
            m = json.loads(text)
            if m.get("type") == "state":
                self.last = m
                self.last_text = text

    def act(self, **msg):
        self.conn.send(json.dumps(msg))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            m = json.loads(self.conn.recv(timeout=10))
            if m.get("type") == "reply":
                return m
            self.last = m

    def close(self):
        self.conn.close()


def comparable(name, text):
    """The bytes a viewer got, less the host page's "bridge" part and its counters: the links' notes,
    task health and event counts (pty names, boot ids, a frame resent under load) differ between two
    bridges and hold no game data; the in-process bulk compares the counters too."""
    if name != "host" or text is None:
        return text
    m = json.loads(text)
    m.pop("bridge", None)
    m.pop("counters", None)
    return json.dumps(m)


def test_over_real_http_and_websockets_nobody_else_sees_a_swapped_secret(tmp_path, monkeypatch):
    secrets.deterministic(monkeypatch)
    rng = random.Random(5)
    twins = [Served(tmp_path, "a"), Served(tmp_path, "b")]
    try:
        for game in range(3):
            owner = rng.choice(["red", "blue"])
            other = "blue" if owner == "red" else "red"
            support, mapped = secrets.pong_secret_swap(owner, 1, rng)
            seed = rng.randrange(1 << 20)
            for t in twins:
                t.call(lambda t=t, seed=seed: t.bridge.sessions["medieval-pong"].new_game(None, {"unlocked": "all"}, seed=seed))
            socks = [{"public": Socket(t.url, role="public"), "host": Socket(t.url, role="host", code="hostcode-0123456789"),
                      other: Socket(t.url, role="side", side=other, code="code23"),
                      owner: Socket(t.url, role="side", side=owner, code="code23")} for t in twins]
            for s in socks:
                for w in s.values():
                    w.settle()
            sensed = twins[0].call(lambda: twins[0].bridge.sessions["medieval-pong"].counters["events"])
            for step in range(12):
                a = twins[0].bridge.sessions["medieval-pong"]
                seen = twins[0].call(lambda a=a: {"host": a.for_host(), "side red": a.for_side("red"),
                                                  "side blue": a.for_side("blue")})
                kind, inp = secrets.random_action(a, seen, rng, 1, owner, support)
                if kind == "new" or secrets.reveals(a, owner, support, (kind, inp)):
                    continue
                if kind == "sense":  # as many events as the simulated boards report for it
                    sensed += twins[0].call(lambda a=a, inp=inp: len(a.sensor_for(inp)))
                for i, s in enumerate(socks):
                    one = mapped(inp) if (i == 1 and isinstance(inp, dict)) else inp
                    if kind.startswith("side "):
                        s[kind[5:]].act(action="input", input=one)
                    elif kind in ("host", "sense"):
                        s["host"].act(action="input" if kind == "host" else "sense", input=one)
                    elif kind == "pause":
                        s["host"].act(action="pause")
                    else:
                        s["host"].act(action=kind)
                for t in twins:  # a sensed ball comes back through the simulated boards, maybe held a moment
                    s_ = t.bridge.sessions["medieval-pong"]
                    deadline = time.monotonic() + 10
                    while not t.call(lambda s_=s_, n=sensed: s_.counters["events"] >= n and s_.adapter.deadline() is None):
                        assert time.monotonic() < deadline, "the simulated boards never reported"
                        time.sleep(0.02)
                got = []
                for t, s in zip(twins, socks, strict=True):
                    bytes_ = {name: comparable(name, w.settle(0.05) and w.last_text) for name, w in s.items() if name != owner}
                    for path in ("/api/state", "/api/history", "/api/spaces", "/", "/host?code=hostcode-0123456789",
                                 "/side/%s?code=code23" % other):
                        bytes_[path] = re.sub(rb'nonce="[^"]*"', b'nonce=""', t.get(path))  # a fresh nonce per page
                    got.append(bytes_)
                for name in got[0]:
                    assert got[0][name] == got[1][name], "game %d step %d: %s differs after %s %s" % (
                        game, step, name, kind, inp)
            for s in socks:
                for w in s.values():
                    w.close()
    finally:
        for t in twins:
            t.stop()
