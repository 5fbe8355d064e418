"""Battlement wire protocol (version in VERSION): frame codec shared by the boards and the host.

This module runs unchanged under CPython and MicroPython (the firmware ships a
compiled copy), so it sticks to the subset both understand.

A frame is one line of ASCII text:

    <type> <field> <field> ...*<crc32 as 8 lowercase hex digits>\\n

Fields are tokens from a safe charset (letters, digits, '_', '.', ':', ',',
'-', '='), so neither the space separator, the '*' before the CRC, nor the
'\\n' delimiter can occur inside a field. The CRC-32 covers every byte before
the '*'. A frame is at most MAX_FRAME bytes including the newline. See
docs/protocol.md for the meaning of every field.
"""

from binascii import crc32, hexlify
from hashlib import sha256  # MicroPython has it too (no hmac module: HMAC is done below)

VERSION = 3  # 2: hello carries acked (resync before accept); 3: boot is a counter, the MAC binds table and board
MAX_FRAME = 512

# type -> fields: (name, encoding[, lowest, highest]) per field. Encodings:
#   n: an id (board, sensor, LED target): 1-32 of a-z 0-9 '-'
#   s: a token from the safe charset        i: decimal int, x: lowercase hex int (boot ids, colours)
# Every number must lie in its range; a C board can keep every one in a uint32_t.
U32 = 0xFFFFFFFF
TICKS = 0x3FFFFFFF  # t_us, width_us: the board's microsecond clock wraps at 2^30 (MicroPython's ticks_us)
BLIND_MS = 65535  # a blind event's value: the collection's length in ms (other kinds: 0 or 1)
MSGID = 999999999  # the host's msgids run 1..MSGID and wrap; a board answers msgid 0 to a frame it could not read
SPEC = {
    # board -> host
    "hello": (("board", "n"), ("boot", "x", 1, U32), ("firmware", "s"), ("proto", "i", 0, 65535),
              ("profile", "s"), ("sensors", "s"), ("acked", "i", 0, U32), ("msgid", "i", 0, MSGID)),
    "event": (("board", "n"), ("boot", "x", 1, U32), ("seq", "i", 1, U32), ("sensor", "n"), ("kind", "s"),
              ("value", "i", 0, BLIND_MS), ("t_us", "i", 0, TICKS), ("width_us", "i", 0, TICKS)),
    "beat": (("board", "n"), ("boot", "x", 1, U32), ("uptime_ms", "i", 0, U32), ("dropped", "i", 0, U32),
             ("queued", "i", 0, U32), ("reconnects", "i", 0, U32), ("outbox", "i", 0, U32)),
    "ack": (("board", "n"), ("msgid", "i", 0, MSGID)),
    "error": (("board", "n"), ("msgid", "i", 0, MSGID), ("reason", "s")),
    # board -> all, on MQTT's retained status topic of a signing board (its will too): see STATES
    "status": (("board", "n"), ("boot", "x", 1, U32), ("session", "i", 0, U32), ("state", "s")),
    # host -> board
    "led": (("board", "n"), ("msgid", "i", 1, MSGID), ("target", "n"), ("pattern", "s"), ("rgb", "x", 0, 0xFFFFFF),
            ("period_ms", "i", 0, 3600000)),
    "config": (("board", "n"), ("msgid", "i", 1, MSGID), ("key", "s"), ("value", "s")),
    "ping": (("board", "n"), ("msgid", "i", 1, MSGID)),
    "evack": (("board", "n"), ("boot", "x", 1, U32), ("seq", "i", 0, U32)),  # cumulative: every event up to seq
}
# A version 1 hello had no acked: still decoded, so the host can say which protocol the board speaks.
HELLO_V1 = SPEC["hello"][:6]
KINDS = ("beam", "tilt", "presence")
# What an event's kind may be: a sensor's, or "blind" for a beam's break the board could not time
# (a garbage collection held its edges back, docs/protocol.md).
BLIND = "blind"
# "blocked" (a beam's): dark longer than any ball, so no ball (value 1), and clear again (0).
BLOCKED = "blocked"
EVENT_KINDS = KINDS + (BLIND, BLOCKED)
PATTERNS = ("off", "solid", "blink", "pulse", "chase")
STATES = ("online", "offline")  # a status frame's state
# The values a `config` command may set (the setting after the last '.'), and the pin maps' beam
# settings (boards/hardware.py), where the detection holds (docs/hardware.md "Timing"): noise up to
# 0.5 ms stays under min_us and a 2 ms ball over it with the IRQ lateness (150 us on esp32) either
# way; a rim flicker's light (0.5 ms) fits under lockout_ms and a burst's 6 ms gaps do not;
# block_ms lies past the widest ball (30 ms) and short enough that collections do not wait long.
SETTINGS = {
    "min_us": (700, 1800),
    "lockout_ms": (1, 5),
    "block_ms": (100, 5000),
    "stable_ms": (10, 5000),
    "beat_ms": (500, 60000),
    "resend_ms": (200, 60000),
}
ID_MAX = 32

