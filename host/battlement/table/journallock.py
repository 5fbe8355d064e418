"""The journal's file before SQLite opens it: one bridge at a time, and only its owner may read it.

Opening a journal takes an exclusive lock (flock on `<journal>.lock`, which holds the owner's pid), so a
second bridge on the same file stops at once with one line naming the file and the first bridge's pid.
The journal, its WAL and the lock are created 0600: they hold the page codes and every placement.
Kept apart from journal.py, which writes and reads the games, because who may open the file is a
question of its own (the lock is to follow the database file's inode next).
"""

from __future__ import annotations

import contextlib
import fcntl
import os

from battlement.errors import UserError


def create_private(path: str) -> None:
    """The journal file exists and only its owner may read it (0600, also if an older one was 0644)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if os.fstat(fd).st_uid == os.getuid():
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    for extra in ("-wal", "-shm"):  # SQLite gives these the journal's mode, but older ones may be 0644
        with contextlib.suppress(OSError):
            os.chmod(path + extra, 0o600)


class JournalInUse(UserError):
    """Another bridge has the journal open."""


def take_lock(path: str) -> int:
    """Take the journal's lock for this process (released when it exits, however it exits)."""
    lock = path + ".lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        try:
            other = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
        finally:
            os.close(fd)
        raise JournalInUse("journal %s is in use by another bridge (pid %s); stop that one, or give this one "
                           "its own --journal" % (path, other)) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, b"%d\n" % os.getpid(), 0)
    return fd


def drop_lock(fd: int) -> None:
    """Give the lock back before the process exits (close())."""
    os.close(fd)  # closing the descriptor drops the flock
