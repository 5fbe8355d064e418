"""Table maps: which board and sensor is which tower, cup, figure or cell, and which LED is its own.

A table map is a TOML file (hardware/tables/*.toml):

    game = "<game>"                # the game this table is built for (a name shared_rules.GAMES lists)
    table = "<table>"              # table id (MQTT topic battlement/<table>/...); default: file name
    title = "<what this table is>"

    [boards.ring-1]                # every board the table uses
    profile = "<board profile>"

    [objects]                      # game object = its sensor and (optionally) its LED, "board/id"
    a1 = { sensor = "ring-1/a", led = "ring-1/a" }

load(path) checks it and raises UserError naming the file, the entry and what is wrong:
an unknown game, a board not listed, a sensor mapped twice, an object the game does
not have, or a game object with no sensor.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field

import shared_rules
from battlement.errors import UserError
from battlement.table.adapter import TableAdapter, adapter_for

ID_RE = re.compile(r"^[a-z0-9-]{1,32}$")
HERE = os.path.dirname(os.path.abspath(__file__))
TABLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "hardware", "tables")


def adapter(game: str) -> TableAdapter:
    """The game's table adapter (shared_rules/<game>/table.py): its objects, sensing, lights."""
    return adapter_for(shared_rules.load(game))


def game_objects(game: str, options: dict | None = None) -> dict[str, str] | None:
    """Every game object a table for `game` may sense -> the sensor kind it needs (the game's adapter).

    None for a game whose objects are not fixed (any object name is accepted, none required).
    `options` are the table's game options (a table may be built for its own board of a game).
    """
    return adapter(game).objects(options)


def required_objects(game: str, options: dict | None = None) -> list[str]:
    """The game objects a table must map for the game options it is built for (default set-up)."""
    return adapter(game).required(options)


@dataclass
class Obj:
    name: str
    board: str
    sensor: str
    led_board: str | None = None
    led: str | None = None


@dataclass
class TableMap:
    path: str
    game: str
    table: str
    title: str
    options: dict = field(default_factory=dict)  # game options this table is built for (e.g. 2 sets)
    boards: dict[str, dict] = field(default_factory=dict)
    objects: dict[str, Obj] = field(default_factory=dict)
    by_sensor: dict[tuple[str, str], str] = field(default_factory=dict)  # (board, sensor) -> object

    def sensors_of(self, board: str) -> dict[str, str]:
        """sensor id -> kind for one board (kinds from the game's catalogue, default presence)."""
        kinds = game_objects(self.game, self.options) or {}
        return {
            o.sensor: kinds.get(o.name, self.boards[board].get("kind", "beam"))
            for o in self.objects.values()
            if o.board == board
        }


def _split(where: str, value, boards: dict, what: str) -> tuple[str, str]:
    if not isinstance(value, str) or value.count("/") != 1:
        raise UserError("%s: %s must be \"board/id\", got %r" % (where, what, value))
    board, sid = value.split("/")
    if board not in boards:
        raise UserError(
            "%s: %s %r is on board %r, which is not in [boards] (boards: %s)"
            % (where, what, value, board, ", ".join(sorted(boards)) or "none")
        )
    if not ID_RE.match(sid):
        raise UserError("%s: %s id %r must be 1-32 characters of a-z 0-9 -" % (where, what, sid))
    return board, sid


def parse(text: str, path: str = "<table map>") -> TableMap:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UserError("%s: not valid TOML: %s" % (path, e))
    game = data.get("game")
    if game not in shared_rules.GAMES:
        raise UserError("%s: game = %r is not a known game (known: %s)" % (path, game, ", ".join(sorted(shared_rules.GAMES))))
    stem = os.path.splitext(os.path.basename(path))[0]
    table = data.get("table", stem)
    if not isinstance(table, str) or not ID_RE.match(table):
        raise UserError("%s: table = %r must be 1-32 characters of a-z 0-9 -" % (path, table))
    boards = data.get("boards", {})
    if not isinstance(boards, dict) or not boards:
        raise UserError("%s: no [boards.<id>] section: list every board the table uses" % path)
    for b, spec in boards.items():
        if not ID_RE.match(b):
            raise UserError("%s: [boards.%s]: board ids are 1-32 characters of a-z 0-9 -" % (path, b))
        if not isinstance(spec, dict):
            raise UserError("%s: boards.%s must be a table, e.g. [boards.%s]" % (path, b, b))
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise UserError("%s: [options] must be a table of game options, e.g. sets = 2" % path)
    tm = TableMap(path, game, table, data.get("title", stem), options, boards)
    try:
        known = game_objects(game, options)
    except UserError as e:
        raise UserError("%s: [options] %s" % (path, e))
    objects = data.get("objects", {})
    if not isinstance(objects, dict):
        raise UserError("%s: [objects] must map each game object to {sensor = \"board/id\"}" % path)
    for name in sorted(objects):
        spec = objects[name]
        where = "%s: objects.%s" % (path, name)
        if known is not None and name not in known:
            near = ", ".join(sorted(known)[:12])
            raise UserError("%s: %s has no game object %r (objects look like: %s...)" % (where, game, name, near))
        if not isinstance(spec, dict) or "sensor" not in spec:
            raise UserError("%s: needs sensor = \"board/sensor\"" % where)
        board, sensor = _split(where, spec["sensor"], boards, "sensor")
        if (board, sensor) in tm.by_sensor:
            raise UserError(
                "%s: sensor %s/%s is already mapped to %r; a sensor can be one object only"
                % (where, board, sensor, tm.by_sensor[(board, sensor)])
            )
        obj = Obj(name, board, sensor)
        if "led" in spec:
            obj.led_board, obj.led = _split(where, spec["led"], boards, "led")
        tm.by_sensor[(board, sensor)] = name
        tm.objects[name] = obj
    if known:
        missing = [o for o in required_objects(game, options) if o not in tm.objects]
        if missing:
            raise UserError(
                "%s: %d %s object(s) have no sensor: %s" % (path, len(missing), game, ", ".join(missing[:10]))
                + (" ..." if len(missing) > 10 else "")
            )
    return tm


def load(path: str) -> TableMap:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise UserError("table map %s: %s" % (path, e.strerror or e))
    return parse(text, path)


def default_path(game: str) -> str:
    """The table map shipped for a game (hardware/tables/<game>.toml)."""
    return os.path.join(TABLES_DIR, game + ".toml")


def for_game(game: str) -> TableMap:
    """The default map of a game, or a minimal board-less map for a game with no sensed objects."""
    path = default_path(game)
    if os.path.exists(path):
        return load(path)
    if game not in shared_rules.GAMES:
        raise UserError("unknown game %r (known: %s)" % (game, ", ".join(sorted(shared_rules.GAMES))))
    if game_objects(game) == {}:  # nothing on this table is sensed: everything is entered on the page
        return TableMap("(no sensors)", game, game, shared_rules.load(game).TITLE)
    raise UserError("no table map for %s: write %s (see docs/bridge.md)" % (game, path))


def check_ids_unique(tmaps: list[TableMap], why: str = "") -> None:
    """On serial a hello says no table: the board's id alone names it, so two tables' boards of one id
    would be taken for one. Refuse such maps, naming the board and both tables."""
    owners: dict[str, str] = {}
    for t in tmaps:
        for b in t.boards:
            if b in owners:
                raise UserError("board %s is on tables %s and %s: on serial, board ids must be unique%s"
                                % (b, owners[b], t.table, why))
            owners[b] = t.table
