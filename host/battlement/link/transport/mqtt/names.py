"""Names on the broker: topics, logins, the broker's URL, and the checks on what goes into them.

Plain functions with no connection behind them, so that what only needs a name (the simulator, flash,
the broker's configuration) can have it without the client, and the transport's topic parsing is
one function beside the topic building it undoes (docs/protocol.md, "MQTT"):
    battlement/<table>/<board>/status|up|down
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit

from battlement.errors import UserError

ROOT = "battlement"
VENUE_ROOT = "battlement-venue"  # a venue's hub and bridges (venue/protocol.py): outside ROOT, no board's
TOPICS_KNOWN = 10_000  # parsed topics remembered (a table of boards has a handful each)
ID_RE = re.compile(r"^[a-z0-9-]{1,32}$")
# Between table and board in a board's login. Table and board ids are a-z, 0-9 and '-' (ID_RE), so '.'
# is never part of either: a login splits back into its table and board at the first one.
SEP = "."


def check_id(what: str, value: str) -> str:
    """Table and board ids go into topics: lowercase letters, digits and '-', 1 to 32 long."""
    if not isinstance(value, str) or not ID_RE.match(value):
        raise UserError("%s id %r is not allowed: use 1-32 of a-z, 0-9 and '-'" % (what, value))
    return value


def check_ca(path: str | None) -> str | None:
    """--tls-ca names a file that exists (checked before anything connects)."""
    if path is not None and not os.path.isfile(path):
        raise UserError("--tls-ca %s: no such file (the PEM certificate of the CA that signed the broker's)" % path)
    return path


def login(table: str, board: str) -> str:
    """The MQTT user name of a table's board."""
    return table + SEP + board


def topic(table: str, board: str, leaf: str) -> str:
    return "%s/%s/%s/%s" % (ROOT, table, board, leaf)


def parse_url(url: str) -> tuple[str, int, bool, str | None, str | None]:
    """mqtt://[user:pass@]host[:port] (or mqtts:// for TLS) -> (host, port, tls, user, password)."""
    u = urlsplit(url if "://" in url else "mqtt://" + url)
    if u.scheme not in ("mqtt", "mqtts", "tcp", "ssl"):
        raise UserError("MQTT url %r: scheme must be mqtt:// or mqtts://" % url)
    tls = u.scheme in ("mqtts", "ssl")
    if not u.hostname:
        raise UserError("MQTT url %r has no host (e.g. mqtt://127.0.0.1:1883)" % url)
    try:
        port = u.port or (8883 if tls else 1883)
    except ValueError:
        raise UserError("MQTT url %r: port is not a number" % url)
    user = unquote(u.username) if u.username else None
    password = unquote(u.password) if u.password else None
    return u.hostname, port, tls, user, password


def topic_matches(filter: str, name: str) -> bool:
    """MQTT filter matching: '+' is one level, '#' the rest (and the level above it)."""
    f, n = filter.split("/"), name.split("/")
    for i, part in enumerate(f):
        if part == "#":
            return True
        if i >= len(n) or (part != "+" and part != n[i]):
            return False
    return len(f) == len(n)


def _parse_topic(name: str) -> tuple[str, str, str] | None:
    parts = name.split("/")
    if len(parts) != 4 or parts[0] != ROOT or not ID_RE.match(parts[1]) or not ID_RE.match(parts[2]):
        return None
    return parts[1], parts[2], parts[3]
