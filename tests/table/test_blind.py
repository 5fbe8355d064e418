"""A beam's break its board could not see (an ESP32 held by a pause): the host asks a person.

The simulated board sends the `blind` event an ESP32 board sends (docs/protocol.md): the bridge
never plays it as a ball, shows the question on the host page only, counts it, and a "yes" plays
exactly what the sensor's ball would have played, once, through the normal sensed path (journalled,
undoable); a "no" plays nothing.
"""

import asyncio
import json
import sqlite3

from battlement.bridge import Bridge
from battlement.link import wire
from battlement.link.messages import Event, from_frame
from battlement.table.journal import VERSION, Journal
from battlement.table.maps import for_game
from battlement.table.session import KEEP_BLIND, Session
from support.aio import until
from support.board import SerialBoard
from support.bridgeproc import Ws
from support.procs import PtyPair


def _blind_cup(s):
    """(input, board, sensor) of a ball the host page could play now on a beam (a cup)."""
    for inp in s.for_host()["sensed"]:
        steps = s.sensor_for(inp)
        if len(steps) == 1 and steps[0][2] == 1:
            board, sensor, _ = steps[0]
            return inp, board, sensor
    raise AssertionError("no cup to throw at")


def test_a_blind_break_is_asked_on_the_host_page_and_yes_plays_one_ball_no_plays_nothing(tmp_path):
    async def go():
        b = Bridge([for_game("plingpong")], str(tmp_path / "j.sqlite"), simulate=True)
        await b.start()
        try:
            s = b.sessions["plingpong"]
            sim = b.sims["plingpong"]
            await until(lambda: len(b.transports[0].boards) == len(sim.boards), what="every board's hello")
            inp, board, sensor = _blind_cup(s)
            before = list(s.match.inputs)
            sim.boards[board].sense(sensor, 30, width_us=31000, kind="blind")
            await until(lambda: s.blind, what="the question")
            (q,) = s.for_host()["blind"]
            # In a player's words: what happened and the one thing to answer, naming the cup (no firmware terms).
            assert q["ask"].startswith("The board looked away for a moment (30 ms): did a ball go into %s (PlingPong, "
                                       % sensor), q["ask"]
            assert q["ask"].endswith(")?") and "memory" not in q["ask"] and "timed" not in q["ask"], q["ask"]
            assert s.match.inputs == before  # never a ball by itself
            # The question is the host's alone: not on the scoreboard, not on any side's page.
            assert "looked away" not in json.dumps(s.public())
            for side in s.codes:
                assert "looked away" not in json.dumps(s.for_side(side))
            health = b.health()
            assert health["router"]["plingpong"]["blind"] == 1
            scraped = b.metrics.scrape().decode()  # what /metrics serves
            assert 'battlement_router_events_total{reason="blind",table="plingpong"} 1.0' in scraped

            # Yes: exactly the input the sensor's ball plays, once, journalled as from the host page, undoable.
            assert s.answer_blind(q["id"], True)["ok"]
            assert s.match.inputs == before + [inp]
            assert s.blind == []
            assert not s.answer_blind(q["id"], True)["ok"]  # answered already: nothing more
            assert s.match.inputs == before + [inp]
            src = b.journal.db.execute("SELECT source FROM inputs ORDER BY n DESC LIMIT 1").fetchone()[0]
            assert src.startswith("host page (a ball on %s" % sensor)
            assert s.undo()["ok"] and s.match.inputs == before

            # No: nothing is played.
            sim.boards[board].sense(sensor, 30, width_us=31000, kind="blind")
            await until(lambda: s.blind, what="the second question")
            assert s.answer_blind(s.blind[0]["id"], False)["ok"]
            assert s.match.inputs == before and s.blind == []
            assert s.counters["blind-yes"] == 1 and s.counters["blind-no"] == 1
        finally:
            await b.stop()

    asyncio.run(go())


def test_the_strict_decoder_takes_blind_for_a_beam_only():
    frame = wire.encode("event", ("plingpong-1", 0x5F3A, 7, "cup-green-1", "blind", 30, 1000, 31000))
    ev = from_frame(*wire.decode(frame))
    assert ev.kind == "blind" and ev.value == 30
    for kind, value in (("beam", 30), ("blind", 0)):  # a beam's value stays 0 or 1; a blind lasts 1 ms or more
        body = b"event plingpong-1 5f3a 7 cup-green-1 %s %d 1000 31000" % (kind.encode(), value)
        bad = body + b"*%08x\n" % wire.crc32(body)
        try:
            wire.decode(bad)
        except wire.WireError as e:
            assert e.reason == wire.R_RANGE and "value" in str(e)
        else:
            raise AssertionError("%s %d accepted" % (kind, value))


def _questions(path):
    """What the journal holds about blind breaks: (seq, outcome) in the order they came."""
    db = sqlite3.connect(path, timeout=10)
    try:
        return db.execute("SELECT seq, kind, outcome FROM events WHERE board='plingpong-1' ORDER BY id").fetchall()
    finally:
        db.close()


def _balls_from_the_host(path):
    db = sqlite3.connect(path, timeout=10)
    try:
        return db.execute("SELECT COUNT(*) FROM inputs WHERE source LIKE 'host page (a ball on %' "
                          "AND status IN ('ok', 'pending')").fetchone()[0]
    finally:
        db.close()


