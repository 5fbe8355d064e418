"""`battlement run` as a real child process (BridgeProcess, the `bridge_process` fixture) and a websocket
client of its pages (Ws), for every test area that drives a whole bridge."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time
import urllib.request

from support.procs import free_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
BATTLEMENT = str(pathlib.Path(sys.executable).parent / "battlement")


class ProcessGroup:
    """A process started in its own session (start_new_session): killed or stopped with all it started."""

    proc: subprocess.Popen | None = None
    log = None

    def kill9(self):
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        if self.log:
            self.log.close()


class BridgeProcess(ProcessGroup):
    """`battlement run` as a child process on a free port; .url, .host_code, .state(), .kill9()."""

    def __init__(self, tmp, *args, journal=None, host_code="host-code-for-tests", command=None):
        self.command = command or [BATTLEMENT]  # e.g. a launcher that adds a game first
        self.tmp = pathlib.Path(tmp)
        self.journal = journal or str(self.tmp / "journal.sqlite")
        self.args = list(args)
        self.proc = None
        self.port = None
        self.given_code = host_code  # None: the bridge's own (kept in the journal), read from what it prints
        self.host_code = host_code

    def start(self, port=None):
        # A free port is only free when it is picked: on a busy machine another process may bind it first.
        # Then the bridge says so and stops, and a port of our own choosing is picked again.
        for _ in range(4 if port is None else 0):
            try:
                return self._start(None)
            except AssertionError as e:
                if "is in use" not in str(e):
                    raise
        return self._start(port)

    def _start(self, port):
        self.port = port or free_port()
        argv = self.command + ["run", "--port", str(self.port), "--journal", self.journal] + (
            ["--host-code", self.given_code] if self.given_code else []) + self.args
        if getattr(self, "log", None):
            self.log.close()  # a restart: the new process's output from here on
        self.log = open(self.tmp / ("bridge-%d.log" % self.port), "w+")  # noqa: SIM115 -- closed in stop()
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, cwd=str(ROOT),
                                     start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("bridge exited: " + self.output())
            if "ready in" in self.output():
                if not self.given_code:
                    self.host_code = self.output().rsplit("/host?code=", 1)[1].split()[0]
                return self
            time.sleep(0.02)
        raise AssertionError("bridge did not start: " + self.output())

    def output(self):
        self.log.flush()
        return (self.tmp / ("bridge-%d.log" % self.port)).read_text()

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return json.loads(r.read())

    def state(self):
        return self.get("/api/state")



def run_refused(journal, *args, timeout=30):
    """`battlement run` on `journal` that is to stop at once: (exit status, stdout, stderr). One that starts
    instead is stopped and fails the test (it ran beside whatever should have kept it out)."""
    argv = [BATTLEMENT, "run", "--simulate", "--port", str(free_port()), "--journal", str(journal), *args]
    proc = subprocess.Popen(argv, cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError("battlement run did not stop:\n" + out + err) from None
    return proc.returncode, out, err


class Ws:
    """A websocket client of the page's /ws (what the page's script sends and receives)."""

    def __init__(self, url, **query):
        from urllib.parse import urlencode

        from websockets.sync.client import connect

        self.frames = []
        self.conn = connect(url.replace("http://", "ws://") + "/ws?" + urlencode(query), open_timeout=10).__enter__()

    def recv(self, timeout=10):
        m = json.loads(self.conn.recv(timeout=timeout))
        self.frames.append(m)
        return m

    def state(self, pred=lambda s: True, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            m = self.recv(max(0.05, deadline - time.monotonic()))
            if m.get("type") == "state" and pred(m):
                return m

    def act_reply(self, timeout=10):
        """The next reply (states pushed meanwhile are kept in .frames)."""
        deadline = time.monotonic() + timeout
        while True:
            m = self.recv(max(0.05, deadline - time.monotonic()))
            if m.get("type") == "reply":
                return m

    def act(self, **msg):
        """Send an action; returns the reply (states pushed meanwhile are kept in .frames)."""
        self.conn.send(json.dumps(msg))
        deadline = time.monotonic() + 10
        while True:
            m = self.recv(max(0.05, deadline - time.monotonic()))
            if m.get("type") == "reply":
                return m

    def close(self):
        self.conn.close()
