"""The journal's file before the journal uses it: one bridge at a time, only its owner may read it, sound.

Opening a journal takes an exclusive flock on the database file itself, so every name of that file (a
symlink, a hard link) meets the same lock and there is no lock file to delete beside it. (On Linux a flock
is apart from the POSIX record locks SQLite takes on the same file; it goes with the descriptor, so with
the process however it ends, kill -9 included.) A second bridge stops at once with one line naming the
file and the pid holding it (from /proc/locks; "unknown" where that does not tell).
The journal and its WAL are created 0600: they hold the page codes and every placement.

Then the file is checked before anything writes it (check_file): PRAGMA quick_check on a read-only
connection, which never checkpoints into the file when it closes (about 0.2 s a million events). A file
that is not a database, is cut short or has a torn page is refused in one line and left as it was;
--new-journal moves it aside (replace_if_damaged). A WAL deleted after its bridge was killed takes the
commits it held with it: the log says so when the -shm left beside the file tells.
Kept apart from journal.py, which writes and reads the games: whether this file may be opened is a
question of its own.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import sqlite3
import struct
import time
import urllib.parse

from battlement.errors import UserError

log = logging.getLogger("battlement.journal")

DAMAGE = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)  # SQLite's codes for a file that is not sound
# The WAL index's header (the -shm): version, -, change counter, isInit, -, page size, mxFrame (frames in the
# WAL); nBackfill (frames a checkpoint has copied into the file) follows the header's two copies, at 96.
SHM_HEAD = struct.Struct("=IIIBBHI")
SHM_VERSION = 3007000
MAGIC = b"SQLite format 3\0"  # a database's first 16 bytes


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


class JournalDamaged(UserError):
    """The journal's file is not a sound SQLite database."""

    def __init__(self, path: str, problem: str):
        super().__init__("journal %s is damaged (%s); it is left as it is: run again with --new-journal to move "
                         "it aside (as %s.damaged-<UTC time>) and start a new journal" % (path, problem, path))
        self.path, self.problem = path, problem


def take_lock(path: str) -> int:
    """Lock the journal's file for this process (released when it exits, however it exits)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        raise UserError("cannot open journal %s: %s (check --journal)" % (path, e.strerror or e)) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        other = _holder(fd)
        os.close(fd)
        if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise UserError("cannot lock journal %s: %s" % (path, e.strerror or e)) from None
        raise JournalInUse("journal %s is in use by another bridge (pid %s); stop that one, or give this one "
                           "its own --journal" % (path, other)) from None
    return fd


def _holder(fd: int) -> str:
    """The pid holding the flock on fd's file, as /proc/locks tells (Linux), else "unknown"."""
    st = os.fstat(fd)
    key = "%02x:%02x:%d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    with contextlib.suppress(OSError), open("/proc/locks") as f:
        for line in f:  # "3: FLOCK  ADVISORY  WRITE 4711 fe:00:2263299 0 EOF" (a waiter has "->" after "3:")
            parts = line.split()
            if parts[1:4] == ["FLOCK", "ADVISORY", "WRITE"] and parts[5:6] == [key]:
                return parts[4]
    return "unknown"


def drop_lock(fd: int) -> None:
    """Give the lock back before the process exits (close())."""
    os.close(fd)  # closing the descriptor drops the flock


