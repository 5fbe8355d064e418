"""Improv Wi-Fi over serial: the packet codec the boards and `battlement provision` share.

Improv (https://www.improv-wifi.com/serial/) is the open way ESPHome, Home Assistant and the browser
tools give a device its Wi-Fi over USB. This module runs unchanged under CPython and MicroPython (the
firmware ships a compiled copy beside wire.py, imported only when a packet arrives), so it sticks to
the subset both understand. A packet:

    b"IMPROV" | version (1) | type | length | data (length bytes) | checksum

The checksum is the sum of every byte before it, modulo 256. Senders end a packet with b"\\n" (the
browser tools do), so a packet starts a line of the stream it shares with text (a board's console, the
serial link's frames, none of which starts with "IMPROV"); a reader takes `length` from byte 9 and
reads on past any b"\\n" inside the packet.

RPC commands and results carry strings, each a length byte and its UTF-8 bytes.

Battlement's own commands: a board needs a broker and a table besides Wi-Fi. The standard numbers its
commands from 1 up (1-7 so far) and lets a device answer any other "unknown RPC command", so ours sit
far above, where a stock tool never sends and a stock device refuses in that one known way:

    0xB0 broker   host, port, login, password   (kept until the Wi-Fi settings, then applied with them)
    0xB1 table    table id, board key (hex; "" keeps the board's)
"""

HEADER = b"IMPROV"
VERSION = 1
# Packet types (device -> client: STATE, ERROR, RESULT; client -> device: RPC).
STATE = 0x01
ERROR = 0x02
RPC = 0x03
RESULT = 0x04
# Current states.
READY = 0x02  # authorised: ready to take credentials (a board needs no button press: USB is physical access)
PROVISIONING = 0x03
PROVISIONED = 0x04
# Error states.
NO_ERROR = 0x00
INVALID_RPC = 0x01
UNKNOWN_RPC = 0x02
UNABLE_TO_CONNECT = 0x03
UNKNOWN_ERROR = 0xFF
# RPC commands: the standard's, then Battlement's.
WIFI = 0x01
GET_STATE = 0x02
GET_INFO = 0x03
SCAN = 0x04
BROKER = 0xB0
TABLE = 0xB1

STATES = {READY: "ready", PROVISIONING: "provisioning", PROVISIONED: "provisioned"}
ERRORS = {
    INVALID_RPC: "invalid RPC packet",
    UNKNOWN_RPC: "unknown RPC command",
    UNABLE_TO_CONNECT: "unable to connect",
    0x05: "bad hostname",
    UNKNOWN_ERROR: "unknown error",
}
FIRMWARE = "Battlement"  # the firmware name a Battlement board gives in its device information
MAX_DATA = 255  # one length byte
MAX_BODY = MAX_DATA - 2  # an RPC's strings after its command and length bytes


class ImprovError(ValueError):
    """A packet that is not a good one; str() says what is wrong with it."""


def packet(typ, data=b""):
    """A whole packet of type typ carrying data, with its checksum and the b"\\n" after it."""
    if len(data) > MAX_DATA:
        raise ImprovError("%d bytes of data; a packet carries at most %d" % (len(data), MAX_DATA))
    p = bytearray(HEADER)
    p.append(VERSION)
    p.append(typ)
    p.append(len(data))
    p.extend(data)
    p.append(sum(p) & 0xFF)
    p.append(10)
    return bytes(p)


def size(head):
    """The length of the packet whose first 9 (or more) bytes are head, checksum included."""
    return 10 + head[8]


def unpack(p):
    """A packet's bytes (what follows it is ignored) -> (type, data), or ImprovError saying what is wrong."""
    if len(p) < 9 or p[:6] != HEADER:
        raise ImprovError("not an Improv packet")
    n = size(p)
    if len(p) < n:
        raise ImprovError("cut short: %d of its %d bytes" % (len(p), n))
    if p[6] != VERSION:
        raise ImprovError("version %d (this speaks version %d)" % (p[6], VERSION))
    if sum(p[: n - 1]) & 0xFF != p[n - 1]:
        raise ImprovError("wrong checksum")
    return p[7], bytes(p[9 : n - 1])


def pack_strings(strings):
    out = bytearray()
    for s in strings:
        b = s.encode() if isinstance(s, str) else bytes(s)
        if len(b) > MAX_DATA:
            raise ImprovError("a string of %d bytes; at most %d" % (len(b), MAX_DATA))
        out.append(len(b))
        out.extend(b)
    return bytes(out)


def unpack_strings(data):
    out = []
    i = 0
    while i < len(data):
        n = data[i]
        if i + 1 + n > len(data):
            raise ImprovError("a string runs past the end of its packet")
        try:
            out.append(bytes(data[i + 1 : i + 1 + n]).decode())
        except (UnicodeError, ValueError):
            raise ImprovError("a string is not UTF-8")
        i += 1 + n
    return out


def _rpc_data(cmd, strings):
    body = pack_strings(strings)
    if len(body) > MAX_BODY:
        raise ImprovError("%d bytes of strings; one packet carries at most %d" % (len(body), MAX_BODY))
    return bytes((cmd, len(body))) + body


def rpc(cmd, strings=()):
    """An RPC command packet (client -> device)."""
    return packet(RPC, _rpc_data(cmd, strings))


def result(cmd, strings=()):
    """An RPC result packet (device -> client) answering cmd."""
    return packet(RESULT, _rpc_data(cmd, strings))


def command(data):
    """An RPC or RPC result packet's data -> (command, its strings); ImprovError if they do not add up."""
    if len(data) < 2 or data[1] != len(data) - 2:
        raise ImprovError("its length byte does not match its data")
    return data[0], unpack_strings(data[2:])