# Reasons a frame is rejected; the host counts rejections under these names.
R_LENGTH = "length"
R_CRC = "crc"
R_SYNTAX = "syntax"
R_TYPE = "unknown-type"
R_FIELDS = "fields"
R_RANGE = "range"
R_ID = "id"
R_MAC = "mac"
MAC_LEN = 8  # bytes of HMAC-SHA256 kept, as 16 hex digits: a forger needs about 2^64 tries

_HEX = b"0123456789abcdef"
_DEC = b"0123456789"
_SAFE = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:,-="
_ID = b"abcdefghijklmnopqrstuvwxyz0123456789-"
_TEXT = _SAFE + b" *!\"#$%&'()+/;<>?@[\\]^`{|}~"  # printable ASCII: what a frame may contain at all


class WireError(ValueError):
    """A frame that cannot be decoded; .reason is one of the R_* names."""

    def __init__(self, reason, detail=""):
        super().__init__(reason + (": " + detail if detail else ""))  # ValueError.__init__(self, ..) fails on MicroPython
        self.reason = reason
        self.detail = detail


def _only(data, allowed):
    """True if every byte of data is one of allowed."""
    for c in data:
        if c not in allowed:
            return False
    return True


try:  # CPython: one C call instead of a Python loop per byte (the codec's hot spot)
    b"".translate(None, b"")

    def _only(data, allowed):
        return not data.translate(None, allowed)

except (AttributeError, TypeError):  # MicroPython has no bytes.translate: keep the loop
    pass


def _safe(tok):
    return bool(tok) and _only(tok, _SAFE)


def is_id(tok):
    """An id (board, sensor, LED target, table): 1-32 of a-z 0-9 '-', as bytes."""
    return 0 < len(tok) <= ID_MAX and _only(tok, _ID)


def _number(tok, spec):
    """A decimal or hex token (bytes) as an int in spec's range; WireError naming the field otherwise."""
    name = spec[0]
    hexa = spec[1] == "x"
    # One spelling per number: no sign, no 0x, no '_', no leading zero (int() would take them all).
    if not tok or not _only(tok, _HEX if hexa else _DEC) or (len(tok) > 1 and tok[0] == 48):
        raise WireError(R_FIELDS, "%s is not a %s number: %s" % (name, "hex" if hexa else "decimal", tok[:20].decode()))
    if len(tok) > (8 if hexa else 10):
        raise WireError(R_RANGE, "%s %s... is over %d" % (name, tok[:12].decode(), spec[3]))
    v = int(tok, 16 if hexa else 10)
    if v < spec[2] or v > spec[3]:
        raise WireError(R_RANGE, "%s %d is outside %d..%d" % (name, v, spec[2], spec[3]))
    return v


def _in_range(v, spec):
    if not isinstance(v, int) or isinstance(v, bool) or v < spec[2] or v > spec[3]:
        raise WireError(R_RANGE, "%s %r is outside %d..%d" % (spec[0], v, spec[2], spec[3]))


def _event_value(kind, v):
    """An event's value: 0 or 1, but a blind event's is the collection's length in ms (1 and up)."""
    if v > 1 if kind != BLIND else v < 1:
        raise WireError(R_RANGE, "value %d is outside %s for a %s event" % (v, "1..%d" % BLIND_MS if kind == BLIND else "0..1", kind[:20]))


