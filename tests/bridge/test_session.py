"""The pipeline with real parts: virtual boards on real ptys -> SerialTransport -> router -> session
(journal + Ringo rules) -> LED commands back over the pty to the boards."""

import asyncio
import contextlib

from battlement.bridge import Bridge
from battlement.link.messages import Event
from battlement.table.adapter import GREEN, RED
from battlement.table.journal import Journal
from battlement.table.maps import for_game
from support.aio import until

from shared_rules.ringo.table import Table as RingoTable

ATT = RingoTable.COLOURS["attackers"]


@contextlib.asynccontextmanager
async def ringo_bridge(journal, **kw):
    b = Bridge([for_game("ringo")], str(journal), simulate=True, **kw)
    await b.start()
    try:
        sim = b.sims["ringo"]
        await until(lambda: len(b.transports[0].boards) == len(sim.boards), what="every board's hello")
        await until(lambda: all(sim.led_of(o) for o in sim.tmap.objects), what="every cell's light set")
        yield b, b.sessions["ringo"], sim
    finally:
        await b.stop()


def test_a_move_sensed_on_the_table_is_played_and_lit(tmp_path):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (_b, s, sim):
            sim.press("b5", 0)  # attacker lifted from b5: its legal destinations light up
            await until(lambda: sim.led_of("b4") == ("pulse", GREEN, 1000), what="b4 shown as a destination")
            sim.press("b4", 1)  # ... and put down on b4: the move is played
            await until(lambda: s.match.view()["cells"].get("b4") == "attackers", what="the move")
            await until(lambda: sim.led_of("b4") == ("solid", ATT, 0) and sim.led_of("b5")[0] == "off",
                        what="b4 lit, b5 dark")
            assert s.match.awaiting() == ["defenders"]
            assert s.counters["inputs"] == 2 and s.counters["illegal"] == 0
    asyncio.run(go())


def test_an_illegal_move_warns_on_the_table_and_the_page(tmp_path):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (_b, s, sim):
            sim.press("b5", 0)
            sim.press("b3", 1)  # two rings at once: not a step
            await until(lambda: sim.led_of("b3") == ("blink", RED, 250), what="warning on b3")
            assert sim.led_of("b5") == ("blink", RED, 250)
            assert any("not a legal move" in n["text"] for n in s.public()["notices"])
            sim.press("b3", 0)
            sim.press("b5", 1)  # pieces back where they were: the table is whole again
            await until(lambda: s.match.state["hand"] is None, what="board restored")
            assert s.match.view()["cells"]["b5"] == "attackers"
            # the warnings go: b5 shows its attacker again, b3 is dark
            await until(lambda: sim.led_of("b5") == ("solid", ATT, 0) and sim.led_of("b3")[0] == "off",
                        what="warning lights cleared")
    asyncio.run(go())


def test_a_piece_lifted_and_put_back_puts_the_table_lights_back(tmp_path):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (_b, s, sim):
            before = {o: sim.led_of(o) for o in sim.tmap.objects}
            sim.press("b5", 0)
            await until(lambda: sim.led_of("b4") == ("pulse", GREEN, 1000), what="b4 shown as a destination")
            sim.press("b5", 1)  # changed their mind
            await until(lambda: {o: sim.led_of(o) for o in sim.tmap.objects} == before, what="every light as before")
            assert s.match.awaiting() == ["attackers"] and s.counters["illegal"] == 0
    asyncio.run(go())


