"""Simulated `os`: the unix port's own, with the power cut at a chosen filesystem write.

BATTLEMENT_FS_KILL names a file the test writes (tests/firmware/test_ota_faults.py): "<arming> <n>", or
"<arming> <n> <regex>" to count only the writes whose "<op> <path>" the regex matches (e.g. "7 2 ^rename
fwset": the second time the pointer file is swapped). These are writes: opening a file for writing (it
creates or truncates it), each write() to it, rename, remove, mkdir, rmdir. They are counted across the
board's reboots in <file>.count ("<arming> <count>", this module's alone: the test only ever writes the
first file, so disarming it by removing it races with nothing here). The n-th is cut: a write() puts down
the first half of its bytes, anything else does nothing, <file>.count says "<arming> cut" (never twice for
one arming), and the board dies there (SIGKILL: no finally runs, no file is closed), as a board does when
its power goes in the middle of a flash write. Every write is logged in <file>.log ("<count or -> <op>
<path>"). Without BATTLEMENT_FS_KILL nothing here differs from the port's `os`.
"""

import builtins
import re

import uos
from uos import *  # the rest of the module as the port has it

_BUDGET = uos.getenv("BATTLEMENT_FS_KILL")
_open = builtins.open


def _words(path, n):
    try:
        with _open(path) as f:
            return f.read().split(" ", n)
    except OSError:
        return []


def _cut(op, path):
    """Count one write; True if it is the one the power goes at."""
    arm = _words(_BUDGET, 2)
    if len(arm) < 2:
        return False
    done = _words(_BUDGET + ".count", 1)
    if len(done) == 2 and done[0] == arm[0] and done[1] == "cut":
        return False
    count = int(done[1]) if len(done) == 2 and done[0] == arm[0] else 0
    what = "%s %s" % (op, path)
    counts = len(arm) < 3 or re.search(arm[2], what) is not None
    with _open(_BUDGET + ".log", "a") as f:
        f.write("%s %s\n" % (count + 1 if counts else "-", what))
    if not counts:
        return False
    count += 1
    cut = count >= int(arm[1])
    with _open(_BUDGET + ".count", "w") as f:
        f.write("%s %s" % (arm[0], "cut" if cut else count))
    return cut


def _die():
    uos.system("kill -9 $PPID")  # the shell's parent: this board


class _File:
    def __init__(self, f, path):
        self.f = f
        self.path = path

    def write(self, data):
        if _cut("write", self.path):
            self.f.write(data[: len(data) // 2])
            _die()
        return self.f.write(data)

    def close(self):
        self.f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()

    def __getattr__(self, name):
        return getattr(self.f, name)


def _opener(path, mode="r", *args):
    if "w" in mode or "a" in mode or "+" in mode:
        if _cut("open", path):
            _die()
        return _File(_open(path, mode, *args), path)
    return _open(path, mode, *args)


def _counted(op, real):
    def f(*args):
        if _cut(op, " ".join(str(a) for a in args)):
            _die()
        return real(*args)

    return f


if _BUDGET:
    builtins.open = _opener
    rename = _counted("rename", uos.rename)
    remove = _counted("remove", uos.remove)
    mkdir = _counted("mkdir", uos.mkdir)
    rmdir = _counted("rmdir", uos.rmdir)