_KNOWN = {}  # type: dict  # token -> 2 checked as an id, 1 as a safe token: a host's ids and a board's recur every frame
_KNOWN_MAX = 256  # then forgotten and checked again (a board keeps it small)


def _token(tok, kind, fs):
    """Check a string field (an id for 'n', a safe token for 's') once; remembered after that."""
    need = 2 if kind == "n" else 1
    b = tok.encode()
    if kind == "n" and not is_id(b):
        raise WireError(R_ID, "%s %r is not 1-%d of a-z, 0-9, '-'" % (fs[0], tok[:40], ID_MAX))
    if not _safe(b):
        raise WireError(R_FIELDS, "unsafe token %r" % tok)
    if len(_KNOWN) >= _KNOWN_MAX:
        _KNOWN.clear()
    try:
        _KNOWN[tok] = max(need, 2 if is_id(b) else 1)
    except MemoryError:  # a board's heap with no block for the cache's growth: checked again next time
        pass


def encode(typ, fields):
    """Encode one frame. fields follow SPEC[typ]; returns bytes ending in b'\\n'.

    Raises WireError for a value the wire cannot carry (so a board never sends a frame the host rejects).
    """
    spec = SPEC[typ]
    if len(fields) != len(spec):
        raise WireError(R_FIELDS, "%s takes %d fields, got %d" % (typ, len(spec), len(fields)))
    parts = [typ]
    for f, fs in zip(fields, spec):
        kind = fs[1]
        if kind == "s" or kind == "n":
            tok = f if type(f) is str else str(f)
            if _KNOWN.get(tok, 0) < (2 if kind == "n" else 1):
                _token(tok, kind, fs)
            parts.append(tok)
        else:
            if type(f) is not int or f < fs[2] or f > fs[3]:  # type: ignore[operator]  # SPEC mixes str and int
                _in_range(f, fs)
            parts.append(("%x" if kind == "x" else "%d") % f)
    if typ == "event":
        _event_value(str(fields[4]), fields[5])
    body = " ".join(parts).encode()
    frame = b"%s*%08x\n" % (body, crc32(body) & 0xFFFFFFFF)
    if len(frame) > MAX_FRAME:
        raise WireError(R_LENGTH, "%d bytes" % len(frame))
    return frame


def decode(line):
    """Decode one frame (bytes, with or without the trailing newline).

    Returns (type, tuple of typed fields); raises WireError naming the reason.
    """
    n = len(line)
    if n and line[n - 1] == 10:
        n -= 1
    if n and line[n - 1] == 13:  # tolerate CRLF from terminals
        n -= 1
    if n > MAX_FRAME - 1:
        raise WireError(R_LENGTH, "%d bytes" % n)
    star = line.rfind(b"*", 0, n)
    if star < 0 or n - star != 9:
        raise WireError(R_SYNTAX, "no CRC")
    body = line[:star]
    # Only lowercase hex: int() would also take 'A-F', '0x', '_' and signs, giving one
    # CRC several spellings (a flipped case bit would then pass unnoticed).
    if not _only(line[star + 1 : n], _HEX):
        raise WireError(R_SYNTAX, "bad CRC digits")
    want = int(line[star + 1 : n], 16)
    if crc32(body) & 0xFFFFFFFF != want:
        raise WireError(R_CRC)
    if not _only(body, _TEXT):
        raise WireError(R_SYNTAX, "not printable ASCII")
    m = body.rfind(b" ~")
    if m >= 0:  # a signed frame: the MAC is checked by whoever holds the key (verify)
        if len(body) - m != 2 + 2 * MAC_LEN or not _only(body[m + 2:], _HEX):
            raise WireError(R_SYNTAX, "bad MAC digits")
        body = body[:m]
    parts = body.split(b" ")
    typ = parts[0].decode()
    spec = SPEC.get(typ)
    if spec is None:
        raise WireError(R_TYPE, typ[:20])
    if len(parts) - 1 != len(spec):
        if typ != "hello" or len(parts) - 1 != len(HELLO_V1):
            raise WireError(R_FIELDS, "%s takes %d fields, got %d" % (typ, len(spec), len(parts) - 1))
        spec = HELLO_V1
    out = []
    i = 1
    for fs in spec:
        tok = parts[i]
        i += 1
        kind = fs[1]
        if kind == "n":
            if not is_id(tok):
                raise WireError(R_ID, "%s %s is not 1-%d of a-z, 0-9, '-'" % (fs[0], tok[:40].decode(), ID_MAX))
            out.append(tok.decode())
        elif kind == "s":
            if not _safe(tok):
                raise WireError(R_FIELDS, "unsafe token in %s" % fs[0])
            out.append(tok.decode())
        else:
            out.append(_number(tok, fs))
    if spec is HELLO_V1 and out[3] != 1:
        raise WireError(R_FIELDS, "hello of protocol %d takes %d fields, got 6" % (out[3], len(SPEC["hello"])))
    if typ == "event":
        _event_value(out[4], out[5])
    return typ, tuple(out)


