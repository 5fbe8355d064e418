"""New game and undo as a person expects: a new game sets the old one aside where "Resume the previous
game" takes it up again (also after a restart); one physical move is one undo, and what it undid stays
in the log and the journal marked undone; a sensor changed while paused is said, not silently dropped."""

import asyncio

from battlement.table import maps as tables
from battlement.table.journal import Journal
from battlement.table.session import Session
from bridge.test_session import ringo_bridge
from support.aio import until


def ringo_session(tmp_path, name="j.sqlite"):
    return Session(tables.for_game("ringo"), Journal(str(tmp_path / name)))


def move(s, frm, to):
    assert s.apply({"t": "cell", "cell": frm, "occupied": False}, "sensor " + frm)["ok"]
    assert s.apply({"t": "cell", "cell": to, "occupied": True}, "sensor " + to)["ok"]


def test_one_ringo_move_is_one_undo_and_stays_in_the_log_marked_undone(tmp_path):
    s = ringo_session(tmp_path)
    move(s, "b5", "b4")
    said = [n for n in s.notices if n["kind"] == "say"]
    assert said and said[0]["text"] == "The attacker moves from b5 to b4."
    before = len(s.notices)
    reply = s.undo()
    assert reply["ok"] and reply["undone"] == 2
    assert s.match.inputs == [] and s.match.view()["cells"].get("b5") == "attackers"
    # the move's own words stay in the log, marked; the undo says in words what it took back
    assert len(s.notices) == before + 1
    assert all(n.get("undone") for n in s.notices if n.get("n"))
    assert s.notices[-1]["text"] == "Undid: The attacker moves from b5 to b4."
    assert "cell=" not in s.notices[-1]["text"] and "occupied" not in s.notices[-1]["text"]
    rows = s.journal.db.execute("SELECT n, status, reason FROM inputs WHERE game_id=? ORDER BY n",
                                (s.game_id,)).fetchall()
    assert rows == [(1, "undone", "undone as one move: inputs 1, 2"), (2, "undone", "undone as one move: inputs 1, 2")]
    assert s.undo() == {"ok": False, "message": "nothing to undo"}


def test_undo_of_a_piece_still_lifted_takes_the_lift_only(tmp_path):
    s = ringo_session(tmp_path)
    move(s, "b5", "b4")
    assert s.apply({"t": "cell", "cell": "a1", "occupied": False}, "sensor a1")["ok"]  # defenders lift, no place yet
    assert s.undo()["undone"] == 1
    assert s.match.state["hand"] is None and s.match.view()["cells"].get("b4") == "attackers"
    assert s.notices[-1]["text"] == "Undid: a piece lifted from a1."


def test_new_game_sets_the_old_aside_and_resume_takes_it_up_again_also_after_a_restart(tmp_path):
    s = ringo_session(tmp_path)
    assert s.for_host()["previous"] is None
    move(s, "b5", "b4")
    view, codes, first = s.match.view(), dict(s.codes), s.game_id
    s.new_game()
    host = s.for_host()
    assert host["previous"]["summary"] == "abandoned after 2 inputs" and host["previous"]["here"]
    assert host["previous"]["title"] == "Ringo"
    move(s, "c5", "c4")
    second_view = s.match.view()
    assert s.resume_previous()["ok"]
    assert s.game_id == first and s.match.view() == view and s.codes == codes
    assert "Resumed the game of Ringo after 2 inputs." in [n["text"] for n in s.notices]
    assert s.for_host()["previous"]["summary"] == "abandoned after 2 inputs"  # the one just set aside
    s.journal.close()
    s = ringo_session(tmp_path)  # a restart opens the game taken up again
    assert s.game_id == first and s.match.view() == view
    assert s.resume_previous()["ok"] and s.match.view() == second_view  # and back: nothing lost either way


