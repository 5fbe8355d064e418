"""`battlement run`: the bridge beside the table, started with its web server.

The Bridge (battlement.bridge) wires the stages together; this starts one from the command line, binds
the page's port, serves the web app and says where the pages are.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import os
import signal
import socket
import sys
import time

from battlement.bridge import DEFAULT_GAME, Bridge
from battlement.cli.rules import options_said, table_options
from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.link.transport.args import add_mqtt_login
from battlement.ops import hass, logs
from battlement.sound.speaker import Sound
from battlement.table import setaside
from battlement.table.journal import Journal
from battlement.table.journallock import replace_if_damaged
from battlement.table.maps import TableMap, for_game, load
from battlement.venue import key as venuekey
from battlement.venue import tablelink
from battlement.web import onboarding


def _tables(args) -> list[TableMap]:
    if args.table:
        maps = [load(p) for p in args.table]
        if args.game and any(m.game != args.game for m in maps):
            bad = next(m for m in maps if m.game != args.game)
            raise UserError("--game %s but %s is a %s table" % (args.game, bad.path, bad.game))
        return maps
    return [for_game(args.game or DEFAULT_GAME)]


async def serve(args) -> int:
    import uvicorn

    from battlement.web.app import create_app

    t0 = time.monotonic()
    maps, given = table_options(_tables(args), args.option)  # a wrong map or option is one line, before anything starts
    _bind(args.host, args.port).close()  # a busy port too is one line, before anything starts
    if args.venue and not args.mqtt:
        raise UserError("--venue %s needs --mqtt: the venue's hub reaches its tables over the broker" % args.venue)
    venue_key = venuekey.load(args.venue, args.keys_dir) if args.venue else None  # a missing key: one line, now
    sound = Sound(args.sound, args.sound_dir, args.voice, args.volume)
    if args.new_journal:  # a damaged journal moves aside (said in the log) and the bridge makes a new one
        replace_if_damaged(args.journal)
    bridge = Bridge(maps, args.journal, args.serial, args.mqtt, args.username, args.password,
                    args.tls, args.tls_ca, args.simulate, sound, args.throw_timeout, args.host_code,
                    args.hass_prefix if args.hass else None, keys_dir=args.keys_dir, resume=args.resume)
    await bridge.start()
    if venue_key is not None:  # the hub's match starts come in, the results go out (venue/tablelink.py)
        tablelink.attach(bridge, args.venue, venue_key)
    app = create_app(bridge)
    # a page's action is a few hundred bytes; up to 1 MiB is answered in words, beyond it the frame is refused
    config = uvicorn.Config(app, host=args.host, port=args.port, log_config=None, lifespan="off",
                            ws_max_size=1 << 20)
    web = {"server": uvicorn.Server(config)}
    stopping = asyncio.Event()

    def stop_serving() -> None:
        stopping.set()
        web["server"].should_exit = True

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop_serving)

    async def serve_page() -> None:
        try:
            await web["server"].serve()
        except SystemExit as e:  # uvicorn exits when it cannot listen: a failure to restart from, not an exit
            raise RuntimeError("the web server could not start (exit %s)" % e.code) from None
        if not web["server"].should_exit:
            raise RuntimeError("the web server stopped by itself")

    async def new_server() -> None:
        web["server"] = uvicorn.Server(config)

    server = web["server"]
    task = bridge.supervisor.spawn("web server", serve_page, recover=new_server)
    while not server.started:
        if task.done() or bridge.supervisor.tasks["web server"].restarts:
            task.cancel()
            await bridge.stop()
            raise UserError("could not serve the page on %s:%d (port in use? try --port)" % (args.host, args.port))
        await asyncio.sleep(0.01)
    addrs = onboarding.addresses(args.host)
    mdns = onboarding.Mdns()
    found = await mdns.start(args.host, args.port, addrs) if args.mdns else "off (--no-mdns)"
    hint = ("only this machine can open the pages: --host 0.0.0.0 lets phones on the network in"
            if onboarding.loopback_only(args.host) else "")
    bridge.onboarding = {"addresses": addrs, "port": args.port, "mdns": found, "hint": hint}
    base = onboarding.base_url(addrs[0], args.port)
    print("Battlement bridge: %s" % ", ".join("%s (%s)" % (t, m.game) for t, m in bridge.tmaps.items()))
    print("  scoreboard: %s/%s" % (base, "".join("   or %s/" % onboarding.base_url(a, args.port) for a in addrs[1:])))
    print("  host page:  %s/host?code=%s   (QR codes for every page are on it)" % (base, bridge.host_code))
    print("  mDNS:       %s" % found)
    print("  sound:      %s" % sound.describe())
    for table, tk in sorted(bridge.keys.items()):  # whether anyone on the link can act as a board
        print("  %-11s %s" % (table + ":", tk.line(bool(args.mqtt))))
    for line in options_said(bridge.sessions, given):
        print("  options:    " + line)
    if bridge.resume is not None:
        print("  resumed:    " + setaside.said_at_start(bridge.resume))
    if args.mqtt:
        print("  Home Assistant: %s" % ("discovery under %s/ (availability %s)" % (bridge.hass.prefix, bridge.hass.avail)
                                        if bridge.hass else "off (--no-hass)"))
    if args.venue:
        print("  venue:      %s (its matches come from the venue's hub; key %s)"
              % (args.venue, venuekey.path_of(args.venue, args.keys_dir)))
    if hint:
        print("  note:       " + hint)
    print("  journal:    %s%s" % (args.journal, "   boards: simulated" if args.simulate else ""))
    if sys.stdout.isatty() and not getattr(args, "quiet", False):  # a log file or a service gets no drawing
        print("  the scoreboard, for a phone's camera (%s/):" % base)
        print(onboarding.terminal_qr(base + "/"), end="")
    print("  ready in %.2f s; Ctrl-C stops (the game resumes on the next start)" % (time.monotonic() - t0))
    sys.stdout.flush()
    try:
        stop = asyncio.create_task(stopping.wait())
        await asyncio.wait([task, stop], return_when=asyncio.FIRST_COMPLETED)
        web["server"].should_exit = True
        await asyncio.wait([task], timeout=5)
        stop.cancel()
    finally:
        await mdns.stop()
        await bridge.stop()
    return 0


def _bind(host: str, port: int) -> socket.socket:
    """The page's listening socket, made here so a busy port is one line, not uvicorn's traceback."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise UserError("port %d on %s is in use (another bridge running?): stop it, or choose another "
                            "port with --port" % (port, host)) from None
        raise UserError("cannot serve the page on %s port %d: %s (check --host and --port)"
                        % (host, port, e.strerror or e)) from None
    return sock


