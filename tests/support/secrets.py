"""Secrets by construction: two tables play the same random game, except that one side's secrets are
permuted (two of its towers swap what they hide: character, crown, the Hunter's trap). Whatever any
viewer other than that side receives must be the same bytes on both tables, at every step.

The twins are real Sessions (journal, rules, adapter, effects, sound); each step is a page action
(a sensor button or a ball, a decision from the host page or a side's page, timeout, undo, pause,
resume, new game), the same on both tables, except that the owner's own secret decisions go
through the permutation. Actions that would reveal a permuted tower to everyone (a ball into it, a
Seer asking about what it holds, destroying it) are left out: what they show is meant to differ.

Channels, per viewer: the public state (the scoreboard's websocket and /api/state), /api/history,
the host page's state (its websocket), the other side's page, the spoken text and cue sounds, and
the LED commands (what the bridge publishes on MQTT and writes to serial), and what Home Assistant
is sent (discovery, the game topic, the event topic: battlement.ops.hass), byte for byte.
"""

from __future__ import annotations

import json
import random
import types

from battlement.link.messages import Event
from battlement.ops import hass
from battlement.sound.speaker import Sound
from battlement.table import journal as journal_mod
from battlement.table import maps as tables
from battlement.table import session as session_mod
from battlement.table.journal import Journal
from battlement.table.session import Session

import shared_rules


class Recording(Sound):
    """Sound that keeps what it would say and play, in order."""

    def __init__(self):
        super().__init__("null")
        self.heard: list[str] = []

    def say(self, text, *priority):
        self.heard.append("say " + text)
        super().say(text, *priority)

    def cue(self, name, *priority):
        self.heard.append("cue " + name)
        super().cue(name, *priority)


TWO_SETS = "hardware/tables/medieval-pong-2sets.toml"
TEAMS = ["base", "ultimate-defense", "challenges-galore", "elite-marksmen", "single-target", "vanished-dragon"]


class HassLink:
    """The transport side of battlement.ops.hass.Publisher: keeps every publish, as the bytes sent."""

    def __init__(self):
        self.will = None
        self.on_connected: list = []
        self.sent: list[tuple[str, str, bool]] = []

    def subscribe_extra(self, filter, callback):
        self.birth = callback

    def publish_raw(self, topic, payload, qos=0, retain=False):
        self.sent.append((topic, payload.decode(), retain))  # equal text, equal bytes (UTF-8)
        return True

    def publish0_all(self, messages):
        for topic, payload in messages:
            self.publish_raw(topic, payload)
        return True


class Twin:
    def __init__(self, tmap):
        self.sound = Recording()
        self.leds: list[tuple] = []
        self.s = Session(tmap, Journal(":memory:"), self.sound,
                         send=lambda led: self.leds.append((led.board, led.target, led.pattern, led.rgb, led.period_ms)))
        self.at = 100.0
        self.hass_link = HassLink()
        self.hass = hass.Publisher(self.hass_link, {tmap.table: self.s})
        self.hass.attach()
        self.hass.connected()

    def channels(self, owner: str) -> dict:
        """What each viewer other than `owner` has received since the last call, by channel (as the
        data the pages are sent as JSON: equal data, equal bytes; the real-HTTP slice checks bytes)."""
        s = self.s
        out = {
            "public": s.public(), "api/history": s.journal.history(s.table, 50), "host": s.for_host(),
            "speech": self.sound.heard, "leds": self.leds,
        }
        self.hass.refresh()  # what a loop turn would have published (a pause tells no listener)
        out["home assistant"], self.hass_link.sent = self.hass_link.sent, []
        for side in sorted(s.codes):
            out["side " + side] = s.for_side(side)  # the owner's own is only used to pick its next action
        self.sound.heard, self.leds = [], []
        return out

    def act(self, action: tuple) -> None:
        kind, arg = action
        s = self.s
        self.at += 1.0  # a second apart: no two balls fall in a tie window unless asked
        if kind == "sense":
            steps = s.sensor_for(arg)
            if not steps:
                s.apply(arg, "host page (sensor)")
            for board, sensor, value in steps:
                kind_ = s.tmap.sensors_of(board).get(sensor, "beam")
                s.sensed(Event(None, board, 1, 0, sensor, kind_, value, 0, 0), at=self.at)
            s.apply_due(self.at + 10.0)
        elif kind == "host":
            s.apply(arg, "host page")
        elif kind.startswith("side "):
            s.apply(arg, kind)
        elif kind == "timeout":
            inp = s.timeout_input()
            if inp is not None:
                s.apply(inp, "host page (timeout)")
        elif kind == "undo":
            s.undo()
        elif kind == "pause":
            s.pause(not s.paused)
        elif kind == "new":
            s.new_game(None, arg[0], seed=arg[1])


def pong_secret_swap(owner: str, sets: int, rng: random.Random):
    """(the two towers of owner whose hidden contents swap, how an owner's input maps)."""
    x, y = rng.sample(shared_rules.load("medieval-pong").tower_names(sets), 2)
    swap = {x: y, y: x}

    def mapped(inp: dict) -> dict:
        # only what is hidden moves: where a character or the trap goes (roofs, guards, destroyed
        # towers are where everyone sees them)
        if inp.get("by") == owner and inp.get("t") in ("place", "trap") and inp.get("tower") in swap:
            return dict(inp, tower=swap[inp["tower"]])
        return inp

    return {x, y}, mapped


