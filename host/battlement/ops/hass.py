"""Home Assistant MQTT discovery: every table appears in Home Assistant by itself (docs/bridge.md).

What Home Assistant is told, retained under <prefix>/<component>/battlement-<table>/<object>/config:
    a device per table, and per board a device linked to it (via_device), its sw_version the firmware
        the board's hello said (sent again when a board comes with another one);
    sensor  Game     state: whose turn / the phase in words; attributes: the public view (JSON)
    sensor  Winner   "none" while playing, the winner's name, or "draw"
    event   Play     hit, fall, stand, move: one per sensed input the rules applied
    binary_sensor <board> online, as the bridge vouches for it (battlement/<table>/<board>/link): a board's own
        status topic takes anyone's word, and a signing board's status is a signed frame Home Assistant cannot check
Every entity is available only while the bridge is (its last will: retained online/offline).

Topics the bridge publishes for them:
    battlement/bridge/<bridge id>   retained online / offline (the last will)
    battlement/<table>/game         retained JSON: {"state", "winner", "game", "title", "paused", "attributes"}
    battlement/<table>/event        JSON: {"event_type", "input", "text", ...the input's fields}, not retained, QoS 0
    battlement/<table>/<board>/link retained online / offline: each mapped board's link as the bridge took it (a
                                    signing board's status only when signed: transport/boots.py)

Only what the public scoreboard gets is published (session.public(): the rules' public view) and the
sensed inputs, which everyone at the table saw happen: no side's secret reaches these topics.
The payloads are built by pure functions; Publisher wires them to a transport with the interface of
transport.mqtt.MqttTransport (will, on_connected, subscribe_extra, publish_raw, publish0_all).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time

from battlement import __version__
from battlement.errors import UserError
from battlement.table.maps import TableMap
from battlement.table.matchlog import ByInput

DEFAULT_PREFIX = "homeassistant"
# What a sensed input is, in the words of Home Assistant's event entity (every game's SENSED types).
EVENT_OF_INPUT = {"ball": "hit", "tie": "hit", "tilt": "fall", "fell": "fall", "stood": "stand",
                  "cell": "move", "pawn": "move"}
EVENT_TYPES = ["hit", "fall", "stand", "move"]
STATE_MAX = 255  # Home Assistant refuses a longer state
# The game topic at most this often (s): a state costs a public view and its JSON (~0.2 ms for Medieval
# Pong, `make bench` hass), and nobody reads a dashboard faster; a burst publishes its last state once.
STATE_EVERY = 0.25
ORIGIN = {"name": "Battlement", "sw": __version__}
PREFIX_RE = re.compile(r"^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*$")


def check_prefix(prefix: str) -> str:
    """--hass-prefix: Home Assistant's discovery prefix (a topic without wildcards)."""
    if not PREFIX_RE.match(prefix or ""):
        raise UserError("--hass-prefix %r is not a discovery prefix: use letters, digits, '_', '-' and '/' "
                        "(Home Assistant's default is %s)" % (prefix, DEFAULT_PREFIX))
    return prefix


def bridge_id(tables: list[str]) -> str:
    """Stable while the bridge serves the same tables (its availability topic and the unique ids' anchor)."""
    joined = "-".join(sorted(tables))
    if len(joined) <= 64:
        return joined
    return "%s-%s" % (min(tables)[:32], hashlib.sha1(joined.encode()).hexdigest()[:10])


def availability_topic(bridge: str) -> str:
    # three levels: the bridge's own subscription (battlement/+/+/status) never sees it
    return "battlement/bridge/%s" % bridge


def link_topic(table: str, board: str) -> str:
    # a leaf the bridge's own subscriptions (battlement/+/+/up and /status) never see
    return "battlement/%s/%s/link" % (table, board)


def game_topic(table: str) -> str:
    return "battlement/%s/game" % table


def event_topic(table: str) -> str:
    return "battlement/%s/event" % table


_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))  # one for all: json.dumps makes one a call


def _dumps(obj) -> bytes:
    return _JSON.encode(obj).encode()


def table_device(tmap: TableMap) -> dict:
    return {"identifiers": ["battlement-%s" % tmap.table], "name": "Battlement %s" % tmap.table,
            "manufacturer": "Battlement", "model": tmap.title, "sw_version": __version__}