def check_file(path: str) -> None:
    """Refuse a damaged journal (JournalDamaged) before anything writes it; log commits lost with its WAL.
    The caller holds the lock."""
    _lost_wal(path)
    real = os.path.realpath(path)  # SQLite keeps the -wal and -shm beside the file a symlink names
    made = [real + x for x in ("-wal", "-shm") if not os.path.exists(real + x)]
    try:
        db = sqlite3.connect("file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(path)), uri=True)
        try:
            rows = db.execute("PRAGMA quick_check").fetchall()
        finally:
            db.close()
    except sqlite3.DatabaseError as e:
        if e.sqlite_errorcode & 0xFF not in DAMAGE:
            return  # not the file's bytes (a hot rollback journal, say): the journal's own opening tells
        problem = str(e)
    else:
        if rows == [("ok",)]:
            return
        lines = [ln for (row,) in rows for ln in str(row).splitlines() if not ln.startswith("*** ")]
        problem = lines[0] + (", and %d more problems SQLite found" % (len(lines) - 1) if len(lines) > 1 else "")
    for extra in made:  # what the check itself left beside the file (empty: nobody else has the lock)
        with contextlib.suppress(OSError):
            os.remove(extra)
    raise JournalDamaged(path, _short(real, made) or problem)


def _short(path: str, made: list[str]) -> str | None:
    """What SQLite calls "malformed", in words where it is a file cut short; None where that cannot be told
    (a file with its WAL beside it may be shorter than its header says until a checkpoint)."""
    if path + "-wal" not in made:
        return None
    with open(path, "rb") as f:
        head = f.read(100)
    if not head or not MAGIC.startswith(head[:16]):
        return None
    if len(head) < 100:
        return "cut short: %d bytes, less than a database's header" % len(head)
    page = int.from_bytes(head[16:18], "big")
    want = (65536 if page == 1 else page) * int.from_bytes(head[28:32], "big")
    have = os.path.getsize(path)
    if head[24:28] != head[92:96] or have >= want:  # the header's count of pages holds with its change counter
        return None
    return "cut short: %d bytes of the %d its header gives" % (have, want)


def unreadable(path: str, e: sqlite3.DatabaseError) -> UserError:
    """What SQLite refused while opening the journal, as one line."""
    if e.sqlite_errorcode & 0xFF in DAMAGE:
        return JournalDamaged(path, str(e))
    return UserError("cannot open journal %s: %s" % (path, e))


def _lost_wal(path: str) -> None:
    """A -shm without its -wal is what a killed bridge leaves when the WAL is deleted after it: frames the
    index counted and no checkpoint had copied are commits lost. Say so (nothing when it cannot tell)."""
    real = os.path.realpath(path)
    with contextlib.suppress(OSError):
        if os.path.getsize(real + "-wal") >= 32:  # a WAL with its header: SQLite reads what it holds
            return
    try:
        with open(real + "-shm", "rb") as f:
            head = f.read(100)
    except OSError:
        return
    if len(head) < 100:
        return
    version, _, _, init, _, _, frames = SHM_HEAD.unpack_from(head)
    (copied,) = struct.unpack_from("=I", head, 96)
    if version == SHM_VERSION and init and frames > copied:
        log.warning("journal %s: its WAL (%s-wal) is missing, though the bridge before did not close the journal: "
                    "what it wrote after the last checkpoint (%d page writes) is lost, and play goes on from there",
                    path, real, frames - copied)


def replace_if_damaged(path: str) -> str | None:
    """--new-journal: a damaged journal moves aside with its -wal and -shm, for a new one to start; returns
    the name it now has (None: the journal is sound, or new, and stays)."""
    fd = take_lock(path)  # held while moving: no bridge has the file meanwhile
    try:
        try:
            check_file(path)
            return None
        except JournalDamaged as e:
            problem = e.problem
        real = os.path.realpath(path)  # the file itself, not a symlink to it
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        moved, n = "%s.damaged-%s" % (real, stamp), 1
        while os.path.lexists(moved):
            n += 1
            moved = "%s.damaged-%s-%d" % (real, stamp, n)
        try:
            os.rename(real, moved)
            for extra in ("-wal", "-shm"):  # under the moved name, where SQLite looks for them
                if os.path.lexists(real + extra):
                    os.rename(real + extra, moved + extra)
        except OSError as e:
            raise UserError("cannot move the damaged journal %s aside: %s" % (path, e.strerror or e)) from None
        log.warning("journal %s is damaged (%s): kept as %s, and a new journal starts", path, problem, moved)
        return moved
    finally:
        drop_lock(fd)
