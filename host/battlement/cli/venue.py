"""`battlement venue`: a venue's hub, with its tournaments and its pages; and the host's commands to it.

    battlement venue --mqtt URL --venue ID          the hub: runs the tournaments over the venue's tables
                                                    and serves the TV's, the teams' and the host's pages
    battlement venue --venue ID team NAME...        ask the running hub: add teams, a player, a tournament,
    battlement venue standings                      or print the standings (what the host page does too)

The hub alone writes its journal; the commands below it talk to the running hub over its page's address,
with the host code, which both work out from the venue key (so the same --venue and --keys-dir is all
they need on the hub's machine).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import signal
import sys
import time
import urllib.error
import urllib.request

from battlement.errors import UserError
from battlement.link.transport.args import add_mqtt_login
from battlement.link.wire import hmac_sha256
from battlement.ops import logs
from battlement.sound.speaker import Sound
from battlement.table.tokens import HOST_CODE_MIN
from battlement.venue import key as venuekey
from battlement.venue.director import Director
from battlement.venue.formats import FORMATS, SEEDINGS
from battlement.venue.hub import Hub
from battlement.venue.hubjournal import HubJournal
from battlement.web import onboarding

PORT = 8100  # a bridge's page is on 8000: a hub beside a bridge needs no --port

EXAMPLES = """\
From an empty venue to a running tournament:

  battlement venue --mqtt mqtt://192.168.1.10:1883 --venue bar-42 --host 0.0.0.0
      starts the hub; the first time, it makes the venue key (hardware/tables/bar-42.venue-key.toml):
      copy that file to every bridge of the venue, which each run
      battlement run --mqtt mqtt://192.168.1.10:1883 --venue bar-42 --table hardware/tables/table-3.toml
      Open the TV page it prints on the TV, the host page on the host's phone: every step below is
      also a form there.

  battlement venue --venue bar-42 team Knights Orcs Elves Dwarves
  battlement venue --venue bar-42 player Ann --team Knights
  battlement venue --venue bar-42 tournament --title "Friday Ringo Cup" --game ringo \\
      --format single_elimination --team Knights --team Orcs --team Elves --team Dwarves
  battlement venue --venue bar-42 tournament --title "Blind draw" --game plingpong \\
      --format double_elimination --seeding random --pool "Ann,Bo,Cy,Di" --pool "Ed,Flo,Gus,Hal"
  battlement venue --venue bar-42 standings