def board_device(tmap: TableMap, board: str, firmware: str | None = None) -> dict:
    """A board's device; sw_version is the firmware its hello says it runs (the registry's), once known."""
    dev = {"identifiers": ["battlement-%s-%s" % (tmap.table, board)], "name": "%s %s" % (tmap.table, board),
           "manufacturer": "Battlement", "model": str(tmap.boards[board].get("profile", "sensor board")),
           "via_device": "battlement-%s" % tmap.table}
    if firmware:
        dev["sw_version"] = firmware
    return dev


def _common(avail: str) -> dict:
    return {"availability": [{"topic": avail, "payload_available": "online", "payload_not_available": "offline"}],
            "origin": ORIGIN, "qos": 1}


def board_config(tmap: TableMap, board: str, prefix: str, avail: str, firmware: str | None) -> tuple[str, bytes]:
    """(config topic, payload) of a board's online entity, with its device (and so its firmware)."""
    t = tmap.table
    cfg = dict(_common(avail), name="Online", unique_id="battlement-%s-%s-online" % (t, board),
               device=board_device(tmap, board, firmware), state_topic=link_topic(t, board), payload_on="online", payload_off="offline", device_class="connectivity", entity_category="diagnostic")
    return "%s/binary_sensor/battlement-%s/%s-online/config" % (prefix, t, board), _dumps(cfg)


def discovery(tmap: TableMap, prefix: str, avail: str, firmware_of=None) -> list[tuple[str, bytes]]:
    """[(config topic, payload)] for one table: its device's entities, then one per board (firmware_of(table,
    board): the firmware it runs, None while unknown)."""
    t = tmap.table
    node = "battlement-%s" % t
    common = _common(avail)
    dev = table_device(tmap)
    configs = [
        ("sensor", "game", dict(common, name="Game", unique_id="battlement-%s-game" % t, device=dev,
                                state_topic=game_topic(t), value_template="{{ value_json.state }}",
                                json_attributes_topic=game_topic(t),
                                json_attributes_template="{{ value_json.attributes | tojson }}",
                                icon="mdi:chess-rook")),
        ("sensor", "winner", dict(common, name="Winner", unique_id="battlement-%s-winner" % t, device=dev,
                                  state_topic=game_topic(t), value_template="{{ value_json.winner }}",
                                  icon="mdi:trophy")),
        ("event", "play", dict(common, name="Play", unique_id="battlement-%s-play" % t, device=dev,
                               state_topic=event_topic(t), event_types=EVENT_TYPES, icon="mdi:bullseye-arrow")),
    ]
    out = [("%s/%s/%s/%s/config" % (prefix, comp, node, obj), _dumps(cfg)) for comp, obj, cfg in configs]
    return out + [board_config(tmap, board, prefix, avail, firmware_of(t, board) if firmware_of else None)
                  for board in sorted(tmap.boards)]


def _name_of(view: dict, who) -> str:
    for p in view.get("players") or ():
        if isinstance(p, dict) and p.get("id") == who and p.get("name"):
            return str(p["name"])
    text = str(who)
    return text[:1].upper() + text[1:]


def words(view: dict, paused: bool = False) -> str:
    """The game's state in a line: whose turn and the phase, the winner, or paused."""
    if view.get("over"):
        text = "%s won" % _name_of(view, view["winner"]) if view.get("winner") else "Draw"
    else:
        who = [_name_of(view, w) for w in view.get("awaiting") or ()]
        text = ("Turn: " + " and ".join(who)) if who else "Waiting"
        if isinstance(view.get("phase"), str):
            text += " · " + view["phase"]
        if paused:
            text = "Paused (%s)" % text
    return text[:STATE_MAX]


def winner(view: dict) -> str:
    if not view.get("over"):
        return "none"
    return _name_of(view, view["winner"]) if view.get("winner") else "draw"


def game_payload(public: dict) -> bytes:
    """From what the public scoreboard gets (Session.public()), never from anything else."""
    view = public["view"]
    attributes = {k: v for k, v in view.items() if k != "log"}  # the history is the event entity's
    return _dumps({"state": words(view, public.get("paused", False)), "winner": winner(view),
                   "game": public["game"], "title": public["title"], "paused": bool(public.get("paused")),
                   "attributes": attributes})


