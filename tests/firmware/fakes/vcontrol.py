"""The virtual-time board's control channel: pins driven from outside (host/battlement/sim/firmware.py).

Commands are listed in machine.py's docstring.
"""

import json
import os
import select
import sys
import time

import usocket as socket  # the controller's wire is the simulator's, not the board's (fakes/socket.py: its lwIP)
from vboard import MODEL, _at, _real, _st, advance, pin, run_until, set_mux, stats

_sim = [None, b"", None]  # socket, partial input, poller


def _connect():
    addr = os.getenv("BATTLEMENT_SIM")
    if not addr:
        return
    host, _, port = addr.rpartition(":")
    s = socket.socket()
    s.connect(socket.getaddrinfo(host, int(port))[0][-1])
    s.setblocking(False)
    p = select.poll()
    p.register(s, select.POLLIN)
    _sim[0] = s
    _sim[2] = p


def report(line):
    """Send one line to the controller (pixel frames, sync answers); one ending in a newline goes as it is."""
    s = _sim[0]
    if s is None:
        return
    if isinstance(line, str):
        line = line.encode()
    if line[len(line) - 1 :] != b"\n":
        line = line + b"\n"
    mv = memoryview(line)
    i = 0
    while i < len(line):
        try:
            n = s.write(mv[i:])
        except OSError:
            time.sleep_ms(1)
            continue
        i += n or 0


def report_piece(buf, k):
    """Send buf[:k] to the controller as it is (a piece of a line: no copy, no line-sized block of heap)."""
    s = _sim[0]
    i = 0
    while s is not None and i < k:
        try:
            n = s.write(buf, i, k - i)
        except OSError:
            time.sleep_ms(1)
            continue
        i += n or 0


def _apply(cmd):
    a = cmd.split()
    if not a:
        return
    op = a[0]
    if op == "set":
        pin(int(a[1])).drive(int(a[2]))
    elif op == "adv":
        advance(int(a[1]))
    elif op == "mux":
        set_mux(int(a[1]), [int(x) for x in a[2].split(",")], int(a[3]), int(a[4]))
    elif op == "freeze":
        _st[1] = None
    elif op == "sync":
        report("sync " + a[1])
    elif op == "stats":
        report("stats " + json.dumps(stats))
    elif op == "exit":
        sys.exit(0)


def poll():
    """Apply whatever the controller sent; called from WDT.feed(), i.e. every sensing cycle."""
    s = _sim[0]
    if s is None:
        return
    _real()
    if not _run_queued():
        return
    for _ in range(16):  # up to 2 KB a cycle, in small pieces
        if not _sim[2].poll(0):
            return
        try:
            data = s.read(128)  # small reads: the heap-limit tests measure the firmware, not the fake
        except OSError:
            return
        if not data:
            sys.exit(0)  # controller went away: end the simulated board
        buf = _sim[1] + data if _sim[1] else data
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                break
            _queued.extend(buf[:nl].decode().split(";"))
            buf = buf[nl + 1 :]
        _sim[1] = buf
        if not _run_queued():
            return


_queued = []  # control commands not applied yet
_cursor = [0]  # models with scheduled handlers: the instant the world has reached with the commands so far


def _run_queued():
    """Apply queued commands in order. On a board with scheduled handlers the world runs apart from the
    board: `set` is an edge at the instant the `adv`s before it reached (the firmware meets it wherever its
    work has the clock then, as a board does), and the clock runs on only with the firmware's work and its
    loop's sleeps, so no host stall becomes a pause on the board. Other commands wait until the clock has
    reached them. False while one waits."""
    while _queued:
        a = _queued[0].split()
        if MODEL["irq"] != "soft" or not a:
            _apply(_queued.pop(0))
            continue
        at = max(_cursor[0], _st[0])
        if a[0] == "adv":
            _cursor[0] = at + int(a[1])
        elif a[0] == "set":
            _at(at, int(a[1]), int(a[2]))
            run_until(_st[0])
        elif _st[0] < at:
            return False
        else:
            _apply(_queued[0])
        _queued.pop(0)
    return True
