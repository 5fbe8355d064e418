"""A side's "only for you" list says what is true now: where its characters, crowns and trap are,
worded from its own view, never an announcement a later move made stale."""

from battlement.table import maps as tables
from battlement.table.journal import Journal
from battlement.table.session import Session

from table.test_adapters import BASE, ball, pong

GHOST_A2 = {"red": BASE["red"], "blue": dict(BASE["blue"], ghost="A2", gunner="A1")}


def test_a_fallen_tower_leaves_the_list(tmp_path):
    s = pong(tmp_path, layout=GHOST_A2)
    assert "The Ghost is in tower A2." in s.for_side("blue")["private"]
    ball(s, "blue", "A2", at=0.0)  # red's ball enters blue's A2: the Ghost's tower falls
    s.apply_due(10.0)
    mine = s.for_side("blue")["private"]
    assert not [t for t in mine if "A2" in t or "Ghost" in t], mine
    assert "The Gunner is in tower A1." in mine and "The Princess is in tower C1 with a crown." in mine


def test_a_destroyed_king_is_not_listed_with_a_crown(tmp_path):
    s = pong(tmp_path)
    assert "The King is in tower C2 with a crown." in s.for_side("blue")["private"]
    ball(s, "blue", "C2", at=0.0)
    s.apply_due(10.0)
    mine = s.for_side("blue")["private"]
    assert not [t for t in mine if "King" in t or "C2" in t], mine
    assert len([t for t in mine if t.startswith("The ")]) == 8  # the other eight still where they are


def test_the_list_keeps_what_is_not_a_position(tmp_path):
    """An undo, a refusal: told once, kept; the placements come from the view, each once."""
    s = Session(tables.for_game("medieval-pong"), Journal(str(tmp_path / "j.sqlite")))
    assert s.apply({"t": "place", "by": "red", "tower": "C3", "character": "princess"}, "side red")["ok"]
    assert s.for_side("red")["private"] == ["The Princess is in tower C3 with a crown."]
    assert s.undo()["ok"]
    assert s.for_side("red")["private"] == ["Undid: your Princess in tower C3."]
    assert s.for_side("blue")["private"] == []


def test_a_seer_answer_stays_until_its_tower_falls(tmp_path):
    """The Seer names where red's King is: blue keeps that answer while the tower stands; once it
    fell the scoreboard shows what it held, and the answer is past."""
    s = pong(tmp_path)
    ball(s, "blue", "A3", at=0.0)  # red's ball enters blue's Seer: blue asks about a character of red's
    s.apply_due(10.0)
    assert s.apply({"t": "ask", "by": "blue", "character": "king"}, "side blue")["ok"]
    answer = "The Seer says: Red's King is in tower A2."
    assert answer in s.for_side("blue")["private"]
    ball(s, "red", "A2", at=20.0)  # blue's ball enters red's A2
    s.apply_due(30.0)
    assert s.match.view("blue")["sides"]["red"]["towers"]["A2"].get("was") == "king"
    assert answer not in s.for_side("blue")["private"]
