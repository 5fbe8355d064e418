"""Simulated `os`: the unix port's own, with the power cut at a chosen filesystem write.

BATTLEMENT_FS_KILL names a file holding how many more filesystem writes the board may make, counted
across its reboots (tests/firmware/test_ota_faults.py): "<n>", or "<n> <regex>" to count only the writes
whose "<op> <path>" it matches (e.g. "2 ^rename fwset": the second time the pointer file is swapped). These
are writes: opening a file for writing (it creates or truncates it), each write() to it, rename, remove,
mkdir, rmdir. The write that finds the count at 1 is cut: a write() puts down the first half of its bytes,
anything else does nothing, and the board dies there (SIGKILL: no finally runs, no file is closed), as a
board does when its power goes in the middle of a flash write. The count file is removed first, so the
board that comes back runs free. Every write is logged in <file>.log ("<count or -> <op> <path>").
Without BATTLEMENT_FS_KILL nothing here differs from the port's `os`.
"""

import builtins
import re

import uos
from uos import *  # the rest of the module as the port has it

_BUDGET = uos.getenv("BATTLEMENT_FS_KILL")
_open = builtins.open


def _cut(op, path):
    """Count one write; True if it is the one the power goes at."""
    try:
        with _open(_BUDGET) as f:
            words = f.read().split(" ", 1)
        left = int(words[0])
    except (OSError, ValueError):
        return False
    what = "%s %s" % (op, path)
    counts = len(words) < 2 or re.search(words[1], what) is not None
    with _open(_BUDGET + ".log", "a") as f:
        f.write("%s %s\n" % (left if counts else "-", what))
    if not counts:
        return False
    if left > 1:
        with _open(_BUDGET, "w") as f:
            f.write(" ".join([str(left - 1)] + words[1:]))
        return False
    uos.remove(_BUDGET)
    return True


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
