"""`battlement provision PORT`: a flashed board gets its Wi-Fi, broker and table over USB (Improv Wi-Fi).

    battlement provision /dev/ttyACM0 --ssid castle --broker 192.168.1.10 --table plingpong --broker-dir var/mosquitto

What is missing is asked for (passwords without echo). The board's broker login is the one `battlement
broker-config` made for it (<table>.<board>, its password in --broker-dir's credentials.toml), its signing key
the one in its table's keys file (made if missing, as `battlement flash --table` does). The board joins the
Wi-Fi, logs in to the broker, keeps it all in its config.json and restarts on its new link; any refusal is
one line (battlement.boards.provision says what to the board).
"""

from __future__ import annotations

import getpass
import sys

from battlement.boards.provision import ANSWER_S, provision
from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.link.transport.mqtt.names import check_id, login, parse_url
from battlement.ops.broker import credentials


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "provision", help="give a flashed board its Wi-Fi, broker and table over USB (Improv Wi-Fi)",
        description="Talk Improv Wi-Fi (the open standard ESPHome and Home Assistant use) to the board on PORT: "
                    "give it its Wi-Fi and, for a Battlement board, the broker it reports to and its table. It "
                    "joins the Wi-Fi, logs in to the broker, keeps the settings and restarts on them. What is not "
                    "given is asked for. A browser Improv tool can set the Wi-Fi too (docs/flashing.md).",
        epilog="Example: battlement provision /dev/ttyACM0 --ssid castle --broker 192.168.1.10 --table plingpong "
               "--broker-dir var/mosquitto")
    p.add_argument("port", metavar="PORT", help="the board's serial port, e.g. /dev/ttyACM0")
    p.add_argument("--ssid", help="the Wi-Fi network the board joins")
    p.add_argument("--password", help="its password (asked for, without echo, if not given; '' for an open one)")
    p.add_argument("--broker", metavar="HOST[:PORT]",
                   help="the MQTT broker the board reports to (port 1883 unless given; or mqtt://login:pw@host:port)")
    p.add_argument("--broker-dir", metavar="DIR",
                   help="the folder `battlement broker-config --out` wrote: its credentials.toml has the board's login")
    p.add_argument("--table", help="the table id the board belongs to: its topics, its login and its signing key")
    p.add_argument("--board", help="the board's id (default: the one it says it has); must match it")
    boardkeys.add_argument(p)
    p.add_argument("--wait", type=float, default=ANSWER_S, metavar="S",
                   help="how long to wait for the board's first answer (default %(default)g s; longer right after "
                        "flashing, while it starts)")
    p.set_defaults(func=run)


def _ask(option: str, prompt: str, secret: bool = False) -> str:
    """What the command line did not give, asked for on the terminal (a secret without echo)."""
    if not sys.stdin.isatty():
        raise UserError("%s is missing, and there is no terminal to ask on: give it" % option)
    try:
        return getpass.getpass(prompt) if secret else input(prompt)
    except EOFError:
        raise UserError("%s is missing: give it" % option)


def _broker(args, board: str) -> tuple[str, int, str, str]:
    host, port, tls, user, password = parse_url(args.broker)
    if tls:
        raise UserError("--broker %s: TLS is set when flashing (`battlement flash --mqtt mqtts://... --tls-ca PEM`), "
                        "not over Improv (a CA does not fit one packet)" % args.broker)
    name = login(args.table, board)
    if user is None and args.broker_dir:
        creds = credentials(args.broker_dir)
        if name not in creds:
            raise UserError("%s/credentials.toml has no login %s: run `battlement broker-config --table MAP --out %s` "
                            "with the map of table %s that lists board %s" % (args.broker_dir, name, args.broker_dir,
                                                                            args.table, board))
        user, password = name, creds[name]
    elif user is None:
        user = name
        password = _ask("--broker-dir", "broker password of %s (in broker-config's credentials.toml; empty for "
                        "none): " % name, secret=True)
    return host, port, user, password or ""


def run(args) -> int:
    say = print
    if args.table:
        check_id("table", args.table)
    if args.board:
        check_id("board", args.board)
    if args.broker and not args.table:
        raise UserError("--broker needs --table: the board's topics and its login name its table")
    ssid = args.ssid if args.ssid is not None else _ask("--ssid", "Wi-Fi network (SSID): ").strip()
    if not ssid or len(ssid.encode()) > 32:
        raise UserError("Wi-Fi network %r: an SSID is 1 to 32 bytes" % ssid)
    password = args.password
    if password is None:
        password = _ask("--password", "Wi-Fi password of %s: " % ssid, secret=True)

    def settings(board: str):
        """Its login and key are by board id: found once the board has said it."""
        check_id("board", board)
        broker = _broker(args, board) if args.broker else None
        keys_path = boardkeys.path_of(args.table, args.keys_dir)
        key = boardkeys.provision(keys_path, board)
        say("signing: board %s's key is in %s" % (board, keys_path))
        return broker, (args.table, key)

    info = provision(args.port, (ssid, password), settings if args.table else None, args.board, say, wait=args.wait)
    if args.broker:
        host, port = parse_url(args.broker)[:2]
        say("provisioned: %s joined %s and reports to %s:%d as table %s; it restarts on its new link now"
            % (info[3], ssid, host, port, args.table))
        say("next: battlement run --mqtt mqtt://battlement-bridge:<password>@%s:%d --table <table %s's map>: the "
            "board shows up in the host page's board health" % (host, port, args.table))
    else:
        say("provisioned: %s joined %s" % (info[3], ssid))
    return 0
