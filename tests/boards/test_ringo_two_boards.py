"""The two-board Ringo kit: ringo-a and ringo-b through CD74HC4067 muxes, cell-N as the rules number
cells (the castle is cell-41); the table map, the pin maps and a move played on simulated boards."""

import asyncio

from battlement.boards import hardware
from battlement.bridge import Bridge
from battlement.table import maps as tables
from battlement.table.adapter import GREEN
from support.aio import until
from support.bridgeproc import ROOT

from shared_rules.ringo import rules as ringo
from shared_rules.ringo.table import Table as RingoTable

MAP = ROOT / "hardware" / "tables" / "ringo-2boards.toml"
ATT = RingoTable.COLOURS["attackers"]


def test_every_cell_is_mapped_exactly_once_to_its_numbered_sensor_and_pixel():
    tm = tables.load(str(MAP))
    assert tm.game == "ringo" and sorted(tm.boards) == ["ringo-a", "ringo-b"]
    assert sorted(tm.objects) == sorted(ringo.NAMES) and len(tm.objects) == 41
    sensors = [(o.board, o.sensor) for o in tm.objects.values()]
    assert len(set(sensors)) == 41 and len(tm.by_sensor) == 41  # no sensor twice
    for i, name in enumerate(ringo.NAMES):
        n = i or 41  # the rules' cell number; the castle (0) is cell-41
        o = tm.objects[name]
        assert o.sensor == o.led == "cell-%d" % n and o.board == o.led_board == ("ringo-a" if n <= 21 else "ringo-b")
    for board in sorted(tm.boards):
        pin_map = hardware.check_file(hardware.BOARDS / (board + ".json"))  # passes `hardware check`
        kinds = {s["id"]: s["kind"] for s in pin_map["sensors"]}
        mine = [o for o in tm.objects.values() if o.board == board]
        assert sorted(kinds) == sorted(o.sensor for o in mine)  # every sensor of the board is a cell
        assert set(kinds.values()) == {"presence"}
        groups = pin_map["leds"]["groups"]
        assert sorted(i for o in mine for i in groups[o.led]) == list(range(1, len(mine) + 1))  # one pixel each


def test_a_move_played_on_the_two_simulated_boards(tmp_path):
    async def go():
        b = Bridge([tables.load(str(MAP))], str(tmp_path / "j.sqlite"), simulate=True)
        await b.start()
        try:
            s, sim = b.sessions["ringo-2boards"], b.sims["ringo-2boards"]
            await until(lambda: len(b.transports[0].boards) == 2, what="both boards' hellos")
            await until(lambda: all(sim.led_of(o) for o in sim.tmap.objects), what="every cell's light set")
            n = s.counters["inputs"]
            sim.press("a5", 0)  # an attacker lifted from a5 (ringo-b, cell-34): its destinations light up
            await until(lambda: sim.led_of("a4") == ("pulse", GREEN, 1000), what="a4 shown as a destination")
            sim.press("a4", 1)  # ... and put down on a4 (ringo-b, cell-26): the move is played
            await until(lambda: s.match.state["turn"] == ringo.DEF, what="the attackers' move")
            assert s.match.view()["cells"].get("a4") == "attackers" and not s.match.view()["cells"].get("a5")
            await until(lambda: sim.led_of("a4") == ("solid", ATT, 0) and sim.led_of("a5")[0] == "off",
                        what="a4 lit, a5 dark")
            assert s.counters["inputs"] == n + 2 and s.counters["illegal"] == 0
            sim.press("a1", 0)  # a defender on a1 (ringo-a, cell-2) steps to a2 (ringo-a, cell-10)
            sim.press("a2", 1)
            await until(lambda: s.match.state["turn"] == ringo.ATT, what="the defenders' move")
            assert s.match.view()["cells"].get("a2") == "defenders" and s.counters["illegal"] == 0
        finally:
            await b.stop()
    asyncio.run(go())
