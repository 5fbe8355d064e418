"""`battlement sim`: its arguments (the boards are battlement.sim.simulator)."""

from __future__ import annotations

from battlement.link import keys as boardkeys
from battlement.link.transport.args import add_mqtt_login
from battlement.sim.simulator import run


def register(sub) -> None:
    p = sub.add_parser(
        "sim", help="virtual boards of a table speaking the real protocol (pty or MQTT)",
        description="Run the boards of a table map as virtual boards: over ptys (printed, give them to "
                    "'battlement run --serial') or on an MQTT broker. Play a JSON Lines script of sensor "
                    "changes, random changes, or just answer the bridge until Ctrl-C.",
    )
    p.add_argument("--table", required=True, help="table map TOML (e.g. hardware/tables/ringo.toml)")
    p.add_argument("--mqtt", metavar="URL", help="broker, e.g. mqtt://127.0.0.1:1883 (default: ptys)")
    add_mqtt_login(p)
    p.add_argument("--script", help='JSON Lines: {"at": 1.5, "object": "b5", "value": 0} per line')
    p.add_argument("--speed", type=float, default=1.0, help="play the script this many times faster (default 1)")
    p.add_argument("--random", type=int, default=0, metavar="N", help="N random sensor changes")
    p.add_argument("--rate", type=float, default=5.0, help="random changes per second (default 5)")
    p.add_argument("--seed", type=int, default=1, help="seed of the random changes (default 1)")
    p.add_argument("--wait", type=float, default=1.0, help="seconds to wait before playing (default 1)")
    p.add_argument("--linger", type=float, default=1.0, help="seconds to keep answering after the script")
    boardkeys.add_argument(p)  # with the table's keys (as `battlement run` finds them) the boards sign every frame
    p.set_defaults(func=run)
