"""Every game set aside can be taken up again, not only the latest: the host page lists each with its id, when
it started and was last played and how far it got; resuming one by its id sets the game in progress aside in
its turn, so nothing is ever lost. A side page's code names the game it was made for, so a page of a game set
aside can say which game that was (and never another side's code)."""

from battlement.table import maps as tables
from battlement.table.journal import Journal
from battlement.table.session import Session


def ringo(tmp_path, name="j.sqlite"):
    return Session(tables.for_game("ringo"), Journal(str(tmp_path / name)))


def play(s, n):
    """n legal moves, as the host's decision buttons send them."""
    for i in range(n):
        moves = [x for x in s.match.legal() if x["t"] == "move"]
        assert s.apply(moves[i % len(moves)])["ok"]


def test_after_two_new_games_the_fifty_input_game_is_listed_and_resumed_by_its_id(tmp_path):
    s = ringo(tmp_path)
    play(s, 50)
    fifty, view, codes = s.game_id, s.match.view(), dict(s.codes)
    s.new_game()
    second = s.game_id
    play(s, 3)
    s.new_game()  # the second "New game": "Resume the previous game" now names the 3-input game only
    listed = s.for_host()["set_aside"]
    assert [g["id"] for g in listed] == [second, fifty]  # the latest set aside first
    old = listed[1]
    assert (old["title"], old["game"], old["inputs"], old["here"]) == ("Ringo", "ringo", 50, True)
    assert old["started"] <= old["last"]  # when it started and when it was last played

    third = s.game_id
    play(s, 1)
    assert s.resume_game(fifty)["ok"]
    assert s.game_id == fifty and s.match.view() == view and s.codes == codes
    assert "Resumed the game of Ringo after 50 inputs." in [n["text"] for n in s.notices]
    # the game in progress is set aside in its turn, with its one input: nothing is lost
    listed = s.for_host()["set_aside"]
    assert [(g["id"], g["inputs"]) for g in listed] == [(third, 1), (second, 3)]
    s.journal.close()
    s = ringo(tmp_path)  # a restart opens the game taken up
    assert s.game_id == fifty and s.match.view() == view


def test_a_game_that_cannot_be_resumed_is_refused_in_words_naming_the_games_there_are(tmp_path):
    s = ringo(tmp_path)
    play(s, 2)
    aside = s.game_id
    s.new_game()
    playing = s.game_id
    reply = s.resume_game(999)
    assert not reply["ok"]
    assert "no game 999 set aside on table ringo" in reply["message"] and "%d (Ringo" % aside in reply["message"]
    assert "2 inputs" in reply["message"]
    assert s.resume_game(playing) == {"ok": False, "message": "game %d is the game in progress" % playing}
    s.journal.finish(playing, "attackers", "Ringo: attackers won after 0 inputs")  # a game that ended
    s.new_game()
    reply = s.resume_game(playing)
    assert not reply["ok"] and "game %d is over (Ringo: attackers won after 0 inputs)" % playing in reply["message"]
    assert s.resume_game("12")["message"].startswith("a game's id is a whole number")
    assert s.game_id != aside  # nothing changed by any of them


def test_a_side_code_names_the_game_it_opens_and_no_other(tmp_path):
    s = ringo(tmp_path)
    first, old = s.game_id, dict(s.codes)
    s.new_game()
    found = s.code_game("attackers", old["attackers"])
    assert (found["id"], found["title"], found["set_aside"]) == (first, "Ringo", True)
    assert s.code_game("attackers", old["defenders"]) is None  # another side's code opens nothing
    assert s.code_game("attackers", s.codes["attackers"])["id"] == s.game_id  # today's code: today's game
    assert s.code_game("attackers", "") is None and s.code_game("nobody", old["attackers"]) is None
