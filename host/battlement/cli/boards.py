"""`battlement boards`: the fleet, one line a board, from the registry (battlement.boards.registry).

Which boards: every board a table's keys file holds (flashed with --table), every board the journal has
heard, and every board of the table maps given (--table FILE) or found in hardware/tables for those tables.
It only reads: the journal is looked at read-only, so a running bridge keeps it and goes on.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import sqlite3
import time
import urllib.parse

from battlement.boards import registry
from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.table.journalboards import BoardRecords
from battlement.table.maps import ID_RE, TABLES_DIR, TableMap, load

COLUMNS = ("TABLE", "BOARD", "KEY", "TRANSPORT", "FIRMWARE", "FLASHED", "LAST SEEN", "BOOT")


class _Looking(BoardRecords):
    """The journal's own query of its board records (Journal.board_records), on a read-only connection."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db


def journal_records(path: str) -> list[dict]:
    """Every board the journal has heard ([] with no journal), read beside a running bridge without
    taking its lock: a bridge (re)starting meanwhile is never refused for it."""
    if not os.path.exists(path):
        return []
    uri = "file:%s?mode=ro" % urllib.parse.quote(os.path.abspath(path))
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
            if not db.execute("SELECT 1 FROM sqlite_master WHERE name='boards'").fetchone():
                return []  # a journal from before boards were recorded: none heard yet
            return _Looking(db).board_records()
    except sqlite3.Error as e:
        raise UserError("journal %s: cannot read its boards: %s (--journal names it)" % (path, e)) from None


def _maps(given: list[str]) -> tuple[list[str], dict[str, TableMap]]:
    """(table ids asked for, table id -> its map): a --table that is a file is a map, else a table id."""
    wanted, maps = [], {}
    for t in given:
        if os.path.exists(t) or t.endswith(".toml") or os.sep in t:
            m = load(t)  # a map given that cannot be read: one line
            maps[m.table] = m
            wanted.append(m.table)
        elif ID_RE.match(t):
            wanted.append(t)
        else:
            raise UserError("--table %r is neither a table map file nor a table id (1-32 of a-z, 0-9 and '-')" % t)
    return wanted, maps


def _shipped(tables: set[str], maps: dict[str, TableMap]) -> None:
    """The maps in hardware/tables of tables known but not given: which boards they list."""
    for path in sorted(glob.glob(os.path.join(TABLES_DIR, "*.toml"))):
        if path.endswith(boardkeys.SUFFIX):
            continue
        try:
            m = load(path)
        except UserError:
            continue  # a map nobody asked for that does not load says nothing of the fleet
        if m.table in tables:
            maps.setdefault(m.table, m)


def collect(args) -> dict:
    """{"tables": table -> {"signing", "keys"}, "boards": the registry's entries, "journal": its path}."""
    wanted, maps = _maps(args.table or [])
    keys = {t: tk for t, tk in boardkeys.all_tables(args.keys_dir).items() if not wanted or t in wanted}
    for t in wanted:
        keys[t] = boardkeys.of_table(t, maps[t].path if t in maps else None, args.keys_dir)
    records = [r for r in journal_records(args.journal) if not wanted or r["table"] in wanted]
    tables = set(wanted) | {t for t, tk in keys.items() if tk.keys or tk.flashed} | {r["table"] for r in records}
    _shipped(tables - set(maps), maps)
    boards = registry.fleet(tables, maps, keys, records)
    for t in wanted:
        if not any(b["table"] == t for b in boards):
            raise UserError("table %s: no board known: none flashed with --table %s (no %s), none heard in %s, and "
                            "no map of it (give --table MAP)" % (t, t, boardkeys.path_of(t, args.keys_dir), args.journal))
    said = {}
    for t in sorted(tables):
        tk = keys.get(t) or boardkeys.of_table(t, None, args.keys_dir)
        mqtt = any(b["transport"] == "mqtt" for b in boards if b["table"] == t)
        said[t] = {"signing": tk.line(mqtt), "keys": str(tk.path) if tk.keys else None}
    return {"tables": said, "boards": boards, "journal": args.journal}


def when(at: float | None, now: float) -> str:
    if not at:
        return "never"
    s = max(0, now - at)
    ago = "%d s" % s if s < 120 else "%d min" % (s // 60) if s < 7200 else "%d h" % (s // 3600) if s < 172800 \
        else "%d days" % (s // 86400)
    return "%s (%s ago)" % (time.strftime("%Y-%m-%d %H:%M", time.localtime(at)), ago)


def lines(fleet: dict, now: float) -> list[str]:
    out = ["%s: %s%s" % (t, s["signing"], "  (keys in %s)" % s["keys"] if s["keys"] else "")
           for t, s in fleet["tables"].items()]
    rows = [COLUMNS]
    for b in fleet["boards"]:
        rows.append((b["table"], b["board"] + (" (on no map)" if b["mapped"] is False else ""), "yes" if b["key"] else "MISSING" if b["table_signs"] else "no",
                     "%s (%s)" % (b["transport"], b["transport_from"]) if b["transport"] else "?",
                     b["firmware"] or "?",
                     when(b["flashed_at"], now) if b["flashed_at"] else "not by flash --table",
                     when(b["last_seen"], now) if b["last_seen"] else "never seen",
                     "-" if b["boot"] is None else str(b["boot"])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return out


def run(args) -> int:
    fleet = collect(args)
    if args.json:
        print(json.dumps(fleet, indent=1, sort_keys=True))
        return 0
    if not fleet["boards"]:
        print("no boards yet: none flashed with --table (keys in %s), none heard in %s; give --table MAP to list "
              "a map's boards" % (boardkeys.directory(args.keys_dir), args.journal))
        return 0
    print("\n".join(lines(fleet, time.time())))
    return 0


def register(sub) -> None:
    p = sub.add_parser(
        "boards", help="list the fleet: every board, its key, transport, firmware, when flashed and last seen",
        description="List every board: those `battlement flash --table` provisioned (the tables' keys files), "
                    "those the journal has heard, and those of the table maps given. One line a board: "
                    "KEY whether the table's keys file holds one (never the key itself; MISSING: its table "
                    "signs, so its frames are refused); TRANSPORT as flashed, "
                    "else as its pin map (hardware/boards/<board>.json) says; FIRMWARE its last hello's, or "
                    "what flash wrote when that came later; FLASHED when `battlement flash` last wrote it; "
                    "LAST SEEN its last hello or heartbeat the journal kept (\"never seen\": not once); BOOT "
                    "the highest boot taken from it. Above them, each table's signing. The journal is read "
                    "without disturbing a running bridge; the host page shows the same, live.",
        epilog="Examples: battlement boards   |   battlement boards --table hall-1 --json   |   "
               "battlement boards --table hardware/tables/ringo.toml --journal var/journal.sqlite",
    )
    p.add_argument("--table", action="append", metavar="T",
                   help="a table id, or a table map file whose boards are listed even if never flashed or heard "
                        "(repeat; default: every table with keys or heard)")
    p.add_argument("--json", action="store_true", help="the same as JSON (times in unix seconds)")
    boardkeys.add_argument(p)
    p.add_argument("--journal", default="var/journal.sqlite",
                   help="the bridge's journal, where boards heard are kept (default var/journal.sqlite)")
    p.set_defaults(func=run)
