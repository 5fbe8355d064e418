"""Codec speed: encode+decode of event frames, beside json round trips of the same data in the same run."""

import json
import subprocess
import time

import benchutil
from battlement.link import wire
from support.procs import MICROPYTHON

N = 100_000
FIELDS = ("tower-1", 0x5F3A9C, 12, "cup-1", "beam", 1, 834211, 8200)
TARGET = 100_000

MP_SCRIPT = """
import sys, time, json
sys.path.insert(0, %r)
import wire
f = %r
n = %d
t0 = time.ticks_us()
for i in range(n):
    wire.decode(wire.encode("event", f))
t1 = time.ticks_us()
d = {"board": f[0], "boot": f[1], "seq": f[2], "sensor": f[3], "kind": f[4], "value": f[5], "t_us": f[6], "w": f[7]}
for i in range(n):
    json.loads(json.dumps(d))
t2 = time.ticks_us()
k = bytes(range(16))
for i in range(n):
    s = wire.sign(wire.encode("event", f), k, "hall-1", f[0], f[1])
    wire.decode(s)
t3 = time.ticks_us()
print(n * 1e6 / time.ticks_diff(t1, t0), n * 1e6 / time.ticks_diff(t2, t1), n * 1e6 / time.ticks_diff(t3, t2))
"""


def rate(fn, n):
    t0 = time.perf_counter()
    fn(n)
    return n / (time.perf_counter() - t0)


def codec(n):
    enc, dec = wire.encode, wire.decode
    for _ in range(n):
        dec(enc("event", FIELDS))


KEY = bytes(range(16))


def signed_codec(n):
    """What a signed link costs: encode + sign on one side, decode + verify on the other."""
    enc, dec, sign, verify = wire.encode, wire.decode, wire.sign, wire.verify
    for _ in range(n):
        f = sign(enc("event", FIELDS), KEY, "hall-1", FIELDS[0], FIELDS[1])
        dec(f)
        verify(f, KEY, "hall-1", FIELDS[0], FIELDS[1])


def json_baseline(n):
    d = dict(zip(("board", "boot", "seq", "sensor", "kind", "value", "t_us", "width_us"), FIELDS))
    for _ in range(n):
        json.loads(json.dumps(d))


def main():
    codec(2000)  # warm up
    ours = rate(codec, N)
    raw = rate(json_baseline, N)
    benchutil.line("codec", ours, raw, "raw json dumps+loads", unit="frames/s")
    signed = rate(signed_codec, N // 4)
    benchutil.line("signed", signed, ours, "unsigned codec (HMAC-SHA256 MAC per frame)", unit="frames/s")
    print("         codec target >= %s frames/s encode+decode on CPython: %s" % (
        f"{TARGET:,}", "met" if ours >= TARGET else "NOT MET"), flush=True)
    if MICROPYTHON:
        code = MP_SCRIPT % (str(benchutil.ROOT / "host" / "battlement" / "link"), FIELDS, 5000)
        out = subprocess.run([MICROPYTHON, "-c", code], capture_output=True, text=True, timeout=120, check=False)
        try:
            mp, mp_json, mp_signed = (float(x) for x in out.stdout.split())
            benchutil.line("codec-mp", mp, mp_json, "raw json (MicroPython unix)", unit="frames/s")
            benchutil.line("signed-mp", mp_signed, mp, "unsigned codec (MicroPython unix)", unit="frames/s")
        except ValueError:
            print("codec-mp  could not run under MicroPython: %s" % (out.stdout + out.stderr)[-300:])


if __name__ == "__main__":
    main()
