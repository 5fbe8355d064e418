"""Battlement wire protocol v1: frame codec shared by the boards and the host.

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

from binascii import crc32

VERSION = 1
MAX_FRAME = 512

# type -> field schema: one letter per field.
#   s: token (str), i: decimal int, x: hex int (boot ids)
SCHEMA = {
    # board -> host
    "hello": "sxsiss",  # board boot firmware proto profile sensors("id:kind,...")
    "event": "sxissiii",  # board boot seq sensor kind value t_us width_us
    "beat": "sxiiiii",  # board boot uptime_ms dropped queued reconnects outbox
    "ack": "si",  # board msgid
    "error": "sis",  # board msgid reason
    # host -> board
    "led": "sissxi",  # board msgid target pattern rgb period_ms
    "config": "siss",  # board msgid key value
    "ping": "si",  # board msgid
    "evack": "sxi",  # board boot seq  (cumulative: every event up to seq arrived)
}
KINDS = ("beam", "tilt", "presence")
PATTERNS = ("off", "solid", "blink", "pulse", "chase")

# Reasons a frame is rejected; the host counts rejections under these names.
R_LENGTH = "length"
R_CRC = "crc"
R_SYNTAX = "syntax"
R_TYPE = "unknown-type"
R_FIELDS = "fields"

_HEX = b"0123456789abcdef"
_SAFE = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:,-="


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


def encode(typ, fields):
    """Encode one frame. fields follow SCHEMA[typ]; returns bytes ending in b'\\n'."""
    schema = SCHEMA[typ]
    if len(fields) != len(schema):
        raise WireError(R_FIELDS, "%s takes %d fields, got %d" % (typ, len(schema), len(fields)))
    parts = [typ]
    for f, kind in zip(fields, schema):
        if kind == "s":
            tok = str(f)
            if not _safe(tok.encode()):
                raise WireError(R_FIELDS, "unsafe token %r" % tok)
            parts.append(tok)
        elif kind == "x":
            parts.append("%x" % f)
        else:
            parts.append("%d" % f)
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
    try:
        parts = body.decode().split(" ")
    except UnicodeError:
        raise WireError(R_SYNTAX, "not ASCII")
    typ = parts[0]
    schema = SCHEMA.get(typ)
    if schema is None:
        raise WireError(R_TYPE, typ[:20])
    if len(parts) - 1 != len(schema):
        raise WireError(R_FIELDS, "%s takes %d fields, got %d" % (typ, len(schema), len(parts) - 1))
    out = []
    i = 1
    for kind in schema:
        tok = parts[i]
        i += 1
        if kind == "s":
            if not _safe(tok.encode()):
                raise WireError(R_FIELDS, "unsafe token")
            out.append(tok)
        else:
            try:
                out.append(int(tok, 16 if kind == "x" else 10))
            except ValueError:
                raise WireError(R_FIELDS, "not a number: %s" % tok[:20])
    return typ, tuple(out)


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
