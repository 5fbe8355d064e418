"""`battlement broker-config`: a Mosquitto configuration for the tables of one broker.

    battlement broker-config --table hardware/tables/plingpong.toml [--table hall-2.toml ...] --out /etc/mosquitto/battlement

writes, into --out:
  mosquitto.conf    listener, no anonymous clients, the password and ACL files, set_tcp_nodelay
                    (small QoS 1 frames otherwise wait on Nagle), persistence
  passwords         one user per board of each table, named <table>.<board>, one for the bridge and one
                    for Home Assistant, in Mosquitto's PBKDF2-SHA512 format ($7$, what mosquitto_passwd
                    writes), mode 0600
  acl               each board may write only its own table's up/status topics of its id and read only
                    its own down topic; the bridge reads every board's up/status and writes their down
                    topics, and writes Home Assistant's discovery and its own game/event/availability
                    topics; Home Assistant reads those and the boards' status, and writes only its birth message
  credentials.toml  the plain passwords, mode 0600: give each to its board (`battlement flash
                    --mqtt mqtt://<table>.<board>:<password>@host`) and the bridge's to `battlement run`

A board's login names its table: every Ringo table has a ring-5, and one broker may serve several
tables. Table and board ids are a-z 0-9 '-', so the '.' between them is never part of either, and it
needs no escaping in an mqtt:// url (a '/' would) nor in the password file and ACL.

Passwords already in credentials.toml are kept, so running it again after adding a board or a table
changes nobody else's; so are those of a table left out of a run (the broker files hold only the tables
named), for when it is named again. The hashes are made here with hashlib (the format mosquitto_passwd
documents), so the command works on a machine without the mosquitto package.
"""

from __future__ import annotations

import base64
import hashlib
import os
import pathlib
import secrets
import tomllib

from battlement.errors import UserError
from battlement.link.transport.mqtt.names import SEP, login
from battlement.ops.hass import DEFAULT_PREFIX, check_prefix
from battlement.table.maps import TableMap, load

BRIDGE_USER = "battlement-bridge"
HASS_USER = "homeassistant"  # the login for Home Assistant's MQTT integration
ITERATIONS = 101  # mosquitto_passwd's default for $7$ (PBKDF2-SHA512)


def pbkdf2_line(user: str, password: str, salt: bytes | None = None) -> str:
    """One password-file line, as `mosquitto_passwd -b` writes it."""
    salt = salt or secrets.token_bytes(12)
    dk = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, ITERATIONS, 64)
    return "%s:$7$%d$%s$%s" % (user, ITERATIONS, base64.b64encode(salt).decode(), base64.b64encode(dk).decode())


def _private(path: pathlib.Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)


def acl_text(tables: dict[str, list[str]], hass_prefix: str = DEFAULT_PREFIX) -> str:
    """tables: table id -> its board ids."""
    # Home Assistant's topics (battlement.ops.hass): discovery under the prefix, the bridge's own three kinds
    published = ["battlement/+/game", "battlement/+/event", "battlement/bridge/+"]
    out = ["# Battlement tables %s: who may publish and subscribe to what (battlement broker-config)"
           % ", ".join(sorted(tables)),
           "", "user %s" % BRIDGE_USER,
           "topic read battlement/+/+/up", "topic read battlement/+/+/status", "topic write battlement/+/+/down",
           "topic write %s/#" % hass_prefix, "topic read %s/status" % hass_prefix]
    out += ["topic write %s" % t for t in published]
    out += ["", "user %s" % HASS_USER, "topic readwrite %s/#" % hass_prefix, "topic read battlement/+/+/status"]
    out += ["topic read %s" % t for t in published]
    for table in sorted(tables):
        for b in tables[table]:
            root = "battlement/%s/%s" % (table, b)
            out += ["", "user %s" % login(table, b), "topic write %s/up" % root, "topic write %s/status" % root,
                    "topic read %s/down" % root]
    return "\n".join(out) + "\n"


def load_tables(table_maps: list[str]) -> list[TableMap]:
    """Every map, checked, before anything is written; two maps of one table id are a mistake."""
    tmaps = [load(p) for p in table_maps]
    seen: dict[str, str] = {}
    for t in tmaps:
        if t.table in seen:
            raise UserError("%s and %s are both table %s: each table on one broker needs its own id "
                            "(table = \"...\" in its map)" % (seen[t.table], t.path, t.table))
        seen[t.table] = t.path
    return tmaps