def event_payload(inp: dict, text: str) -> bytes | None:
    """A sensed input the rules applied -> the event entity's message (None: not a hit, fall or move)."""
    kind = EVENT_OF_INPUT.get(inp.get("t"))  # type: ignore[arg-type]
    if kind is None:
        return None
    fields = {k: v for k, v in inp.items() if k not in ("t", "event_type", "text", "input")}
    return _dumps(dict(fields, event_type=kind, input=inp["t"], text=text))


class Publisher:
    """Discovery and state for every table of a bridge, on its MQTT transport."""

    def __init__(self, transport, sessions: dict, prefix: str = DEFAULT_PREFIX, bridge: str | None = None,
                 firmware_of=None):
        self.transport = transport
        self.firmware_of = firmware_of  # (table, board) -> the firmware it runs, or None (the bridge's BoardWatch)
        self.sessions = sessions  # table -> Session (filled by the bridge before start)
        self.prefix = check_prefix(prefix)
        self.bridge = bridge or bridge_id(list(sessions))
        self.avail = availability_topic(self.bridge)
        self.counters = {"discovery-sent": 0, "states-sent": 0, "events-sent": 0, "unsent": 0, "ha-restarts": 0}
        self._last: dict[str, bytes] = {}  # table -> the game payload last published
        self._links: dict[tuple[str, str], bytes] = {}  # (table, board) -> its link as last published
        # table -> [game id, its input log, inputs told, its adapter]: the log looked at last, how much was told
        self._inputs: dict[str, list] = {}
        self._news: set[str] = set()  # tables whose new inputs are told at the end of this loop turn
        self._telling: asyncio.Handle | None = None
        self._dirty: set[str] = set()
        self._payloads: dict[type, ByInput] = {}  # a game's adapter class -> its inputs' event payloads (_event)
        self._event_topics: dict[str, str] = {}
        self._due: asyncio.TimerHandle | None = None
        self._flushed_at = -STATE_EVERY  # time.monotonic() of the last flush

    def attach(self) -> None:
        """Before the transport starts: the will, the hooks, HA's birth topic, and every session's changes."""
        self.transport.will = (self.avail, b"offline", True)
        self.transport.on_connected.append(self.connected)
        self.transport.subscribe_extra(self.prefix + "/status", self._ha_status)
        for table, s in self.sessions.items():
            self._inputs[table] = [s.game_id, s.match.inputs, len(s.match.inputs), s.adapter]
            s.listeners.append(self._changed)

    def _publish(self, topic: str, payload: bytes, retain: bool, counter: str, qos: int = 1) -> None:
        if self.transport.publish_raw(topic, payload, qos=qos, retain=retain):
            self.counters[counter] += 1
        else:
            self.counters["unsent"] += 1  # QoS 1: kept and sent on reconnect; counted so an operator sees it

    def connected(self) -> None:
        """After every (re)connect: online, then the whole picture again (the broker may have lost it)."""
        self._publish(self.avail, b"online", True, "states-sent")
        self.announce()

    def announce(self) -> None:
        for table in sorted(self.sessions):
            for topic, payload in discovery(self.sessions[table].tmap, self.prefix, self.avail, self.firmware_of):
                self._publish(topic, payload, True, "discovery-sent")
        self._last.clear()
        self._links.clear()
        for table in sorted(self.sessions):
            self.boards(table)
        self._dirty.update(self.sessions)
        self.flush()

    def boards(self, table: str) -> None:
        """Each of the table's boards online or not, as this bridge's transport took its status (the bridge asks
        every half second): published when it changed. A board not heard of yet is left as it was (a bridge
        starting would otherwise show every board offline for the moment before their statuses come)."""
        s = self.sessions.get(table)
        online = getattr(self.transport, "online", {})
        for board in sorted(s.tmap.boards) if s is not None else ():
            if (table, board) not in online:
                continue
            payload = b"online" if online[(table, board)] else b"offline"
            if self._links.get((table, board)) != payload:
                self._links[(table, board)] = payload
                self._publish(link_topic(table, board), payload, True, "states-sent")

    def firmware_changed(self, table: str, board: str) -> None:
        """A board said hello with another firmware: its device's sw_version again (retained, as discovery)."""
        s = self.sessions.get(table)
        if s is not None and board in s.tmap.boards and self.firmware_of is not None:
            topic, payload = board_config(s.tmap, board, self.prefix, self.avail, self.firmware_of(table, board))
            self._publish(topic, payload, True, "discovery-sent")

    def _ha_status(self, topic: str, payload: bytes) -> None:
        if payload == b"online":  # Home Assistant (re)started: it asks everyone to say what they are again
            self.counters["ha-restarts"] += 1
            self.announce()

    def _changed(self, session, fx: list) -> None:
        """A session's listener: its new inputs' events at the end of the loop turn (a batch of events is
        one look a table, not one an event), the state on the next flush or STATE_EVERY after the last one
        (a burst publishes its last state once). A log replaced (a new game, a resume, an undo) since the
        last look: what the old one had untold goes now, and the new one counts from here, as before."""
        table = session.table
        inputs = session.match.inputs
        look = self._inputs.get(table)
        if look is None or look[1] is not inputs or look[0] != session.game_id:
            if look is not None:
                self._publish_events(self._tell_table(table, look, []))
            self._inputs[table] = [session.game_id, inputs, len(inputs), session.adapter]
            self._dirty.add(table)
        self._news.add(table)
        if self._telling is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop (a test driving sessions by hand): told now; it calls flush()
                self._tell()
                return
            self._telling = loop.call_soon(self._tell)

    def _tell(self) -> None:
        self._telling = None
        news, self._news = self._news, set()
        out: list[tuple[str, bytes]] = []
        for table in news:
            look = self._inputs.get(table)
            if look is not None:
                self._tell_table(table, look, out)
        self._publish_events(out)
        self._dirty.update(news)
        if self._due is None and news:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            self._due = loop.call_later(max(0.0, self._flushed_at + STATE_EVERY - time.monotonic()), self.flush)

    def _tell_table(self, table: str, look: list, out: list) -> list:
        """The events of the inputs of a table's log since it was last told, added to out as (topic, payload)
        (look: game id, log, told, adapter: the log's own game's, whatever the table plays now)."""
        _game, inputs, told, adapter = look
        n = look[2] = len(inputs)
        if n > told:
            topic = self._event_topics.get(table) or self._event_topics.setdefault(table, event_topic(table))
            made = self._payloads.get(type(adapter)) or self._payload_maker(adapter)
            out += [(topic, p) for p in map(made, inputs[told:]) if p is not None]
        return out

    def _publish_events(self, events: list[tuple[str, bytes]]) -> None:
        """QoS 0: a hit is news for a moment, not worth a place in the QoS 1 queue that the boards' commands
        wait in (100 tables' events would fill it), nor worth showing late. A loop turn's events in one write."""
        if events:
            sent = self.transport.publish0_all(events)
            self.counters["events-sent" if sent else "unsent"] += len(events)

    def _payload_maker(self, adapter) -> ByInput:
        """An input's event payload, made once per distinct input of a game: the words and the fields depend
        on the input alone (describe() for the public, viewer None)."""
        made = self._payloads[type(adapter)] = ByInput(lambda i: event_payload(i, adapter.describe(i, None)))
        return made

    def refresh(self) -> None:
        """Publish every table's state now if it changed (a pause, say, tells no listener)."""
        self._dirty.update(self.sessions)
        self.flush()

    def flush(self) -> None:
        if self._news:
            self._tell()  # the events before the state they led to
        if self._due is not None:
            self._due.cancel()
            self._due = None
        self._flushed_at = time.monotonic()
        dirty, self._dirty = self._dirty, set()
        for table in sorted(dirty):
            s = self.sessions.get(table)
            if s is None:
                continue
            payload = game_payload(self.shown(s))
            if self._last.get(table) != payload:
                self._last[table] = payload
                self._publish(game_topic(table), payload, True, "states-sent")

    @staticmethod
    def shown(session) -> dict:
        """What Home Assistant may see of a table: exactly what the public scoreboard gets."""
        return session.public()

    def close(self) -> None:
        """A clean stop says offline itself (a DISCONNECT sends no will)."""
        self.flush()
        self._publish(self.avail, b"offline", True, "states-sent")