def list_games(path: str) -> int:
    """--list-games: the journal's games set aside, with the ids --resume takes; no bridge starts."""
    if not os.path.exists(path):
        raise UserError("no journal at %s (--journal names it)" % path)
    journal = Journal(path, checkpoint_thread=False)  # refused in one line while a bridge has it open
    try:
        print("\n".join(setaside.listing(journal)))
    finally:
        journal.close()
    return 0


def run(args) -> int:
    if args.list_games:
        return list_games(args.journal)
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.journal))):
        os.makedirs(os.path.dirname(os.path.abspath(args.journal)), exist_ok=True)
    logs.setup(args.log_level, args.log_file or logs.default_file(args.journal))
    return asyncio.run(serve(args))


def register(sub) -> None:
    p = sub.add_parser(
        "run", help="run the bridge: boards -> rules -> LEDs, sound and the web page",
        description="Run the bridge beside a table: read the boards (serial ports, an MQTT broker, or "
                    "simulated boards), referee the game, light the LEDs, speak, and serve the page. "
                    "Every input is journalled first, so a restart resumes the game.",
        epilog="Examples: battlement run --simulate   |   battlement run --game %s "
               "--table hardware/tables/%s.toml --serial /dev/ttyACM0 --serial /dev/ttyACM1" % (DEFAULT_GAME, DEFAULT_GAME),
    )
    p.add_argument("--game", help="game to play (default: the table map's, else %s)" % DEFAULT_GAME)
    p.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="a game option as 'battlement games' lists it (repeat): the game the bridge starts plays "
                        "with it, as do new games; a game resumed from the journal keeps its own")
    p.add_argument("--table", action="append", metavar="TOML",
                   help="table map (repeat for several tables); default hardware/tables/<game>.toml")
    p.add_argument("--serial", action="append", metavar="PORT", help="a board's serial port (repeat)")
    p.add_argument("--mqtt", metavar="URL", help="MQTT broker, mqtt://[user:pass@]host:1883 or mqtts://")
    add_mqtt_login(p)
    boardkeys.add_argument(p)
    p.add_argument("--hass", action=argparse.BooleanOptionalAction, default=True,
                   help="with --mqtt: announce each table to Home Assistant by MQTT discovery (a device per table "
                        "and per board: game state, winner, hits/falls/moves, boards online; public view only) "
                        "(default on; --no-hass publishes nothing for it)")
    p.add_argument("--hass-prefix", default=hass.DEFAULT_PREFIX, metavar="PREFIX",
                   help="with --mqtt: Home Assistant's discovery prefix (default %(default)s, as Home Assistant's "
                        "MQTT integration expects unless changed there)")
    p.add_argument("--venue", metavar="ID",
                   help="with --mqtt: take part in venue ID: its hub starts matches on these tables and gets each "
                        "result, signed with the venue key <keys dir>/ID.venue-key.toml (the hub's file, copied here)")
    p.add_argument("--simulate", action="store_true",
                   help="simulated boards (no hardware); the page's sensor buttons act as the sensors")
    p.add_argument("--host", default="127.0.0.1", help="address to serve the page on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port of the page (default 8000)")
    p.add_argument("--journal", default="var/journal.sqlite", help="SQLite journal (default var/journal.sqlite)")
    p.add_argument("--resume", type=int, metavar="ID",
                   help="take up again, at start, the game set aside with this id (the host page and --list-games "
                        "show it); the game in progress is set aside in its turn")
    p.add_argument("--list-games", action="store_true",
                   help="list the journal's games set aside (with the ids --resume takes) and those in progress, "
                        "and exit")
    p.add_argument("--new-journal", action="store_true",
                   help="if the journal is damaged, move it aside (as <journal>.damaged-<UTC time>, with its -wal "
                        "and -shm) and start a new one; a sound journal is opened as always")
    p.add_argument("--host-code", help="code of the host page (default: a random one, made once and kept in the "
                                       "journal so open pages reconnect after a restart; printed)")
    p.add_argument("--throw-timeout", type=float, default=0.0, metavar="S",
                   help="seconds with nothing sensed before a turn times out: a miss, a shot that is over, as the "
                        "game says (0 = off; undo corrects it)")
    p.add_argument("--sound", choices=["auto", "speaker", "file", "null"], default="auto",
                   help="announcements: speaker, file (WAVs in --sound-dir), null (silent), or auto (default: "
                        "speaker when this machine can play sound, else silent)")
    p.add_argument("--sound-dir", default="var/sound", help="folder for --sound file (default var/sound)")
    p.add_argument("--voice", default="en", help="espeak-ng voice (default en)")
    p.add_argument("--volume", type=int, default=100, help="volume 0-200 (default 100)")
    p.add_argument("--mdns", action=argparse.BooleanOptionalAction, default=True,
                   help="announce battlement.local over mDNS when serving beyond this machine (default on; "
                        "--no-mdns for a second bridge on the same network)")
    p.add_argument("--quiet", action="store_true",
                   help="no QR code of the scoreboard in the terminal at start-up (it is left out anyway when "
                        "the output is not a terminal)")
    logs.add_arguments(p)
    p.set_defaults(func=run)