def test_events_for_unknown_sensors_and_boards_are_counted_and_play_goes_on(tmp_path):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (b, s, sim):
            b.handle(Event(None, "ring-5", 1, 1, "zz", "presence", 1, 0, 0))  # sensor not on the map
            b.handle(Event("other-table", "ring-5", 1, 1, "b", "presence", 1, 0, 0))  # a table we do not serve
            assert s.router.counters["unmapped-sensor"] == 1 and b.counters["unknown-table"] == 1
            assert "ring-5/zz is not mapped" in s.public()["notices"][-1]["text"]
            sim.press("c5", 0)
            sim.press("c4", 1)
            await until(lambda: s.match.view()["cells"].get("c4") == "attackers", what="play after bad events")
            rows = b.journal.db.execute(  # the bridge holds the journal's lock: read through its connection
                "SELECT object, outcome FROM events ORDER BY id").fetchall()
            assert rows[0] == (None, "unmapped: sensor ring-5/zz is not mapped to any object in %s"
                               % s.tmap.path)
            assert [r[1] for r in rows[-2:]] == ["input 1", "input 2"]
    asyncio.run(go())


def test_undo_takes_back_the_move_and_the_lights(tmp_path):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (_b, s, sim):
            sim.press("d5", 0)
            sim.press("d4", 1)
            await until(lambda: sim.led_of("d4") == ("solid", ATT, 0), what="move lit")
            assert s.undo()["undone"] == 2  # the lift and the place: one move, one undo
            assert s.match.view()["cells"].get("d4") is None and s.match.state["hand"] is None
            await until(lambda: sim.led_of("d4")[0] == "off", what="d4 dark after undo")
            await until(lambda: sim.led_of("d5") == ("solid", ATT, 0), what="d5 lit after undo")
            assert s.undo() == {"ok": False, "message": "nothing to undo"}
    asyncio.run(go())


def test_a_restarted_bridge_resumes_the_same_game(tmp_path):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (_b, s, sim):
            for a, c, side in (("b5", "b4", "attackers"), ("a1", "a2", "defenders")):
                sim.press(a, 0)  # boards are separate links: wait for each move like players do
                sim.press(c, 1)
                await until(lambda c=c, side=side: s.match.view()["cells"].get(c) == side, what="move to " + c)
            view, codes = s.match.view(), dict(s.codes)
        async with ringo_bridge(tmp_path / "j.sqlite") as (_b, s, sim):
            assert s.match.view() == view and s.codes == codes
            assert sim.led_of("a2") == ("solid", RingoTable.COLOURS["defenders"], 0)
    asyncio.run(go())


def test_paused_sensors_are_journalled_but_not_played(tmp_path):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (_b, s, sim):
            s.paused = True
            sim.press("e5", 0)
            await until(lambda: s.counters.get("paused") == 1, what="paused event")
            assert s.match.state["hand"] is None
    asyncio.run(go())


def test_lights_always_match_a_full_redraw_after_a_relight(tmp_path):
    """A relight only compares the LEDs that can have changed; the table must still end up exactly
    as a redraw of every LED would leave it, whatever cues lit in between (random sensor play)."""
    import random

    from battlement.table.session import Session

    for game in ("ringo", "battleground", "plingpong"):
        tmap = for_game(game)
        sent = []
        s = Session(tmap, Journal(str(tmp_path / (game + ".sqlite"))), send=sent.append)
        rng = random.Random(7)
        sensors = sorted(tmap.by_sensor)
        for i in range(300):
            board, sensor = rng.choice(sensors)
            s.sensed(Event(tmap.table, board, 1, i + 1, sensor, tmap.sensors_of(board)[sensor], rng.randrange(2), 0, 0))
            if rng.random() < 0.3:
                s._relight()  # as after any cue that changes the board
                want = {(o.led_board, o.led): st
                        for o, st in s.effects.lighting(s.match.view(None))}
                assert {k: s.lit.get(k) for k in want} == want, "%s: LEDs differ from a redraw after %d events" % (game, i)
        sent.clear()
        s.forget_board(min({o.led_board for o in tmap.objects.values() if o.led_board}))
        assert sent, "a rebooted board is lit again in full"


