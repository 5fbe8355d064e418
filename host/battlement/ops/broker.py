"""`battlement broker-config`: a Mosquitto configuration for the tables of one broker.

    battlement broker-config --table hardware/tables/plingpong.toml [--table hall-2.toml ...] --out /etc/mosquitto/battlement

writes, into --out:
  mosquitto.conf    listener, no anonymous clients, the password and ACL files, set_tcp_nodelay
                    (small QoS 1 frames otherwise wait on Nagle), use_username_as_clientid (a login owns
                    its client id: no board can take over another's session and fire its will), the
                    `mosquitto` user to drop to, persistence (in data/)
  passwords         one user per board of each table, named <table>.<board>, one for the bridge (and one
                    per further bridge, --bridge-login NAME: a login is one connection) and one for Home
                    Assistant, in Mosquitto's PBKDF2-SHA512 format ($7$, what mosquitto_passwd writes);
                    see "Owners" below
  acl               each board may write only its own table's up/status topics of its id and read only
                    its own down topic; the bridge reads every board's up/status and writes their down
                    topics, and writes Home Assistant's discovery and its own game/event/link/availability
                    topics; Home Assistant reads those and the boards' status, and writes only its birth message
  credentials.toml  the plain passwords, mode 0600: give each to its board (`battlement flash
                    --mqtt mqtt://<table>.<board>:<password>@host`) and the bridge's to `battlement run`

With --venue ID, a venue's hub and bridges (docs/protocol.md, "Venue messages") get their part too: a login
for the hub, which may write match starts to every table's venue down topic and read every table's up topic
(results, status), and nothing else; each bridge login may read the down topics and write the up topics of
the tables it serves alone (--bridge-login NAME=TABLE,TABLE; battlement-bridge serves those given to no
other), so a bridge's login cannot start a game on another bridge's table nor send a result for it, though
it holds the same venue key. No board and not Home Assistant may touch a venue topic. mosquitto.conf then
ends by including conf.d/ beside it (root:mosquitto 0750 as root), where a bridge to a league's broker goes.

Owners: Mosquitto started as root (Debian's service) reads its config, then drops to the `mosquitto` user
and only then opens the password file and the ACL, and writes its persistence. Run as root, this makes
the folder root:mosquitto 0750, passwords and acl root:mosquitto 0640 (the broker reads them, nobody else
does), data/ mosquitto's own 0700, and credentials.toml root's 0600 (the broker never needs the plain
passwords). Run as another user, the files are that user's, 0600 (data/ 0700): for a broker run as
that user.

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
import pwd
import secrets
import tomllib

from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.link.transport.mqtt.names import SEP, VENUE_ROOT, check_id, login
from battlement.ops.hass import DEFAULT_PREFIX, check_prefix
from battlement.table.maps import TableMap, load

BRIDGE_USER = "battlement-bridge"
HUB_USER = "battlement-hub"  # a venue's hub (--venue): its match starts out, the tables' results in
HASS_USER = "homeassistant"  # the login for Home Assistant's MQTT integration
ITERATIONS = 101  # mosquitto_passwd's default for $7$ (PBKDF2-SHA512)
BROKER_USER = "mosquitto"  # who Mosquitto drops to when started as root (Debian's default and service)


def pbkdf2_line(user: str, password: str, salt: bytes | None = None) -> str:
    """One password-file line, as `mosquitto_passwd -b` writes it."""
    salt = salt or secrets.token_bytes(12)
    dk = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, ITERATIONS, 64)
    return "%s:$7$%d$%s$%s" % (user, ITERATIONS, base64.b64encode(salt).decode(), base64.b64encode(dk).decode())


def broker_ids() -> tuple[int, int] | None:
    """(uid, gid) of the broker's own user when we are root (its files are then given to it), else None."""
    if os.geteuid() != 0:
        return None
    try:
        u = pwd.getpwnam(BROKER_USER)
    except KeyError:
        return None
    return u.pw_uid, u.pw_gid


