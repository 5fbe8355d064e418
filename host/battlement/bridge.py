"""`battlement run`: the bridge beside the table.

    transport (serial / MQTT) -> router (table map) -> session (journal + rules) -> effects
    (LED commands back to the boards, sound) and the web page (websockets).

One bridge serves one or several tables (one session each; on MQTT each table is
its own topic tree). --simulate runs virtual boards over ptys inside the bridge so
a game can be played with no hardware, the page's sensor buttons acting as sensors.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import dataclasses
import errno
import functools
import logging
import os
import signal
import socket
import sys
import time
import traceback

import shared_rules
from battlement.boards.health import BoardWatch
from battlement.errors import UserError
from battlement.link import keys as boardkeys
from battlement.link.messages import Beat, Event, Hello, Led, Reply
from battlement.link.transport import BadCommand, MqttTransport, NoRoute, SerialTransport
from battlement.link.transport.args import add_mqtt_login
from battlement.link.transport.base import in_order
from battlement.link.transport.mqtt import check_ca
from battlement.ops import hass, logs
from battlement.ops.metrics import Metrics
from battlement.ops.supervise import Supervisor, forget_dead_tasks, guard_frames, shown, watch_tasks
from battlement.sim.simulator import Simulator
from battlement.sound.speaker import Sound
from battlement.table import maps as tables
from battlement.table.effects import LED_FRAME, LED_FRAME_BEHIND, LedFrames
from battlement.table.journal import CHECKPOINT_EVERY, WAL_HOLD, Journal
from battlement.table.maps import TableMap, default_path, for_game, load
from battlement.table.session import Session, shown_path
from battlement.table.tokens import HOST_CODE_MIN, new_code
from battlement.web import onboarding

log = logging.getLogger("battlement.bridge")

NO_SENSORS = "(no sensors)"  # the path of a board-less map (tables.for_game)
DEFAULT_GAME = next(iter(shared_rules.GAMES))  # the first game the rules list
BRIDGE_PROGRESS = "(bridge)"  # the journal's progress rows of the bridge itself, beside each table's
BATCH_MAX = 500  # messages journalled under one commit...
TURN_BUDGET = 0.004  # ...or as many as fit in this many seconds, so the page and the links get the loop often
LED_TEST_SECONDS = 3.0  # how long the LED test blinks a board's lights
REJECTED_KEPT = 20  # last rejected frames kept per transport for the host page and the monitor


class Bridge:
    def __init__(self, tmaps: list[TableMap], journal: str, serial: list[str] | None = None,
                 mqtt: str | None = None, username: str | None = None, password: str | None = None,
                 tls: bool = False, tls_ca: str | None = None, simulate: bool = False, sound: Sound | None = None,
                 throw_timeout: float = 0.0, host_code: str | None = None,
                 hass_prefix: str | None = hass.DEFAULT_PREFIX):
        tables = [t.table for t in tmaps]
        if len(set(tables)) != len(tables):
            raise UserError("two table maps use the same table id: %s" % ", ".join(sorted(tables)))
        if not (serial or mqtt or simulate):
            raise UserError("no boards to listen to: give --serial PORT, --mqtt URL or --simulate")
        # On serial (and simulated boards without --mqtt, which are on ptys) a hello says no table: the
        # board's id alone names it, so two tables' boards of one id would be taken for one.
        if (serial or simulate and not mqtt) and len(tmaps) > 1:
            owners: dict[str, str] = {}
            for t in tmaps:
                for b in t.boards:
                    if b in owners:
                        raise UserError("board %s is on tables %s and %s: on serial, board ids must be unique%s"
                                        % (b, owners[b], t.table, "" if serial else
                                           " (simulated boards are on serial ports without --mqtt)"))
                    owners[b] = t.table
        if host_code is not None and len(host_code) < HOST_CODE_MIN:
            raise UserError("--host-code must be at least %d characters (got %d); leave it out for a random one"
                            % (HOST_CODE_MIN, len(host_code)))
        self.tmaps = {t.table: t for t in tmaps}
        self.journal = Journal(journal, checkpoint_thread=False)  # checkpointed by a supervised task
        self.sound = sound or Sound("null")
        self.serial, self.mqtt, self.simulate = list(serial or []), mqtt, simulate
        self.mqtt_auth = (username, password, tls)
        self.tls_ca = check_ca(tls_ca)  # before simulated boards try to load it
        self.throw_timeout = throw_timeout
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
        self.watch = BoardWatch()  # each board's last hello, each sensor's last trigger and beam widths
        self._links: dict[str, dict] = {}  # table -> boards online, as the pages were last told
        self.web_counters: dict[str, int] = {}  # the web app's: wrong codes, rate-limited, websocket junk
        self.onboarding: dict = {}  # addresses, port, mDNS state: set by serve() once the page is up
        self.led_sent = None  # hook(led, t_sent) for the benchmark
        self._held: list[Led] | None = None  # LED commands waiting for their batch's commit
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
        keys = {table: boardkeys.load(boardkeys.path_for(tmap.path)) for table, tmap in self.tmaps.items()}
        serial_keys = {table: keys[table] if boardkeys.serial_signing(tmap.path) else {}
                       for table, tmap in self.tmaps.items()}
        if self.simulate:
            for table, tmap in self.tmaps.items():
                user, pw, tls = self.mqtt_auth
                sim = Simulator(tmap, self.mqtt if self.mqtt else None, user, pw, tls, self.tls_ca,
                                keys[table] if self.mqtt else serial_keys[table])
                self.sims[table] = sim
                ports += sim.ports
        if ports:
            self.transports.append(SerialTransport(ports))
        if self.mqtt:
            user, pw, tls = self.mqtt_auth
            mq = MqttTransport(self.mqtt, None, user, pw, tls, self.tls_ca)
            self.transports.append(mq)
            if self.hass_prefix is not None:
                self.hass = hass.Publisher(mq, self.sessions, self.hass_prefix)
                self.hass.attach()
        seen = self.journal.recent_events()
        for t in self.transports:
            name = "serial" if isinstance(t, SerialTransport) else "mqtt %s" % t.url
            self.names[id(t)] = name
            self.rejected[name] = collections.deque(maxlen=REJECTED_KEPT)
            t.log = self._transport_log(name)
            guard_frames(t, self._note)
            # Boards of a table with a keys file sign every frame (docs/protocol.md, "Signed frames").
            for table, ks in (keys if isinstance(t, MqttTransport) else serial_keys).items():
                for board, key in ks.items():
                    t.keys[(table if isinstance(t, MqttTransport) else None, board)] = key
            t.signed = bool(t.keys)
            # Exactly-once across restarts: acknowledge only what is journalled, never apply it again.
            t.acks_on_commit = True
            # Flow control: once the pump is behind, the transport stops reading its links until it has
            # caught up; the broker's queue for us and the serial line hold the rest (docs/bridge.md, "Overload").
            t.bounded = True
            for (table, board, boot), seqs in seen.items():
                t.remember(table, board, boot, seqs)
            await t.start()
            self.supervisor.spawn("event pump (%s)" % name, functools.partial(self._pump, t))
            self.supervisor.spawn("link (%s)" % name, functools.partial(watch_tasks, t),
                                  recover=functools.partial(self._restart, t))
        for sim in self.sims.values():
            sim.start()
        self.supervisor.spawn("throw timer", self._tick)
        self.supervisor.spawn("journal checkpointer", self._checkpoints)
        loop = asyncio.get_running_loop()

        def from_player() -> None:  # the player thread tells the pages through the loop
            loop.call_soon_threadsafe(self.sound_changed)
        self.sound.on_change = from_player
        if self.sound.problem:
            self._note("sound: " + self.sound.problem)
        # No relight here: each session drew its table when it opened its game, and each board's
        # hello makes it light that board again (forget_board).

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
            self._held = []
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
                held, self._held = self._held, None
                # Only the last command for each LED in a burst matters, and only if it changes what
                # the LED shows (a piece lifted and put back within one burst sends nothing). Sent in
                # the order of those last commands: targets overlap ("all" and a pixel of it).
                last: dict[tuple, Led] = {}
                for led in held or ():
                    key = (led.table, led.board, led.target)
                    last.pop(key, None)
                    last[key] = led
                sent = self.counters["led-sent"]
                for led in last.values():
                    self.lights.send(led, t_taken if sensed else None)
                if m and sensed and self.counters["led-sent"] != sent:
                    m.lit(t_taken)
            if committed:
                transport.committed()  # the boards hear their evack now (one per board)
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
            self.watch.hello(table, msg)
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
            self.beats[(table, msg.board)] = {"board": msg.board, "table": table, "at": time.time(),
                                              "outbox": msg.outbox, "queued": msg.queued, "dropped": msg.dropped,
                                              "reconnects": msg.reconnects, "uptime_ms": msg.uptime_ms}
        elif isinstance(msg, Reply) and not msg.ok:
            self.counters["board-errors"] += 1
            self._note("board %s refused command %d: %s" % (msg.board, msg.msgid, msg.reason))

    def _sender(self):
        def send(led: Led) -> None:
            if self._held is not None:
                self._held.append(led)
            else:
                self.lights.send(led)
        return send

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

    def health(self) -> dict:
        """What an operator needs to see: tasks, every counter by reason, the last rejected frames,
        each board's last heartbeat (its outbox and how many events it dropped)."""
        transports = []
        for t in self.transports:
            name = self.names.get(id(t), type(t).__name__)
            transports.append({"name": name, "counters": dict(t.counters), "links": dict(t.links), "queued": t.queued(),
                               "paused": t.paused(),
                               "boards": [{"table": table, "board": board, "online": bool(t.online.get((table, board)))}
                                          for table, board in sorted(t.boards, key=in_order)],
                               "rejected": list(self.rejected.get(name, ()))})
        return {
            "tasks": self.supervisor.health(),
            "counters": dict(self.counters, **{"journal.row-errors": self.journal.errors},
                             **{"journal." + k: v for k, v in self.journal.checkpoints.items()}),
            "transports": transports,
            "web": dict(self.web_counters),
            "router": {table: dict(s.router.counters) for table, s in self.sessions.items()},
            "tables": {table: dict(s.counters) for table, s in self.sessions.items()},
            "boards": sorted(self.beats.values(), key=lambda b: (b["table"], b["board"])),
            "board_health": self.board_health(),
            "notes": self.notes[-20:],
            "hass": dict(self.hass.counters) if self.hass is not None else None,
        }

    def board_health(self) -> dict:
        return self.watch.report(self.tmaps, self.transports, self.names, self.beats)

    def link_of(self, table: str) -> dict:
        """How many of the table's boards are online (every page shows it beside "live")."""
        if table not in self._links:
            self._links[table] = self.watch.links({table: self.tmaps[table]}, self.transports)[table]
        return self._links[table]

    def _watch_links(self) -> None:
        """A board going offline or coming back changes no game: tell the pages all the same."""
        links = self.watch.links(self.tmaps, self.transports)
        for table, s in self.sessions.items():
            now = links[table]
            if self._links.get(table) != now:  # (the transport notes which board went offline)
                self._links[table] = now
                s._changed()

    def led_test(self, table: str, board: str) -> dict:
        """The health section's LED test: the board's lights blink white for a moment through the normal
        LED path, then show the game again."""
        tmap = self.tmaps.get(table)
        if tmap is None:
            return {"ok": False, "message": "this bridge serves no table %r" % table}
        if board not in tmap.boards:
            return {"ok": False, "message": "table %s has no board %r" % (table, board)}
        targets = sorted({o.led for o in tmap.objects.values() if o.led_board == board and o.led})
        if not targets:
            return {"ok": False, "message": "board %s has no lights on %s" % (board, shown_path(tmap.path))}
        s = self.sessions[table]
        for target in targets:
            s.send(Led(board, target, "blink", 0xFFFFFF, 300, table))
        self._note("LED test: board %s/%s blinks its %d light%s for %.0f s" % (
            table, board, len(targets), "" if len(targets) == 1 else "s", LED_TEST_SECONDS))
        asyncio.get_running_loop().call_later(LED_TEST_SECONDS, s.forget_board, board)  # the game's lights back
        return {"ok": True, "message": "", "lights": len(targets)}

    # --- the game a table plays ----------------------------------------------------------

    def switchable(self, table: str) -> bool:
        """Can the host page switch this table's game? A simulated table on its game's shipped map: its
        boards are made from the map, so they can be made again for another game. A real table's
        boards are built for its one game."""
        tmap = self.tmaps[table]
        return self.simulate and not self.mqtt and tmap.path in (default_path(tmap.game), NO_SENSORS)

    @staticmethod
    def games() -> list[str]:
        return [g for g in shared_rules.GAMES if os.path.exists(default_path(g)) or not tables.game_objects(g)]

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

    def resume_previous(self, table: str) -> dict:
        """The host page's "Resume the previous game" (switching back to its game when it was another)."""
        s = self.sessions[table]
        prev = self.journal.previous_game(table, s.game_id)
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
        keys = boardkeys.load(boardkeys.path_for(tmap.path)) if boardkeys.serial_signing(tmap.path) else {}
        sim = Simulator(tmap, None, None, None, False, None, keys)
        if serial is not None:
            for board, secret in keys.items():
                serial.keys[(None, board)] = secret
            serial.signed = bool(serial.keys)
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
    maps = _tables(args)  # a wrong map is the one line the user sees, before anything else starts
    _bind(args.host, args.port).close()  # a busy port too is one line, before anything starts
    sound = Sound(args.sound, args.sound_dir, args.voice, args.volume)
    bridge = Bridge(maps, args.journal, args.serial, args.mqtt, args.username, args.password,
                    args.tls, args.tls_ca, args.simulate, sound, args.throw_timeout, args.host_code,
                    args.hass_prefix if args.hass else None)
    await bridge.start()
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
    if args.mqtt:
        print("  Home Assistant: %s" % ("discovery under %s/ (availability %s)" % (bridge.hass.prefix, bridge.hass.avail)
                                        if bridge.hass else "off (--no-hass)"))
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


