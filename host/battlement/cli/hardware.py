"""`battlement hardware`: check pin maps, list board profiles, draw wiring diagrams."""

from __future__ import annotations

import os
import sys

from battlement.boards.hardware import check_file, load_profile, profile_names
from battlement.boards.wiring import draw
from battlement.errors import UserError


def _cmd_check(args) -> int:
    bad = 0
    for path in args.files:
        try:
            m = check_file(path)
        except UserError as e:
            print(str(e), file=sys.stderr)
            bad += 1
            continue
        prof = load_profile(m["profile"])
        n = len(m["sensors"])
        print("%s: ok - board %s on %s, %d sensor(s)" % (path, m["board"], prof["title"], n))
    if bad:
        raise UserError("%d of %d pin map(s) failed the check; the problems are listed above" % (bad, len(args.files)))
    return 0


def _cmd_profiles(args) -> int:
    for name in profile_names():
        prof = load_profile(name)
        usable = [p for p in prof["gpio"] if str(p) not in prof.get("never", {})]
        print("%s: %s" % (name, prof["title"]))
        print("  usable GPIO: %s" % " ".join(str(p) for p in usable))
        for p in sorted(prof.get("never", {}), key=int):
            print("  never GPIO %s: it %s" % (p, prof["never"][p]))
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "hardware",
        help="check board pin maps against the board profiles",
        description="Board profiles (hardware/profiles) and pin maps (hardware/boards). See docs/hardware.md.",
    )
    sub = p.add_subparsers(dest="hardware_command", metavar="ACTION")
    c = sub.add_parser(
        "check",
        help="reject a pin map that cannot work, naming the pin and the reason",
        description="Check pin maps: every pin exists on the board, is not wired to flash, USB or a strapping "
        "function, is used once; sensors, muxes, LED strip and thresholds are sane. Exit status 2 if not.",
    )
    c.add_argument("files", nargs="+", metavar="FILE", help="pin map JSON, e.g. hardware/boards/red-kingdom.json")
    c.set_defaults(func=_cmd_check)
    pr = sub.add_parser("profiles", help="list board profiles with their usable and forbidden pins")
    pr.set_defaults(func=_cmd_profiles)
    _register_draw(sub)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def _cmd_draw(args) -> int:
    for path in args.files:
        out = args.out or os.path.splitext(os.path.basename(path))[0] + ".svg"
        if len(args.files) > 1 or (args.out and os.path.isdir(args.out)):
            os.makedirs(args.out or ".", exist_ok=True)
            out = os.path.join(args.out or ".", os.path.splitext(os.path.basename(path))[0] + ".svg")
        svg = draw(path)
        try:
            with open(out, "w", encoding="utf-8") as f:
                f.write(svg)
        except OSError as e:
            raise UserError("cannot write %s: %s" % (out, e.strerror or e)) from None
        print("%s -> %s" % (path, out))
    return 0


def _register_draw(sub) -> None:
    p = sub.add_parser(
        "draw", help="draw a board's wiring diagram (SVG) from its pin map",
        description="Draw the board with every sensor, multiplexer and LED strip on its pins, each sensor "
                    "labelled with the game objects the table maps (hardware/tables) give it.",
        epilog="Example: battlement hardware draw hardware/boards/red-kingdom.json --out docs/wiring/",
    )
    p.add_argument("files", nargs="+", metavar="BOARD.json", help="pin map(s), e.g. hardware/boards/ring-1.json")
    p.add_argument("--out", metavar="PATH", help="SVG file, or a folder for several (default: BOARD.svg here)")
    p.set_defaults(func=_cmd_draw)