# --- signing: HMAC-SHA256 over every frame, one key per board -------------------------------


_PADS = {}  # type: dict  # key -> (inner pad, outer pad): made once per key, not per frame


def _pads(key):
    p = _PADS.get(key)
    if p is None:
        k = sha256(key).digest() if len(key) > 64 else key
        k = k + bytes(64 - len(k))
        p = (bytes([c ^ 0x36 for c in k]), bytes([c ^ 0x5C for c in k]))
        if len(_PADS) < 256:  # a table has a handful of boards; never grow without bound
            _PADS[key] = p
    return p


def hmac_sha256(key, *msg):
    """HMAC-SHA256 (RFC 2104) on hashlib.sha256 alone: MicroPython has no hmac module. The message may
    come in parts (hashed one after the other, never copied into one)."""
    ipad, opad = _pads(key)
    inner = sha256(ipad)
    for part in msg:
        inner.update(part)
    outer = sha256(opad)
    outer.update(inner.digest())
    return outer.digest()


def _mac(key, table, board, boot, body):
    # Signed with every frame: the table and board the key belongs to and the board's boot (a counter
    # that rises at every boot), also for frames that do not carry them (ack, led, ...). So a frame
    # recorded during one boot does not verify during another, nor on another board or table.
    return hexlify(hmac_sha256(key, ("%s %s %x " % (table or "", board, boot)).encode(), body)[:MAC_LEN])


def sign(frame, key, table, board, boot):
    """A frame from encode() with its MAC: `<body> ~<16 hex>*<crc>`. table: the board's table id ("" if it
    has none); boot: the board's current boot (0 for a ping to a board whose boot the host does not know yet)."""
    star = frame.rfind(b"*")
    body = frame[:star] + b" ~" + _mac(key, table, board, boot, frame[:star])
    out = b"%s*%08x\n" % (body, crc32(body) & 0xFFFFFFFF)
    if len(out) > MAX_FRAME:
        raise WireError(R_LENGTH, "%d bytes signed" % len(out))
    return out


def verify(line, key, table, board, boot):
    """True if line (a frame that decodes) carries the right MAC for key, the board's table and id, and its boot."""
    star = line.rfind(b"*")
    i = line.rfind(b" ~", 0, star)
    if i < 0 or star - i != 2 + 2 * MAC_LEN:
        return False
    want = _mac(key, table, board, boot, line[:i])
    diff = 0
    for k in range(2 * MAC_LEN):  # constant time: no early exit at the first wrong digit
        diff |= line[i + 2 + k] ^ want[k]
    return diff == 0


class Splitter:
    """Cut a byte stream into frames; survives garbage, partial and overlong frames.

    feed() returns the complete lines (without b'\\n'); an overlong run is dropped
    up to the next newline and counted in .overlong.
    """

    def __init__(self, limit=MAX_FRAME):
        self.limit = limit
        self.buf = b""
        self.overlong = 0
        self._skipping = False

    def feed(self, data):
        out = []
        buf = self.buf + data if self.buf else data
        start = 0
        while True:
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            if self._skipping:
                self._skipping = False
            elif nl - start + 1 > self.limit:
                self.overlong += 1
            else:
                out.append(buf[start:nl])
            start = nl + 1
        rest = buf[start:]
        if len(rest) > self.limit:
            if not self._skipping:
                self.overlong += 1
            self._skipping = True
            rest = b""
        self.buf = rest
        return out
