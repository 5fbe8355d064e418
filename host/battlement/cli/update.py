"""`battlement update`: this checkout's firmware onto MQTT boards over the air (docs/bridge.md "Updates").

The command is an MQTT client of its own beside the bridge (the work is battlement.boards.update): it
finds the boards whose status says online, asks the bridge serving their table whether a game is under
way (an update restarts each board), and updates them one at a time, saying how each one ended.
"""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

from battlement.boards import firmware as fwbuild
from battlement.boards.update import MARCH, TRIAL_S, FirmwareSet, Updater
from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.link.transport import MqttTransport
from battlement.link.transport.args import add_mqtt_login
from battlement.link.transport.mqtt import check_id, parse_url
from battlement.ops.broker import BRIDGE_USER

BRIDGE = "http://127.0.0.1:8000"  # `battlement run`'s default page
SETTLE_S = 1.0  # the broker's retained statuses arrive right after subscribing


def register(sub) -> None:
    p = sub.add_parser(
        "update", help="update MQTT boards' firmware over the air (signed, staged, rolled back if it fails)",
        description="Build this checkout's firmware for each board's CPU and send it over MQTT as a manifest "
                    "signed with the board's key plus the files; the board checks every SHA-256, stages the set "
                    "beside the running one, swaps and restarts, and goes back to its old firmware by itself if "
                    "the new one does not reach a hello and an evack within the trial. Boards are updated one at "
                    "a time. Give the command a broker login of its own (broker-config --bridge-login update): "
                    "a login is one connection at a time.",
        epilog="Example: battlement update --mqtt mqtt://battlement-bridge-update:PW@broker --table hall-1")
    p.add_argument("--mqtt", required=True, metavar="URL", help="the boards' broker, e.g. mqtt://broker:1883")
    add_mqtt_login(p)
    p.add_argument("--table", help="only this table's boards (default: every table with boards online)")
    p.add_argument("--board", help="only this board (default: every board of the table that is online)")
    p.add_argument("--yes", action="store_true", help="do not ask before updating")
    p.add_argument("--during-game", action="store_true",
                   help="update even if a game is under way on the board's table (its boards restart during play)")
    p.add_argument("--bridge", default=BRIDGE, metavar="URL",
                   help="the page of the bridge serving the table, asked whether a game is under way "
                        "(default %(default)s)")
    p.add_argument("--trial", type=float, default=TRIAL_S, metavar="S",
                   help="seconds the new firmware has to reach a hello and an evack before the board goes back "
                        "to the old one (default %(default)g)")
    boardkeys.add_argument(p)
    p.set_defaults(func=run)


def game_under_way(bridge: str, table: str) -> str | None:
    """The game on table if the bridge says one is under way (not over, not paused), in words; None if not,
    or if no bridge answers there (said on stdout)."""
    url = "%s/api/state?%s" % (bridge.rstrip("/"), urllib.parse.urlencode({"table": table}))
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            state = json.loads(r.read())
    except urllib.error.HTTPError as e:
        print("# the bridge at %s does not serve table %s (%d): no game of it to interrupt there" % (bridge, table, e.code))
        return None
    except (urllib.error.URLError, OSError, ValueError) as e:
        print("# no bridge answers at %s (%s): no game to interrupt there (--bridge URL names the one serving %s)"
              % (bridge, getattr(e, "reason", e), table))
        return None
    if (state.get("view") or {}).get("over") or state.get("paused"):
        return None
    return "%s (not over, not paused)" % (state.get("title") or state.get("game") or "a game")


def _no_game(args, table: str) -> None:
    """Refuse to restart a table's boards during play, unless told to (--during-game)."""
    game = game_under_way(args.bridge, table)
    if game and not args.during_game:
        raise UserError("table %s is in the middle of a game of %s on the bridge at %s: an update restarts its "
                        "boards; pause or finish the game on the host page, or give --during-game"
                        % (table, game, args.bridge))
    if game:
        print("# table %s: a game of %s is under way; updating all the same (--during-game): each board "
              "restarts, one at a time" % (table, game))


def _progress(name: str):
    said = [-1]

    def show(done: int, total: int) -> None:
        quarter = 4 * done // total if total else 4
        if quarter > said[0]:
            said[0] = quarter
            print("  %s: %d of %d KB sent" % (name, (done + 512) // 1024, (total + 512) // 1024), flush=True)

    return show


def run(args) -> int:
    for what in ("table", "board"):
        if getattr(args, what):
            check_id(what, getattr(args, what))
    if not 2 <= args.trial <= 600:
        raise UserError("--trial %g: give 2 to 600 seconds (a board takes no other trial)" % args.trial)
    return asyncio.run(_run(args))


async def _run(args) -> int:
    tables = ({args.table: boardkeys.of_table(args.table, None, args.keys_dir)} if args.table
              else boardkeys.all_tables(args.keys_dir))
    keys = {(t, b): k for t, tk in tables.items() for b, k in tk.keys.items()}
    if (args.username or parse_url(args.mqtt)[3]) == BRIDGE_USER:
        print("# %s is the bridge's own login: a bridge running with it and this command throw each other off the "
              "broker; give the command one of its own (broker-config --bridge-login update)" % BRIDGE_USER)
    t = MqttTransport(args.mqtt, table=args.table, username=args.username, password=args.password, tls=args.tls,
                      tls_ca=args.tls_ca)
    up = Updater(t, keys, trial_s=args.trial)
    await up.start()
    try:
        if args.table:
            _no_game(args, args.table)
        await asyncio.sleep(SETTLE_S)
        boards = [(tb, b) for tb, b in up.online() if not args.board or b == args.board]
        if not boards:
            raise UserError("no board%s%s is online on %s (its status topic says so)" % (
                " " + args.board if args.board else "", " of table " + args.table if args.table else "", args.mqtt))
        for table in sorted({tb for tb, _ in boards} - {args.table}):
            _no_game(args, table)
        version = fwbuild.version()
        names = ", ".join("%s/%s" % tb for tb in boards)
        if not args.yes:
            if not sys.stdin.isatty():
                raise UserError("not asking on a non-interactive input: give --yes to update %s to %s" % (names, version))
            if input("update %d board%s (%s) to %s? [y/N] " % (len(boards), "" if len(boards) == 1 else "s", names,
                                                               version)).strip().lower() not in ("y", "yes"):
                print("nothing updated")
                return 1
        built: dict[str | None, FirmwareSet] = {}

        def build(platform: str) -> FirmwareSet:
            march = MARCH.get(platform)
            if march not in built:
                built[march] = FirmwareSet.build(march)
            return built[march]

        failed = 0
        for table, board in boards:
            name = "%s/%s" % (table, board)
            print("%s: updating" % name, flush=True)
            o = await up.update(table, board, build, _progress(name))
            print("%s: %s" % (name, o.words), flush=True)
            failed += not o.ok
        if up.counters["unsigned-answers"]:
            print("# %d update answers were not signed by their board's key and were not believed"
                  % up.counters["unsigned-answers"])
        print("%d of %d boards updated%s" % (len(boards) - failed, len(boards), "" if not failed else
                                             "; %d did not (above)" % failed))
        return 1 if failed else 0
    finally:
        await up.stop()
