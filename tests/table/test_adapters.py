"""What each game's table adapter tells the host, through a Session as the bridge runs it: the
fire-at-will tie window, the shot timeout, tilts that mean nothing, and what the host page and an
undo may show of a side's secrets (docs/rules/engine.md, "The table adapter")."""

import random

import pytest
from battlement.link.messages import Event
from battlement.table import maps as tables
from battlement.table.journal import Journal
from battlement.table.session import Session

from shared_rules.medieval_pong.table import TIE_WINDOW

BASE = {"red": {"princess": "A1", "king": "A2", "dragon": "A3", "architect": "B1", "blacksmith": "B2",
                "blind-magician": "B3", "ghost": "C1", "gunner": "C2", "seer": "C3"},
        "blue": {"princess": "C1", "king": "C2", "dragon": "C3", "architect": "B1", "blacksmith": "B2",
                 "blind-magician": "B3", "ghost": "A1", "gunner": "A2", "seer": "A3"}}


def pong(tmp_path, layout=BASE, **options):
    s = Session(tables.for_game("medieval-pong"), Journal(str(tmp_path / "j.sqlite")))
    s.new_game(None, dict({"first": "red"}, **options), seed=1)
    for side in ("red", "blue"):
        for ch, tower in layout[side].items():
            assert s.apply({"t": "place", "by": side, "tower": tower, "character": ch}, "side " + side)["ok"]
        assert s.apply({"t": "ready", "by": side}, "side " + side)["ok"]
    return s


seq = iter(range(1, 1 << 30))


def ball(s, side, tower, at):
    return s.sensed(Event(None, "%s-kingdom" % side, 1, next(seq), "tower-" + tower.lower(), "beam", 1, 0, 9000), at=at)


def switch(s, side, tower, which, closed, at=0.0):
    sensor = "%s-%s" % (which, tower.lower())
    return s.sensed(Event(None, "%s-kingdom" % side, 1, next(seq), sensor, "tilt", closed, 0, 0), at=at)


def fire_at_will(s):
    """Red's ball enters blue's Princess: blue calls a fire at will."""
    ball(s, "blue", "C1", at=0.0)
    s.apply_due(10.0)
    assert s.match.state["steps"][0]["k"] == "fire" and s.match.state["steps"][0]["origin"] == "blue"


def test_two_balls_in_different_kingdoms_within_the_tie_window_are_a_tie_won_by_the_side_that_lost_its_princess(tmp_path):
    s = pong(tmp_path)
    fire_at_will(s)
    # blue's ball into red's B2 and red's into blue's B1, 100 microseconds apart
    assert ball(s, "red", "B2", at=20.0)["message"] == "held"
    assert ball(s, "blue", "B1", at=20.0001)["ok"]
    last = s.match.inputs[-1]
    assert last == {"t": "tie", "side": "red", "tower": "B2"}, last
    assert any("Two balls at once! Blue, who just lost its Princess" in n["text"] for n in s.notices)
    assert s.match.view(None)["sides"]["red"]["towers"]["B2"].get("was") == "blacksmith"
    assert s.counters["illegal"] == 0


def test_two_balls_further_apart_than_the_window_are_two_balls_in_arrival_order(tmp_path):
    s = pong(tmp_path)
    fire_at_will(s)
    ball(s, "blue", "B1", at=20.0)
    ball(s, "red", "B2", at=20.0 + TIE_WINDOW + 0.05)  # the first ended the fire at will
    assert {"t": "ball", "side": "blue", "tower": "B1"} in s.match.inputs[-2:]
    assert s.match.view(None)["sides"]["blue"]["towers"]["B1"].get("was") == "architect"


def test_a_lone_ball_in_a_fire_at_will_counts_once_the_window_is_over(tmp_path):
    s = pong(tmp_path)
    fire_at_will(s)
    ball(s, "blue", "B1", at=20.0)
    n = len(s.match.inputs)
    s.apply_due(20.0 + TIE_WINDOW / 2)
    assert len(s.match.inputs) == n  # still inside the window
    s.apply_due(20.0 + TIE_WINDOW)
    assert s.match.inputs[-1] == {"t": "ball", "side": "blue", "tower": "B1"}


