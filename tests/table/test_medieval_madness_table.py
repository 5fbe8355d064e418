"""A Medieval Madness table with sensors: a presence sensor under every space, a pixel beside it.

The shipped map and pin maps agree and pass the checks; pawns put down on the table reach the rules
through real ptys and the serial transport, are confirmed or pointed out on the table; dice stay on
the page; a sensor the map does not know is counted and reported while play goes on.
"""

import asyncio
import contextlib
import json
import os

import pytest
from battlement.boards import hardware
from battlement.bridge import Bridge
from battlement.errors import UserError
from battlement.link.messages import Event
from battlement.table import maps as tables
from battlement.table.adapter import RED
from battlement.table.journal import Journal
from battlement.table.router import Router
from battlement.table.session import Session
from support.aio import until
from support.bridgeproc import ROOT, Ws

from shared_rules.medieval_madness import rules as mm
from shared_rules.medieval_madness.table import Table, pawn_checks
from table.test_tables import test_wrong_maps_are_refused_naming_what_and_where as refused_naming

MAP = ROOT / "hardware" / "tables" / "medieval-madness.toml"
P1, P2 = Table.COLOURS["p1"], Table.COLOURS["p2"]
OFF = ("off", 0, 0)


# --- the map and the pin maps --------------------------------------------------------------


def test_every_space_has_a_presence_sensor_and_a_pixel_on_a_checked_board():
    tm = tables.load(str(MAP))
    assert tables.for_game("medieval-madness").path == str(MAP)  # `battlement run --game` finds it
    spaces = mm.board_view()
    assert sorted(tm.objects) == sorted("space.%d" % s["id"] for s in spaces) and len(spaces) == 44
    for board in sorted(tm.boards):
        pin_map = hardware.check_file(hardware.BOARDS / (board + ".json"))  # passes `hardware check`
        sensors = {s["id"]: s["kind"] for s in pin_map["sensors"]}
        assert tm.sensors_of(board) == {o.sensor: "presence" for o in tm.objects.values() if o.board == board}
        assert all(sensors.get(sid) == "presence" for sid in tm.sensors_of(board)), board
        groups = pin_map["leds"]["groups"]
        lit = [o for o in tm.objects.values() if o.led_board == board]
        assert {o.led for o in lit} <= set(groups), "every space's LED is a group of the board's strip"
        assert sorted(i for o in lit for i in groups[o.led]) == list(range(1, len(lit) + 1))  # one pixel each
    # the outer wall on one board, the inner wall on the other
    assert {tm.objects["space.%d" % s["id"]].board for s in spaces if s["wall"] == "outer"} == {"outer-wall"}
    assert {tm.objects["space.%d" % s["id"]].board for s in spaces if s["wall"] == "inner"} == {"inner-wall"}


def madness_map(spaces=range(44), options=""):
    lines = ['game = "medieval-madness"', options, "[boards.wall]", 'profile = "madness-wall"', "[objects]"]
    lines += ['"space.%d" = { sensor = "wall/s%d", led = "wall/p%d" }' % (n, n, n) for n in spaces]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text, words", [
    (madness_map(range(43)), ["1 medieval-madness object(s) have no sensor: space.43"]),
    (madness_map(range(45)), ["objects.space.44", "no game object 'space.44'"]),
    (madness_map(options='[options]\nboard = "no-such-board.json"'), ["[options]", "no-such-board.json"]),
])
def test_a_wrong_madness_map_is_refused_naming_the_space(text, words):
    refused_naming(text, words)  # the same check as every other game's map


def test_a_table_built_for_its_own_board_file_senses_that_boards_spaces(tmp_path):
    board = json.loads((ROOT / "shared_rules" / "medieval_madness" / "data" / "medieval_madness_board.json").read_text())
    board["outer"] = board["outer"][:-2]  # a smaller home-made board: 26 + 16 spaces
    path = tmp_path / "small.json"
    path.write_text(json.dumps(board))
    opts = '[options]\nboard = "%s"' % path
    tm = tables.parse(madness_map(range(42), opts), "small.toml")
    assert len(tm.objects) == 42
    with pytest.raises(UserError, match="no game object 'space.42'"):
        tables.parse(madness_map(range(44), opts), "small.toml")


