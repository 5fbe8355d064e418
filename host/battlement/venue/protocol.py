"""Venue messages: what a venue's hub and its bridges say to each other over the broker they share.

Topics (docs/protocol.md, "Venue messages"):
    battlement-venue/<venue>/<table>/down   hub -> the bridge serving <table>: start, ack
    battlement-venue/<venue>/<table>/up     that bridge -> the hub: ready, refused, result, status

They are outside battlement/, so the bridges' board subscription (battlement/+/+/up) never matches
them and a board's frame never pays for a look at a venue subscription (transport/mqtt, _to_extra).

A message is `<HMAC-SHA256 in 64 hex digits> <JSON object>`, the MAC taken over the topic, a newline
and the JSON's bytes with the venue key (venue/key.py), so a message signed for table 3 does not
verify on table 4's topic. JSON, not the boards' line format: these are a few messages a match,
read only by CPython hosts, holding nested data (a side's players, each side's facts) that a line
of tokens would have to flatten; and an operator can read them in `mosquitto_sub`. Every message
holds "v" (VERSION), "t" (its type), "from" (the hub: "hub"; a table's bridge: the table's id)
and "n", a counter that only ever rises per sender: microseconds of the sender's clock, or one more
than its last, whichever is higher, never below a floor the sender keeps durably (Sender), so a
restart with a clock set back still counts up. A receiver keeps the highest n it took from each
sender on each table durably and refuses what is not higher: a message recorded and played back
later is refused as a replay. What is refused is counted by its reason (REASONS), never answered.
"""

from __future__ import annotations

import hmac
import json
import math
import re
import time
from collections.abc import Callable

from battlement.link.transport.mqtt.names import ID_RE, VENUE_ROOT, check_id
from battlement.link.wire import hmac_sha256

ROOT = VENUE_ROOT  # (named in link, where broker-config's ACL finds it too)
VERSION = 1
HUB = "hub"  # the hub's sender id; a bridge speaks for each of its tables by the table's id
MAX_MESSAGE = 64 * 1024  # bytes: a result with every fact is about one
# A sender keeps this far ahead of its counter durably (microseconds): one write a minute, not one a message.
RESERVE = 60_000_000
# Why a message was refused, as the receiver counts it: no MAC where one belongs; a MAC that is not the
# venue key's (forged, or another venue's key); a counter not above the last taken from its sender
# (replayed); a sender that may not speak on that topic; fields that do not make a message (malformed).
REASONS = ("unsigned", "forged", "replayed", "sender", "malformed")
STATES = ("idle", "playing", "held", "over")  # a table's state in its status message
MATCH_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$")
NAME_MAX = 64
_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
_HEX = re.compile(rb"^[0-9a-f]{64} ")


class Refused(Exception):
    """A message not taken: .reason is one of REASONS, str() says what was wrong, in words."""

    def __init__(self, reason: str, words: str):
        super().__init__(words)
        self.reason = reason


def down_topic(venue: str, table: str) -> str:
    return "%s/%s/%s/down" % (ROOT, venue, table)


def up_topic(venue: str, table: str) -> str:
    return "%s/%s/%s/up" % (ROOT, venue, table)


def up_filter(venue: str) -> str:
    """What the hub subscribes to: every table's up topic of its venue."""
    return "%s/%s/+/up" % (ROOT, check_id("venue", venue))


def table_of(topic: str) -> str | None:
    """The table a venue topic is about (None: not a venue topic this code could have made)."""
    parts = topic.split("/")
    return parts[2] if len(parts) == 4 and parts[0] == ROOT and ID_RE.match(parts[2]) else None


def _mac(key: bytes, topic: str, body: bytes) -> bytes:
    return hmac_sha256(key, topic.encode() + b"\n" + body).hex().encode()