def test_a_board_gets_at_most_one_round_of_lights_a_frame_and_always_the_last(tmp_path):
    """The firmware draws its LEDs every 40 ms (LED_FRAME): a board is sent the first change at once,
    and what follows within its frame once, at the frame's end, the last command per LED kept. Another
    board's lights wait for nobody's frame."""
    from battlement.bridge import LED_FRAME, LED_FRAME_BEHIND
    from battlement.link.messages import Led

    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (b, s, sim):
            objs = sorted(n for n, o in sim.tmap.objects.items() if o.led_board and o.led)
            first = sim.tmap.objects[objs[0]]
            other = next(sim.tmap.objects[n] for n in objs if sim.tmap.objects[n].led_board != first.led_board)
            await asyncio.sleep(2 * LED_FRAME)  # the start's own lights out of the way
            sent = []
            b.led_sent = lambda led, t: sent.append((led.board, led.target, led.rgb, t))
            send = b._sender()
            for rgb in (0x110000, 0x220000, 0x330000, 0x440000):
                send(Led(first.led_board, first.led, "solid", rgb, 0, s.table))
            send(Led(other.led_board, other.led, "solid", 0x000055, 0, s.table))
            assert [x[:3] for x in sent] == [(first.led_board, first.led, 0x110000),
                                             (other.led_board, other.led, 0x000055)]  # at once, each board
            await until(lambda: len(sent) == 3, what="the frame's last command")
            assert sent[2][:3] == (first.led_board, first.led, 0x440000)  # the last, not the ones between
            assert sent[2][3] - sent[0][3] >= LED_FRAME * 0.9
            await until(lambda: sim.led_of(objs[0]) == ("solid", 0x440000, 0), what="the board showing it")
            await asyncio.sleep(2 * LED_FRAME)
            assert len(sent) == 3  # nothing more went
            # While the intake is held back (the pump asks the transport at each batch), a board's lights
            # change at most every LED_FRAME_BEHIND.
            b.transports[0].paused = lambda: True
            b.lights.frame = LED_FRAME_BEHIND
            send(Led(first.led_board, first.led, "solid", 0x550000, 0, s.table))
            send(Led(first.led_board, first.led, "solid", 0x660000, 0, s.table))
            await until(lambda: len(sent) == 4, what="the slower frame's last command")
            assert sent[3][2] == 0x660000 and sent[3][3] - sent[2][3] >= LED_FRAME_BEHIND * 0.9
    asyncio.run(go())


def test_a_flood_of_refused_moves_is_one_log_line_a_second_and_every_one_on_the_page(tmp_path, caplog, monkeypatch):
    """Under overload the events the broker dropped make inputs the rules refuse, dozens a second a
    table: each was a log line (20,000 in four minutes of the soak). The log gets one a second a table,
    saying how many it leaves out; the page's notices and the journal keep every one."""
    import logging

    from battlement.table import session as session_mod

    now = [1000.0]
    monkeypatch.setattr(session_mod.time, "monotonic", lambda: now[0])
    j = Journal(str(tmp_path / "j.sqlite"), checkpoint_thread=False)
    s = session_mod.Session(for_game("ringo"), j)
    caplog.set_level(logging.WARNING, logger="battlement.table")
    for i in range(1, 31):  # b5 (occupied at the start) put down again and again: each refused
        now[0] += 0.01
        s.sensed(Event(None, "ring-5", 5, i, "b", "presence", 1, i * 1000, 0))
    now[0] += 1.0
    s.sensed(Event(None, "ring-5", 5, 31, "b", "presence", 1, 31000, 0))
    refused = [r.getMessage() for r in caplog.records if "Refused" in r.getMessage()]
    assert len(refused) == 2, refused
    assert refused[1].endswith("(and 29 more refused since the last such line)")
    assert sum(1 for n in s.notices if n["kind"] == "illegal") == min(31, session_mod.KEEP_NOTES)
    assert s.counters["illegal"] == 31
    assert j.counts(s.game_id).get("illegal") == 31
    j.close()
