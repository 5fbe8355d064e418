"""A venue's hub beside real bridge processes: the Hub on an event loop of its own in a thread (HubThread),
Ringo tables of their own ids for a venue's bridges, and a game played to its end from the host page."""

import asyncio
import copy
import threading
import time

from battlement.venue import key as venuekey
from battlement.venue.hub import Hub
from battlement.venue.hubjournal import HubJournal

from support.bridgeproc import Ws
from support.overload import table_files


def wait(cond, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.05)


class HubThread:
    """A Hub on its own loop: .hub, .events [(kind, body)] as its listeners got them, .call(fn, *args)
    runs fn on the hub's loop and returns what it returns."""

    def __init__(self, journal, url, venue, key):
        self.events = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="venue-hub", daemon=True)
        self._thread.start()
        self.hub = self.call(lambda: Hub(HubJournal(str(journal)), url, venue, key))
        self.hub.listeners.append(self._heard)
        self._run(self.hub.start())

    def _heard(self, kind, body):
        with self._lock:
            self.events.append((kind, copy.deepcopy(body)))

    def _run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(30)

    def call(self, fn, *args):
        async def on_loop():
            return fn(*args)
        return self._run(on_loop())

    def of(self, kind, **match):
        with self._lock:
            return [b for k, b in self.events if k == kind and all(b.get(f) == v for f, v in match.items())]

    def wait_for(self, kind, what=None, timeout=60, **match):
        wait(lambda: self.of(kind, **match), what or "the hub to hear %s %s" % (kind, match), timeout)
        return self.of(kind, **match)[-1]

    def stop(self):
        if self._loop.is_closed():
            return
        try:
            self._run(self.hub.stop())
            self.call(self.hub.journal.close)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()


def venue_tables(tmp, n, prefix):
    """n Ringo table maps with ids of their own: [(table id, map path)]."""
    return table_files(tmp, n, prefix=prefix)


def make_key(tmp, venue):
    """The venue's key file in tmp/keys (the hub's and the bridges' --keys-dir): (keys dir, key)."""
    keys = tmp / "keys"
    venuekey.make(venue, keys)
    return str(keys), venuekey.load(venue, keys)


SIDES = {"attackers": {"team": "Knights", "players": ["Ann", "Bo"]}, "defenders": {"team": "Orcs"}}


def play_ringo_to_end(bridge, table, moves=200):
    """Play the table's Ringo game to its end from the host page: each move the page offers, pressed
    as its sensor buttons, so the simulated boards report it over the broker to the rules. Returns the
    host page's last state (the game over)."""
    st = play_ringo(bridge, table, moves)
    if not st["view"]["over"]:
        raise AssertionError("the game was not over after %d moves" % moves)
    return st


def play_ringo(bridge, table, moves):
    """Play up to `moves` moves of the table's Ringo game (as play_ringo_to_end); the host page's last state."""
    host = Ws(bridge.url, role="host", table=table, code=bridge.host_code)
    try:
        st = host.state()
        for _ in range(moves):
            if st["view"]["over"]:
                return st
            n, mark = st["counters"]["inputs"], len(host.frames)
            reply = host.act(action="sense", input=st["sensed"][0])
            assert reply["ok"], reply

            def played(s, n=n):  # a move is a lift and a put: played once both are in (nothing in the hand)
                return s.get("type") == "state" and s["counters"]["inputs"] > n and s["view"].get("hand") is None
            early = [m for m in host.frames[mark:] if played(m)]
            st = early[-1] if early else host.state(played, timeout=30)
        return st
    finally:
        host.close()


class Tap:
    """Anyone on the broker: hears a topic filter (.heard [(topic, payload)]) and publishes whatever it likes."""

    def __init__(self, broker, topic_filter):
        import paho.mqtt.client as mqtt

        self.heard = []
        self._subscribed = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
        self.client.on_connect = lambda c, *a: c.subscribe(topic_filter, qos=1)
        self.client.on_subscribe = lambda *a: self._subscribed.set()
        self.client.on_message = lambda c, u, m: self.heard.append((m.topic, bytes(m.payload)))
        self.client.connect("127.0.0.1", broker.port)
        self.client.loop_start()
        if not self._subscribed.wait(10):
            raise AssertionError("the tap never subscribed to " + topic_filter)

    def publish(self, topic, payload):
        self.client.publish(topic, payload, qos=1).wait_for_publish(10)

    def close(self):
        self.client.loop_stop()
        self.client.disconnect()


def night(seed, n=100_000):
    """A venue's night as hub journal entries, made from a seed: (kind, body, match). Players join teams
    and move, matches are put on tables (some moved to another), tables answer ready, results come
    (each twice: a bridge that never heard the ack), and some are corrected."""
    import random

    rng = random.Random(seed)
    teams = ["Knights", "Orcs", "Elves", "Dwarves"]
    for t in teams:
        yield "team", {"name": t}, None
    for i in range(n):
        m = "R%d-M%d" % (i // 4 + 1, i % 4 + 1)
        yield "player", {"name": "Player %d" % rng.randrange(40), "team": rng.choice(teams + [None])}, None
        a, b = rng.sample(teams, 2)
        sides = {"attackers": {"team": a}, "defenders": {"team": b, "players": ["Player %d" % rng.randrange(40)]}}
        table = "t-%d" % rng.randrange(4)
        yield "assign", {"match": m, "table": table, "game": "ringo", "options": {}, "sides": sides, "seed": i,
                         "tournament": None}, m
        if rng.random() < 0.2:  # the table dropped out: the match moves
            table = "t-%d" % rng.randrange(4, 8)
            yield "assign", {"match": m, "table": table, "game": "ringo", "options": {}, "sides": sides, "seed": i,
                             "tournament": None}, m
        yield "ready", {"match": m, "table": table, "game_id": i + 1}, m
        winner = rng.choice(["attackers", "defenders", None])
        result = {"t": "result", "match": m, "table": table, "game": "ringo", "game_id": i + 1, "sides": sides,
                  "winner": winner, "score": {"attackers": rng.randrange(5), "defenders": rng.randrange(5)},
                  "tiebreak": {"attackers": rng.randrange(8), "defenders": rng.randrange(5)},
                  "facts": {"attackers": {"captures": rng.randrange(5)}, "defenders": {"captures": rng.randrange(8)}},
                  "summary": "Ringo"}
        yield "result", result, m
        yield "result", result, m
        if rng.random() < 0.1:
            yield "correct", {"match": m, "winner": "attackers", "score": None, "why": "the host saw it"}, m


def write_night(path, seed):
    """A hub's writer for a kill test: journals night(seed), printing each entry's id once it is committed."""
    import sys

    journal = HubJournal(path)
    for kind, body, match in night(seed):
        entry = journal.append(kind, body, match)
        if entry is not None:
            print(entry, flush=True)
    sys.stdout.flush()
