"""Medieval Pong roof sensing: each tower's fall switch and roof switch tell a roof set in place
from a roof that tipped (docs/hardware.md, "Roof sensing")."""

import asyncio

from battlement.boards import hardware
from battlement.bridge import Bridge
from battlement.link.messages import Event
from battlement.table import maps as tables
from battlement.table.adapter import adapter_for
from battlement.table.router import Router
from support.aio import until

from shared_rules.engine import Match
from shared_rules.medieval_pong import rules as mp

BASE = {"A1": "princess", "A2": "king", "A3": "dragon", "B1": "architect", "B2": "blacksmith",
        "B3": "blind-magician", "C1": "ghost", "C2": "gunner", "C3": "seer"}


def test_every_tower_of_every_pong_table_has_a_fall_and_a_roof_switch_on_a_checked_board():
    for name in ("medieval-pong", "medieval-pong-2sets"):
        tm = tables.load(str(tables.TABLES_DIR + "/" + name + ".toml"))
        towers = [o for o in tm.objects if o.count(".") == 1]
        assert len(towers) == (18 if name == "medieval-pong" else 36)
        for board in sorted(tm.boards):
            kinds = {s["id"]: s["kind"] for s in hardware.check_file(hardware.BOARDS / (board + ".json"))["sensors"]}
            for t in towers:
                if tm.objects[t].board != board:
                    continue
                for switch in ("tilt", "roof"):
                    o = tm.objects["%s.%s" % (t, switch)]
                    assert o.board == board and kinds[o.sensor] == "tilt", (name, t, switch)


def _event(board, sensor, value, seq):
    return Event(None, board, 1, seq, sensor, "tilt", value, 0, 0)


def test_a_roof_set_in_place_is_no_tip_and_only_its_roof_switch_opening_is():
    table = adapter_for(mp, fresh=True)
    r = Router(tables.for_game("medieval-pong"), table)
    state = Match(mp, {}, 1).state
    # the Architect's tower B1 turned upside down: the fall switch closes first, then the roof switch
    assert r.place(_event("blue-kingdom", "tilt-b1", 1, 1), state, 0.0)[1] is None
    assert r.place(_event("blue-kingdom", "roof-b1", 1, 2), state, 0.0)[1] is None
    # knocked off its tower: it lies on its side, the roof switch opens
    assert r.place(_event("blue-kingdom", "roof-b1", 0, 3), state, 0.0)[:2] == (
        "blue.B1.roof", [{"t": "tilt", "side": "blue", "tower": "B1"}])
    # a tower knocked flat or laid on the rampart closes its fall switch only: no tip
    assert r.place(_event("red-kingdom", "tilt-c2", 1, 4), state, 0.0)[1] is None
    assert r.counters == {"fall-switch": 2, "roof-set": 1}
    # the page's sensor button for a tipped roof: set in place, then tipped, as a board reports it
    assert table.to_sensors({}, {"t": "tilt", "side": "blue", "tower": "B1"}) == [
        ("blue.B1.roof", 1), ("blue.B1.roof", 0)]


def test_the_architects_roof_placed_and_tipped_on_simulated_boards(tmp_path):
    async def go():
        b = Bridge([tables.for_game("medieval-pong")], str(tmp_path / "j.sqlite"), simulate=True)
        await b.start()
        try:
            s, sim = b.sessions["medieval-pong"], b.sims["medieval-pong"]
            await until(lambda: len(b.transports[0].boards) == 2, what="both kingdoms' hellos")
            for side in mp.SIDES:
                for t in sorted(BASE):
                    assert s.apply({"t": "place", "by": side, "tower": t, "character": BASE[t]}, "side " + side)["ok"]
                assert s.apply({"t": "ready", "by": side}, "side " + side)["ok"]
            n = s.counters["inputs"]
            sim.press("blue.B1", 1)  # red's ball into blue's B1: the Architect
            await until(lambda: s.counters["inputs"] > n, what="the ball")
            assert s.match.state["steps"][0]["k"] == "roof"
            assert s.apply({"t": "roof", "by": "blue", "tower": "A1"}, "side blue")["ok"]
            towers = s.match.state["sides"]["blue"]["towers"]
            assert towers["B1"]["st"] == "roof"
            n = s.counters["inputs"]
            sim.press("blue.B1.tilt", 1)  # turned upside down and set on A1
            sim.press("blue.B1.roof", 1)
            await until(lambda: s.router.counters.get("fall-switch", 0) + s.router.counters.get("roof-set", 0) >= 2,
                        what="both switches heard")
            assert s.counters["inputs"] == n and towers["B1"]["st"] == "roof"  # still a roof
            sim.press("blue.B1.roof", 0)  # red's skittle shot tips it over
            await until(lambda: s.counters["inputs"] > n, what="the tip")
            assert s.match.state["sides"]["blue"]["towers"]["B1"]["st"] == "box"
            assert s.counters["illegal"] == 0
            assert "Blue's roof has tipped over: tower A1 is open again." in [x["text"] for x in s.notices]
        finally:
            await b.stop()
    asyncio.run(go())