def test_an_open_question_survives_a_kill_9_and_is_answered_once_answered_ones_never_come_back(
        bridge_process, tmp_path):
    """A real `battlement run`, a board on a real pty. Three breaks it could not time: one answered yes,
    one no, one left open; the bridge is killed (kill -9) and started again on the same journal. The
    host sees the open one again (the same question, the same id), never the two answered ones, and
    its "yes" after the restart plays one ball, once; a second "yes" plays nothing."""
    pair = PtyPair(tmp_path / "pty").start()
    journal = str(tmp_path / "j.sqlite")
    b = bridge_process("--game", "plingpong", "--serial", pair.a, journal=journal)
    board = SerialBoard(pair.b, board="plingpong-1", sensors={"cup-green-1": "beam"}).open()
    close_board = board.answer_in_thread()
    host = None
    try:
        board.hello()
        host = Ws(b.url, role="host", code=b.host_code)
        for _ in range(3):
            board.event(sensor="cup-green-1", kind="blind", value=30, width_us=31000)
        st = host.state(lambda s: len(s.get("blind") or []) == 3, timeout=30)
        yes, no, still = st["blind"]
        assert host.act(action="blind", id=yes["id"], ball=True)["ok"]
        assert host.act(action="blind", id=no["id"], ball=False)["ok"]
        st = host.state(lambda s: [q["id"] for q in s["blind"]] == [still["id"]], timeout=30)
        assert _balls_from_the_host(journal) == 1
        host.close()
        host = None

        b.kill9()
        b.start(port=b.port)  # the same journal, the same port

        host = Ws(b.url, role="host", code=b.host_code)
        st = host.state(timeout=30)  # the first state a page gets: rebuilt before the bridge was ready
        assert st["blind"] == [still], "after the restart the host sees %s" % st["blind"]
        assert st["blind"][0]["ask"].startswith("The board looked away for a moment (30 ms): did a ball go into")
        assert _balls_from_the_host(journal) == 1  # the restart replayed the first yes, played nothing more

        reply = host.act(action="blind", id=still["id"], ball=True)
        assert reply["ok"], reply
        host.state(lambda s: s["blind"] == [], timeout=30)
        assert _balls_from_the_host(journal) == 2  # exactly one ball for the answer after the restart
        again = host.act(action="blind", id=still["id"], ball=True)
        assert not again["ok"] and "answered already" in again["message"]
        assert _balls_from_the_host(journal) == 2
        host.close()
        host = None

        # A clean stop and start: every question answered, none comes back.
        b.stop()
        b.start(port=b.port)
        host = Ws(b.url, role="host", code=b.host_code)
        st = host.state(timeout=30)
        assert st["blind"] == []
        assert _balls_from_the_host(journal) == 2
    finally:
        close_board()
        if host is not None:
            host.close()
        pair.close()


def test_a_crash_between_the_balls_commit_and_the_mark_asks_nothing_twice_and_a_new_game_drops_the_rest(tmp_path):
    """The ball a "yes" plays and its event are one commit; the question is marked answered just after.
    Killed in between, the journal still says it was answered (by the ball's own event). Questions of a
    game a new one replaced are not asked again after a restart, and neither is one pushed out by more
    than KEEP_BLIND open questions."""
    path = str(tmp_path / "j.sqlite")
    tmap = for_game("plingpong")
    cup = tmap.objects["green.1"]

    def blind(seq):
        return Event(None, cup.board, 0xB007, seq, cup.sensor, "blind", 30, 1000, 31000)

    j = Journal(path, checkpoint_thread=False)
    s = Session(tmap, j)
    for seq in (1, 2, 3):
        s.sensed(blind(seq))
    first, second, third = (q["id"] for q in s.blind)
    inputs = len(s.match.inputs)
    close = j.close_question
    j.close_question = lambda *a: None  # the process dies right after the ball's commit
    assert s.answer_blind(first, True)["ok"]
    j.close_question = close
    assert s.answer_blind(second, False)["ok"]
    j.close()

    j = Journal(path, checkpoint_thread=False)
    s = Session(tmap, j)
    assert [q["id"] for q in s.blind] == [third]
    assert len(s.match.inputs) == inputs + 1  # the one ball, replayed; its question not asked again
    for seq in range(4, 5 + KEEP_BLIND):  # KEEP_BLIND + 1 more: the oldest (third) is pushed out
        s.sensed(blind(seq))
    assert len(s.blind) == KEEP_BLIND and third not in [q["id"] for q in s.blind]
    kept = [q["id"] for q in s.blind]
    j.close()

    j = Journal(path, checkpoint_thread=False)
    s = Session(tmap, j)
    assert [q["id"] for q in s.blind] == kept
    s.new_game()
    assert s.blind == []
    j.close()

    j = Journal(path, checkpoint_thread=False)
    s = Session(tmap, j)
    assert s.blind == []  # another game's breaks mean nothing now, after a restart neither
    j.close()


def test_a_question_asked_before_answers_were_journalled_is_not_asked_again(tmp_path):
    """A journal of schema 1 kept no answers: a question it shows as asked may have been answered "no",
    so opening it (migrated to the current schema) asks nothing again; what comes after is asked as ever."""
    path = str(tmp_path / "j.sqlite")
    tmap = for_game("plingpong")
    cup = tmap.objects["green.1"]
    j = Journal(path, checkpoint_thread=False)
    s = Session(tmap, j)
    s.sensed(Event(None, cup.board, 0xB007, 1, cup.sensor, "blind", 30, 1000, 31000))
    assert len(s.blind) == 1
    j.close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version=1")
    db.close()

    j = Journal(path, checkpoint_thread=False)
    assert j.db.execute("PRAGMA user_version").fetchone()[0] == VERSION
    s = Session(tmap, j)
    assert s.blind == []
    s.sensed(Event(None, cup.board, 0xB007, 2, cup.sensor, "blind", 30, 1000, 31000))
    j.close()
    j = Journal(path, checkpoint_thread=False)
    assert [q["id"] for q in Session(tmap, j).blind] == ["%s-b007-2" % cup.board]
    j.close()
