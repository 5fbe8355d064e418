"""`battlement run`: the bridge beside the table.

    transport (serial / MQTT) -> router (table map) -> session (journal + rules) -> effects
    (LED commands back to the boards, sound) and the web page (websockets).

One bridge serves one or several tables (one session each; on MQTT each table is
its own topic tree). --simulate runs virtual boards over ptys inside the bridge so
a game can be played with no hardware, the page's sensor buttons acting as sensors.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sys
import time

from battlement.errors import UserError
from battlement.journal import Journal
from battlement.messages import Event, Hello, Led, Reply
from battlement.session import Session
from battlement.sim import Simulator
from battlement.sound import Sound
from battlement.tables import TableMap, for_game, load
from battlement.transport.args import add_mqtt_login
from battlement.transport.mqtt import check_ca

DEFAULT_GAME = "medieval-pong"
BATCH_MAX = 500  # messages journalled under one commit


class Bridge:
    def __init__(self, tmaps: list[TableMap], journal: str, serial: list[str] | None = None,
                 mqtt: str | None = None, username: str | None = None, password: str | None = None,
                 tls: bool = False, tls_ca: str | None = None, simulate: bool = False, sound: Sound | None = None,
                 throw_timeout: float = 0.0, host_code: str | None = None):
        tables = [t.table for t in tmaps]
        if len(set(tables)) != len(tables):
            raise UserError("two table maps use the same table id: %s" % ", ".join(sorted(tables)))
        if not (serial or mqtt or simulate):
            raise UserError("no boards to listen to: give --serial PORT, --mqtt URL or --simulate")
        if serial and len(tmaps) > 1:
            owners: dict[str, str] = {}
            for t in tmaps:
                for b in t.boards:
                    if b in owners:
                        raise UserError("board %s is on tables %s and %s: on serial, board ids must be unique"
                                        % (b, owners[b], t.table))
                    owners[b] = t.table
        self.tmaps = {t.table: t for t in tmaps}
        self.journal = Journal(journal)
        self.sound = sound or Sound("null")
        self.serial, self.mqtt, self.simulate = list(serial or []), mqtt, simulate
        self.mqtt_auth = (username, password, tls)
        self.tls_ca = check_ca(tls_ca)  # before simulated boards try to load it
        self.throw_timeout = throw_timeout
        self.host_code = host_code or "".join(random.SystemRandom().choice("abcdefghjkmnpqrstuvwxyz23456789")
                                              for _ in range(8))
        self.sessions: dict[str, Session] = {}
        self.sims: dict[str, Simulator] = {}
        self.transports: list = []
        self.counters: dict[str, int] = {"led-sent": 0, "led-before-hello": 0, "board-errors": 0, "unknown-table": 0}
        self.notes: list[str] = []
        self.tasks: list[asyncio.Task] = []
        self.led_sent = None  # hook(led, t_sent) for the benchmark
        self._held: list[Led] | None = None  # LED commands waiting for their batch's commit
        # (table, board) -> {target: what the LED was last sent}; a board's hello forgets its own at once
        self._shown: dict[tuple, dict[str, tuple]] = {}

    # --- start / stop ----------------------------------------------------------------

    async def start(self) -> None:
        from battlement.transport import MqttTransport, SerialTransport

        for table, tmap in self.tmaps.items():
            self.sessions[table] = Session(tmap, self.journal, self.sound, self._sender(), self.throw_timeout)
        ports = list(self.serial)
        if self.simulate:
            for table, tmap in self.tmaps.items():
                user, pw, tls = self.mqtt_auth
                sim = Simulator(tmap, self.mqtt if self.mqtt else None, user, pw, tls, self.tls_ca)
                self.sims[table] = sim
                ports += sim.ports
        if ports:
            self.transports.append(SerialTransport(ports))
        if self.mqtt:
            user, pw, tls = self.mqtt_auth
            self.transports.append(MqttTransport(self.mqtt, None, user, pw, tls, self.tls_ca))
        seen = self.journal.recent_events()
        for t in self.transports:
            # Exactly-once across restarts: acknowledge only what is journalled, never apply it again.
            t.acks_on_commit = True
            for (table, board, boot), seqs in seen.items():
                t.remember(table, board, boot, seqs)
            await t.start()
            self.tasks.append(asyncio.create_task(self._pump(t)))
        for sim in self.sims.values():
            sim.start()
        self.tasks.append(asyncio.create_task(self._tick()))
        # No relight here: each session drew its table when it opened its game, and each board's
        # hello makes it light that board again (forget_board).

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for sim in self.sims.values():
            sim.close()
        for t in self.transports:
            await t.stop()
        self.sound.close(1.0)
        self.journal.close()

    # --- boards -> sessions ------------------------------------------------------------

    def _table_of(self, msg) -> str | None:
        if msg.table is not None:
            return msg.table if msg.table in self.sessions else None
        for table, tmap in self.tmaps.items():
            if msg.board in tmap.boards:
                return table
        if len(self.sessions) == 1:
            return next(iter(self.sessions))
        return None

    async def _pump(self, transport) -> None:
        """Take what has arrived as one batch: journal and apply each, commit once, then send the LEDs.

        One event alone goes straight through; a burst (many tables, a fast table) shares one commit.
        """
        while True:
            batch = [await transport.get()]
            while len(batch) < BATCH_MAX:
                more = transport.get_nowait()
                if more is None:
                    break
                batch.append(more)
            self._held = []
            self.journal.begin()
            try:
                for msg in batch:
                    try:
                        self.handle(msg)
                    except Exception as e:  # noqa: BLE001 -- one bad message must never stop the table
                        self._note("error handling %s: %s" % (type(msg).__name__, e))
            finally:
                self.journal.commit()
                transport.committed()
                held, self._held = self._held, None
                # Only the last command for each LED in a burst matters, and only if it changes what
                # the LED shows (a piece lifted and put back within one burst sends nothing).
                last: dict[tuple, Led] = {}
                for led in held or ():
                    last[(led.table, led.board, led.target)] = led
                for led in last.values():
                    self._deliver(led)

    def handle(self, msg) -> None:
        table = self._table_of(msg)
        if table is None:
            self.counters["unknown-table"] += 1
            self._note("board %s%s belongs to no table this bridge serves"
                       % (msg.board, " (table %s)" % msg.table if msg.table else ""))
            return
        if isinstance(msg, Event):
            self.sessions[table].sensed(msg)
        elif isinstance(msg, Hello):
            tmap = self.tmaps[table]
            if msg.board in tmap.boards:
                missing = sorted(s for s in tmap.sensors_of(msg.board) if s not in msg.sensors)
                if missing:
                    self._note("board %s has no sensor(s) %s that %s maps" % (msg.board, ", ".join(missing), tmap.path))
                self._shown.pop((table, msg.board), None)
                self.sessions[table].forget_board(msg.board)
        elif isinstance(msg, Reply) and not msg.ok:
            self.counters["board-errors"] += 1
            self._note("board %s refused command %d: %s" % (msg.board, msg.msgid, msg.reason))

    def _sender(self):
        def send(led: Led) -> None:
            if self._held is not None:
                self._held.append(led)
            else:
                self._deliver(led)
        return send

    def _deliver(self, led: Led) -> None:
        from battlement.transport import BadCommand, MqttTransport, NoRoute

        now = (led.pattern, led.rgb, led.period_ms)
        shown = self._shown.get((led.table, led.board))
        if shown is not None and shown.get(led.target) == now:
            return
        # a board is reached by whichever transport heard its hello (serial routes by board id alone)
        for t in self.transports:
            cmd = led if isinstance(t, MqttTransport) else Led(led.board, led.target, led.pattern, led.rgb,
                                                               led.period_ms, None)
            try:
                t.send_now(cmd)
            except NoRoute:
                continue
            except BadCommand as e:
                self._note(str(e))
                break
            self.counters["led-sent"] += 1
            if shown is None:
                shown = self._shown[(led.table, led.board)] = {}
            shown[led.target] = now
            if self.led_sent:
                self.led_sent(led, time.perf_counter())
            return
        # No transport has heard this board yet (the table is lit at start-up, before the boards say
        # hello): nothing is lost, its hello makes the session light all of the board again.
        self.counters["led-before-hello"] += 1

    async def _tick(self) -> None:
        """Throw timeouts: a turn with no ball for --throw-timeout seconds counts as a miss (undo corrects it)."""
        while True:
            await asyncio.sleep(0.5)
            for s in self.sessions.values():
                if s.timed_out():
                    inp = s.miss_input()
                    if inp is not None:
                        s.apply(inp, source="throw timeout")
                    s.last_input_at = time.monotonic()

    def _note(self, text: str) -> None:
        self.notes.append(text)
        del self.notes[:-50]

    def sensor_press(self, table: str, inp: dict) -> dict:
        """A page's sensor button: the simulated board reports it, so it travels the real path."""
        s = self.sessions[table]
        sim = self.sims.get(table)
        steps = s.sensor_for(inp)
        if sim is None or not steps:
            return s.apply(inp, source="page (sensor)")
        for board, sensor, value in steps:
            sim.boards[board].sense(sensor, value)
        return {"ok": True, "message": ""}


