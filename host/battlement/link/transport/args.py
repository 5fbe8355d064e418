"""Command-line options that pick a transport, shared by every command that talks to boards.

    add_arguments(parser)            # --serial PORT... | --mqtt URL [--table T] [--username U --password P]
    t = from_args(args)              # SerialTransport or MqttTransport; UserError for mistakes
"""

from __future__ import annotations

from battlement.errors import UserError


def add_arguments(parser, required: bool = True) -> None:
    src = parser.add_mutually_exclusive_group(required=required)
    src.add_argument("--serial", metavar="PORT", action="append", help="serial port of a board (repeat for more)")
    src.add_argument("--mqtt", metavar="URL", help="broker, e.g. mqtt://127.0.0.1:1883 (mqtts:// for TLS)")
    parser.add_argument("--table", help="with --mqtt: only this table's boards (default: every table)")
    add_mqtt_login(parser)
    parser.add_argument("--baud", type=int, default=115200, help="serial speed (default 115200; USB boards ignore it)")


def add_mqtt_login(parser) -> None:
    """--username, --password, --tls, --tls-ca: how to get onto the broker (every command that takes --mqtt)."""
    parser.add_argument("--username", help="with --mqtt: broker user name")
    parser.add_argument("--password", help="with --mqtt: broker password")
    parser.add_argument("--tls", action="store_true", help="with --mqtt: TLS (same as an mqtts:// url)")
    parser.add_argument("--tls-ca", metavar="PEM", help="with --mqtt: trust the broker's certificate if this CA "
                        "signed it (a broker with a private CA; implies --tls)")


def from_args(args):
    """The transport the options name, or None if neither --serial nor --mqtt was given."""
    from battlement.link.transport import MqttTransport, SerialTransport

    if args.serial:
        if args.table or args.username or args.password or args.tls or args.tls_ca:
            raise UserError("--table, --username, --password, --tls and --tls-ca go with --mqtt, not --serial")
        return SerialTransport(args.serial, baud=args.baud)
    if args.mqtt:
        return MqttTransport(args.mqtt, table=args.table, username=args.username, password=args.password,
                             tls=args.tls, tls_ca=args.tls_ca)
    return None


def describe(args) -> str:
    """What the options point at, for a status line."""
    if args.serial:
        return ", ".join(args.serial)
    return args.mqtt + (" table " + args.table if args.table else "")
