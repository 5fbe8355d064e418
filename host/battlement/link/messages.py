"""Normalized messages: what the transports hand to the bridge, and the commands it sends back.

Both transports (serial and MQTT) decode the same wire frames (battlement.link.wire)
into these objects, so the bridge never sees a transport detail except `table`
(None on serial) and `Hello.port` (the serial port a board spoke on).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from battlement.link import wire
from battlement.link.wire import R_FIELDS, R_ID, R_TYPE, WireError

# --- board -> host ---------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    """A board introduced itself: sent at boot, after every reconnect, and in answer to a ping."""

    table: str | None
    board: str
    boot: int
    firmware: str
    proto: int
    profile: str
    sensors: dict[str, str] = field(hash=False)  # sensor id -> kind (beam / tilt / presence)
    port: str | None = None  # serial port the hello came in on (None over MQTT)
    acked: int = 0  # the board needs nothing up to this seq: acknowledged (or dropped, counted in its beat)
    msgid: int = 0  # the last command msgid the board applied: a host's next commands must be newer


@dataclass(frozen=True)
class Event:
    """One sensor edge or reading. value: beam 1 = ball broke the beam; tilt/presence 1 = on, 0 = off.

    kind "blind" (a beam's): a break the board could not time (a pause held its edges back, or an edge
    was lost); value is the pause's length in ms, t_us the earliest the break may have begun, width_us
    from then to its last clear. kind "blocked" (a beam's): value 1, the beam has been dark longer than
    any ball (t_us when it went dark, width_us for how long); value 0, it is clear again (never a ball).
    """

    table: str | None
    board: str
    boot: int
    seq: int
    sensor: str
    kind: str
    value: int
    t_us: int  # board clock, wraps; only differences between events of one board mean anything
    width_us: int  # beams: how long the beam stayed broken; 0 for other kinds

    def __init__(self, table, board, boot, seq, sensor, kind, value, t_us, width_us):
        # Every field at once into the instance's dict, where a frozen dataclass's own __init__ sets each through
        # object.__setattr__: one is made for every event (15,000 a second at 100 tables), so 0.5 us is a lot.
        self.__dict__.update(table=table, board=board, boot=boot, seq=seq, sensor=sensor, kind=kind, value=value,
                             t_us=t_us, width_us=width_us)


@dataclass(frozen=True)
class Beat:
    """Heartbeat: a board is alive, with its health counters."""

    table: str | None
    board: str
    boot: int
    uptime_ms: int
    dropped: int
    queued: int
    reconnects: int
    outbox: int


@dataclass(frozen=True)
class Reply:
    """A board's answer to a command: ok (ack) or not (error, with the board's reason)."""

    table: str | None
    board: str
    msgid: int
    ok: bool
    reason: str = ""


# --- host -> board -----------------------------------------------------------------


@dataclass(frozen=True)
class Led:
    """Light an LED or a group (target), e.g. Led("tower-1", "ring", "pulse", 0xFF8000, 1200)."""

    board: str
    target: str
    pattern: str  # off / solid / blink / pulse / chase
    rgb: int  # 0xRRGGBB
    period_ms: int = 0
    table: str | None = None

    def __init__(self, board, target, pattern, rgb, period_ms=0, table=None):  # as Event's: a few for every event
        self.__dict__.update(board=board, target=target, pattern=pattern, rgb=rgb, period_ms=period_ms, table=table)


@dataclass(frozen=True)
class Config:
    """Set one board setting (e.g. a beam's minimum pulse) by key."""

    board: str
    key: str
    value: str
    table: str | None = None


@dataclass(frozen=True)
class Ping:
    """Ask a board to answer (ack) and to repeat its hello."""

    board: str
    table: str | None = None


@dataclass(frozen=True)
class EvAck:
    """Host -> board: every event of this boot up to seq has arrived (cumulative). Sent by the transports."""

    board: str
    boot: int
    seq: int
    table: str | None = None


Message = Hello | Event | Beat | Reply
Command = Led | Config | Ping | EvAck

UP_TYPES = ("hello", "event", "beat", "ack", "error")
# LED commands are the host's most frequent frames: the board and target ids of one that encoded are
# remembered, and the next with them is formatted at once (to_frame), not field by field (wire.encode).
_IDS: set[str] = set()
LED_PERIOD_MAX = int(wire.SPEC["led"][5][3])
DOWN_TYPES = ("led", "config", "ping", "evack")


def parse_sensors(tok: str) -> dict[str, str]:
    """'cup-1:beam,tilt-a:tilt' -> {'cup-1': 'beam', 'tilt-a': 'tilt'}; '-' means no sensors.

    Sensor ids follow the id rule (1-32 of a-z 0-9 '-'), each once (the 512-byte frame bounds how many).
    """
    out: dict[str, str] = {}
    if tok == "-":
        return out
    for item in tok.split(","):
        sid, sep, kind = item.partition(":")
        if not sep or kind not in wire.KINDS:
            raise WireError(R_FIELDS, "bad sensor entry %r (want id:beam|tilt|presence)" % item[:40])
        if not wire.is_id(sid.encode()):
            raise WireError(R_ID, "sensor %r is not 1-%d of a-z, 0-9, '-'" % (sid[:40], wire.ID_MAX))
        if sid in out:
            raise WireError(R_FIELDS, "sensor %s declared twice" % sid)
        out[sid] = kind
    return out


def format_sensors(sensors: dict[str, str]) -> str:
    return ",".join("%s:%s" % (k, sensors[k]) for k in sorted(sensors)) or "-"


def declared_kind(kind: str) -> str:
    """The kind a hello declares for the sensor an event of this kind names (blind, blocked: a beam's)."""
    return "beam" if kind in (wire.BLIND, wire.BLOCKED) else kind


def from_frame(typ: str, fields: tuple, table: str | None = None):
    """Turn a decoded frame (wire.decode output) into a message or command object.

    Raises WireError("fields") for a token outside its set (unknown sensor kind, LED pattern,
    sensor list), so the transports count it like any other bad frame; wire.decode has already
    checked every number's range and every id.
    """
    if typ == "hello":
        board, boot, firmware, proto, profile, sensors = fields[:6]
        acked, msgid = fields[6:] if len(fields) > 6 else (0, 0)  # a version 1 hello has none (refused: proto)
        return Hello(table, board, boot, firmware, proto, profile, parse_sensors(sensors), None, acked, msgid)
    if typ == "event":
        board, boot, seq, sensor, kind, value, t_us, width_us = fields
        if kind not in wire.EVENT_KINDS:  # a sensor's kind, or blind (a beam's break its board could not time)
            raise WireError(R_FIELDS, "unknown sensor kind %r" % kind[:20])
        return Event(table, board, boot, seq, sensor, kind, value, t_us, width_us)
    if typ == "beat":
        return Beat(table, *fields)
    if typ == "ack":
        return Reply(table, fields[0], fields[1], True, "")
    if typ == "error":
        return Reply(table, fields[0], fields[1], False, fields[2])
    if typ == "led":
        board, _msgid, target, pattern, rgb, period = fields
        if pattern not in wire.PATTERNS:
            raise WireError(R_FIELDS, "unknown LED pattern %r" % pattern[:20])
        return Led(board, target, pattern, rgb, period, table)
    if typ == "config":
        return Config(fields[0], fields[2], fields[3], table)
    if typ == "ping":
        return Ping(fields[0], table)
    if typ == "evack":
        return EvAck(fields[0], fields[1], fields[2], table)
    raise WireError(R_TYPE, typ[:20])


def to_frame(cmd, msgid: int) -> bytes:
    """Encode a command as one wire frame (bytes ending in newline). EvAck carries no msgid.

    Raises WireError("fields") naming the bad value (pattern, colour, period, id charset).
    """
    if isinstance(cmd, Led):
        if cmd.pattern not in wire.PATTERNS:
            raise WireError(R_FIELDS, "LED pattern %r is not one of %s" % (cmd.pattern, "/".join(wire.PATTERNS)))
        if not 0 <= cmd.rgb <= 0xFFFFFF:
            raise WireError(R_FIELDS, "LED colour %r is not 0xRRGGBB" % (cmd.rgb,))
        if cmd.period_ms < 0:
            raise WireError(R_FIELDS, "LED period %d ms is negative" % cmd.period_ms)
        board, target, rgb, period = cmd.board, cmd.target, cmd.rgb, cmd.period_ms
        if board in _IDS and target in _IDS and 0 < msgid <= wire.MSGID and type(rgb) is int and type(period) is int \
                and period <= LED_PERIOD_MAX:  # what wire.encode checks, known to hold: the same frame, sooner
            body = b"led %s %d %s %s %x %d" % (board.encode(), msgid, target.encode(), cmd.pattern.encode(), rgb, period)
            return b"%s*%08x\n" % (body, wire.crc32(body) & 0xFFFFFFFF)
        frame = wire.encode("led", (board, msgid, target, cmd.pattern, rgb, period))
        if len(_IDS) >= 1024:
            _IDS.clear()
        _IDS.update((board, target))  # both are ids: encode checked them
        return frame
    if isinstance(cmd, Config):
        return wire.encode("config", (cmd.board, msgid, cmd.key, cmd.value))
    if isinstance(cmd, Ping):
        return wire.encode("ping", (cmd.board, msgid))
    if isinstance(cmd, EvAck):
        return wire.encode("evack", (cmd.board, cmd.boot, cmd.seq))
    raise TypeError("not a command: %r" % (cmd,))


def up_frame(msg) -> bytes:
    """Encode a board -> host message as a wire frame (what a board or a simulator sends)."""
    if isinstance(msg, Hello):
        fields: tuple = (msg.board, msg.boot, msg.firmware, msg.proto, msg.profile, format_sensors(msg.sensors),
                         msg.acked, msg.msgid)
        return wire.encode("hello", fields)
    if isinstance(msg, Event):
        fields = (msg.board, msg.boot, msg.seq, msg.sensor, msg.kind, msg.value, msg.t_us, msg.width_us)
        return wire.encode("event", fields)
    if isinstance(msg, Beat):
        fields = (msg.board, msg.boot, msg.uptime_ms, msg.dropped, msg.queued, msg.reconnects, msg.outbox)
        return wire.encode("beat", fields)
    if isinstance(msg, Reply):
        if msg.ok:
            return wire.encode("ack", (msg.board, msg.msgid))
        return wire.encode("error", (msg.board, msg.msgid, msg.reason))
    raise TypeError("not a board message: %r" % (msg,))


def status_payload(board: str, boot: int, session: int, up: bool, key: bytes | None = None,
                   table: str | None = None) -> bytes:
    """A board's retained MQTT status (and will): the plain word for an unsigned board; with a key, a status frame
    signed for its table, boot and link session (docs/protocol.md, "Signed status"), without its newline."""
    state = "online" if up else "offline"
    if key is None:
        return state.encode()
    return wire.sign(wire.encode("status", (board, boot, session, state)), key, table, board, boot)[:-1]