# --- the command ---------------------------------------------------------------------


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
    sound = Sound(args.sound, args.sound_dir, args.voice, args.volume)
    bridge = Bridge(_tables(args), args.journal, args.serial, args.mqtt, args.username, args.password,
                    args.tls, args.tls_ca, args.simulate, sound, args.throw_timeout, args.host_code)
    await bridge.start()
    app = create_app(bridge)
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, lambda: setattr(server, "should_exit", True))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            await task
            raise UserError("could not serve the page on %s:%d (port in use? try --port)" % (args.host, args.port))
        await asyncio.sleep(0.01)
    base = "http://%s:%d" % (args.host, args.port)
    print("Battlement bridge: %s" % ", ".join("%s (%s)" % (t, m.game) for t, m in bridge.tmaps.items()))
    print("  scoreboard: %s/" % base)
    print("  host page:  %s/host?code=%s" % (base, bridge.host_code))
    print("  journal:    %s%s" % (args.journal, "   boards: simulated" if args.simulate else ""))
    print("  ready in %.2f s; Ctrl-C stops (the game resumes on the next start)" % (time.monotonic() - t0))
    sys.stdout.flush()
    try:
        await task
    finally:
        await bridge.stop()
    return 0


def run(args) -> int:
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.journal))):
        os.makedirs(os.path.dirname(os.path.abspath(args.journal)), exist_ok=True)
    return asyncio.run(serve(args))