def reveals(s: Session, owner: str, support: set, action: tuple) -> bool:
    """Would this action show everyone what a permuted tower holds (meant to differ)?"""
    _kind, inp = action
    if not isinstance(inp, dict):
        return False
    t = inp.get("t")
    if t in ("ball", "tie", "tilt") and inp.get("side") == owner and inp.get("tower") in support:
        return True
    if t in ("destroy", "choose") and inp.get("tower") in support and inp.get("side", owner) == owner:
        return True
    if t == "ask" and inp.get("by") != owner:
        towers = s.match.state["sides"][owner]["towers"]
        return any(towers[x]["ch"] == inp.get("character") for x in support)
    return False


def random_action(s: Session, seen: dict, rng: random.Random, sets: int, owner: str, support: set) -> tuple:
    """A page action, among what the pages were last sent (seen: a Twin's channels). Some choices are
    made more often than chance would: the owner hides its Dragon (and trap) in a permuted tower, the
    other side's Archer and Ninja get hit and the Ninja's balls touch, so that the owner often has to
    destroy a tower of its choice while a Dragon of its own is still hidden."""
    r = rng.random()
    if r < 0.05:
        return ("undo", None)
    if r < 0.08:
        return ("pause", None)
    if r < 0.09:
        return ("new", (random_options(rng, sets), rng.randrange(1 << 20)))
    if r < 0.14:
        return ("timeout", None)
    host = seen["host"]
    offers = [("sense", i) for i in host["sensed"]] + [("host", i) for i in host["decisions"]]
    for side in sorted(s.codes):
        offers += [("side " + side, i) for i in seen["side " + side]["decisions"]]
    towers = s.match.state["sides"]
    other = "red" if owner == "blue" else "blue"

    def liked(a):
        inp = a[1]
        if inp.get("t") in ("place", "trap") and inp.get("by") == owner:
            return inp.get("tower") in support and inp.get("character", "dragon") == "dragon"
        if inp.get("t") == "ball" and inp.get("side") == other:
            return towers[other]["towers"].get(inp["tower"], {}).get("ch") in ("archer", "ninja")
        return inp.get("t") == "touch" or (inp.get("t") == "ball" and inp.get("side") == owner)
    favourites = [a for a in offers if liked(a)]
    if favourites and rng.random() < 0.7:
        return rng.choice(favourites)
    return rng.choice(offers) if offers else ("timeout", None)


def random_options(rng: random.Random, sets: int) -> dict:
    return {"first": rng.choice(["red", "blue"]), "tactical": rng.random() < 0.3, "sets": sets, "unlocked": "all",
            "team": "base" if sets == 2 else rng.choice(TEAMS + ["elite-marksmen", "challenges-galore", "single-target"]),
            "extra_throw": rng.choice(["none", "both"])}


def play(games: int, seed: int = 0, steps: int = 40) -> int:
    """Play `games` twin games of Medieval Pong; raise AssertionError naming the step and channel that
    differ. Returns the number of steps compared."""
    rng = random.Random(seed)
    compared = 0
    maps = {1: tables.for_game("medieval-pong"), 2: tables.load(TWO_SETS)}
    for g in range(games):
        owner = rng.choice(["red", "blue"])
        sets = 2 if rng.random() < 0.25 else 1
        support, mapped = pong_secret_swap(owner, sets, rng)
        a, b = Twin(maps[sets]), Twin(maps[sets])
        opts = random_options(rng, sets)
        game_seed = rng.randrange(1 << 20)
        for t in (a, b):
            t.s.new_game(None, opts, seed=game_seed)
        log = []
        seen = a.channels(owner)
        b.channels(owner)
        for n in range(steps):
            if a.s.match.over and rng.random() < 0.5:
                action = ("new", (random_options(rng, sets), rng.randrange(1 << 20)))
            else:
                action = random_action(a.s, seen, rng, sets, owner, support)
            if reveals(a.s, owner, support, action):
                continue
            if action[0] == "new":
                support, mapped = pong_secret_swap(owner, sets, rng)
            twin_action = (action[0], mapped(action[1])) if isinstance(action[1], dict) else action
            log.append(action)
            a.act(action)
            b.act(twin_action)
            seen, cb = a.channels(owner), b.channels(owner)
            for ch in seen:
                if ch != "side " + owner and seen[ch] != cb[ch]:
                    one, two = json.dumps(seen[ch], sort_keys=True), json.dumps(cb[ch], sort_keys=True)
                    raise AssertionError(
                        "game %d step %d: what %s receives depends on %s's secrets (towers %s swapped)\n"
                        "last actions: %s\n%s\n  vs\n%s" % (
                            g, n, ch, owner, sorted(support), log[-3:], one[:3000], two[:3000]))
            compared += 1
    return compared


def deterministic(monkeypatch) -> None:
    """Side codes and journal times the same on both twins (they are not secrets, but random)."""
    monkeypatch.setattr(session_mod, "new_code", lambda: "code23")
    clock = types.SimpleNamespace(time=lambda: 1_700_000_000.0, monotonic=journal_mod.time.monotonic)
    monkeypatch.setattr(journal_mod, "time", clock)
    assert "medieval-pong" in shared_rules.GAMES