# --- what a sensor change means -------------------------------------------------------------


def test_a_pawn_put_down_is_a_pawn_check_and_a_pawn_lifted_means_nothing():
    table = Table(mm)
    r = Router(tables.load(str(MAP)), table)
    down = Event(None, "inner-wall", 1, 1, "sp-30", "presence", 1, 0, 0)
    assert r.place(down, {}, 0.0)[:2] == ("space.30", [{"t": "pawn", "space": 30}])
    up = Event(None, "inner-wall", 1, 2, "sp-30", "presence", 0, 0, 0)
    assert r.place(up, {}, 0.0)[1] is None and r.counters == {"ignored": 1}
    # the page's sensor buttons and `battlement sim` put a pawn down through the space's sensor
    assert table.to_sensors({}, {"t": "pawn", "space": 30}) == [("space.30", 1)]
    # a pawn check naming its player is typed on the page: no presence sensor can say whose pawn it is
    assert table.to_sensors({}, {"t": "pawn", "player": "p1", "space": 30}) == []
    view = {"players": [{"id": "p1", "space": 9}, {"id": "p2", "space": -1}, {"id": "p3", "space": 9}]}
    assert pawn_checks(view) == [{"t": "pawn", "space": 9}]


def test_a_pawn_on_the_wrong_space_is_lit_where_it_is_and_where_it_belongs(tmp_path):
    tm = tables.load(str(MAP))
    shown = {}
    s = Session(tm, Journal(str(tmp_path / "j.sqlite")), send=lambda led: shown.__setitem__(led.target, led))

    def light(n):
        led = shown.get("sp-%d" % n)
        return (led.pattern, led.rgb, led.period_ms) if led else None

    s.new_game(options={"players": 2})
    # 9 from the castle entrance: to Pay the Blacksmith (8)
    assert s.apply({"t": "roll", "by": "p1", "dice": [4, 5]}, "host page")["ok"]
    assert light(8) == ("solid", P1, 0)
    assert s.apply({"t": "roll", "by": "p2", "dice": [1, 1]}, "host page")["ok"]  # to Pay the Miller (1)
    # Player 1's turn again: their space pulses, the other pawn's glows
    assert light(8) == ("pulse", P1, 1000) and light(1) == ("solid", P2, 0)
    # typed on the page: "Player 1's pawn is on space 12"
    assert s.apply({"t": "pawn", "player": "p1", "space": 12}, "host page")["ok"]
    assert light(12) == ("blink", RED, 250) and light(8) == ("pulse", P1, 800)
    assert "Player 1, your pawn belongs on space 8, Pay the Blacksmith." in s.private["p1"]
    # moved to its space: both go back to what the game shows
    assert s.apply({"t": "pawn", "player": "p1", "space": 8}, "host page")["ok"]
    assert light(12) == OFF and light(8) == ("pulse", P1, 1000)
    assert s.match.view()["players"][0]["space"] == 8  # a pawn check never moves the game


def test_warnings_never_outlive_a_relight_in_random_play(tmp_path):
    """Random pawns put down and lifted between random decisions: after any relight every space shows
    exactly what a full redraw of the public view would (no warning left blinking)."""
    import random

    tm = tables.load(str(MAP))
    s = Session(tm, Journal(str(tmp_path / "j.sqlite")))
    rng = random.Random(3)
    sensors = sorted(tm.by_sensor)
    for i in range(300):
        if rng.random() < 0.5:
            board, sensor = rng.choice(sensors)
            s.sensed(Event(tm.table, board, 1, i + 1, sensor, "presence", rng.randrange(2), 0, 0))
        elif s.match.legal():
            assert s.apply(rng.choice(s.match.legal()), "host page")["ok"]
        if rng.random() < 0.3:
            s._relight()  # as after a move or a new turn
            want = {(o.led_board, o.led): st for o, st in s.effects.lighting(s.match.view(None))}
            assert {k: s.lit.get(k) for k in want} == want, "LEDs differ from a redraw after %d steps" % i
    assert s.counters["illegal"] == 0


# --- a bridge with simulated boards ---------------------------------------------------------


