"""`battlement broker-config`: a Mosquitto configuration for one table.

    battlement broker-config --table hardware/tables/plingpong.toml --out /etc/mosquitto/battlement

writes, into --out:
  mosquitto.conf    listener, no anonymous clients, the password and ACL files, set_tcp_nodelay
                    (small QoS 1 frames otherwise wait on Nagle), persistence
  passwords         one user per board of the table, one for the bridge and one for Home Assistant, in Mosquitto's
                    PBKDF2-SHA512 format ($7$, what mosquitto_passwd writes), mode 0600
  acl               each board may write only its own up/status topics and read only its own down
                    topic; the bridge reads every board's up/status and writes their down topics, and
                    writes Home Assistant's discovery and its own game/event/availability topics;
                    Home Assistant reads those and the boards' status, and writes only its birth message
  credentials.toml  the plain passwords, mode 0600: give each to its board (`battlement flash
                    --mqtt mqtt://<board>:<password>@host`) and the bridge's to `battlement run`

Passwords already in credentials.toml are kept, so running it again after adding a board changes
nobody else's. The hashes are made here with hashlib (the format mosquitto_passwd documents), so the
command works on a machine without the mosquitto package.
"""

from __future__ import annotations

import base64
import hashlib
import os
import pathlib
import secrets
import tomllib

from battlement.errors import UserError
from battlement.hass import DEFAULT_PREFIX, check_prefix
from battlement.tables import load

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


def acl_text(table: str, boards: list[str], hass_prefix: str = DEFAULT_PREFIX) -> str:
    root = "battlement/%s" % table
    # Home Assistant's topics (battlement.hass): discovery under the prefix, the bridge's own three kinds
    published = ["battlement/+/game", "battlement/+/event", "battlement/bridge/+"]
    out = ["# Battlement table %s: who may publish and subscribe to what (battlement broker-config)" % table,
           "", "user %s" % BRIDGE_USER,
           "topic read battlement/+/+/up", "topic read battlement/+/+/status", "topic write battlement/+/+/down",
           "topic write %s/#" % hass_prefix, "topic read %s/status" % hass_prefix]
    out += ["topic write %s" % t for t in published]
    out += ["", "user %s" % HASS_USER, "topic readwrite %s/#" % hass_prefix, "topic read battlement/+/+/status"]
    out += ["topic read %s" % t for t in published]
    for b in boards:
        out += ["", "user %s" % b, "topic write %s/%s/up" % (root, b), "topic write %s/%s/status" % (root, b),
                "topic read %s/%s/down" % (root, b)]
    return "\n".join(out) + "\n"


def write(table_map: str, out: str, port: int = 1883, bind: str = "0.0.0.0",
          hass_prefix: str = DEFAULT_PREFIX) -> dict[str, str]:
    """Write the four files; returns user -> password."""
    check_prefix(hass_prefix)
    tmap = load(table_map)
    d = pathlib.Path(out)
    d.mkdir(parents=True, exist_ok=True)
    creds_path = d / "credentials.toml"
    creds: dict[str, str] = {}
    if creds_path.exists():
        with open(creds_path, "rb") as f:
            creds = {k: v for k, v in tomllib.load(f).get("users", {}).items() if isinstance(v, str)}
    users = [BRIDGE_USER, HASS_USER] + sorted(tmap.boards)
    for u, whose in ((BRIDGE_USER, "the bridge's"), (HASS_USER, "Home Assistant's")):
        if u in tmap.boards:
            raise UserError("%s: a board may not be called %s (%s user)" % (table_map, u, whose))
    for u in users:
        creds.setdefault(u, secrets.token_urlsafe(18))
    _private(d / "passwords", "".join(pbkdf2_line(u, creds[u]) + "\n" for u in users))
    _private(creds_path, "# MQTT logins of table %s: secret (0600)\n[users]\n" % tmap.table
             + "".join('"%s" = "%s"\n' % (u, creds[u]) for u in users))
    (d / "acl").write_text(acl_text(tmap.table, sorted(tmap.boards), hass_prefix))
    (d / "mosquitto.conf").write_text(
        "# Mosquitto for Battlement table %s (battlement broker-config)\n"
        "per_listener_settings false\n"
        "listener %d %s\n"
        "allow_anonymous false\n"
        "password_file %s\n"
        "acl_file %s\n"
        "# frames are small QoS 1 packets: without this each waits ~40 ms on Nagle's algorithm\n"
        "set_tcp_nodelay true\n"
        "persistence true\n"
        "persistence_location %s/\n"
        % (tmap.table, port, bind, (d / "passwords").resolve(), (d / "acl").resolve(), d.resolve()))
    return {u: creds[u] for u in users}


def run(args) -> int:
    users = write(args.table, args.out, args.port, args.bind, args.hass_prefix)
    print("wrote %s/mosquitto.conf, passwords, acl and credentials.toml (%d users: the bridge, Home Assistant "
          "and %d boards)" % (args.out, len(users), len(users) - 2))
    print("  start it:   mosquitto -c %s/mosquitto.conf" % args.out)
    print("  the bridge: battlement run --mqtt mqtt://%s:<password>@HOST:%d  (passwords in credentials.toml)"
          % (BRIDGE_USER, args.port))
    print("  Home Assistant: its MQTT integration logs in as %s (password in credentials.toml)" % HASS_USER)
    return 0


def register(sub) -> None:
    p = sub.add_parser(
        "broker-config", help="write a Mosquitto config, password file and ACL for a table's boards",
        description="Write mosquitto.conf, a password file (one user per board, one for the bridge, one for "
                    "Home Assistant), an ACL letting each board write only its own topics and read only its own "
                    "commands (Home Assistant reads the bridge's discovery and state topics), and "
                    "credentials.toml with the passwords (0600). Existing passwords are kept.",
        epilog="Example: battlement broker-config --table hardware/tables/plingpong.toml --out var/mosquitto",
    )
    p.add_argument("--table", required=True, metavar="TOML", help="the table map whose boards get logins")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the files (made if missing)")
    p.add_argument("--port", type=int, default=1883, help="port to listen on (default 1883)")
    p.add_argument("--bind", default="0.0.0.0", help="address to listen on (default 0.0.0.0: the boards' Wi-Fi)")
    p.add_argument("--hass-prefix", default=DEFAULT_PREFIX, metavar="PREFIX",
                   help="Home Assistant's discovery prefix, as given to `battlement run` (default %(default)s)")
    p.set_defaults(func=run)
