"""One registry of boards: every fact about a board, each read from the one place it is kept.

    table, board   the table map's [boards.<id>], the table's keys file and the journal, together
    key            whether the table's keys file (<keys dir>/<table>.keys.toml, link.keys) holds one: never the key
                   (table_signs: the file holds any; a board without a key on such a table is refused)
    transport      as `battlement flash` flashed it (the keys file's [flashed.<board>]), else its pin map's
                   (hardware/boards/<board>.json: serial unless it says mqtt)
    firmware       its last hello's (the journal's record of the board; a running bridge's own hellos as they
                   come), or what `battlement flash` put on it when that came later
    flashed        when `battlement flash` last wrote it, and the firmware it wrote (the keys file)
    first / last seen, boot   the journal's record (the highest boot taken from it); a running bridge's
                   hellos and heartbeats as they come

`battlement boards` lists it (cli/boards.py); the host page's board health and fleet view, Home Assistant's
sw_version and /metrics' battlement_board_info read it through the bridge's BoardWatch (boards/health.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from battlement.boards.hardware import BOARDS
from battlement.link.keys import TableKeys
from battlement.table.maps import TableMap


def pin_transport(board: str) -> str | None:
    """The transport the board's pin map declares (serial unless it says mqtt); None: it has no pin map."""
    try:
        with open(BOARDS / ("%s.json" % board), encoding="utf-8") as f:
            m = json.load(f)
    except (OSError, ValueError):
        return None
    t = m.get("transport", "serial") if isinstance(m, dict) else None
    return t if t in ("serial", "mqtt") else None


def newest_firmware(heard: str | None, last_seen: float | None, flashed: dict | None) -> str | None:
    """What runs on the board: its last hello's firmware, unless `battlement flash` wrote it after that hello."""
    if flashed and (heard is None or last_seen is None or flashed["at"] > last_seen):
        return flashed["firmware"]
    return heard


def fleet(tables: Iterable[str], maps: dict[str, TableMap], keys: dict[str, TableKeys],
          records: list[dict], pins: dict[str, str | None] | None = None) -> list[dict]:
    """One entry per board of the given tables, sorted: every board a map lists, a keys file holds or
    the journal heard. A table need not have a map (maps) nor keys (keys): "mapped" is None without one.
    pins: board -> its pin map's transport, kept by a caller that asks again (a running bridge)."""
    heard = {(r["table"], r["board"]): r for r in records}
    pins = {} if pins is None else pins
    out = []
    for table in sorted(set(tables)):
        tmap, tk = maps.get(table), keys.get(table)
        boards = set(tmap.boards if tmap else ()) | set(tk.keys if tk else ()) | set(tk.flashed if tk else ())
        boards |= {b for t, b in heard if t == table}
        for board in sorted(boards):
            r = heard.get((table, board), {})
            done = tk.flashed.get(board) if tk else None
            if board not in pins:
                pins[board] = pin_transport(board)
            transport, source = (done["transport"], "flash") if done else (pins[board], "pin map")
            out.append({"table": table, "board": board, "mapped": board in tmap.boards if tmap else None,
                        "key": bool(tk and board in tk.keys), "table_signs": bool(tk and tk.keys),
                        "transport": transport, "transport_from": source if transport else None,
                        "firmware": newest_firmware(r.get("firmware"), r.get("last_seen"), done),
                        "flashed_at": done["at"] if done else None,
                        "flashed_firmware": done["firmware"] if done else None,
                        "first_seen": r.get("first_seen"), "last_seen": r.get("last_seen"), "boot": r.get("boot")})
    return out


def seen_now(entry: dict, hello: dict | None, beat_at: float | None) -> dict:
    """The entry with what a running bridge heard since it started: its hello (at, boot, firmware) and
    heartbeat are newer than the journal's record of them."""
    e = dict(entry)
    times = [t for t in (e["last_seen"], hello and hello["at"], beat_at) if t]
    e["last_seen"] = max(times) if times else None
    if hello is not None:
        e["first_seen"] = e["first_seen"] or hello["at"]
        e["boot"] = max(e["boot"] or 0, int(hello["boot"], 16))
        done = {"at": e["flashed_at"], "firmware": e["flashed_firmware"]} if e["flashed_at"] else None
        e["firmware"] = newest_firmware(hello["firmware"], hello["at"], done)
    return e