@contextlib.asynccontextmanager
async def madness_bridge(journal):
    b = Bridge([tables.for_game("medieval-madness")], str(journal), simulate=True)
    await b.start()
    try:
        sim = b.sims["medieval-madness"]
        await until(lambda: len(b.transports[0].boards) == 2, what="both walls' hellos")
        await until(lambda: all(sim.led_of(o) for o in sim.tmap.objects), what="every space's light set")
        yield b, b.sessions["medieval-madness"], sim
    finally:
        await b.stop()


def test_pawns_sensed_on_the_table_are_confirmed_or_pointed_out(tmp_path):
    async def go():
        async with madness_bridge(tmp_path / "j.sqlite") as (b, s, sim):
            assert not [o for o in sim.tmap.objects if sim.led_of(o) != OFF]  # every pawn at the entrance
            # the dice are rolled by hand and typed on the page
            assert s.apply({"t": "roll", "by": "p1", "dice": [3, 3]}, "host page")["ok"]
            await until(lambda: sim.led_of("space.5") == ("solid", P1, 0), what="space 5 lit in Player 1's red")
            # the pawn put down on space 5, as the page's sensor button does it: through the simulated board
            n = s.counters["inputs"]
            assert b.sensor_press("medieval-madness", {"t": "pawn", "space": 5})["ok"]
            await until(lambda: s.counters["inputs"] > n, what="the pawn check")
            assert s.match.inputs[-1] == {"t": "pawn", "space": 5}
            assert s.counters["illegal"] == 0 and not any("No pawn" in x["text"] for x in s.notices)
            # Player 2 rolls 1 and 1: space 1 in blue, space 5 still red
            assert s.apply({"t": "roll", "by": "p2", "dice": [1, 1]}, "host page")["ok"]
            await until(lambda: sim.led_of("space.1") == ("solid", P2, 0), what="space 1 in Player 2's blue")
            assert sim.led_of("space.5") == ("solid", P1, 0)

            # a pawn put down where none belongs is said aloud and blinks red
            sim.press("space.7", 1)
            await until(lambda: sim.led_of("space.7") == ("blink", RED, 250), what="the warning on space 7")
            assert "No pawn belongs on space 7, Royal Stipend." in [x["text"] for x in s.notices]
            sim.press("space.7", 0)  # lifted: nothing happens yet ...
            sim.press("space.5", 0)
            sim.press("space.5", 1)  # ... put down where it belongs: the warning goes out
            await until(lambda: sim.led_of("space.7") == OFF, what="the warning cleared")
            assert sim.led_of("space.5") == ("solid", P1, 0)
            assert s.router.counters.get("ignored") == 2  # the two lifts
            assert s.counters["illegal"] == 0
    asyncio.run(go())


def test_a_sensor_the_map_does_not_know_is_counted_and_reported_and_play_goes_on(tmp_path):
    async def go():
        async with madness_bridge(tmp_path / "j.sqlite") as (_b, s, sim):
            wall = sim.boards["outer-wall"]
            wall.sensors["sp-44"] = "presence"  # a board wired for a space this board does not have
            wall.hello()  # ... declares it (an event of an undeclared sensor is refused by the transport)
            wall.sense("sp-44", 1)
            await until(lambda: s.router.counters.get("unmapped-sensor") == 1, what="the unknown sensor")
            warning = [x["text"] for x in s.notices if x["kind"] == "warning"]
            assert warning == ["sensor outer-wall/sp-44 is not mapped to any object in %s" % MAP]
            assert s.counters["inputs"] == 0 and s.counters["illegal"] == 0
            assert s.apply({"t": "roll", "by": "p1", "dice": [6, 6]}, "host page")["ok"]
            at = s.match.view()["players"][0]["space"]
            await until(lambda: sim.led_of("space.%d" % at)[1] == P1, what="the move lit")
    asyncio.run(go())