def credentials(out: str) -> dict[str, str]:
    """user -> password from out/credentials.toml ({} if there is none yet)."""
    path = pathlib.Path(out) / "credentials.toml"
    if not path.exists():
        return {}
    try:
        with open(path, "rb") as f:
            users = tomllib.load(f).get("users", {})
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UserError("%s: %s (fix or remove it; a new one gives every login a new password)" % (path, e))
    return {k: v for k, v in users.items() if isinstance(v, str)}


def write(table_maps: list[str], out: str, port: int = 1883, bind: str = "0.0.0.0",
          hass_prefix: str = DEFAULT_PREFIX) -> dict[str, str]:
    """Write the four files for the tables of table_maps; returns user -> password of this broker's users."""
    check_prefix(hass_prefix)
    tmaps = load_tables(table_maps)
    boards = {t.table: sorted(t.boards) for t in tmaps}
    d = pathlib.Path(out)
    creds = credentials(out)
    d.mkdir(parents=True, exist_ok=True)
    users = [BRIDGE_USER, HASS_USER] + sorted(login(t, b) for t in boards for b in boards[t])
    for u in users:
        creds.setdefault(u, secrets.token_urlsafe(18))
    # Kept for later runs: other tables' logins. Logins without a table (the one-table scheme) are gone.
    kept = users + sorted(u for u in creds if SEP in u and u.split(SEP)[0] not in boards)
    _private(d / "passwords", "".join(pbkdf2_line(u, creds[u]) + "\n" for u in users))
    _private(d / "credentials.toml", "# MQTT logins of Battlement tables (battlement broker-config): secret (0600)\n"
             "[users]\n" + "".join('"%s" = "%s"\n' % (u, creds[u]) for u in kept))
    (d / "acl").write_text(acl_text(boards, hass_prefix))
    (d / "mosquitto.conf").write_text(
        "# Mosquitto for Battlement tables %s (battlement broker-config)\n"
        "per_listener_settings false\n"
        "listener %d %s\n"
        "allow_anonymous false\n"
        "password_file %s\n"
        "acl_file %s\n"
        "# frames are small QoS 1 packets: without this each waits ~40 ms on Nagle's algorithm\n"
        "set_tcp_nodelay true\n"
        "persistence true\n"
        "persistence_location %s/\n"
        % (", ".join(sorted(boards)), port, bind, (d / "passwords").resolve(), (d / "acl").resolve(), d.resolve()))
    return {u: creds[u] for u in users}


def run(args) -> int:
    before = credentials(args.out)
    users = write(args.table, args.out, args.port, args.bind, args.hass_prefix)
    tables = sorted({u.split(SEP)[0] for u in users if SEP in u})
    print("wrote %s/mosquitto.conf, passwords, acl and credentials.toml (%d users: the bridge, Home Assistant "
          "and %d boards of %s)" % (args.out, len(users), len(users) - 2, ", ".join(tables)))
    others = sorted({u.split(SEP)[0] for u in before if SEP in u} - set(tables))
    if others:
        print("  not on this broker now: %s (passwords kept in credentials.toml; name it with --table again "
              "to bring it back)" % ", ".join(others))
    bare = sorted(u for u in before if SEP not in u and u not in (BRIDGE_USER, HASS_USER))
    if bare:
        print("  logins named by a board id alone are gone (%s): flash those boards again with their "
              "<table>.<board> login" % ", ".join(bare))
    print("  start it:   mosquitto -c %s/mosquitto.conf" % args.out)
    print("  a board:    battlement flash ... --table TABLE --id BOARD --mqtt mqtt://TABLE.BOARD:<password>@HOST:%d"
          % args.port)
    print("  the bridge: battlement run --mqtt mqtt://%s:<password>@HOST:%d  (passwords in credentials.toml)"
          % (BRIDGE_USER, args.port))
    print("  Home Assistant: its MQTT integration logs in as %s (password in credentials.toml)" % HASS_USER)
    return 0