def test_a_tower_laid_on_the_rampart_or_a_ball_in_the_gunners_tower_in_hand_means_nothing_and_is_counted(tmp_path):
    s = pong(tmp_path)
    ball(s, "blue", "B3", at=0.0)  # red hits blue's Blind Magician: the tower is out
    assert s.match.view(None)["sides"]["blue"]["towers"]["B3"]["status"] == "box"
    before = len(s.notices)
    switch(s, "blue", "B3", "tilt", 1)  # laid on the rampart: its fall switch closes
    switch(s, "blue", "B3", "roof", 1)  # upside down: its roof switch too
    switch(s, "blue", "B3", "roof", 0)  # turned over again: the roof switch of a tower that is no roof
    assert s.router.counters["fall-switch"] == 1 and s.router.counters["roof-set"] == 1
    assert s.router.counters["tilt-not-a-roof"] == 1
    assert not [n for n in s.notices[before:] if "Refused" in n["text"]] and s.counters["illegal"] == 0
    # blue's throw misses; red's Gunner is hit next: its tower goes into red's hand for the Gunner's throw
    assert s.apply(s.timeout_input(), "host page (timeout)")["ok"]
    ball(s, "red", "C2", at=1.0)
    assert s.match.state["sides"]["red"]["towers"]["C2"]["st"] == "hand"
    ball(s, "red", "C2", at=2.0)  # the ball dropped into the Gunner's tower held in hand
    assert s.router.counters["ball-in-hand"] == 1 and s.counters["illegal"] == 0
    assert not [n for n in s.notices if "Refused" in n["text"]]
    assert s.for_host()["counters"]["router.ball-in-hand"] == 1  # where an operator sees it


def test_the_host_page_never_offers_a_dragons_destroy_choice(tmp_path):
    """Leak 1: the towers a side may destroy leave out its hidden Dragon; the host page in view of
    everyone must not list them. They are on the side's own page."""
    s = pong(tmp_path)
    ball(s, "blue", "C3", at=0.0)  # red hits blue's Dragon: blue throws; a miss makes it destroy its own
    assert s.apply(s.timeout_input(), "host page (timeout)")["ok"]
    assert s.match.state["steps"][0]["k"] == "destroy"
    host = s.for_host()
    assert not [d for d in host["decisions"] if d["t"] == "destroy"]
    mine = [d["tower"] for d in s.for_side("blue")["decisions"] if d["t"] == "destroy"]
    assert mine and "C3" not in mine
    refused = s.apply({"t": "destroy", "by": "blue", "tower": mine[0]}, "host page")
    assert not refused["ok"] and "own page" in refused["message"]
    assert s.apply({"t": "destroy", "by": "blue", "tower": mine[0]}, "side blue")["ok"]


def test_undo_of_a_secret_placement_tells_its_side_only(tmp_path):
    """Leak 2: the undo notice was the raw input ("place by=red character=princess tower=C3")."""
    s = Session(tables.for_game("medieval-pong"), Journal(str(tmp_path / "j.sqlite")))
    assert s.apply({"t": "place", "by": "red", "tower": "C3", "character": "princess"}, "side red")["ok"]
    assert s.undo()["ok"]
    for seen in (s.public(), s.for_host(), s.for_side("blue")):
        text = str([seen["notices"], seen["prompts"], seen.get("private")])
        assert "princess" not in text.lower() and "C3" not in text, text
    assert "Undid: a decision of Red." in [n["text"] for n in s.notices]
    assert "Undid: your Princess in tower C3." in s.for_side("red")["private"]


def test_battleground_shot_timeout_says_the_shot_is_over(tmp_path):
    s = Session(tables.for_game("battleground"), Journal(str(tmp_path / "j.sqlite")), throw_timeout=0.01)
    pick = random.Random(3)
    for _ in range(400):
        if any(i["t"] == "over" for i in s.match.legal()):
            break
        choices = [i for i in s.match.legal() if i["t"] not in ("fell", "stood")] or s.match.legal()
        assert s.apply(pick.choice(choices))["ok"]
    else:
        pytest.fail("no shot fired in 400 inputs")
    over = next(i for i in s.match.legal() if i["t"] == "over")
    assert s.timeout_input() == over
    assert s.apply(s.timeout_input(), "throw timeout")["ok"]
    assert s.match.state["shot"] is None
