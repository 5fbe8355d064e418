"""Board keys: one secret per board, shared by the board (its config.json) and the bridge.

Where a table's keys are, for every command (`flash`, `run`, `sim`, `monitor`, `broker-config`): in one
keys folder, by the table id (the `table = "..."` its map declares, the id `flash --table` names, the
MQTT topic's), wherever the map is stored and whatever its file is called:

    <keys dir>/<table>.keys.toml        keys dir: --keys-dir DIR, else hardware/tables

`battlement flash --table T` creates it (mode 0600) and adds a board to it when it provisions one. A keys
file others may read or write is refused, as ssh refuses such a key. The file is git-ignored: a key in a
repository is a key for everyone.

    # board keys of table hall-1: secret, keep it 0600 and out of git
    [keys]
    tower-1 = "5f0c...32 hex digits"

    [flashed.tower-1]             # what `battlement flash` last put on the board (battlement boards shows it)
    at = 2025-05-01T18:30:00Z
    firmware = "0.1.0"
    transport = "mqtt"

With a keys file, every frame to and from the table's boards carries a MAC (wire.sign/verify); a table
without one is unsigned, and every command says so. A table map may turn signing off for its serial
boards (a private USB hub, no broker):

    [signing]
    serial = false
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import pathlib
import re
import secrets
import stat
import tomllib

from battlement.errors import UserError

KEY_BYTES = 16  # 128-bit keys
_HEX = re.compile(r"^[0-9a-f]{32,128}$")
DEFAULT_DIR = pathlib.Path(__file__).resolve().parents[3] / "hardware" / "tables"
SUFFIX = ".keys.toml"
TRANSPORTS = ("serial", "mqtt")  # how a board is flashed to reach the bridge


def add_argument(parser) -> None:
    """--keys-dir, the same for every command that reads or writes board keys."""
    parser.add_argument("--keys-dir", metavar="DIR",
                        help="folder of the tables' board keys, <table>.keys.toml by table id (default "
                             "hardware/tables); give every command the same one")


def directory(keys_dir: str | os.PathLike | None = None) -> pathlib.Path:
    return pathlib.Path(keys_dir) if keys_dir else DEFAULT_DIR


def path_of(table: str, keys_dir: str | os.PathLike | None = None) -> pathlib.Path:
    """The one place table's keys are: <keys dir>/<table>.keys.toml."""
    return directory(keys_dir) / (table + SUFFIX)


def _beside(table_map: str | os.PathLike) -> pathlib.Path:
    """Where keys were once looked for: beside the table map (x.toml -> x.keys.toml)."""
    p = pathlib.Path(table_map)
    return p.with_name(p.name.removesuffix(".toml") + SUFFIX)


def check_private(path: pathlib.Path) -> None:
    """A keys file others may read (or change) is refused, in one line that says the fix."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise UserError("keys file %s is %s by others (mode %04o): chmod 600 %s"
                        % (path, "readable" if mode & 0o044 else "writable", mode, path))


def load(path: str | os.PathLike) -> dict[str, bytes]:
    """board id -> key; {} if there is no keys file."""
    return _read(pathlib.Path(path))[0]


def flashed(path: str | os.PathLike) -> dict[str, dict]:
    """board id -> what `battlement flash` last recorded of it: {"at" (unix seconds), "firmware", "transport"};
    {} for a file written before flash recorded them, or no file."""
    return _read(pathlib.Path(path))[1]


def _read(p: pathlib.Path) -> tuple[dict[str, bytes], dict[str, dict]]:
    if not p.exists():
        return {}, {}
    check_private(p)
    try:
        with open(p, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UserError("%s: cannot read the board keys: %s" % (p, e))
    table = data.get("keys", {})
    if not isinstance(table, dict):
        raise UserError("%s: [keys] must map board ids to hex keys" % p)
    out = {}
    for board, key in table.items():
        if not isinstance(key, str) or not _HEX.match(key):
            raise UserError("%s: key of board %s must be 32-128 lowercase hex digits" % (p, board))
        out[board] = bytes.fromhex(key)
    done = data.get("flashed", {})
    if not isinstance(done, dict) or not all(isinstance(r, dict) for r in done.values()):
        raise UserError("%s: [flashed.<board>] must be tables of at, firmware and transport" % p)
    records = {}
    for board, r in done.items():
        at, firmware, transport = r.get("at"), r.get("firmware"), r.get("transport")
        if not isinstance(at, datetime.datetime) or at.tzinfo is None or not isinstance(firmware, str) \
                or transport not in TRANSPORTS:
            raise UserError("%s: [flashed.%s] needs at = <UTC time, e.g. 2025-05-01T18:30:00Z>, firmware = "
                            "\"<version>\" and transport = \"serial\" or \"mqtt\"" % (p, board))
        records[board] = {"at": at.timestamp(), "firmware": firmware, "transport": transport}
    return out, records


@dataclasses.dataclass(frozen=True)
class TableKeys:
    """A table's board keys as found by of_table: where, which, and whether its serial boards sign."""

    table: str
    path: pathlib.Path
    keys: dict[str, bytes]  # board -> key; {}: the table is unsigned
    serial: bool = True  # False: its map says [signing] serial = false
    flashed: dict[str, dict] = dataclasses.field(default_factory=dict)  # board -> what flash recorded (flashed())

    def on(self, mqtt: bool) -> dict[str, bytes]:
        """The keys its boards sign with on MQTT (mqtt) or on serial."""
        return self.keys if mqtt or self.serial else {}

    def line(self, mqtt: bool) -> str:
        """Whether the table's boards sign, in words (the banner, the host page, broker-config)."""
        if self.on(mqtt):
            return "signing: on (%d board%s)" % (len(self.keys), "" if len(self.keys) == 1 else "s")
        if mqtt:
            return "signing: OFF: anyone on the broker can act as a board"
        if self.keys:
            return "signing: OFF on serial (its map says [signing] serial = false)"
        return "signing: OFF: anything on its serial ports can act as a board"