class Sender:
    """Seals one sender's messages. floor: the counter kept by the last run (nothing at or below it is
    used); keep(floor) is called, before a counter above the kept floor goes out, with a new one to keep."""

    def __init__(self, key: bytes, sender: str, floor: int = 0, keep: Callable[[int], None] | None = None):
        self.key, self.sender = key, sender
        self.last = self._floor = floor
        self._keep = keep

    def seal(self, topic: str, msg: dict) -> bytes:
        n = max(self.last + 1, time.time_ns() // 1000)
        self.last = n
        if self._keep is not None and n > self._floor:
            self._floor = n + RESERVE
            self._keep(self._floor)
        body = _JSON.encode(dict(msg, v=VERSION, n=n, **{"from": self.sender})).encode()
        return _mac(self.key, topic, body) + b" " + body


class Receiver:
    """Opens messages: MAC, sender, counter, fields. seen: (sender@table) -> the highest counter taken,
    as the last run kept it; keep(name, n) keeps a new one."""

    def __init__(self, key: bytes, seen: dict[str, int] | None = None, keep: Callable[[str, int], None] | None = None):
        self.key = key
        self.seen: dict[str, int] = dict(seen or {})
        self._keep = keep

    def open(self, topic: str, payload: bytes, senders: Callable[[str, str], bool]) -> dict:
        """The message (checked), or Refused. senders(sender, table): may that sender speak on this topic."""
        table = table_of(topic)
        if table is None:
            raise Refused("malformed", "%s is not a venue topic" % topic)
        if len(payload) > MAX_MESSAGE:
            raise Refused("malformed", "%d bytes on %s (at most %d)" % (len(payload), topic, MAX_MESSAGE))
        if not _HEX.match(payload):
            raise Refused("unsigned", "a message on %s without the venue's MAC" % topic)
        body = payload[65:]
        if not hmac.compare_digest(payload[:64], _mac(self.key, topic, body)):
            raise Refused("forged", "a message on %s whose MAC is not the venue key's" % topic)
        try:
            msg = json.loads(body)
        except ValueError as e:
            raise Refused("malformed", "signed, but not JSON on %s: %s" % (topic, e)) from None
        if not isinstance(msg, dict) or msg.get("v") != VERSION:
            raise Refused("malformed", "on %s: not a version %d venue message" % (topic, VERSION))
        who, n = msg.get("from"), msg.get("n")
        if not isinstance(who, str) or not isinstance(n, int) or isinstance(n, bool):
            raise Refused("malformed", "on %s: a message needs its sender (from) and counter (n)" % topic)
        if not senders(who, table):
            raise Refused("sender", "%s may not speak on %s" % (who, topic))
        name = "%s@%s" % (who, table)
        if n <= self.seen.get(name, 0):
            raise Refused("replayed", "%s's message %d on %s: %d was taken already" % (who, n, topic, self.seen[name]))
        problem = check(msg, table)
        if problem:
            raise Refused("malformed", "%s %s on %s: %s" % (who, msg.get("t"), topic, problem))
        self.seen[name] = n
        if self._keep is not None:
            self._keep(name, n)
        return msg


# --- the messages ---------------------------------------------------------------------------


def start(match: str, table: str, game: str, options: dict, sides: dict, seed: int | None = None) -> dict:
    """Hub -> bridge: play match on table, a new game of `game` with these options, its sides named
    (side -> {"team": name or None, "players": [names]})."""
    return {"t": "start", "match": match, "table": table, "game": game, "options": options, "sides": sides,
            "seed": seed}


def ack(match: str, table: str) -> dict:
    """Hub -> bridge: the match's result is journalled at the hub; stop sending it."""
    return {"t": "ack", "match": match, "table": table}


def ready(match: str, table: str, game: str, game_id: int, sides: dict) -> dict:
    """Bridge -> hub: the match's game is set up on the table (game_id: its id in the table's journal)."""
    return {"t": "ready", "match": match, "table": table, "game": game, "game_id": game_id, "sides": sides}


def refused(match: str, table: str, why: str) -> dict:
    """Bridge -> hub: the match cannot be played on that table, and why, in words."""
    return {"t": "refused", "match": match, "table": table, "why": why[:500]}


def result(match: str, table: str, game: str, game_id: int, sides: dict, winner: str | None, numbers: dict,
           summary: str) -> dict:
    """Bridge -> hub, until acknowledged: the rules ended the match's game. winner: a side, None for a
    draw; numbers: the game's own (TableAdapter.result): each side's score, tiebreak and facts."""
    return {"t": "result", "match": match, "table": table, "game": game, "game_id": game_id, "sides": sides,
            "winner": winner, "score": numbers.get("score", {}), "tiebreak": numbers.get("tiebreak", {}),
            "facts": numbers.get("facts", {}), "summary": summary}


def status(table: str, state: str, match: str | None, online: int, boards: int) -> dict:
    """Bridge -> hub, on a change and as a heartbeat: the table's state (STATES) and its boards online."""
    return {"t": "status", "table": table, "state": state, "match": match, "boards": [online, boards]}


def side_name(side: str, entry: dict | None) -> str:
    """How a side is called: its team, else its players, else the side's own id."""
    if entry:
        if entry.get("team"):
            return str(entry["team"])
        if entry.get("players"):
            return " & ".join(str(p) for p in entry["players"])
    return side


# --- checks ------------------------------------------------------------------------------------


def is_name(v) -> bool:
    return isinstance(v, str) and 0 < len(v) <= NAME_MAX and v.isprintable() and v.strip() == v


def _number(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and abs(v) < 1e15


def _sides(v) -> str | None:
    if not isinstance(v, dict) or not v:
        return "sides must name at least one side: {side: {\"team\": ..., \"players\": [...]}}"
    for side, entry in v.items():
        if not ID_RE.match(side):
            return "side %r is not a side id (a-z, 0-9, '-')" % (side,)
        if not isinstance(entry, dict) or set(entry) - {"team", "players"}:
            return "side %s must be {\"team\": name, \"players\": [names]}" % side
        if entry.get("team") is not None and not is_name(entry["team"]):
            return "side %s: a team name is 1-%d printable characters" % (side, NAME_MAX)
        players = entry.get("players", [])
        if not isinstance(players, list) or len(players) > 16 or not all(is_name(p) for p in players):
            return "side %s: players is a list of names of 1-%d printable characters" % (side, NAME_MAX)
    return None


def per_side(v, what: str, inner: bool = False) -> str | None:
    if not isinstance(v, dict) or not all(ID_RE.match(s) for s in v):
        return "%s must map each side to %s" % (what, "its facts" if inner else "a number")
    for side, x in v.items():
        if inner:
            if not isinstance(x, dict) or not all(is_name(k) and _number(n) for k, n in x.items()):
                return "%s of %s must map each fact's name to a number" % (what, side)
        elif not _number(x):
            return "%s of %s must be a number" % (what, side)
    return None


def check(msg: dict, table: str) -> str | None:
    """What is wrong with a signed message's fields, in words (None: nothing)."""
    t = msg.get("t")
    if t not in ("start", "ack", "ready", "refused", "result", "status"):
        return "unknown message type %r" % (t,)
    if msg.get("table") != table or not isinstance(table, str) or not ID_RE.match(table):
        return "it names table %r" % (msg.get("table"),)
    match = msg.get("match")
    if (t != "status" or match is not None) and (not isinstance(match, str) or not MATCH_RE.match(match)):
        return "match id %r: 1-64 of letters, digits and . _ : / -, a letter or digit first" % (match,)
    if t == "start":
        if not isinstance(msg.get("game"), str) or not isinstance(msg.get("options"), dict):
            return "a start needs a game and its options (an object)"
        seed = msg.get("seed")
        if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 1 << 30):
            return "seed must be a whole number from 0 to 2^30-1"
        return _sides(msg.get("sides"))
    if t == "refused":
        return None if isinstance(msg.get("why"), str) else "a refusal says why"
    if t == "status":
        boards = msg.get("boards")
        if msg.get("state") not in STATES:
            return "state must be one of %s" % ", ".join(STATES)
        if not (isinstance(boards, list) and len(boards) == 2 and all(isinstance(b, int) for b in boards)):
            return "boards must be [online, total]"
        return None
    if t in ("ready", "result"):
        if not isinstance(msg.get("game_id"), int) or not isinstance(msg.get("game"), str):
            return "a %s names the game and its id in the table's journal" % t
        problem = _sides(msg.get("sides"))
        if problem or t == "ready":
            return problem
        winner = msg.get("winner")
        if winner is not None and winner not in msg["sides"]:
            return "the winner %r is not one of its sides" % (winner,)
        return (per_side(msg.get("score"), "score") or per_side(msg.get("tiebreak"), "tiebreak")
                or per_side(msg.get("facts"), "facts", inner=True)
                or (None if isinstance(msg.get("summary"), str) else "a result has a summary"))
    return None
