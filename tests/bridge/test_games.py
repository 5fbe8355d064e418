"""Every game can be played from the host page with simulated boards: the first sensor button or
decision the page offers, pressed again and again, moves the game on without a refusal."""

import asyncio

import pytest
from battlement.bridge import Bridge
from battlement.table.maps import for_game
from support.aio import until


@pytest.mark.parametrize("game", ["medieval-pong", "plingpong", "battleground", "ringo", "medieval-madness"])
def test_the_host_page_plays_every_game(game, tmp_path):
    async def go():
        b = Bridge([for_game(game)], str(tmp_path / "j.sqlite"), simulate=True)
        await b.start()
        try:
            s = b.sessions[game]
            sim = b.sims[game]
            if sim.boards:
                await until(lambda: len(b.transports[0].boards) == len(sim.boards), what="every board's hello")
            for side in sorted(s.codes):  # secret set-up, as each side's page would
                for _ in range(40):
                    mine = s.for_side(side)["decisions"]
                    if not mine or s.match.over:
                        break
                    assert s.apply(mine[0], "side " + side)["ok"]
            for _ in range(12):
                host = s.for_host()
                if s.match.over:
                    break
                if host["sensed"]:
                    n = s.counters["inputs"]
                    assert b.sensor_press(game, host["sensed"][0])["ok"]
                    await until(lambda n=n: s.counters["inputs"] > n or s.counters["illegal"], what="sensed input")
                elif host["decisions"]:
                    assert s.apply(host["decisions"][0], "host page")["ok"]
                else:
                    side = host["waiting"][0]
                    assert s.apply(s.for_side(side)["decisions"][0], "side " + side)["ok"]
            assert s.counters["illegal"] == 0, s.notices[-3:]
            assert s.counters["inputs"] >= 5
            assert "error" not in " ".join(b.notes)
        finally:
            await b.stop()
    asyncio.run(go())


def test_a_silent_turn_becomes_a_miss_after_the_throw_timeout_and_undo_takes_it_back(tmp_path):
    async def go():
        b = Bridge([for_game("plingpong")], str(tmp_path / "j.sqlite"), simulate=True, throw_timeout=0.2)
        await b.start()
        try:
            s = b.sessions["plingpong"]
            await until(lambda: s.counters["inputs"] >= 1, what="the timeout's miss")
            assert any("misses" in n["text"] for n in s.notices)
            assert b.journal.db.execute("SELECT source FROM inputs").fetchone() == ("throw timeout",)
            s.paused = True  # players argue: no more timeouts while paused
            s.undo()
            await asyncio.sleep(0.8)
            assert s.match.inputs == []
        finally:
            await b.stop()
    asyncio.run(go())


def test_a_refused_secret_decision_is_told_to_its_side_only(tmp_path):
    from battlement.table.journal import Journal
    from battlement.table.session import Session

    s = Session(for_game("medieval-pong"), Journal(str(tmp_path / "j.sqlite")))
    assert s.apply({"t": "place", "by": "red", "tower": "B2", "character": "king"}, "side red")["ok"]
    again = s.apply({"t": "place", "by": "red", "tower": "C3", "character": "king"}, "side red")
    assert not again["ok"]
    public = str(s.public())
    assert again["message"] not in public and "Refused" not in public
    assert any(m.startswith("Refused") for m in s.for_side("red")["private"])
    assert not any(m.startswith("Refused") for m in s.for_side("blue")["private"])
