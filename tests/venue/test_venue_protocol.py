"""Venue messages as the hub and the bridges seal and open them: only the venue key's MAC over the
message and its topic opens one, each sender's counter only rises (kept across a restart, also when
the clock was set back), and what is refused is refused for a reason the receiver counts."""

import json
import os
import stat

import pytest
from battlement.errors import UserError
from battlement.venue import key as venuekey
from battlement.venue import protocol
from battlement.venue.protocol import Receiver, Refused, Sender

KEY = bytes(range(32))
DOWN = protocol.down_topic("bar-9", "t-1")
SIDES = {"red": {"team": "Knights"}, "blue": {"players": ["Ann", "Bo"]}}
START = protocol.start("R1-M1", "t-1", "medieval-pong", {}, SIDES)


def from_hub(who, table):
    return who == protocol.HUB


def refused(receiver, topic, payload, senders=from_hub):
    with pytest.raises(Refused) as e:
        receiver.open(topic, payload, senders)
    return e.value.reason, str(e.value)


def test_a_message_opens_only_with_the_venue_key_on_its_own_topic_and_once():
    hub, bridge = Sender(KEY, protocol.HUB), Receiver(KEY)
    sealed = hub.seal(DOWN, START)
    msg = bridge.open(DOWN, sealed, from_hub)
    assert msg["t"] == "start" and msg["sides"] == SIDES and msg["from"] == "hub"
    assert refused(bridge, DOWN, sealed)[0] == "replayed"  # the same message again
    again = hub.seal(DOWN, START)  # the hub sends it again: a new counter, taken
    assert bridge.open(DOWN, again, from_hub)["match"] == "R1-M1"

    fresh = hub.seal(DOWN, START)
    body = fresh[65:]
    assert refused(bridge, DOWN, body)[0] == "unsigned"
    assert refused(bridge, DOWN, fresh[:65] + body.replace(b"Knights", b"Orcs"))[0] == "forged"
    assert refused(bridge, protocol.down_topic("bar-9", "t-2"), fresh)[0] == "forged"  # moved to another table
    assert refused(bridge, DOWN, Sender(b"x" * 32, protocol.HUB).seal(DOWN, START))[0] == "forged"
    assert refused(bridge, DOWN, Sender(KEY, "t-1").seal(DOWN, START))[0] == "sender"  # a table speaking as the hub
    reason, words = refused(bridge, DOWN, hub.seal(DOWN, dict(START, table="t-2")))
    assert reason == "malformed" and "it names table 't-2'" in words
    assert refused(bridge, "elsewhere/t-1", fresh)[0] == "malformed"
    assert bridge.open(DOWN, fresh, from_hub)["n"] == int(json.loads(body)["n"])  # all that left it untaken


def test_a_restarted_sender_whose_clock_went_back_still_counts_above_what_it_sent(monkeypatch):
    """A table's computer that boots after a power cut with its clock behind (no real-time clock, the time
    saved at the last clean shutdown) must not have its results refused as replays."""
    now = [1_700_000_000_000_000_000]
    monkeypatch.setattr(protocol.time, "time_ns", lambda: now[0])
    kept = {}
    hub_side = Receiver(KEY, keep=lambda name, n: kept.setdefault("seen", {}).update({name: n}))
    up = protocol.up_topic("bar-9", "t-1")
    status = protocol.status("t-1", "idle", None, 1, 1)

    def table(who, t):
        return who == t

    first = Sender(KEY, "t-1", keep=lambda n: kept.update(floor=n))
    for _ in range(3):
        hub_side.open(up, first.seal(up, status), table)
    now[0] -= 3600 * 10**9  # restarted an hour in the past
    hub_side = Receiver(KEY, kept["seen"])  # the hub restarted too, from what it kept
    assert refused(hub_side, up, Sender(KEY, "t-1").seal(up, status), table)[0] == "replayed"  # no floor kept
    after = Sender(KEY, "t-1", kept["floor"])
    assert hub_side.open(up, after.seal(up, status), table)["state"] == "idle"


@pytest.mark.parametrize("change, words", [
    ({"t": "begin"}, "unknown message type 'begin'"),
    ({"match": ""}, "match id ''"),
    ({"sides": {"Red": {"team": "K"}}}, "side 'Red' is not a side id"),
    ({"sides": {"red": {"team": "K", "colour": 1}}}, "side red must be"),
    ({"sides": {"red": {"players": ["A"] * 17}}}, "players is a list of names"),
    ({"seed": -1}, "seed must be a whole number"),
    ({"options": []}, "a start needs a game and its options"),
])
def test_a_signed_message_with_wrong_fields_is_refused_saying_what_is_wrong(change, words):
    reason, said = refused(Receiver(KEY), DOWN, Sender(KEY, protocol.HUB).seal(DOWN, dict(START, **change)))
    assert reason == "malformed" and words in said


def test_a_result_names_its_winner_among_its_sides_and_counts_in_numbers():
    up = protocol.up_topic("bar-9", "t-1")
    ok = protocol.result("R1-M1", "t-1", "medieval-pong", 7, SIDES, "red",
                         {"score": {"red": 3, "blue": 1}, "tiebreak": {"red": 2, "blue": 0},
                          "facts": {"red": {"towers destroyed": 3}, "blue": {"towers destroyed": 1}}}, "red won")
    assert protocol.check(ok, "t-1") is None
    assert "the winner 'green' is not one of its sides" in protocol.check(dict(ok, winner="green"), "t-1")
    assert "score of red must be a number" in protocol.check(dict(ok, score={"red": "3"}), "t-1")
    assert "facts of red must map" in protocol.check(dict(ok, facts={"red": {"": 1}}), "t-1")
    assert Receiver(KEY).open(up, Sender(KEY, "t-1").seal(up, ok), lambda w, t: w == t)["winner"] == "red"


def test_the_venue_key_file_is_made_private_and_a_wrong_one_is_refused_in_one_line(tmp_path):
    path, made = venuekey.make("bar-9", tmp_path)
    assert made and stat.S_IMODE(os.stat(path).st_mode) == 0o600 and len(venuekey.load("bar-9", tmp_path)) == 32
    assert venuekey.make("bar-9", tmp_path) == (path, False)
    with pytest.raises(UserError, match="no venue key for venue bar-8"):
        venuekey.load("bar-8", tmp_path)
    os.chmod(path, 0o644)
    with pytest.raises(UserError, match="readable by others"):
        venuekey.load("bar-9", tmp_path)
    os.chmod(path, 0o600)
    (tmp_path / "bar-8.venue-key.toml").write_text(path.read_text())
    os.chmod(tmp_path / "bar-8.venue-key.toml", 0o600)
    with pytest.raises(UserError, match="is the key of venue 'bar-9', not 'bar-8'"):
        venuekey.load("bar-8", tmp_path)
    with pytest.raises(UserError, match="venue id 'Bar 9' is not allowed"):
        venuekey.load("Bar 9", tmp_path)
