"""`battlement flash`: its arguments (the work is battlement.boards.flash)."""

from __future__ import annotations

from battlement.boards import hardware
from battlement.boards.flash import run
from battlement.link import keys as boardkeys
from battlement.link.transport.args import add_mqtt_login


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "flash",
        help="install the firmware and a board's config on a MicroPython board",
        description="Check the board's pin map, compile the firmware with mpy-cross for its CPU, write its "
        "config.json and copy everything with mpremote, then reset it. MicroPython must already be "
        "installed on the board (docs/flashing.md). Serial link by default; --mqtt switches to Wi-Fi + MQTT.",
    )
    p.add_argument(
        "--board", required=False, default="", help="board profile: %s" % ", ".join(hardware.profile_names())
    )
    p.add_argument(
        "--port",
        default="",
        help="the board's serial port, e.g. /dev/ttyACM0 (list them with `mpremote devs`)",
    )
    p.add_argument("--id", default="", help="board id, e.g. red-kingdom; its pin map is hardware/boards/<id>.json")
    p.add_argument("--map", help="pin map file to use instead of hardware/boards/<id>.json")
    p.add_argument(
        "--dry-run", action="store_true", help="print every command and the config, change nothing"
    )
    p.add_argument(
        "--mqtt",
        metavar="URL",
        help="report over MQTT to this broker, e.g. mqtt://192.168.1.10:1883 (mqtts:// with --tls-ca for TLS)",
    )
    p.add_argument("--table", help="table id the board belongs to, e.g. hall-1: its MQTT topics (with --mqtt) and "
                   "the table's keys file its signing key goes in (<keys dir>/<table>.keys.toml, made 0600 if "
                   "missing); without it the board signs nothing")
    add_mqtt_login(p)
    p.add_argument("--wifi-ssid", help="Wi-Fi network the board joins (with --mqtt)")
    p.add_argument("--wifi-password", help="Wi-Fi password (stored only in the board's config.json)")
    boardkeys.add_argument(p)
    p.add_argument("--build-dir", help="where the compiled files go (default firmware/build/<id>)")
    p.set_defaults(func=run)
