"""A beam's break its board could not time (an ESP32 collecting memory): the host asks a person.

The simulated board sends the `blind` event an ESP32 board sends (docs/protocol.md): the bridge
never plays it as a ball, shows the question on the host page only, counts it, and a "yes" plays
exactly what the sensor's ball would have played, once, through the normal sensed path (journalled,
undoable); a "no" plays nothing.
"""

import asyncio
import json

from battlement import wire
from battlement.bridge import Bridge
from battlement.messages import from_frame
from battlement.tables import for_game

from .conftest import until


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
            assert q["ask"].startswith("%s (PlingPong, " % sensor)
            assert "collecting memory for 30 ms and a break there could not be timed. Was it a ball?" in q["ask"]
            assert s.match.inputs == before  # never a ball by itself
            # The question is the host's alone: not on the scoreboard, not on any side's page.
            assert "collecting memory" not in json.dumps(s.public())
            for side in s.codes:
                assert "collecting memory" not in json.dumps(s.for_side(side))
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