def _private(path: pathlib.Path, text: str, broker: tuple[int, int] | None = None) -> None:
    """Written 0600; with broker (uid, gid), root:<its group> 0640: for the broker to read, nobody else."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)
    if broker is not None:
        os.chown(path, 0, broker[1])
        os.chmod(path, 0o640)


def _folders(d: pathlib.Path, broker: tuple[int, int] | None) -> pathlib.Path:
    """The out folder (the broker's group may enter it) and data/, the broker's own for its persistence."""
    d.mkdir(parents=True, exist_ok=True)
    data = d / "data"
    data.mkdir(exist_ok=True)
    os.chmod(data, 0o700)
    if broker is not None:
        os.chown(d, 0, broker[1])
        os.chmod(d, 0o750)
        os.chown(data, *broker)
    return data


def bridge_logins(names: list[str] | None) -> list[str]:
    """The bridges' logins: battlement-bridge, and battlement-bridge-<name> for each further one. A login is
    one connection at a time (use_username_as_clientid), so each bridge, or a monitor beside one, needs its own."""
    return [BRIDGE_USER] + ["%s-%s" % (BRIDGE_USER, check_id("bridge login", n)) for n in sorted(set(names or []))]


def acl_text(tables: dict[str, list[str]], hass_prefix: str = DEFAULT_PREFIX, bridges: list[str] | None = None) -> str:
    """tables: table id -> its board ids; bridges: the bridges' logins (bridge_logins)."""
    # Home Assistant's topics (battlement.ops.hass): discovery under the prefix, the bridge's own four kinds
    published = ["battlement/+/game", "battlement/+/event", "battlement/+/+/link", "battlement/bridge/+"]
    out = ["# Battlement tables %s: who may publish and subscribe to what (battlement broker-config)"
           % ", ".join(sorted(tables))]
    for user in bridges or [BRIDGE_USER]:
        out += ["", "user %s" % user,
                "topic read battlement/+/+/up", "topic read battlement/+/+/status", "topic write battlement/+/+/down",
                "topic read battlement/+/+/ota",  # a board's answers to an update (`battlement update`)
                "topic write %s/#" % hass_prefix, "topic read %s/status" % hass_prefix]
        out += ["topic write %s" % t for t in published]
    out += ["", "user %s" % HASS_USER, "topic readwrite %s/#" % hass_prefix, "topic read battlement/+/+/status"]
    out += ["topic read %s" % t for t in published]
    for table in sorted(tables):
        for b in tables[table]:
            root = "battlement/%s/%s" % (table, b)
            out += ["", "user %s" % login(table, b), "topic write %s/up" % root, "topic write %s/status" % root,
                    "topic write %s/ota" % root, "topic read %s/down" % root]
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
          hass_prefix: str = DEFAULT_PREFIX, bridges: list[str] | None = None,
          venue: str | None = None) -> dict[str, str]:
    """Write the four files for the tables of table_maps (and a login for each further bridge named in
    bridges, NAME or NAME=TABLE,TABLE; and with venue, the hub's); returns user -> password of this broker's users."""
    check_prefix(hass_prefix)
    names, given = bridge_tables(bridges)
    bridge_users = bridge_logins(names)
    tmaps = load_tables(table_maps)
    boards = {t.table: sorted(t.boards) for t in tmaps}
    serving = venue_serving(venue, given, list(boards))  # before anything is written
    d = pathlib.Path(out)
    creds = credentials(out)
    broker = broker_ids()
    data = _folders(d, broker)
    users = bridge_users + ([HUB_USER] if venue else []) + [HASS_USER] + sorted(
        login(t, b) for t in boards for b in boards[t])
    for u in users:
        creds.setdefault(u, secrets.token_urlsafe(18))
    # Kept for later runs: other tables' and bridges' logins. Logins without a table (the one-table scheme) are gone.
    kept = users + sorted(u for u in creds if u not in users and (
        SEP in u and u.split(SEP)[0] not in boards or u.startswith(BRIDGE_USER + "-") or u == HUB_USER))
    _private(d / "passwords", "".join(pbkdf2_line(u, creds[u]) + "\n" for u in users), broker)
    _private(d / "credentials.toml", "# MQTT logins of Battlement tables (battlement broker-config): secret (0600)\n"
             "[users]\n" + "".join('"%s" = "%s"\n' % (u, creds[u]) for u in kept))
    _private(d / "acl", acl_text(boards, hass_prefix, bridge_users) + venue_acl(venue, serving), broker)
    (d / "mosquitto.conf").write_text(
        "# Mosquitto for Battlement tables %s (battlement broker-config)\n"
        "# started as root it reads this, then runs as this user, who reads the password file and ACL\n"
        "user %s\n"
        "per_listener_settings false\n"
        "listener %d %s\n"
        "allow_anonymous false\n"
        "password_file %s\n"
        "acl_file %s\n"
        "# a login owns its client id: no board can take over another's session and fire its will\n"
        "use_username_as_clientid true\n"
        "# frames are small QoS 1 packets: without this each waits ~40 ms on Nagle's algorithm\n"
        "set_tcp_nodelay true\n"
        "persistence true\n"
        "persistence_location %s/\n"
        % (", ".join(sorted(boards)), BROKER_USER, port, bind, (d / "passwords").resolve(), (d / "acl").resolve(),
           data.resolve()) + venue_conf(venue, d, broker))
    return {u: creds[u] for u in users}