def of_table(table: str, table_map: str | os.PathLike | None = None,
             keys_dir: str | os.PathLike | None = None) -> TableKeys:
    """Table's keys, found the one way (path_of), with its map's [signing] if a map is given.

    A keys file beside a map stored elsewhere (not in hardware/tables nor the keys folder, where every
    <x>.keys.toml is table x's) is where keys were once looked for: named, never passed over."""
    path = path_of(table, keys_dir)
    if table_map is not None:
        beside = _beside(table_map)
        here = beside.parent.resolve()
        if beside.exists() and here not in (DEFAULT_DIR.resolve(), directory(keys_dir).resolve()):
            raise UserError("%s holds board keys, but table %s's keys are read from %s (every command finds them "
                            "there): move the file there, or give --keys-dir %s" % (beside, table, path, here))
    keys, done = _read(path)
    return TableKeys(table, path, keys, serial_signing(table_map) if table_map is not None else True, done)


def all_tables(keys_dir: str | os.PathLike | None = None) -> dict[str, TableKeys]:
    """Every table with a keys file in the keys folder, by table id."""
    d = directory(keys_dir)
    return {p.name[:-len(SUFFIX)]: of_table(p.name[:-len(SUFFIX)], None, keys_dir)
            for p in sorted(d.glob("*" + SUFFIX))} if d.is_dir() else {}


def give(transport, tables: dict[str, TableKeys], mqtt: bool) -> None:
    """Each table's keys to a transport, signing decided per table (Transport.sign). On serial, where a
    board's id alone names it, every table's keys go in one; every board there must sign only if every
    table's boards do (else a board must sign if it has a key)."""
    if mqtt:
        for tk in tables.values():
            transport.sign(tk.table, tk.keys)
        return
    on = [tk.on(False) for tk in tables.values()]
    for tk in tables.values():  # each board's MACs bind its own table's id, though serial keys it by none
        transport.sign(None, tk.on(False), every_board=bool(on) and all(on), table_id=tk.table)


def provision(path: str | os.PathLike, board: str) -> str:
    """The board's key (hex) from the keys file, made with `secrets` and added if it has none."""
    p = pathlib.Path(path)
    keys, done = _read(p)
    if board in keys:
        return keys[board].hex()
    keys[board] = secrets.token_bytes(KEY_BYTES)
    _write(p, keys, done)
    return keys[board].hex()


def record_flash(path: str | os.PathLike, board: str, firmware: str, transport: str, at: float) -> None:
    """Note beside the board's key what `battlement flash` put on it, and when (the fleet's "flashed")."""
    p = pathlib.Path(path)
    keys, done = _read(p)
    done[board] = {"at": at, "firmware": firmware, "transport": transport}
    _write(p, keys, done)


def _write(p: pathlib.Path, keys: dict[str, bytes], done: dict[str, dict]) -> None:
    """The whole file, created 0600 and moved into place: never world-readable, even for a moment."""
    text = "# board keys: secret. Keep this file 0600 and out of git; `battlement flash` adds to it.\n[keys]\n"
    text += "".join('%s = "%s"\n' % (b, keys[b].hex()) for b in sorted(keys))
    for b in sorted(done):
        r = done[b]
        when = datetime.datetime.fromtimestamp(r["at"], datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        # a JSON string is a TOML basic string: its escapes are TOML's
        text += '\n[flashed.%s]\nat = %s\nfirmware = %s\ntransport = "%s"\n' % (
            b, when, json.dumps(r["firmware"]), r["transport"])
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, p)


def serial_signing(table_map: str | os.PathLike) -> bool:
    """False if the table map says `[signing] serial = false` (serial boards on a private USB hub)."""
    try:
        with open(table_map, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return True
    sig = data.get("signing", {})
    return not (isinstance(sig, dict) and sig.get("serial") is False)
