"""`battlement broker-config`: its arguments (the files are written by battlement.ops.broker)."""

from __future__ import annotations

from battlement.link import keys as boardkeys
from battlement.ops.broker import run
from battlement.ops.hass import DEFAULT_PREFIX


def register(sub) -> None:
    p = sub.add_parser(
        "broker-config", help="write a Mosquitto config, password file and ACL for the boards of one or more tables",
        description="Write mosquitto.conf, a password file (one user per board of each table, named "
                    "<table>.<board>, one for the bridge, one for Home Assistant), an ACL letting each board write "
                    "only its own table's topics of its id and read only its own commands (Home Assistant reads "
                    "the bridge's discovery and state topics), and credentials.toml with the passwords (0600). "
                    "Several tables on one broker may have boards of the same id (every Ringo table has a "
                    "ring-5): the table in the login tells them apart. Existing passwords are kept, also those of "
                    "a table left out of this run.",
        epilog="Example: battlement broker-config --table hardware/tables/ringo.toml --table hall-2.toml "
               "--out var/mosquitto   |   a venue of two bridges: ... --table hall-1.toml --table hall-2.toml "
               "--venue bar-42 --bridge-login east=hall-2 --out /etc/mosquitto/battlement",
    )
    p.add_argument("--table", required=True, action="append", metavar="TOML",
                   help="a table map whose boards get logins (repeat for every table on this broker)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for the files (made if missing)")
    p.add_argument("--port", type=int, default=1883, help="port to listen on (default 1883)")
    p.add_argument("--bind", default="0.0.0.0", help="address to listen on (default 0.0.0.0: the boards' Wi-Fi)")
    p.add_argument("--hass-prefix", default=DEFAULT_PREFIX, metavar="PREFIX",
                   help="Home Assistant's discovery prefix, as given to `battlement run` (default %(default)s)")
    p.add_argument("--bridge-login", action="append", metavar="NAME[=TABLE,...]",
                   help="a further bridge login, battlement-bridge-NAME, with the bridge's rights (repeat): a login "
                        "is one connection at a time, so a second bridge, or a monitor beside one, needs its own. "
                        "With --venue, =TABLE,... names the tables that bridge serves: its login carries their venue "
                        "messages alone (battlement-bridge carries those of the tables given to no other)")
    p.add_argument("--venue", metavar="ID",
                   help="the venue these tables play in: adds the hub's login, battlement-hub, which may send match "
                        "starts and hear results on the venue's topics only, and lets each bridge login speak "
                        "there for its own tables alone (boards never may)")
    boardkeys.add_argument(p)  # each table's signing is said, from its keys found as every command finds them
    p.set_defaults(func=run)