def run(args) -> int:
    before = credentials(args.out)
    # each table's keys, found as every command finds them (a keys file others can read stops it here)
    signing = [boardkeys.of_table(t.table, t.path, args.keys_dir) for t in load_tables(args.table)]
    users = write(args.table, args.out, args.port, args.bind, args.hass_prefix, args.bridge_login, args.venue)
    tables = sorted({u.split(SEP)[0] for u in users if SEP in u})
    names, given = bridge_tables(args.bridge_login)
    bridges = bridge_logins(names)
    print("wrote %s/mosquitto.conf, passwords, acl and credentials.toml (%d users: %s, %sHome Assistant "
          "and %d boards of %s)" % (args.out, len(users), "the bridge" if len(bridges) == 1 else "%d bridges"
                                    % len(bridges), "the venue's hub, " if args.venue else "",
                                    sum(SEP in u for u in users), ", ".join(tables)))
    others = sorted({u.split(SEP)[0] for u in before if SEP in u} - set(tables))
    if others:
        print("  not on this broker now: %s (passwords kept in credentials.toml; name it with --table again "
              "to bring it back)" % ", ".join(others))
    bare = sorted(u for u in before
                  if SEP not in u and u not in (HASS_USER, HUB_USER) and not u.startswith(BRIDGE_USER))
    if bare:
        print("  logins named by a board id alone are gone (%s): flash those boards again with their "
              "<table>.<board> login" % ", ".join(bare))
    for tk in signing:
        print("  %s: %s%s" % (tk.table, tk.line(True), "" if tk.keys else " (no keys file %s: `battlement flash "
                                                                          "--table %s` makes it)" % (tk.path, tk.table)))
    if broker_ids() is None:
        print("  owners: the files are yours, 0600, for a broker run as you (Mosquitto started as root drops to "
              "its %s user, who could not read them: there, run broker-config as root)" % BROKER_USER)
    print("  start it:   mosquitto -c %s/mosquitto.conf" % args.out)
    print("  a board:    battlement flash ... --table TABLE --id BOARD --mqtt mqtt://TABLE.BOARD:<password>@HOST:%d"
          % args.port)
    print("  the bridge: battlement run --mqtt mqtt://%s:<password>@HOST:%d  (passwords in credentials.toml; one "
          "connection per login: a second bridge, or a monitor beside it, logs in as %s)"
          % (BRIDGE_USER, args.port, " or ".join(bridges[1:]) or "another --bridge-login"))
    print("  Home Assistant: its MQTT integration logs in as %s (password in credentials.toml)" % HASS_USER)
    for line in venue_lines(args.venue, venue_serving(args.venue, given, tables), args.port):
        print(line)
    return 0


# --- a venue's hub and bridges (docs/protocol.md, "Venue messages") -------------------------------


