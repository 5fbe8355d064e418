"""The `battlement` command: one entry point, one subcommand per module.

Each module listed in COMMAND_MODULES defines register(subparsers), which adds
its subcommand(s) and sets `func` on the parser (func(args) -> exit code).
"""

import argparse
import importlib
import sys

from battlement import __version__
from battlement.errors import UserError

COMMAND_MODULES = (
    "battlement.cli.rules",  # games, playout, replay
    "battlement.cli.monitor",  # monitor: live decoded events and counters
    "battlement.cli.hardware",  # hardware check, profiles, draw
    "battlement.cli.flash",  # flash a board
    "battlement.cli.update",  # update: firmware over the air to MQTT boards
    "battlement.cli.boards",  # boards: the fleet, one line a board
    "battlement.cli.run",  # run: the bridge beside the table
    "battlement.cli.venue",  # venue: a venue's hub, its tournaments and pages
    "battlement.cli.sim",  # sim: virtual boards speaking the real protocol
    "battlement.cli.broker",  # broker-config: Mosquitto password file and ACL for a table
    "battlement.cli.provision",  # provision: Wi-Fi, broker and table onto a flashed board (Improv)
    "battlement.cli.service",  # service install: a systemd unit
)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="battlement",
        description="Battlement: sensor boards, host bridge and rules for five medieval table games.",
        epilog="Run 'battlement COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version="battlement %s" % __version__)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name == name:  # not built yet in this checkout
                continue
            raise
        mod.register(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args) or 0
    except UserError as e:
        print("battlement %s: error: %s" % (args.command, e), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