def register(sub) -> None:
    p = sub.add_parser(
        "run", help="run the bridge: boards -> rules -> LEDs, sound and the web page",
        description="Run the bridge beside a table: read the boards (serial ports, an MQTT broker, or "
                    "simulated boards), referee the game, light the LEDs, speak, and serve the page. "
                    "Every input is journalled first, so a restart resumes the game.",
        epilog="Examples: battlement run --simulate   |   battlement run --game medieval-pong "
               "--table hardware/tables/medieval-pong.toml --serial /dev/ttyACM0 --serial /dev/ttyACM1",
    )
    p.add_argument("--game", help="game to play (default: the table map's, else %s)" % DEFAULT_GAME)
    p.add_argument("--table", action="append", metavar="TOML",
                   help="table map (repeat for several tables); default hardware/tables/<game>.toml")
    p.add_argument("--serial", action="append", metavar="PORT", help="a board's serial port (repeat)")
    p.add_argument("--mqtt", metavar="URL", help="MQTT broker, mqtt://[user:pass@]host:1883 or mqtts://")
    add_mqtt_login(p)
    p.add_argument("--simulate", action="store_true",
                   help="simulated boards (no hardware); the page's sensor buttons act as the sensors")
    p.add_argument("--host", default="127.0.0.1", help="address to serve the page on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port of the page (default 8000)")
    p.add_argument("--journal", default="var/journal.sqlite", help="SQLite journal (default var/journal.sqlite)")
    p.add_argument("--host-code", help="code of the host page (default: a new random one, printed)")
    p.add_argument("--throw-timeout", type=float, default=0.0, metavar="S",
                   help="seconds with no ball before a turn counts as a miss (0 = off; undo corrects it)")
    p.add_argument("--sound", choices=["null", "file", "speaker"], default="null",
                   help="announcements: speaker, file (WAVs in --sound-dir) or null (default)")
    p.add_argument("--sound-dir", default="var/sound", help="folder for --sound file (default var/sound)")
    p.add_argument("--voice", default="en", help="espeak-ng voice (default en)")
    p.add_argument("--volume", type=int, default=100, help="volume 0-200 (default 100)")
    p.set_defaults(func=run)

