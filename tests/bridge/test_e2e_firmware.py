"""End to end with the real firmware: MicroPython boards (simulated pins only) -> pty serial ->
the bridge -> Medieval Pong rules -> LED commands back -> the boards' NeoPixels."""

import asyncio
import pathlib

from battlement.bridge import Bridge
from battlement.sim.firmware import FirmwareProcess
from battlement.table.maps import for_game
from support.aio import until
from support.procs import PtyPair

ROOT = pathlib.Path(__file__).resolve().parents[2]
BLUE = (0x00, 0x40, 0xFF)
RED = (0xFF, 0x00, 0x00)
DARK = (0, 0, 0)
GOLD = (0xFF, 0xD0, 0x00)


def ring(fw, first):
    """The 8 pixels of a tower's ring (group 'ring-xy' in the kit's pin map: pixels first..first+7)."""
    return set(fw.pixels()[first:first + 8])


def blue_c1_warns(fw):
    """A blink shows gold or dark at any moment: the ring is never blue again."""
    return ring(fw, 49) <= {GOLD, DARK} and fw.pixels()[49] == GOLD


def set_up(session, side, crown_towers):
    """The side's private page: the King and the Princess (crowns) where given, the others anywhere."""
    while True:
        mine = [i for i in session.match.legal() if i.get("by") == side]
        ready = [i for i in mine if i["t"] == "ready"]
        if ready:
            assert session.apply(ready[0], "side " + side)["ok"]
            return
        places = [i for i in mine if i["t"] == "place"]
        want = [i for i in places if crown_towers.get(i["character"]) == i["tower"]]
        assert session.apply((want or places)[0], "side " + side)["ok"]


def test_a_scripted_medieval_pong_game_through_real_firmware(tmp_path):
    async def go():
        pairs = [PtyPair(tmp_path / ("pty-" + s)).start() for s in ("red", "blue")]
        fws = {}
        b = Bridge([for_game("medieval-pong")], str(tmp_path / "j.sqlite"), serial=[p.a for p in pairs])
        try:
            for p, side in zip(pairs, ("red", "blue")):
                kit = ROOT / "hardware" / "boards" / ("%s-kingdom.json" % side)
                fws[side] = FirmwareProcess(side + "-kingdom", pinmap=str(kit), port=p.b).start()
            await b.start()
            s = b.sessions["medieval-pong"]
            await until(lambda: len(b.transports[0].boards) == 2, timeout=20, what="both boards' hello")
            s._relight()
            blue = fws["blue"]
            await until(lambda: ring(blue, 49) == {BLUE} and ring(fws["red"], 1) == {RED}, timeout=20,
                        what="kingdoms lit in their colours")

            set_up(s, "blue", {"king": "C1", "princess": "C2"})
            set_up(s, "red", {"king": "A1", "princess": "A2"})
            assert s.match.awaiting() == ["red"]

            blue.drop_ball("tower-c1", width_ms=12)  # red hits blue's King: tower destroyed, crown exposed
            await until(lambda: s.match.view()["sides"]["blue"]["towers"]["C1"].get("was") == "king",
                        what="the hit on blue C1")
            await until(lambda: blue_c1_warns(blue), what="blue C1 blinking gold: crown exposed")
            assert ring(blue, 57) == {BLUE}  # the Princess's tower still stands
            assert "Blue's crown in tower C1 is exposed!" in s.match.announcements

            for inp in (i for i in s.match.legal() if i.get("by") == "blue" and i["t"] == "swap"):
                assert s.apply(inp, "side blue")["ok"]
                break
            assert s.apply(s.miss_input(), "host page (miss)")["ok"]  # blue misses: no sensor sees that
            blue.drop_ball("tower-c1", width_ms=15)  # into the exposed crown
            await until(lambda: s.match.over, what="the end of the game")
            assert s.match.state["winner"] == "red"
            hist = b.journal.history("medieval-pong")
            assert hist[0]["winner"] == "red" and "red won" in hist[0]["summary"]
            # the players are asked which padlock to tick; nothing is ticked for them
            assert "padlocks" not in b.journal.get_progress("medieval-pong")
            assert s.apply({"t": "padlock", "character": "ninja"}, "host page")["ok"]
            assert b.journal.get_progress("medieval-pong")["padlocks"]["ticks"] == {"ninja": 1}
            assert s.counters["illegal"] == 0 and b.counters["board-errors"] == 0
        finally:
            await b.stop()
            for fw in fws.values():
                fw.stop()
            for p in pairs:
                p.close()
    asyncio.run(go())


