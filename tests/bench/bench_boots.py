"""Fresh boots: what the boot-counter check costs the host per hello, beside verifying the hello's MAC alone
(the work a signed hello needed before boot counters), in the same run.

    boots     the check in memory (the board's highest boot: is this one older? raise it), per hello
    boots-db  keeping the highest boot durably: the journal's upsert of the board's record (in the batch's
              transaction, as the bridge writes it with the hello's batch; the commit is the batch's, shared)
    boots-mp  the board's side, once per boot: bootcount.advance() (read two slots, write one) under the
              MicroPython unix port, beside reading its config.json there
"""

import subprocess
import tempfile
import time

import benchutil
from battlement.link import wire
from battlement.link.messages import Hello, up_frame
from battlement.link.transport.base import Transport
from battlement.sim import firmware as fwsim
from battlement.table.journal import Journal
from support.procs import MICROPYTHON

KEY = bytes(range(16))
TABLE, BOARD, N = "hall-1", "tower-1", 20_000

MP_SCRIPT = """
import json, time, bootcount
home = %r
n = %d
t0 = time.ticks_us()
for i in range(n):
    bootcount.advance(home)
t1 = time.ticks_us()
for i in range(n):
    with open(home + "/config.json") as f:
        json.load(f)
t2 = time.ticks_us()
print(n * 1e6 / time.ticks_diff(t1, t0), n * 1e6 / time.ticks_diff(t2, t1))
"""


def best_rate(fn, n, rounds=3):
    best = 0.0
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn(n)
        best = max(best, n / (time.perf_counter() - t0))
    return best


def main():
    hello = wire.sign(up_frame(Hello(TABLE, BOARD, 41, "0.1.0", wire.VERSION, "tower", {"cup-1": "beam"})),
                      KEY, TABLE, BOARD, 41)
    t = Transport()
    t.sign(TABLE, {BOARD: KEY})
    key = (TABLE, BOARD)
    t.floor(TABLE, BOARD, 40)
    assert wire.verify(hello, KEY, TABLE, BOARD, 41) and not t._stale(key, 41, "bench")

    def mac_alone(n):
        verify = wire.verify
        for _ in range(n):
            verify(hello, KEY, TABLE, BOARD, 41)

    def check(n):
        stale, booted = t._stale, t._booted
        for _ in range(n):
            if not stale(key, 41, "bench"):
                booted(key, 41)

    mac = best_rate(mac_alone, N)
    benchutil.line("boots", best_rate(check, N * 10), mac, "MAC verify alone", unit="hellos/s")
    with tempfile.TemporaryDirectory() as d:
        j = Journal(d + "/j.sqlite", checkpoint_thread=False)
        try:
            j.begin()
            j.board_hello(TABLE, BOARD, 41, "0.1.0")

            def record(n):
                hello_ = j.board_hello
                for i in range(n):
                    hello_(TABLE, BOARD, 41 + i, "0.1.0")

            rate = best_rate(record, N // 4)
            j.commit()
        finally:
            j.close()
    benchutil.line("boots-db", rate, mac, "MAC verify alone", unit="hellos/s")
    if MICROPYTHON:
        with tempfile.TemporaryDirectory() as d:
            code = fwsim.stage(d + "/code")
            with open(d + "/config.json", "w") as f:
                f.write('{"board": "%s", "table": "%s", "key": "%s"}' % (BOARD, TABLE, KEY.hex()))
            out = subprocess.run([MICROPYTHON, "-c", MP_SCRIPT % (d, 500)], env=fwsim.micropython_env(code),
                                 capture_output=True, text=True, timeout=120, check=False)
        try:
            boots, config = (float(x) for x in out.stdout.split())
            benchutil.line("boots-mp", boots, config, "reading config.json (MicroPython unix)", unit="boots/s")
        except ValueError:
            print("boots-mp could not run under MicroPython: %s" % (out.stdout + out.stderr)[-300:])


if __name__ == "__main__":
    main()