def run(args) -> int:
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
    p.add_argument("--table", action="append", metavar="TOML",
                   help="table map (repeat for several tables); default hardware/tables/<game>.toml")
    p.add_argument("--serial", action="append", metavar="PORT", help="a board's serial port (repeat)")
    p.add_argument("--mqtt", metavar="URL", help="MQTT broker, mqtt://[user:pass@]host:1883 or mqtts://")
    add_mqtt_login(p)
    p.add_argument("--hass", action=argparse.BooleanOptionalAction, default=True,
                   help="with --mqtt: announce each table to Home Assistant by MQTT discovery (a device per table "
                        "and per board: game state, winner, hits/falls/moves, boards online; public view only) "
                        "(default on; --no-hass publishes nothing for it)")
    p.add_argument("--hass-prefix", default=hass.DEFAULT_PREFIX, metavar="PREFIX",
                   help="with --mqtt: Home Assistant's discovery prefix (default %(default)s, as Home Assistant's "
                        "MQTT integration expects unless changed there)")
    p.add_argument("--simulate", action="store_true",
                   help="simulated boards (no hardware); the page's sensor buttons act as the sensors")
    p.add_argument("--host", default="127.0.0.1", help="address to serve the page on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port of the page (default 8000)")
    p.add_argument("--journal", default="var/journal.sqlite", help="SQLite journal (default var/journal.sqlite)")
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