def pingpong_choice(s):
    """Player 1 lands one ball in each of player 2's cups in turn (odd counts take cups off); player 2 misses."""
    v = s.match.view()
    legal = s.match.legal()
    score = [i for i in legal if i["t"] == "score"]
    if score:
        return score[0]
    if v["shooter"] == "p1" and v["phase"] == "shootoff":
        return {"t": "ball", "cup": "green.1"}  # into one's own colour wins the shoot-off
    if v["shooter"] == "p1":
        hit = {shot["cup"] for shot in v["shots"]}
        for tray in ("yellow", "blue"):
            for space in v["trays"][tray]:
                if space["height"] and space["cup"] not in hit:
                    return {"t": "ball", "cup": space["cup"]}
    return next(i for i in legal if i["t"] == "miss")


def test_a_scripted_plingpong_game_through_real_firmware_over_mqtt(mosquitto, tmp_path):
    from battlement.table import maps as tables

    path = tables.default_path("plingpong")
    with open(path) as f:
        tmap = tables.parse(f.read().replace('table = "plingpong"', 'table = "pp-e2e"'), path)

    async def go():
        fws = {}
        b = Bridge([tmap], str(tmp_path / "j.sqlite"), mqtt=mosquitto.url)
        try:
            await b.start()
            for board in ("plingpong-1", "plingpong-2"):
                kit = ROOT / "hardware" / "boards" / (board + ".json")
                fws[board] = FirmwareProcess(board, pinmap=str(kit), transport="mqtt", mqtt_url=mosquitto.url,
                                             table="pp-e2e").start()
            s = b.sessions["pp-e2e"]
            await until(lambda: len(b.transports[0].boards) == 2, timeout=20, what="both boards' hello")
            s.new_game("plingpong", {"players": 2}, seed=1)
            right = fws["plingpong-2"]  # yellow cups are its pixels 1-6, blue 7-12
            await until(lambda: right.pixels()[1] == (0xFF, 0xC0, 0x00), timeout=20, what="yellow cup 1 lit")
            rounds_seen = set()
            for _ in range(60):
                if s.match.over:
                    break
                inp = pingpong_choice(s)
                if inp["t"] == "ball":
                    o = tmap.objects[inp["cup"]]
                    n = s.counters["inputs"]
                    fws[o.board].drop_ball(o.sensor, width_ms=10)
                    await until(lambda n=n: s.counters["inputs"] > n, what="the ball in " + inp["cup"])
                else:
                    assert s.apply(inp, "host page")["ok"]
                if s.match.view()["round"] == 2 and 2 not in rounds_seen:
                    rounds_seen.add(2)  # round 1 scored: yellow 1-4 came off, yellow 5 still stands
                    await until(lambda: right.pixels()[1:5] == [(0, 0, 0)] * 4, what="yellow 1-4 dark")
                    assert right.pixels()[5] == (0xFF, 0xC0, 0x00)
            assert s.match.over and s.match.state["winner"] == "p1"
            await until(lambda: set(right.pixels()[1:13]) == {(0, 0, 0)}, what="player 2's cups all dark")
            assert s.counters["illegal"] == 0
        finally:
            await b.stop()
            for fw in fws.values():
                fw.stop()
    asyncio.run(go())
