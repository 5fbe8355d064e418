"""Board health, as ESPHome shows its devices: for every board a table map lists, whether it is online,
its last hello and heartbeat (outbox, queued, dropped, reconnects), each sensor's last trigger and, for
beams, the widths of its recent breaks beside the threshold the firmware counts a ball from
(min_pulse_us), so a builder sees a badly aligned beam (breaks near or under the line), and whether
it is blocked now (dark longer than any ball: "cup-green-3 is blocked"). Boards heard that
no map lists are shown apart. The bridge feeds it (hello, event) and asks it for the report.
The report also carries the fleet: each board's facts from the registry (boards/registry.py: key,
transport, firmware, flashed, first and last seen, highest boot) for every board of every table served,
also those a keys file or the journal knows that no map lists; the page shows them on the cards too.
"""

from __future__ import annotations

import collections
import json
import time
from collections.abc import Callable

from battlement.boards import registry
from battlement.boards.hardware import BOARDS
from battlement.link.transport.base import in_order
from battlement.link.wire import BLOCKED

RECENT_WIDTHS = 24  # breaks kept per beam for the plot
DEFAULT_MIN_PULSE_US = 1000  # firmware/app.py DEFAULTS["min_pulse_us"]
RECORDS_EVERY = 5.0  # s between looks at the journal's board records: this run's hellos and beats are newer


def beam_thresholds(board: str) -> dict[str, int]:
    """sensor id -> min_pulse_us from the board's pin map (hardware/boards/<board>.json), when there is one;
    a sensor it does not name has the firmware's default."""
    try:
        with open(BOARDS / ("%s.json" % board), encoding="utf-8") as f:
            cfg = json.load(f)
    except (OSError, ValueError):
        return {}
    default = cfg.get("min_pulse_us", DEFAULT_MIN_PULSE_US)
    return {s["id"]: int(s.get("min_pulse_us", default)) for s in cfg.get("sensors", [])
            if isinstance(s, dict) and "id" in s and s.get("kind") == "beam"}