def test_resume_with_no_earlier_game_says_so(tmp_path):
    s = ringo_session(tmp_path)
    assert s.resume_previous() == {"ok": False, "message": "there is no earlier game on this table to take up again"}


def test_a_finished_game_is_not_offered_as_the_previous_game(tmp_path):
    s = Session(tables.for_game("plingpong"), Journal(str(tmp_path / "j.sqlite")))
    s.journal.finish(s.game_id, "p1", "PlingPong: p1 won")
    s.match.state["over"] = True  # as the rules leave a won game
    s.new_game()
    assert s.for_host()["previous"] is None


def test_a_sensor_changed_while_paused_is_said_and_counted(tmp_path):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (_b, s, sim):
            s.pause(True)
            sim.press("e5", 0)
            await until(lambda: s.counters.get("paused") == 1, what="paused event")
            assert s.match.state["hand"] is None
            assert s.notices[-1]["text"] == "The game is paused: 1 sensor change was not played. Resume to play on."
            assert s.for_host()["paused_sensed"] == {"count": 1, "object": "e5"}
            sim.press("e5", 1)
            await until(lambda: s.counters.get("paused") == 2, what="second paused event")
            texts = [n["text"] for n in s.notices]
            assert texts[-1].startswith("The game is paused: 2 sensor changes were not played")
            assert sum("sensor change" in t for t in texts) == 1  # one notice that counts, not a flood
            assert "e5" not in str(s.public()["notices"])  # the object is named on the host page only
            s.pause(False)
            assert s.for_host()["paused_sensed"] is None
    asyncio.run(go())


def test_the_simulated_table_switches_game_and_back_and_a_restart_keeps_the_switch(tmp_path):
    from battlement.bridge import Bridge
    from battlement.errors import UserError

    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (b, s, sim):
            assert "plingpong" in [g["name"] for g in b.games_for("ringo")]
            move(s, "b5", "b4")
            ringo_view = s.match.view()
            b.new_game("ringo", "plingpong", {})
            assert s.match.game.NAME == "plingpong" and s.tmap.game == "plingpong"
            new = b.sims["ringo"]
            assert new is not sim and set(new.boards) == set(s.tmap.boards)
            serial = b.transports[0]
            await until(lambda: set(serial.boards) == {(None, x) for x in new.boards}, what="the new boards' hellos")
            assert s.for_host()["previous"]["title"] == "Ringo"
            obj = min(s.tmap.objects)
            new.press(obj, 1)  # a sensor of the new game's boards reaches the new game
            await until(lambda: s.counters["events"] >= 1, what="a plingpong sensor event")
        async with ringo_bridge_again(tmp_path / "j.sqlite") as (b, s):
            assert s.match.game.NAME == "plingpong"  # the restart opens the game the table was switched to
            assert b.resume_previous("ringo")["ok"]
            assert s.tmap.game == "ringo" and s.match.view() == ringo_view
            await until(lambda: set(b.transports[0].boards) == {(None, x) for x in b.sims["ringo"].boards}, what="ringo boards back")
        real = Bridge([tables.load(tables.default_path("ringo"))], str(tmp_path / "k.sqlite"), serial=["/dev/null-x"])
        real.tmaps["ringo"].path = "hardware/tables/my-own-ringo.toml"
        assert real.games_for("ringo") == []
        try:
            real.sessions = {"ringo": ringo_session(tmp_path, "k2.sqlite")}
            real.new_game("ringo", "plingpong", {})
            raise AssertionError("a real table switched game")
        except UserError as e:
            assert "built for ringo" in str(e)
        real.journal.close()
    asyncio.run(go())


def ringo_bridge_again(journal):
    import contextlib

    from battlement.bridge import Bridge

    @contextlib.asynccontextmanager
    async def cm():
        b = Bridge([tables.for_game("ringo")], str(journal), simulate=True)
        await b.start()
        try:
            yield b, b.sessions["ringo"]
        finally:
            await b.stop()
    return cm()