The tournament's matches go onto the free tables by themselves, each called on the TV
("Table 3: Knights against Orcs"); the rules' results fill the bracket.
"""


def host_code(key: bytes) -> str:
    """The host page's code, worked out from the venue key: the same after every restart, and known to the
    commands below without typing (whoever holds the key could forge results anyway)."""
    return base64.urlsafe_b64encode(hmac_sha256(key, b"battlement venue host page")[:9]).decode()


def _code(args) -> str:
    if args.host_code:
        if len(args.host_code) < HOST_CODE_MIN:
            raise UserError("--host-code needs at least %d characters" % HOST_CODE_MIN)
        return args.host_code
    return host_code(venuekey.load(_venue(args), args.keys_dir))


def _venue(args) -> str:
    if not args.venue:
        raise UserError("--venue ID names the venue (its key is <keys dir>/ID.venue-key.toml)")
    return args.venue


# --- the hub ------------------------------------------------------------------------------------


async def serve(args) -> int:
    import uvicorn

    from battlement.cli.run import _bind
    from battlement.web.venue import create_venue_app

    t0 = time.monotonic()
    venue = _venue(args)
    if not args.mqtt:
        raise UserError("--mqtt URL: the hub reaches the venue's bridges over the broker they share")
    _bind(args.host, args.port).close()  # a busy port is one line, before anything starts
    key_path, made = venuekey.make(venue, args.keys_dir)
    key = venuekey.load(venue, args.keys_dir)
    code = _code(args)
    journal = HubJournal(args.journal)  # refused in one line while another hub has it
    hub = Hub(journal, args.mqtt, venue, key, args.username, args.password, args.tls, args.tls_ca)
    await hub.start()
    director = Director(hub)
    sound = Sound(args.sound, args.sound_dir, args.voice, args.volume)

    def speak(kind: str, body: dict) -> None:
        if kind == "announce":
            sound.say(body["text"])
    director.listeners.append(speak)
    addrs = onboarding.addresses(args.host)
    base = onboarding.base_url(addrs[0], args.port)
    app = create_venue_app(director, code, lambda: base)
    server = uvicorn.Server(uvicorn.Config(app, host=args.host, port=args.port, log_config=None, lifespan="off",
                                           ws_max_size=1 << 20))
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                raise UserError("could not serve the venue's pages on %s:%d (port in use? try --port)"
                                % (args.host, args.port))
            await asyncio.sleep(0.01)
        print("Battlement venue hub: venue %s, %d tournament(s), %d match(es) journalled"
              % (venue, len(director.tournaments), len(hub.state.matches)))
        print("  TV page:    %s/" % base)
        print("  host page:  %s/host?code=%s   (team pages and their QR codes are on it)" % (base, code))
        print("  venue key:  %s%s" % (key_path, "   (made now: copy it to every bridge of the venue)" if made else ""))
        print("  broker:     %s (each bridge: battlement run --mqtt URL --venue %s)" % (args.mqtt, venue))
        print("  sound:      %s" % sound.describe())
        if onboarding.loopback_only(args.host):
            print("  note:       only this machine can open the pages: --host 0.0.0.0 lets the TV and phones in")
        print("  journal:    %s" % args.journal)
        print("  ready in %.2f s; Ctrl-C stops (everything resumes from the journal on the next start)"
              % (time.monotonic() - t0))
        sys.stdout.flush()
        stop = asyncio.create_task(stopping.wait())
        await asyncio.wait([task, stop], return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
    finally:
        server.should_exit = True
        await asyncio.wait([task], timeout=5)
        await hub.stop()
        journal.close()
        sound.close(1.0)
    return 0


# --- the host's commands, to the running hub --------------------------------------------------------


def _ask(args, action: dict | None = None, path: str = "/api/host") -> dict:
    url = args.url.rstrip("/") + path
    data = None if action is None else json.dumps(action).encode()
    req = urllib.request.Request(url, data=data, method="GET" if data is None else "POST",
                                 headers={"Content-Type": "application/json"})
    if path == "/api/host":
        req.add_header("Authorization", "Bearer " + _code(args))
    try:
        with urllib.request.urlopen(req, timeout=15) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        try:
            reply = json.loads(e.read())
        except ValueError:
            raise UserError("the hub at %s answered %d" % (args.url, e.code)) from None
        raise UserError(reply.get("message") or reply.get("error") or "refused (%d)" % e.code) from None
    except (urllib.error.URLError, OSError) as e:
        raise UserError("no venue hub answers at %s (%s): start it with 'battlement venue --mqtt URL --venue ID', "
                        "or give its address with --url" % (args.url, getattr(e, "reason", e))) from None


def _options(pairs: list[str] | None) -> dict:
    out = {}
    for pair in pairs or []:
        k, eq, v = pair.partition("=")
        if not eq or not k:
            raise UserError("--option takes KEY=VALUE, not %r" % pair)
        try:
            out[k] = json.loads(v)
        except ValueError:
            out[k] = v
    return out


def client(args) -> int:
    cmd = args.venue_command
    if cmd == "standings":
        st = _ask(args, path="/api/venue" + ("?t=" + args.tournament if args.tournament else ""))
        t = st.get("tournament")
        if not t:
            print("venue %s has no tournament yet" % st.get("venue"))
            return 0
        print("%s (%s, %s): %d played%s" % (t["title"], t["format"].replace("_", " "), t["game"], t["played"],
                                             ", champion %s" % t["champion"] if t["champion"] else ""))
        print("  %4s  %-24s %3s %3s %3s %6s" % ("rank", "team", "P", "W", "L", "+/-"))
        for s in t["standings"]:
            print("  %4d  %-24s %3d %3d %3d %+6g%s" % (s["rank"], s["team"], s["played"], s["wins"], s["losses"],
                                                      s["diff"], "  out" if s["out"] else ""))
        return 0
    if cmd == "team":
        reply = _ask(args, {"action": "team", "names": args.names})
    elif cmd == "player":
        reply = _ask(args, {"action": "player", "name": args.name, "team": args.team})
    else:
        form = {"title": args.title, "id": args.id, "game": args.game, "format": args.format,
                "options": _options(args.option), "seeding": args.seeding, "rounds": args.rounds,
                "advance": args.advance, "seed": args.seed, "tables": args.table_id}
        if args.pool:
            form.update(pools=[[p.strip() for p in pool.split(",") if p.strip()] for pool in args.pool],
                        team_size=args.team_size)
        else:
            form["teams"] = args.team or []
        reply = _ask(args, {"action": "tournament", "form": form})
    print(reply["message"])
    return 0


def run(args) -> int:
    if args.venue_command:
        return client(args)
    logs.setup(args.log_level, args.log_file or logs.default_file(args.journal))
    return asyncio.run(serve(args))


def register(sub) -> None:
    p = sub.add_parser(
        "venue", help="a venue's hub: tournaments over many tables, the TV's and the teams' pages",
        description="Run a venue's hub: it puts each tournament's matches on the venue's free tables (served by "
                    "bridges started with --venue on the same broker), takes every result the rules give into "
                    "the bracket, and serves the TV page (bracket, standings, tables, the calls spoken aloud), a "
                    "page for each team's phone, and the host's page. With an ACTION, it asks the running hub.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mqtt", metavar="URL", help="the broker the venue's bridges share, mqtt://host:1883 or mqtts://")
    add_mqtt_login(p)
    common(p, None)
    p.add_argument("--host", default="127.0.0.1", help="address to serve the pages on (default 127.0.0.1; "
                                                       "0.0.0.0 for the TV and phones)")
    p.add_argument("--port", type=int, default=PORT, help="port of the pages (default %d)" % PORT)
    p.add_argument("--journal", default="var/venue.sqlite",
                   help="the hub's journal: players, teams, tournaments, every match and result (default "
                        "var/venue.sqlite); a restart resumes from it")
    p.add_argument("--sound", choices=["auto", "speaker", "file", "null"], default="null",
                   help="also say the calls on this machine's speaker (default null: the TV page says them)")
    p.add_argument("--sound-dir", default="var/venue-sound", help="folder for --sound file (default var/venue-sound)")
    p.add_argument("--voice", default="en", help="espeak-ng voice (default en)")
    p.add_argument("--volume", type=int, default=100, help="volume 0-200 (default 100)")
    logs.add_arguments(p)
    acts = p.add_subparsers(dest="venue_command", metavar="ACTION")
    t = acts.add_parser("team", help="add teams to the venue")
    t.add_argument("names", nargs="+", metavar="NAME")
    pl = acts.add_parser("player", help="add a player, or move one to another team")
    pl.add_argument("name")
    pl.add_argument("--team", help="the player's team")
    tr = acts.add_parser("tournament", help="set a tournament up: its matches go onto the free tables at once")
    tr.add_argument("--title", help="its name on the TV (default Tournament N)")
    tr.add_argument("--id", help="its id in match ids, <id>/W1-1 (default: from the title)")
    tr.add_argument("--game", required=True, help="the game every match plays (battlement games lists them)")
    tr.add_argument("--option", action="append", metavar="KEY=VALUE", help="a game option (repeat)")
    tr.add_argument("--format", required=True, choices=FORMATS)
    tr.add_argument("--team", action="append", metavar="NAME", help="a team, in seed order (repeat)")
    tr.add_argument("--pool", action="append", metavar="A,B,C",
                    help="a blind draw instead of --team: the players of one pool, best pool first (repeat)")
    tr.add_argument("--team-size", type=int, help="with a single --pool: players a team (default 2)")
    tr.add_argument("--seeding", choices=SEEDINGS, help="an elimination's seeds (default order)")
    tr.add_argument("--rounds", type=int, help="round robin passes (with seeding round_robin too)")
    tr.add_argument("--advance", type=int, help="with seeding round_robin: how many go on to the bracket")
    tr.add_argument("--seed", type=int, help="the draw's and seeding's seed (default: drawn, then journalled)")
    tr.add_argument("--table-id", action="append", metavar="TABLE", help="play on this table only (repeat; "
                                                                         "default every table of the venue)")
    st = acts.add_parser("standings", help="print a tournament's standings")
    st.add_argument("tournament", nargs="?", help="its id (default: the one the TV shows)")
    for a in (t, pl, tr, st):
        common(a, argparse.SUPPRESS)
    p.set_defaults(func=run)


def common(p, default) -> None:
    """Options the hub and every action take (an action's own, given after it, win)."""
    p.add_argument("--venue", metavar="ID", default=default, help="the venue's id (its key: <keys dir>/ID.venue-key.toml)")
    p.add_argument("--keys-dir", metavar="DIR", default=default,
                   help="folder of the venue key (default hardware/tables, as for the bridges' keys)")
    p.add_argument("--host-code", default=default, help="the host page's code (default: worked out from the "
                                                        "venue key, the same after every restart)")
    p.add_argument("--url", default=default if default is not None else "http://127.0.0.1:%d" % PORT,
                   help="an action's hub (default http://127.0.0.1:%d)" % PORT)
