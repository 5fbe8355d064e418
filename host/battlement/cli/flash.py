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
        "installed on the board, or given with --image (installed first, its SHA-256 checked; without --id only "
        "MicroPython goes on). Serial link by default; --mqtt switches to Wi-Fi + MQTT, or `battlement provision` "
        "gives a flashed board its Wi-Fi and broker later (docs/flashing.md).",
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
    p.add_argument("--image", metavar="FILE", help="install MicroPython from this image first: a .bin for the "
                   "ESP32-S3 (esptool: erase, write), a .uf2 for a Pico W in BOOTSEL mode (copied onto its drive)")
    p.add_argument("--sha256", metavar="HEX", help="the SHA-256 the image must have (default: FILE.sha256 beside it); "
                   "a mismatch is refused before anything is written")
    p.add_argument("--drive", metavar="DIR", help="where the Pico's RPI-RP2 drive is mounted, or a folder above it "
                   "(default: looked for under /media and /run/media)")
    p.add_argument("--build-dir", help="where the compiled files go (default firmware/build/<id>)")
    p.set_defaults(func=run)
