"""Board keys: one secret per board, shared by the board (its config.json) and the bridge.

The bridge reads them from a keys file beside the table map (hardware/tables/<table>.keys.toml
for hardware/tables/<table>.toml), which `battlement flash` creates (mode 0600) and adds a board
to when it provisions it. The file is git-ignored: a key in a repository is a key for everyone.

    # board keys of table hall-1: secret, keep it 0600 and out of git
    [keys]
    tower-1 = "5f0c...32 hex digits"

With a keys file, every frame to and from the table's boards carries a MAC (wire.sign/verify).
A table map may turn signing off for its serial boards (a private USB hub, no broker):

    [signing]
    serial = false
"""

from __future__ import annotations

import os
import pathlib
import re
import secrets
import tomllib

from battlement.errors import UserError

KEY_BYTES = 16  # 128-bit keys
_HEX = re.compile(r"^[0-9a-f]{32,128}$")


def path_for(table_map: str | os.PathLike) -> pathlib.Path:
    """The keys file beside a table map: x.toml -> x.keys.toml."""
    p = pathlib.Path(table_map)
    return p.with_name(p.name[:-5] + ".keys.toml" if p.name.endswith(".toml") else p.name + ".keys.toml")


def table_map_of(keys_file: str | os.PathLike) -> pathlib.Path | None:
    """The table map a keys file sits beside (x.keys.toml -> x.toml), if it is there."""
    p = pathlib.Path(keys_file)
    if not p.name.endswith(".keys.toml"):
        return None
    m = p.with_name(p.name[: -len(".keys.toml")] + ".toml")
    return m if m.exists() else None


def load(path: str | os.PathLike) -> dict[str, bytes]:
    """board id -> key; {} if there is no keys file."""
    p = pathlib.Path(path)
    if not p.exists():
        return {}
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
    return out


def provision(path: str | os.PathLike, board: str) -> str:
    """The board's key (hex) from the keys file, made with `secrets` and added if it has none.

    The file is created 0600 and rewritten whole (never world-readable, even for a moment).
    """
    p = pathlib.Path(path)
    have = {b: k.hex() for b, k in load(p).items()}
    if board in have:
        return have[board]
    have[board] = secrets.token_hex(KEY_BYTES)
    text = "# board keys: secret. Keep this file 0600 and out of git; `battlement flash` adds to it.\n[keys]\n"
    text += "".join('%s = "%s"\n' % (b, have[b]) for b in sorted(have))
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, p)
    return have[board]


def serial_signing(table_map: str | os.PathLike) -> bool:
    """False if the table map says `[signing] serial = false` (serial boards on a private USB hub)."""
    try:
        with open(table_map, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return True
    sig = data.get("signing", {})
    return not (isinstance(sig, dict) and sig.get("serial") is False)
