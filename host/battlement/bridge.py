"""The Bridge: the one place that wires the stages together, for the tables it serves.

    transports (link) -> the pump -> each table's session (table) -> its effects: LED commands back
    through the transports, calls to the speaker (sound), views to the pages (web, given this bridge)

One session a table (on MQTT each table is its own topic tree). --simulate runs virtual boards (sim)
over ptys inside the bridge, so a game can be played with no hardware. `battlement run` (cli/run.py)
starts a Bridge with its web server.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import functools
import logging
import os
import time
import traceback

import shared_rules
from battlement.boards.health import BoardWatch
from battlement.boards.otawatch import OtaWatch
from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.link.messages import Beat, Event, Hello, Led, Reply
from battlement.link.transport import BadCommand, MqttTransport, NoRoute, SerialTransport
from battlement.link.transport.mqtt import check_ca
from battlement.ops import hass, supervise
from battlement.ops.health import Health
from battlement.ops.metrics import Metrics
from battlement.ops.supervise import Supervisor, forget_dead_tasks, guard_frames, shown, watch_tasks
from battlement.sim.simulator import Simulator
from battlement.sound.speaker import Sound
from battlement.table import maps, setaside
from battlement.table.effects import LED_FRAME, LED_FRAME_BEHIND, LedFrames
from battlement.table.journal import CHECKPOINT_EVERY, WAL_HOLD, Journal
from battlement.table.maps import TableMap, default_path, for_game
from battlement.table.session import Session, shown_path
from battlement.table.tokens import HOST_CODE_MIN, new_code

log = logging.getLogger("battlement.bridge")

NO_SENSORS = "(no sensors)"  # the path of a board-less map (tables.for_game)
DEFAULT_GAME = next(iter(shared_rules.GAMES))  # the first game the rules list
BRIDGE_PROGRESS = "(bridge)"  # the journal's progress rows of the bridge itself, beside each table's
BATCH_MAX = 500  # messages journalled under one commit...
TURN_BUDGET = 0.004  # ...or as many as fit in this many seconds, so the page and the links get the loop often
REJECTED_KEPT = 20  # last rejected frames kept per transport for the host page and the monitor
WIDE = "*"  # in a board's remembered lights: a target wider than one pixel is among them


class Bridge(Health):
    def __init__(self, tmaps: list[TableMap], journal: str, serial: list[str] | None = None,
                 mqtt: str | None = None, username: str | None = None, password: str | None = None,
                 tls: bool = False, tls_ca: str | None = None, simulate: bool = False, sound: Sound | None = None,
                 throw_timeout: float = 0.0, host_code: str | None = None,
                 hass_prefix: str | None = hass.DEFAULT_PREFIX, keys_dir: str | None = None,
                 resume: int | None = None):
        tables = [t.table for t in tmaps]
        if len(set(tables)) != len(tables):
            raise UserError("two table maps use the same table id: %s" % ", ".join(sorted(tables)))
        if not (serial or mqtt or simulate):
            raise UserError("no boards to listen to: give --serial PORT, --mqtt URL or --simulate")
        if (serial or simulate and not mqtt) and len(tmaps) > 1:
            maps.check_ids_unique(tmaps, "" if serial else " (simulated boards are on serial ports without --mqtt)")
        if host_code is not None and len(host_code) < HOST_CODE_MIN:
            raise UserError("--host-code must be at least %d characters (got %d); leave it out for a random one"
                            % (HOST_CODE_MIN, len(host_code)))
        self.tmaps = {t.table: t for t in tmaps}
        self.keys_dir = keys_dir  # each table's board keys, found the one way (a bad keys file: one line, now)
        self.keys = {table: boardkeys.of_table(table, tmap.path, keys_dir) for table, tmap in self.tmaps.items()}
        self.journal = Journal(journal, checkpoint_thread=False)  # checkpointed by a supervised task
        self.sound = sound or Sound("null")
        self.serial, self.mqtt, self.simulate = list(serial or []), mqtt, simulate
        self.mqtt_auth = (username, password, tls)
        self.tls_ca = check_ca(tls_ca)  # before simulated boards try to load it
        self.throw_timeout = throw_timeout
        # --resume ID: the game set aside it names, checked before anything starts (one line when it cannot be)
        self.resume = None if resume is None else setaside.at_start(self.journal, resume, self.tmaps, self.switchable)
        # Home Assistant discovery on the MQTT connection (None: off)
        self.hass_prefix = hass.check_prefix(hass_prefix) if hass_prefix is not None and mqtt else None
        self.hass: hass.Publisher | None = None
        # kept in the journal as the side codes are, so an open host page reconnects after a restart;
        # --host-code (set in a service's config) wins and leaves the kept one alone
        kept = self.journal.get_progress(BRIDGE_PROGRESS).get("host-code")
        if kept is not None and (not isinstance(kept, str) or len(kept) < HOST_CODE_MIN):
            kept = None  # a code kept before codes had their minimum length: a new, longer one
        self.host_code = host_code or kept or new_code(12)
        if not host_code and self.host_code != kept:
            self.journal.set_progress(BRIDGE_PROGRESS, "host-code", self.host_code)
        self.sessions: dict[str, Session] = {}
        self.sims: dict[str, Simulator] = {}
        self.transports: list = []
        self.counters: dict[str, int] = {"led-sent": 0, "led-before-hello": 0, "board-errors": 0, "unknown-table": 0,
                                         "handler-errors": 0, "journal-errors": 0}
        self.notes: list[str] = []
        self.supervisor = Supervisor(self._note)
        self._writes = asyncio.Event()  # clear while a checkpoint finishes the WAL: the pump waits
        self._writes.set()
        self.names: dict[int, str] = {}  # id(transport) -> its name for people ("serial", "mqtt <url>")
        self.rejected: dict[str, collections.deque] = {}  # transport name -> last rejected frames
        self.beats: dict[tuple, dict] = {}  # (table, board) -> its last heartbeat (outbox, dropped...)
        self.watch = BoardWatch(self.journal.board_records, self.keys)  # hellos, sensors, facts
        self._links: dict[str, dict] = {}  # table -> boards online, as the pages were last told
        self.web_counters: dict[str, int] = {}  # the web app's: wrong codes, rate-limited, websocket junk
        self.onboarding: dict = {}  # addresses, port, mDNS state: set by serve() once the page is up
        self.led_sent = None  # hook(led, t_sent) for the benchmark
        # (table, board) -> {target: what the LED was last sent}; a board's hello forgets its own at once
        self._shown: dict[tuple, dict[str, tuple]] = {}
        self.metrics: Metrics | None = Metrics(self)  # /metrics; None turns the latency hooks off
        self.lights = LedFrames(self._deliver, self._lit)  # at most one round of LED commands a board a frame

    # --- start / stop ----------------------------------------------------------------

    async def start(self) -> None:
        for table, tmap in list(self.tmaps.items()):
            # a simulated table switched to another game before a restart opens with that game
            g = self.journal.open_game(table) if self.switchable(table) else None
            if g is not None and g["game"] != tmap.game and g["game"] in self.games():
                self.tmaps[table] = tmap = self._map_for(table, g["game"])
            self.sessions[table] = Session(tmap, self.journal, self.sound, self._sender(), self.throw_timeout)
        ports = list(self.serial)
        for table in sorted(t for t, tk in self.keys.items() if self.mqtt and not tk.keys):
            self._note("table %s: %s (no keys file %s; `battlement flash --table %s` makes it)"
                       % (table, self.keys[table].line(True), self.keys[table].path, table))
        if self.simulate:
            for table, tmap in self.tmaps.items():
                user, pw, tls = self.mqtt_auth
                sim = Simulator(tmap, self.mqtt if self.mqtt else None, user, pw, tls, self.tls_ca,
                                self.keys[table].on(bool(self.mqtt)))
                self.sims[table] = sim
                ports += sim.ports
        if ports:
            self.transports.append(SerialTransport(ports))
        if self.mqtt:
            user, pw, tls = self.mqtt_auth
            mq = MqttTransport(self.mqtt, None, user, pw, tls, self.tls_ca)
            mq.serves = set(self.tmaps)  # other bridges' tables on the broker: named, never taken nor answered
            self.transports.append(mq)
            OtaWatch(self.keys, self.sessions, self.counters).attach(mq)  # boards updated: said on their page
            if self.hass_prefix is not None:
                self.hass = hass.Publisher(mq, self.sessions, self.hass_prefix, firmware_of=self.watch.firmware_of)
                self.hass.attach()
        seen = self.journal.recent_events()
        for t in self.transports:
            name = "serial" if isinstance(t, SerialTransport) else "mqtt %s" % t.url
            self.names[id(t)] = name
            self.rejected[name] = collections.deque(maxlen=REJECTED_KEPT)
            t.log = self._transport_log(name)
            guard_frames(t, self._note)
            # Boards of a table with a keys file sign every frame, per table (docs/protocol.md, "Signed frames").
            boardkeys.give(t, self.keys, isinstance(t, MqttTransport))
            # Exactly-once across restarts: acknowledge only what is journalled, never apply it again.
            t.acks_on_commit = True
            # Flow control: once the pump is behind, the transport stops reading its links until it has
            # caught up; the broker's queue for us and the serial line hold the rest (docs/bridge.md, "Overload").
            t.bounded = True
            t.recall(self.journal.board_records(), seen)  # each board's highest boot; what is applied of each
            await t.start()
            self.supervisor.spawn("event pump (%s)" % name, functools.partial(self._pump, t))
            self.supervisor.spawn("link (%s)" % name, functools.partial(watch_tasks, t),
                                  recover=functools.partial(self._restart, t))
        for sim in self.sims.values():
            sim.start()
        self.supervisor.spawn("throw timer", self._tick)
        self.supervisor.spawn("journal checkpointer", self._checkpoints)
        # the player thread tells the pages through the loop
        self.sound.on_change = functools.partial(asyncio.get_running_loop().call_soon_threadsafe, self.sound_changed)
        if self.sound.problem:
            self._note("sound: " + self.sound.problem)
        # No relight here: each session drew its table when it opened its game, and each board's
        # hello makes it light that board again (forget_board).
        if self.resume is not None and not self.resume.get("playing"):  # as the host page's "Resume this game"
            self.resume["reply"] = self.resume_previous(self.resume["table"], self.resume["id"])
        supervise.settle_heap()  # what start-up made stays: the cycle collector leaves it be

    async def stop(self) -> None:
        await self.supervisor.stop()
        self.lights.flush()  # the frame's last lights still go out
        if self.hass is not None:
            self.hass.close()  # before the DISCONNECT, which would keep the will from saying it
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
        The boards hear their evack right after that commit (one per board per batch), and a batch is
        at most BATCH_MAX messages or TURN_BUDGET of work, after which the loop serves the pages and
        the links before the next: under overload the backlog waits in the queue, not the page.
        """
        while True:
            msg = await transport.get()
            if not self._writes.is_set():
                await self._writes.wait()  # a checkpoint is finishing the WAL (see _checkpoints)
            t_taken = time.perf_counter()
            self.lights.frame = LED_FRAME_BEHIND if transport.paused() else LED_FRAME
            m = self.metrics
            if m:
                m.taking = t_taken
            sensed = False  # a board event in the batch: its LED commands are timed (event -> LED)
            self.lights.hold()  # the batch's LED commands wait for its commit
            n = 0
            turn_ends = t_taken + TURN_BUDGET
            self.journal.begin()
            try:
                while True:
                    n += 1
                    if type(msg) is Event:
                        sensed = True
                    try:
                        self.handle(msg)
                    except Exception as e:  # noqa: BLE001 -- one bad message must never stop the table
                        self.counters["handler-errors"] += 1
                        log.error("error handling %s:\n%s", shown(msg), traceback.format_exc())
                        self._note("error handling %s: %s: %s" % (shown(msg), type(e).__name__, e))
                    if n >= BATCH_MAX or time.perf_counter() >= turn_ends:
                        break
                    msg = transport.get_nowait()
                    if msg is None:
                        break
            finally:
                t_commit = time.perf_counter()
                committed = self._commit(n)
                if m:
                    m.committed(t_commit)
                sent = self.counters["led-sent"]
                self.lights.release(t_taken if sensed else None)
                if m and sensed and self.counters["led-sent"] != sent:
                    m.lit(t_taken)
            if committed:
                transport.committed()  # the boards hear their evack now (one per board)
                self.journal.file_due()  # a stream that never pauses: inputs filed a step at a time
            await asyncio.sleep(0)  # a full queue never makes get() wait: let the pages and links in

    def _commit(self, n: int) -> bool:
        try:
            self.journal.commit()
            return True
        except Exception as e:  # noqa: BLE001 -- the table goes on; the operator is told what was not kept
            self.counters["journal-errors"] += 1
            log.error("journal commit of %d message(s) failed:\n%s", n, traceback.format_exc())
            self._note("journal: a batch of %d message(s) could not be written (%s: %s)" % (n, type(e).__name__, e))
            self.journal.rollback()
            return False

    async def _restart(self, t) -> None:
        """A transport whose own loop died: stop it and start it again (its boards stay known)."""
        keep = t.log
        forget_dead_tasks(t)
        await t.stop()
        t.log = keep
        await t.start()

    def _transport_log(self, name: str):
        rejected = self.rejected[name]

        def note(text: str) -> None:
            if text.startswith("rejected "):
                rejected.append({"at": time.time(), "reason": text.split(" ", 2)[1], "text": text})
            else:
                self._note(text)
        return note

    def handle(self, msg) -> None:
        table = msg.table
        if table is None or table not in self.sessions:  # (a served table's message: no look-up beyond this)
            table = self._table_of(msg)
        if table is None:
            self.counters["unknown-table"] += 1
            self._note("board %s%s belongs to no table this bridge serves"
                       % (msg.board, " (table %s)" % msg.table if msg.table else ""))
            return
        if isinstance(msg, Event):
            self.watch.event(table, msg)
            self.sessions[table].sensed(msg)
        elif isinstance(msg, Hello):
            tmap = self.tmaps[table]
            self.journal.board_hello(table, msg.board, msg.boot, msg.firmware)  # with its batch: its boot is kept
            if self.watch.hello(table, msg) and self.hass is not None:  # Home Assistant's sw_version follows
                self.hass.firmware_changed(table, msg.board)
            if msg.board not in tmap.boards:
                self._note("board %s said hello on table %s, but %s lists no board %s"
                           % (msg.board, table, shown_path(tmap.path), msg.board))
            else:
                missing = sorted(s for s in tmap.sensors_of(msg.board) if s not in msg.sensors)
                if missing:
                    self._note("board %s has no sensor(s) %s that %s maps" % (msg.board, ", ".join(missing), tmap.path))
                self._shown.pop((table, msg.board), None)
                self.sessions[table].forget_board(msg.board)
        elif isinstance(msg, Beat):
            self.journal.board_beat(table, msg.board)
            self.beats[(table, msg.board)] = {"board": msg.board, "table": table, "at": time.time(),
                                              "outbox": msg.outbox, "queued": msg.queued, "dropped": msg.dropped,
                                              "reconnects": msg.reconnects, "uptime_ms": msg.uptime_ms}
        elif isinstance(msg, Reply) and not msg.ok:
            self.counters["board-errors"] += 1
            self._note("board %s refused command %d: %s" % (msg.board, msg.msgid, msg.reason))

    def _sender(self):
        return self.lights.put  # held with the pump's batch until its commit, else at once

    def _lit(self, since: float) -> None:
        if self.metrics:
            self.metrics.lit(since)

    def _deliver(self, led: Led) -> bool:
        """Send one LED command now unless the LED shows it already; True if it went."""
        now = (led.pattern, led.rgb, led.period_ms)
        shown = self._shown.get((led.table, led.board))
        if shown is not None and shown.get(led.target) == now:
            return False
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
            # Targets overlap ("all", a range, a group and their pixels): a pixel's light makes what a wider
            # target said untrue, and a wider one makes every pixel's, so those are forgotten (WIDE: one is held).
            if led.target.isdigit():
                if WIDE in shown:
                    for k in [k for k in shown if not k.isdigit()]:
                        del shown[k]
            else:
                shown.clear()
                shown[WIDE] = ()
            shown[led.target] = now
            if self.led_sent:
                self.led_sent(led, time.perf_counter())
            return True
        # No transport has heard this board yet (the table is lit at start-up, before the boards say
        # hello): nothing is lost, its hello makes the session light all of the board again.
        self.counters["led-before-hello"] += 1
        return False

    async def _tick(self) -> None:
        """Turn timeouts: a turn with nothing sensed for --throw-timeout seconds gets the input the game
        says a timeout stands for (a miss, a shot that is over; undo corrects it)."""
        while True:
            await asyncio.sleep(0.5)
            self._watch_links()
            for s in self.sessions.values():
                s.apply_due()  # a timing rule's held input whose timer was lost
                if s.timed_out():
                    inp = s.timeout_input()
                    if inp is not None:
                        s.apply(inp, source="throw timeout")
                    s.last_input_at = time.monotonic()

    async def _checkpoints(self) -> None:
        """The journal's WAL checkpointed in a worker thread, so its fsync never holds the loop.

        A checkpoint beside a pump that never pauses never copies all of the WAL, so SQLite never
        starts it over: it grew without bound, and every read in it slowed. When a long WAL was left
        unfinished (a quiet table's checkpoint is short and finishes), one more pass runs
        with the pump held (the loop still serves pages and links): it copies only what came during
        the first, and the pump's next write starts the WAL over."""
        loop = asyncio.get_running_loop()
        j = self.journal
        while True:
            await asyncio.sleep(CHECKPOINT_EVERY)
            while j.file_due(quiet=True):  # between throws, a step at a time: the pages and the pump go on
                await asyncio.sleep(0)
            if not await loop.run_in_executor(None, j.checkpoint) or not j.wal_unfinished or j.wal_frames < WAL_HOLD:
                continue
            t0 = time.perf_counter()
            self._writes.clear()
            try:
                await loop.run_in_executor(None, j.checkpoint, True)
            finally:
                self._writes.set()
                j.checkpoints["checkpoints-held"] += 1
                j.checkpoints["checkpoint-held-ms"] += round((time.perf_counter() - t0) * 1000)

    def sound_changed(self) -> None:
        """Mute, volume or a sound failure: every host page shows it (the sound is the room's, not a table's)."""
        if self.sound.problem:
            self._note("sound: " + self.sound.problem)
        for s in self.sessions.values():
            s._changed()

    def _note(self, text: str) -> None:
        log.warning("%s", text)
        self.notes.append(text)
        del self.notes[:-50]

    # --- the game a table plays ----------------------------------------------------------

    def switchable(self, table: str) -> bool:
        """Can the host page switch this table's game? A simulated table on its game's shipped map: its
        boards are made from the map, so they can be made again for another game. A real table's
        boards are built for its one game."""
        tmap = self.tmaps[table]
        return self.simulate and not self.mqtt and tmap.path in (default_path(tmap.game), NO_SENSORS)

    @staticmethod
    def games() -> list[str]:
        return [g for g in shared_rules.GAMES if os.path.exists(default_path(g)) or not maps.game_objects(g)]

    def games_for(self, table: str) -> list[dict]:
        """The games the host page offers for this table ([] when its game cannot be switched)."""
        if not self.switchable(table):
            return []
        return [{"name": g, "title": shared_rules.load(g).TITLE} for g in self.games()]

    def _map_for(self, table: str, game: str) -> TableMap:
        return dataclasses.replace(for_game(game), table=table)

    def new_game(self, table: str, game: str | None, options: dict, seed: int | None = None) -> None:
        """The host page's new game: of this table's game, or of another one on a switchable table."""
        s = self.sessions[table]
        if game and game != s.tmap.game:
            if not self.switchable(table):
                raise UserError("table %s is built for %s (%s): its boards sense that game only"
                                % (table, s.tmap.game, s.tmap.path))
            if game not in self.games():
                raise UserError("unknown game %r (games: %s)" % (game, ", ".join(self.games())))
            self._switch(table, game)
        s.new_game(game, options, seed)

    def resume_previous(self, table: str, game_id: int | None = None) -> dict:
        """The host page's "Resume this game" (game_id: the one its list shows, None: the latest set aside),
        switching back to its game when it was another. UserError for an id that names no game set aside."""
        s = self.sessions[table]
        prev = self.journal.previous_game(table, s.game_id) if game_id is None else s.set_aside_game(game_id)
        if prev is not None and prev["game"] != s.tmap.game and self.switchable(table) and prev["game"] in self.games():
            self._switch(table, prev["game"])  # sets the game in progress aside
        return s.resume_previous(prev)

    def _switch(self, table: str, game: str) -> None:
        """New simulated boards for the game: the old ones' ports closed, the new ones' opened."""
        tmap = self._map_for(table, game)
        old = self.sims.pop(table, None)
        serial = next((t for t in self.transports if isinstance(t, SerialTransport)), None)
        if old is not None:
            old.close()
            for port in old.ports:
                if serial is not None:
                    serial.remove_port(port)
        self.tmaps[table] = tmap
        for key in [k for k in self._shown if k[0] == table]:
            del self._shown[key]
        self.lights.forget(table)  # the old game's lights: the new game draws its own
        for key in [k for k in self.beats if k[0] == table]:
            del self.beats[key]
        self.watch.forget(table)
        self.sessions[table].switch(tmap)
        self.keys[table] = boardkeys.of_table(table, tmap.path, self.keys_dir)  # by table id: the same keys
        sim = Simulator(tmap, None, None, None, False, None, self.keys[table].on(False))
        if serial is not None:
            boardkeys.give(serial, self.keys, False)
        self.sims[table] = sim
        if sim.ports and serial is None:
            raise UserError("cannot switch to %s: this bridge has no serial transport for its boards" % game)
        for port in sim.ports:
            assert serial is not None  # refused just above when there are ports and no serial transport
            serial.add_port(port)
        sim.start()
        log.info("table %s now plays %s", table, game)

    def sensor_press(self, table: str, inp: dict) -> dict:
        """A page's sensor button: the simulated board reports it, so it travels the real path."""
        s = self.sessions[table]
        sim = self.sims.get(table)
        steps = s.sensor_for(inp)
        if sim is None or not steps:
            return s.apply(inp, source="host page (sensor)")
        for board, sensor, value in steps:
            sim.boards[board].sense(sensor, value)
        return {"ok": True, "message": ""}
