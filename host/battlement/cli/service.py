"""`battlement service`: its arguments (the unit is battlement.ops.service)."""

from __future__ import annotations

from battlement.ops.service import install


def register(sub) -> None:
    p = sub.add_parser("service", help="run the bridge as a systemd service (print or write the unit)",
                       description="A systemd unit for the bridge: it starts at boot, restarts after a failure, "
                                   "and stops cleanly (the journal resumes the game).")
    s = p.add_subparsers(dest="service_command", metavar="ACTION")
    i = s.add_parser("install", help="print the unit, or write it with --write",
                     description="Print a systemd unit for `battlement run`; --write puts it in place. The "
                                 "bridge's own options go after --.",
                     epilog="Example: battlement service install --write -- --table hardware/tables/ringo.toml "
                            "--serial /dev/ttyACM0 --host 0.0.0.0 --sound speaker")
    i.add_argument("--write", action="store_true", help="write the unit instead of printing it")
    i.add_argument("--system", action="store_true",
                   help="a system unit in /etc/systemd/system (needs root) instead of a user unit")
    i.add_argument("--user", help="the user a system unit runs as (default: who runs this)")
    i.add_argument("--var", default="~/.local/share/battlement",
                   help="folder for the journal and the log (default ~/.local/share/battlement)")
    i.add_argument("bridge_args", nargs="*", metavar="-- RUN-OPTIONS", help="options of `battlement run`")
    i.set_defaults(func=install)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])