def bridge_tables(specs: list[str] | None) -> tuple[list[str], dict[str, list[str]]]:
    """--bridge-login NAME or NAME=TABLE,TABLE: (the further bridges' names, NAME -> the tables it serves)."""
    names: list[str] = []
    given: dict[str, list[str]] = {}
    for spec in specs or []:
        name, eq, tables = spec.partition("=")
        names.append(name)
        if eq:
            given.setdefault(name, []).extend(t.strip() for t in tables.split(",") if t.strip())
    return names, given


def venue_serving(venue: str | None, given: dict[str, list[str]], tables: list[str]) -> dict[str, list[str]]:
    """Each bridge login -> the tables whose venue messages it carries: those --bridge-login NAME=... gives
    it, and battlement-bridge's the rest ({} without a venue). One line for a table given twice or unknown."""
    if venue is None:
        if given:
            name = min(given)
            raise UserError("--bridge-login %s=%s: the tables a bridge serves go into a venue's ACL: give --venue ID "
                            "too (or leave out =%s)" % (name, ",".join(given[name]), ",".join(given[name])))
        return {}
    check_id("venue", venue)
    owner: dict[str, str] = {}
    for name in sorted(given):
        user = "%s-%s" % (BRIDGE_USER, name)
        for t in given[name]:
            if t not in tables:
                raise UserError("--bridge-login %s=%s: %s is not one of the tables named by --table (%s)"
                                % (name, ",".join(given[name]), t, ", ".join(sorted(tables))))
            if owner.setdefault(t, user) != user:
                raise UserError("--bridge-login: table %s is given to %s and to %s; one bridge serves a table"
                                % (t, owner[t], user))
    serving: dict[str, list[str]] = {}
    for t in sorted(tables):
        serving.setdefault(owner.get(t, BRIDGE_USER), []).append(t)
    return serving


def venue_acl(venue: str | None, serving: dict[str, list[str]]) -> str:
    """The venue's part of the ACL: the hub writes every table's down topic (starts, acks) and reads every up
    topic (ready, refused, results, status); a bridge reads the down and writes the up topics of its own
    tables only. Nothing else is granted: no board, nor Home Assistant, touches a venue topic."""
    if venue is None:
        return ""
    root = "%s/%s" % (VENUE_ROOT, venue)
    out = ["", "# venue %s: the hub starts matches and hears results; a bridge speaks only for its own tables"
           % venue, "user %s" % HUB_USER, "topic write %s/+/down" % root, "topic read %s/+/up" % root]
    for user in sorted(serving):
        out += ["", "user %s" % user]
        for t in serving[user]:
            out += ["topic read %s/%s/down" % (root, t), "topic write %s/%s/up" % (root, t)]
    return "\n".join(out) + "\n"


def venue_conf(venue: str | None, d: pathlib.Path, broker: tuple[int, int] | None) -> str:
    """With a venue, the end of mosquitto.conf: the conf.d folder beside it, where a bridge to a league's broker
    goes (docs/venue.md, "Across venues"), so that running broker-config again keeps it. As the folder it is in:
    the broker's group may read it (a bridge's file holds its remote password), nobody else."""
    if venue is None:
        return ""
    extra = d / "conf.d"
    extra.mkdir(exist_ok=True)
    os.chmod(extra, 0o700)
    if broker is not None:
        os.chown(extra, 0, broker[1])
        os.chmod(extra, 0o750)
    return ("# a bridge to a league's broker: a .conf file in this folder, kept when broker-config runs again\n"
            "include_dir %s\n" % extra.resolve())


def venue_lines(venue: str | None, serving: dict[str, list[str]], port: int) -> list[str]:
    """What broker-config says about the venue's logins."""
    if venue is None:
        return []
    return ["  venue %s: the hub logs in as %s (mqtt://%s:<password>@HOST:%d); each bridge carries the venue "
            "messages of its own tables only:" % (venue, HUB_USER, HUB_USER, port)] + [
        "    %s: %s" % (user, ", ".join(serving[user])) for user in sorted(serving)] + [
        "  a bridge to a league's broker: a .conf file in conf.d/ (docs/venue.md, \"Across venues\")"]


