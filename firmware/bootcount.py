"""The boot counter: raised in flash at every boot, before the first frame goes out.

The hello's `boot` is this counter (protocol 3, docs/protocol.md "Boot counter"): the host keeps the
highest boot of every board and refuses frames of any lower one, so a frame recorded during an earlier
boot is worth nothing, however many boots ago it was.

Two slots (files), each `boot <count, 8 hex> <CRC-32 of what precedes it, 8 hex>\\n`. At boot the
highest valid slot is read, the count raised by one, and written to the OTHER slot: the highest is never
touched. A crash (a reset, power lost) while the other slot is written leaves it torn, which its CRC shows,
and the next boot reads the intact one and writes the same count again: no frame went out with it, so
nothing was spent. A slot that is torn, missing or garbage is passed over (said on the console); with
none valid the count starts at 1. So no crash between any two steps makes the counter go back, and
none stops the board booting.

floor: the least the count may be (`battlement flash` writes its clock into config.json as boots_from):
a board whose filesystem was erased starts above every boot it had before.
"""

import os
import sys
from binascii import crc32

SLOTS = ("boot.a", "boot.b")
LAST = 0xFFFFFFFF  # the wire's largest boot: the count stays there (the board then needs a new key)
_SIZE = 23  # b"boot 0000002a 0e124edb\n"


def _join(home, name):
    return home + "/" + name if home else name


def read(path):
    """The count a slot holds, or None if it is missing, torn or garbage."""
    try:
        with open(path, "rb") as f:
            data = f.read(_SIZE + 1)
    except OSError:
        return None
    if len(data) != _SIZE or data[:5] != b"boot " or data[13:14] != b" " or data[22:] != b"\n":
        return None
    try:
        n = int(data[5:13], 16)
        want = int(data[14:22], 16)
    except ValueError:
        return None
    if crc32(data[:13]) & 0xFFFFFFFF != want or n < 1:
        return None
    return n


def write(path, n):
    body = b"boot %08x" % n
    with open(path, "wb") as f:
        f.write(b"%s %08x\n" % (body, crc32(body) & 0xFFFFFFFF))
    sync = getattr(os, "sync", None)
    if sync is not None:
        sync()


def advance(home="", floor=0):
    """Raise the counter in the board's folder `home` ("" on a board: the filesystem's root) and return it.

    Written before it is returned: a board sends no frame with a count the flash does not hold yet."""
    a, b = [read(_join(home, s)) for s in SLOTS]
    for slot, got in zip(SLOTS, (a, b)):
        if got is None and _exists(_join(home, slot)):
            print("boot counter: slot %s is unreadable; going on from the other" % slot, file=sys.stderr)
    best = max(a or 0, b or 0)
    n = min(max(best + 1, floor), LAST)
    # Write the slot that does not hold the highest count (b when a is the highest, else a).
    other = SLOTS[1] if a is not None and a == best else SLOTS[0]
    try:
        write(_join(home, other), n)
    except OSError as e:  # a full or failing flash: boot all the same (not saved: the next boot may repeat it)
        print("boot counter: could not save boot %d: %r" % (n, e), file=sys.stderr)
    return n


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False
