"""The bridge's board health with real parts (virtual boards on ptys): the LED test blinks a board's
lights through the normal LED path and puts the game's lights back; each sensor's last trigger; a
board whose pty closes is offline; a board no map lists is named in words."""

import asyncio

from battlement.link.messages import Hello
from battlement.ops import health as health_mod
from bridge.test_session import ringo_bridge
from support.aio import until


def card(b, board):
    return next(x for x in b.board_health()["boards"] if x["board"] == board)


def test_the_led_test_blinks_a_board_and_gives_the_game_its_lights_back(tmp_path, monkeypatch):
    monkeypatch.setattr(health_mod, "LED_TEST_SECONDS", 0.4)

    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (b, _s, sim):
            ring = sim.boards["ring-1"]
            before = dict(ring.pixels)
            reply = b.led_test("ringo", "ring-1")
            assert reply["ok"] and reply["lights"] == 8
            await until(lambda: all(p == ("blink", 0xFFFFFF, 300) for p in ring.pixels.values()), what="ring-1 blinking")
            assert sim.boards["ring-2"].pixels != ring.pixels  # that board only
            await until(lambda: ring.pixels == before, what="the game's lights back on ring-1")
            assert b.led_test("ringo", "ring-9") == {"ok": False, "message": "table ringo has no board 'ring-9'"}
    asyncio.run(go())


def test_each_sensor_has_its_last_trigger_and_a_closed_port_is_offline(tmp_path):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (b, _s, sim):
            assert card(b, "ring-5")["state"] == "online" and b.link_of("ringo")["online"] == 6
            sim.press("b5", 0)
            await until(lambda: next(x for x in card(b, "ring-5")["sensors"] if x["id"] == "b")["count"] == 1,
                        what="b5's trigger")
            b5 = next(x for x in card(b, "ring-5")["sensors"] if x["id"] == "b")
            assert b5["object"] == "b5" and b5["last_value"] == 0 and b5["last_at"]
            assert card(b, "ring-5")["hello"]["firmware"] == "sim-1"
            sim.links["ring-5"].close()  # the board's USB cable pulled
            await until(lambda: card(b, "ring-5")["state"] == "offline", what="ring-5 offline")
            await until(lambda: b.link_of("ringo") == {"boards": 6, "online": 5, "offline": ["ring-5"]},
                        what="the pages told")
            b.handle(Hello(None, "toaster", 1, "x", 1, "sim", {}, "/dev/ttyX"))
            assert "board toaster said hello on table ringo, but" in b.notes[-1]
    asyncio.run(go())


def test_two_tables_on_one_broker_with_the_same_board_ids_are_told_apart(mosquitto, tmp_path):
    """Both tables have boards castle, ring-1 ... ring-5: one table's boards going offline leaves the other's
    online on the page (the broker's status topics are per table)."""
    import pathlib

    from battlement.bridge import Bridge
    from battlement.table import maps as tables

    maps = []
    for tid in ("hall-a-%d" % mosquitto.port, "hall-b-%d" % mosquitto.port):
        f = tmp_path / (tid + ".toml")
        f.write_text(pathlib.Path(tables.default_path("ringo")).read_text().replace('table = "ringo"', 'table = "%s"' % tid))
        maps.append(tables.load(str(f)))
    a, b_ = maps[0].table, maps[1].table

    async def go():
        b = Bridge(maps, str(tmp_path / "j.sqlite"), mqtt=mosquitto.url, simulate=True)
        await b.start()
        try:
            def states(table):
                return {x["board"]: x["state"] for x in b.board_health()["boards"] if x["table"] == table}
            await until(lambda: set(states(a).values()) == {"online"} and set(states(b_).values()) == {"online"},
                        what="both tables' boards online", timeout=20)
            b.sims[a].close()  # hall A's boards gone: their status says offline
            await until(lambda: set(states(a).values()) == {"offline"}, what="hall A offline", timeout=20)
            assert set(states(b_).values()) == {"online"}
            assert b.link_of(b_)["online"] == 6
            await until(lambda: b.link_of(a)["online"] == 0, what="hall A's pages told")
        finally:
            await b.stop()
    asyncio.run(go())
