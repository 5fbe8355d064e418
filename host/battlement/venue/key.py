"""The venue key: one secret shared by a venue's hub and every bridge that serves its tables.

Every venue message (match starts, results, acknowledgements, table status; venue/protocol.py) carries
an HMAC-SHA256 of this key, so a laptop on the bar's Wi-Fi that can reach the broker can neither start
a game on a table nor put a result into the bracket. It lives beside the tables' board keys, found the
one way by the venue's id:

    <keys dir>/<venue>.venue-key.toml        keys dir: --keys-dir DIR, else hardware/tables

    # venue key of venue bar-42: secret, keep it 0600 and out of git
    [venue]
    id = "bar-42"
    key = "64 hex digits"

make() creates it (mode 0600, written whole, never readable by others even for a moment); copy that
one file to each bridge of the venue. A key file others may read or write is refused, as a board keys
file is (link/keys.py), and so is one whose id is another venue's: a copied file renamed by hand.
"""

from __future__ import annotations

import os
import pathlib
import re
import secrets
import tomllib

from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.link.transport.mqtt.names import check_id

KEY_BYTES = 32  # 256 bits: as long as the SHA-256 block it keys
SUFFIX = ".venue-key.toml"
_HEX = re.compile(r"^[0-9a-f]{64,128}$")


def path_of(venue: str, keys_dir: str | os.PathLike | None = None) -> pathlib.Path:
    return boardkeys.directory(keys_dir) / (check_id("venue", venue) + SUFFIX)


def load(venue: str, keys_dir: str | os.PathLike | None = None) -> bytes:
    """The venue's key, or one line that says what is wrong with its file and how to put it right."""
    p = path_of(venue, keys_dir)
    if not p.exists():
        raise UserError("no venue key for venue %s at %s: the hub makes it (venue.key.make); copy that file to "
                        "every bridge of the venue, or give --keys-dir where it is" % (venue, p))
    boardkeys.check_private(p)
    try:
        with open(p, "rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UserError("%s: cannot read the venue key: %s" % (p, e)) from None
    section = data.get("venue")
    if not isinstance(section, dict) or not isinstance(section.get("key"), str) or not _HEX.match(section["key"]):
        raise UserError("%s: [venue] key must be 64-128 lowercase hex digits" % p)
    if section.get("id") != venue:
        raise UserError("%s is the key of venue %r, not %r: each venue has its own key file"
                        % (p, section.get("id"), venue))
    return bytes.fromhex(section["key"])


def make(venue: str, keys_dir: str | os.PathLike | None = None) -> tuple[pathlib.Path, bool]:
    """The venue's key file, made with `secrets` if there is none: (its path, whether it was made now)."""
    p = path_of(venue, keys_dir)
    if p.exists():
        load(venue, keys_dir)  # a bad one is said now, not when a bridge first needs it
        return p, False
    text = ("# venue key of venue %s: secret. Keep this file 0600 and out of git; the hub and every bridge of the "
            "venue need the same file.\n[venue]\nid = \"%s\"\nkey = \"%s\"\n" % (venue, venue, secrets.token_hex(KEY_BYTES)))
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o600)  # (an older .tmp left by a killed run may have had another mode)
    os.replace(tmp, p)
    return p, True