def test_battlement_run_simulate_plays_medieval_madness_from_the_page(bridge_process):
    b = bridge_process("--simulate", "--game", "medieval-madness")
    assert b.state()["game"] == "medieval-madness"
    ws = Ws(b.url, role="host", code=b.host_code)
    try:
        s = ws.state()
        assert s["bridge"]["simulated"]
        assert ws.act(action="input", input={"t": "roll", "by": "p1", "dice": [2, 2]})["ok"]
        # a pawn put down on the wrong space, through the simulated board
        assert ws.act(action="sense", input={"t": "pawn", "space": 6})["ok"]
        s = ws.state(lambda m: any("No pawn belongs on space 6" in n["text"] for n in m["notices"]))
        assert ws.act(action="sense", input={"t": "pawn", "space": 3})["ok"]  # and where it belongs
        s = ws.state(lambda m: m["counters"]["inputs"] >= 3)
        assert s["counters"]["illegal"] == 0
        assert "Player 1 moves to Buy a Dungeon Pass." in [n["text"] for n in s["notices"]]
    finally:
        ws.close()
    assert "Traceback" not in b.output()
    assert os.path.exists(b.journal)


# --- the real firmware on both walls ---------------------------------------------------------

RED_PX, DARK_PX = (0xFF, 0x00, 0x00), (0, 0, 0)


def test_real_firmware_on_both_walls_reports_pawns_and_shows_the_lights(tmp_path):
    """The shipped pin maps on the MicroPython firmware (outer wall through muxes, inner wall on
    direct pins) -> pty serial -> the bridge -> the rules -> the walls' pixels."""
    from battlement.sim.firmware import FirmwareProcess
    from support.procs import PtyPair

    async def go():
        pairs = {w: PtyPair(tmp_path / ("pty-" + w)).start() for w in ("outer-wall", "inner-wall")}
        fws = {}
        b = Bridge([tables.for_game("medieval-madness")], str(tmp_path / "j.sqlite"),
                   serial=[p.a for p in pairs.values()])
        try:
            await b.start()  # listening before the boards boot, so their first hello is heard
            for w, p in pairs.items():
                fws[w] = FirmwareProcess(w, pinmap=str(hardware.BOARDS / (w + ".json")), port=p.b).start()
            s = b.sessions["medieval-madness"]
            await until(lambda: len(b.transports[0].boards) == 2, timeout=20, what="both walls' hello")
            outer, inner = fws["outer-wall"], fws["inner-wall"]
            s.new_game(options={"players": 2})
            # Player 1 rolls 2 and 4: space 5 (pixel 6 of the outer wall) turns red
            assert s.apply({"t": "roll", "by": "p1", "dice": [2, 4]}, "host page")["ok"]
            await asyncio.to_thread(outer.wait_pixels, lambda px: px[6] == RED_PX, 10)
            outer.presence("sp-5", True)  # the pawn put down there, seen through the mux
            await until(lambda: s.match.inputs[-1:] == [{"t": "pawn", "space": 5}], what="the pawn on space 5")
            assert s.counters["illegal"] == 0 and not any("No pawn" in n["text"] for n in s.notices)
            # a pawn put down on the inner wall's Joust (30, pixel 3), where none belongs: it blinks red
            inner.presence("sp-30", True)
            await until(lambda: s.match.inputs[-1:] == [{"t": "pawn", "space": 30}], what="the pawn on space 30")
            assert "No pawn belongs on space 30, Joust." in [n["text"] for n in s.notices]
            await asyncio.to_thread(inner.wait_pixels, lambda px: px[3] == RED_PX, 10)
            await asyncio.to_thread(inner.wait_pixels, lambda px: px[3] == DARK_PX, 10)  # blinking
            # taken away and Player 1's pawn put down on its space again: the warning goes out
            inner.presence("sp-30", False)
            outer.presence("sp-5", False)
            await until(lambda: s.router.counters.get("ignored") == 2, what="the two lifts")
            outer.presence("sp-5", True)
            await until(lambda: len(s.match.inputs) == 4, what="the second pawn check on space 5")
            await asyncio.to_thread(inner.wait_pixels, lambda px: set(px[1:]) == {DARK_PX}, 10)
            assert s.counters["illegal"] == 0
            for fw in fws.values():
                assert fw.alive(), fw.log()
        finally:
            await b.stop()
            await asyncio.gather(*(asyncio.to_thread(fw.stop) for fw in fws.values()))  # both at once
            for p in pairs.values():
                p.close()
    asyncio.run(go())