class BoardWatch:
    def __init__(self, records: Callable[[], list[dict]] = list, keys: dict | None = None):
        """records: the journal's board records (Journal.board_records); keys: table -> its TableKeys, as the
        bridge found them (the same dict: a table switched to another map keeps its keys)."""
        self.hellos: dict[tuple, dict] = {}  # (table, board) -> its last hello
        self.sensed: dict[tuple, dict] = {}  # (table, board, sensor) -> last trigger, recent beam widths
        self._thresholds: dict[str, dict[str, int]] = {}
        self._kinds: dict[tuple, dict[str, str]] = {}  # (table, map, board) -> sensor kinds (the map asks the game)
        self._records_of, self.keys = records, keys if keys is not None else {}
        self._records: dict[tuple, dict] = {}
        self._records_at = -RECORDS_EVERY
        self._pins: dict[str, str | None] = {}  # board -> its pin map's transport (read once)

    def hello(self, table: str, msg) -> bool:
        """Note a board's hello; True if it runs another firmware than was known of it (Home Assistant's
        sw_version follows)."""
        before = self.firmware_of(table, msg.board)
        self.hellos[(table, msg.board)] = {"at": time.time(), "boot": "%x" % msg.boot, "firmware": msg.firmware,
                                           "profile": msg.profile, "sensors": dict(msg.sensors)}
        return self.firmware_of(table, msg.board) != before

    def records(self) -> dict[tuple, dict]:
        """(table, board) -> the journal's record of it, read again at most every RECORDS_EVERY."""
        if time.monotonic() - self._records_at >= RECORDS_EVERY:
            self._records = {(r["table"], r["board"]): r for r in self._records_of()}
            self._records_at = time.monotonic()
        return self._records

    def firmware_of(self, table: str, board: str) -> str | None:
        """The firmware the board runs, as far as anyone knows: this run's hello, else the journal's, else
        what `battlement flash` wrote (whichever is newest: registry.newest_firmware)."""
        tk = self.keys.get(table)
        done = tk.flashed.get(board) if tk is not None else None
        h = self.hellos.get((table, board))
        if h is not None:
            return registry.newest_firmware(h["firmware"], h["at"], done)
        r = self.records().get((table, board), {})
        return registry.newest_firmware(r.get("firmware"), r.get("last_seen"), done)

    def fleet(self, tmaps: dict, transports: list, names: dict, beats: dict) -> list[dict]:
        """The registry's entry of every board of every table served, with what this run heard of it."""
        out = []
        for e in registry.fleet(tmaps, tmaps, self.keys, list(self.records().values()), self._pins):
            key = (e["table"], e["board"])
            e = registry.seen_now(e, self.hellos.get(key), (beats.get(key) or {}).get("at"))
            e["state"], t, _since = self.state(e["table"], e["board"], transports)
            e["link"] = None if t is None else names.get(id(t), type(t).__name__)
            out.append(e)
        return out

    def event(self, table: str, ev) -> None:
        key = (table, ev.board, ev.sensor)
        s = self.sensed.get(key)
        if s is None:
            s = self.sensed[key] = {"at": 0.0, "value": 0, "count": 0, "widths": collections.deque(maxlen=RECENT_WIDTHS)}
        if ev.kind == BLOCKED:  # not a trigger: the beam is dark past any ball (1), or clear again (0)
            s["blocked"] = bool(ev.value)
            return
        s["at"], s["value"] = time.time(), ev.value
        s["count"] += 1
        if ev.kind == "beam" and ev.value:
            s["widths"].append(ev.width_us)

    def forget(self, table: str) -> None:
        """The table's boards changed (a simulated table switched game)."""
        for d in (self.hellos, self.sensed):
            for k in [k for k in d if k[0] == table]:
                del d[k]

    def _threshold(self, board: str, sensor: str) -> int:
        if board not in self._thresholds:
            self._thresholds[board] = beam_thresholds(board)
        return self._thresholds[board].get(sensor, DEFAULT_MIN_PULSE_US)

    def state(self, table: str, board: str, transports: list) -> tuple[str, object, float | None]:
        """("online" / "offline" / "never seen", the transport that heard its hello, when its link last went
        up or down). The transports key the board by table too: another table's board of the same id is not it."""
        link, online, since = None, None, None
        for t in transports:
            key = t.key_of(table, board)
            if key in t.online:
                online, since = t.online[key], t.since.get(key)
                if key in t.boards:
                    link = t
        state = ("offline" if online is False else "never seen" if (table, board) not in self.hellos or online is None
                 else "online")
        return state, link, since

    def links(self, tmaps: dict, transports: list) -> dict[str, dict]:
        """table -> how many of its boards are online, for every page beside "live": the report's states
        without the rest of it (the bridge asks every half second; 100 tables' sensors took 15 ms to list)."""
        out = {}
        for table, tmap in tmaps.items():
            states = [(board, self.state(table, board, transports)[0]) for board in sorted(tmap.boards)]
            out[table] = {"boards": len(states), "online": sum(st == "online" for _b, st in states),
                          "offline": [b for b, st in states if st == "offline"]}
        return out

    def report(self, tmaps: dict, transports: list, names: dict, beats: dict) -> dict:
        """{"boards": one entry per mapped board, "unknown": boards heard that no map lists, "fleet": the
        registry's facts of every board of the tables served}."""
        out = []
        for table in sorted(tmaps):
            tmap = tmaps[table]
            leds = collections.Counter(o.led_board for o in tmap.objects.values() if o.led_board)
            for board in sorted(tmap.boards):
                state, t, since = self.state(table, board, transports)
                link = None if t is None else names.get(id(t), type(t).__name__)
                hello = self.hellos.get((table, board))
                sensors = []
                key = (table, tmap.path, board)
                if key not in self._kinds:
                    self._kinds[key] = tmap.sensors_of(board)
                kinds = self._kinds[key]
                for sid in sorted(kinds, key=lambda s: (kinds[s] != "beam", s)):  # beams (and their plots) first
                    s = self.sensed.get((table, board, sid))
                    entry = {"id": sid, "kind": kinds[sid], "object": tmap.by_sensor.get((board, sid)),
                             "last_at": s["at"] if s else None, "last_value": s["value"] if s else None,
                             "count": s["count"] if s else 0}
                    if kinds[sid] == "beam":
                        entry["widths_us"] = list(s["widths"]) if s else []
                        entry["min_pulse_us"] = self._threshold(board, sid)
                        if s and s.get("blocked"):
                            entry["blocked"] = "%s is blocked" % (entry["object"] or sid)
                    sensors.append(entry)
                missing = sorted(set(kinds) - set(hello["sensors"])) if hello else []
                out.append({"table": table, "board": board, "state": state, "link": link, "hello": hello,
                            "since": since,
                            "beat": beats.get((table, board)), "sensors": sensors, "leds": leds.get(board, 0),
                            "missing": missing})
        unknown = []
        for t in transports:
            mapped = {t.key_of(table, board) for table, tmap in tmaps.items() for board in tmap.boards}
            for key in sorted((set(t.boards) | set(t.strangers)) - mapped, key=in_order):
                (table, board), online = key, t.online.get(key) if key in t.boards else t.strangers[key]
                # a table this bridge does not serve is most often another bridge's on a shared broker (a
                # venue's): named, but no warning; a stranger on a served table or a serial port is one
                elsewhere = table is not None and table not in tmaps
                unknown.append({"board": board, "link": names.get(id(t), type(t).__name__),
                                "table": table, "online": bool(online), "elsewhere": elsewhere,
                                "words": "board %s%s on %s is on no table map this bridge serves%s" % (
                                    board, " (table %s)" % table if table else "", names.get(id(t), "?"),
                                    " (another bridge's table, or a wrong table id)" if elsewhere else "")})
        # the registry's facts of every board served: the fleet view, and a line on each board's card
        return {"boards": out, "unknown": unknown, "fleet": self.fleet(tmaps, transports, names, beats)}

