"""Home Assistant MQTT discovery on a real Mosquitto: a paho client plays Home Assistant's part.

It checks every discovery payload against what Home Assistant's MQTT discovery documents for the
component (sensor, binary_sensor, event: required keys, the keys it knows, unique_id, a device with
identifiers, via_device from a board to its table, availability), that every state topic is
published, that the state topics follow a scripted game, that discovery comes again when Home
Assistant says `homeassistant/status online`, and that the bridge's availability turns offline when
the bridge is killed (its last will).
"""

import asyncio
import json
import random
import re
import threading
import time

import paho.mqtt.client as mqtt
import pytest
from battlement.bridge import Bridge
from battlement.errors import UserError
from battlement.ops import hass
from battlement.table import maps as tables
from support.aio import running, until
from support.procs import settle

import shared_rules

# Home Assistant's MQTT discovery, per component: the keys it requires and the keys it knows
# (home-assistant.io/integrations/sensor.mqtt, binary_sensor.mqtt, event.mqtt; abbreviations unused).
COMMON = {"availability", "availability_mode", "availability_template", "availability_topic", "device",
          "enabled_by_default", "encoding", "entity_category", "entity_picture", "icon", "json_attributes_template",
          "json_attributes_topic", "name", "object_id", "default_entity_id", "origin", "payload_available",
          "payload_not_available", "platform", "qos", "unique_id", "value_template", "state_topic", "device_class"}
SCHEMA = {
    "sensor": ({"state_topic"}, COMMON | {"expire_after", "force_update", "last_reset_value_template", "options",
                                          "state_class", "suggested_display_precision", "unit_of_measurement"}),
    "binary_sensor": ({"state_topic"}, COMMON | {"expire_after", "force_update", "off_delay", "payload_off",
                                                 "payload_on"}),
    "event": ({"state_topic", "event_types"}, COMMON | {"event_types"}),
}
DEVICE_KEYS = {"configuration_url", "connections", "hw_version", "identifiers", "manufacturer", "model", "model_id",
               "name", "serial_number", "suggested_area", "sw_version", "via_device"}
BINARY_CLASSES = {"battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door", "garage_door",
                  "gas", "heat", "light", "lock", "moisture", "motion", "moving", "occupancy", "opening", "plug",
                  "power", "presence", "problem", "running", "safety", "smoke", "sound", "tamper", "update",
                  "vibration", "window"}
CONFIG_TOPIC = re.compile(r"^homeassistant/(sensor|binary_sensor|event)/([a-zA-Z0-9_-]+)/([a-zA-Z0-9_-]+)/config$")
TEMPLATE = re.compile(r"^\{\{ value_json\.(\w+)( \| tojson)? \}\}$")  # the only templates we use


class HomeAssistant:
    """A paho client subscribed where Home Assistant is: discovery, and every topic a config names."""

    def __init__(self, broker):
        self.got: list[tuple[str, bytes, bool]] = []
        self.lock = threading.Lock()
        self.ready = threading.Event()  # subscribed: the broker's SUBACK came
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="home-assistant-%d" % time.monotonic_ns())
        c.on_connect = lambda c, u, f, rc, p=None: c.subscribe([("homeassistant/#", 1), ("battlement/#", 1)])
        c.on_subscribe = lambda *a: self.ready.set()
        c.on_message = self._message
        c.connect(broker.host, broker.port)
        c.loop_start()
        self.c = c
        assert self.ready.wait(5)

    def _message(self, c, u, m):
        with self.lock:
            self.got.append((m.topic, m.payload, bool(m.retain)))

    def last(self, topic):
        with self.lock:
            for t, p, _r in reversed(self.got):
                if t == topic:
                    return p
        return None

    def all(self, topic):
        with self.lock:
            return [p for t, p, _r in self.got if t == topic]

    def configs(self):
        with self.lock:
            out = {}
            for t, p, _r in self.got:
                if CONFIG_TOPIC.match(t) and p:
                    out[t] = json.loads(p)
            return out

    def clear(self):
        with self.lock:
            self.got.clear()

    def close(self):
        self.c.disconnect()
        self.c.loop_stop()


@pytest.fixture
def ha(mosquitto_fresh):
    """Home Assistant's view of the test's broker, connected before the bridge starts."""
    h = HomeAssistant(mosquitto_fresh)
    yield h
    h.close()


def versions(configs: dict) -> dict:
    """A board's config topic -> its device's sw_version (None: not said yet)."""
    return {t: c["device"].get("sw_version") for t, c in configs.items() if "/binary_sensor/" in t}


def render(template: str, payload: bytes):
    """Home Assistant's template, for the two forms the discovery uses."""
    m = TEMPLATE.match(template)
    assert m, "template %r" % template
    value = json.loads(payload)[m.group(1)]
    return json.dumps(value) if m.group(2) else value


def check_schema(configs: dict, tmaps) -> dict:
    """Every config as Home Assistant's documentation asks; returns unique_id -> (component, config)."""
    by_id = {}
    table_ids = {"battlement-%s" % t.table for t in tmaps}
    for topic, cfg in configs.items():
        comp, node, _obj = CONFIG_TOPIC.match(topic).groups()
        required, known = SCHEMA[comp]
        assert required <= set(cfg), (topic, required - set(cfg))
        assert set(cfg) <= known, (topic, set(cfg) - known)
        assert isinstance(cfg["unique_id"], str) and cfg["unique_id"] not in by_id, topic
        by_id[cfg["unique_id"]] = (comp, cfg)
        assert cfg["origin"]["name"] == "Battlement"
        dev = cfg["device"]
        assert set(dev) <= DEVICE_KEYS and dev["name"], topic
        assert isinstance(dev["identifiers"], list) and dev["identifiers"] and all(isinstance(i, str) for i in dev["identifiers"])
        avail = cfg["availability"]
        assert avail and all(set(a) == {"topic", "payload_available", "payload_not_available"} for a in avail), topic
        if comp == "binary_sensor":  # a board: its own device, linked to its table's
            assert cfg["device_class"] in BINARY_CLASSES and cfg["entity_category"] in ("config", "diagnostic")
            assert dev["via_device"] in table_ids and dev["identifiers"][0] not in table_ids, topic
        else:
            assert dev["identifiers"][0] in table_ids and "via_device" not in dev, topic
        if comp == "event":
            assert cfg["event_types"] and all(isinstance(e, str) for e in cfg["event_types"])
        for key in ("value_template", "json_attributes_template"):
            if key in cfg:
                assert TEMPLATE.match(cfg[key]), (topic, cfg[key])
        assert node == "battlement-" + cfg["state_topic"].split("/")[1]
    return by_id


def pong_table(tid):
    return _renamed("medieval-pong", tid)


def ringo_table(tid):
    return _renamed("ringo", tid)


def _renamed(game, tid):
    path = tables.default_path(game)
    with open(path) as f:
        return tables.parse(f.read().replace('table = "%s"' % game, 'table = "%s"' % tid), path)


async def play_one_input(b: Bridge, table: str, rng: random.Random) -> dict:
    """A legal input: sensed ones through the simulated boards (over MQTT), decisions from the sides' pages."""
    s = b.sessions[table]
    before = len(s.match.inputs)
    sensed = set(s.match.game.SENSED)
    legal = s.match.legal()
    hits = [i for i in legal if i["t"] in sensed]
    inp = rng.choice(hits if hits and rng.random() < 0.7 else legal)
    if inp["t"] in sensed:
        b.sensor_press(table, inp)
    else:
        s.apply(inp, "side %s" % inp["by"] if inp.get("by") else "host page")
    await until(lambda: len(s.match.inputs) > before or s.match.over, what="%s applied" % inp)
    return inp


def test_discovery_follows_home_assistants_schema_and_the_state_topics_follow_a_game(mosquitto_fresh, ha, tmp_path):
    broker = mosquitto_fresh
    maps = [pong_table("ha-pong"), ringo_table("ha-ringo")]

    async def go():
        async with running(Bridge(maps, str(tmp_path / "j.sqlite"), mqtt=broker.url, simulate=True)) as b:
            avail = b.hass.avail
            await until(lambda: ha.last(avail) == b"online", what="the bridge's availability")
            n_configs = sum(3 + len(t.boards) for t in maps)
            await until(lambda: len(ha.configs()) == n_configs, what="every discovery config")
            by_id = check_schema(ha.configs(), maps)
            assert sorted(c for c, _ in by_id.values()).count("event") == 2
            for _comp, cfg in by_id.values():
                assert cfg["availability"][0]["topic"] == avail
            # every state topic is published (the boards' links by the bridge, as it took their status)
            sim = b.sims["ha-ringo"]
            await until(lambda: all(sim.led_of(o) for o in sim.tmap.objects), what="Ringo lit")
            await until(lambda: {(maps[0].table, x) for x in maps[0].boards} <= set(b.transports[0].boards),
                        what="Pong's boards' hello")
            for uid, (comp, cfg) in by_id.items():
                if comp != "event":
                    await until(lambda cfg=cfg: ha.last(cfg["state_topic"]) is not None, what="state of " + uid)
            board_online = by_id["battlement-ha-ringo-castle-online"][1]  # as the bridge took it (within 0.5 s)
            await until(lambda: ha.last(board_online["state_topic"]) == board_online["payload_on"].encode(),
                        what="the castle board online, as the bridge vouches")

            # Ringo: a piece lifted from b5 and put on b4 is a move; the turn passes to the defenders
            game = by_id["battlement-ha-ringo-game"][1]
            assert render(game["value_template"], ha.last(game["state_topic"])) == "Turn: Attackers"
            sim.press("b5", 0)
            sim.press("b4", 1)
            await until(lambda: render(game["value_template"], ha.last(game["state_topic"])) == "Turn: Defenders",
                        what="the turn in Home Assistant")
            attrs = json.loads(render(game["json_attributes_template"], ha.last(game["state_topic"])))
            assert attrs["cells"]["b4"] == "attackers" and "b5" not in attrs["cells"] and "log" not in attrs
            moves = [json.loads(p) for p in ha.all("battlement/ha-ringo/event")]
            assert [m["event_type"] for m in moves] == ["move", "move"]
            # in the order the rules applied them (the two rings' boards are two links: either may come first)
            applied = b.sessions["ha-ringo"].match.inputs
            assert [m["cell"] for m in moves] == [i["cell"] for i in applied] and sorted(m["cell"] for m in moves) == [
                "b4", "b5"]
            assert all(m["text"] for m in moves)
            assert all(not r for t, _p, r in ha.got if t == "battlement/ha-ringo/event")  # events are not retained

            # Medieval Pong to its end: hits and falls as events, the kingdoms as attributes, the winner
            pong = by_id["battlement-ha-pong-game"][1]
            winner = by_id["battlement-ha-pong-winner"][1]
            play = by_id["battlement-ha-pong-play"][1]
            assert render(winner["value_template"], ha.last(winner["state_topic"])) == "none"
            s = b.sessions["ha-pong"]
            rng = random.Random(5)
            played = []
            for _ in range(300):
                if s.match.over:
                    break
                played.append(await play_one_input(b, "ha-pong", rng))
            assert s.match.over, "the scripted game did not end"
            want = s.match.state["winner"]
            await until(lambda: render(winner["value_template"], ha.last(winner["state_topic"])) == want.capitalize(),
                        what="the winner in Home Assistant")
            assert render(pong["value_template"], ha.last(pong["state_topic"])) == "%s won" % want.capitalize()
            kingdoms = json.loads(render(pong["json_attributes_template"], ha.last(pong["state_topic"])))["sides"]
            assert kingdoms == s.public()["view"]["sides"]  # the public view, nothing more
            assert not any("ch" in tower for k in kingdoms.values() for tower in k["towers"].values())
            events = [json.loads(p) for p in ha.all(play["state_topic"])]
            sensed = [i for i in s.match.inputs if i["t"] in s.match.game.SENSED]
            assert [e["input"] for e in events] == [i["t"] for i in sensed] and events
            assert {e["event_type"] for e in events} <= set(play["event_types"])
            assert "hit" in {e["event_type"] for e in events}
            assert b.hass.counters["unsent"] == 0
        assert ha.last(avail) == b"offline"  # a clean stop says so itself

    asyncio.run(go())


def test_every_applied_input_is_an_event_when_one_loop_turn_undoes_and_starts_a_new_game(mosquitto_fresh, ha,
                                                                                         tmp_path):
    """Home Assistant hears a table's events once a loop turn (a batch of events), not once an input: an
    input, its undo, two more and a new game, all in one turn, still give each input the rules applied
    its event, in order, and the new game's first input its own."""
    broker = mosquitto_fresh
    lift, put = {"t": "cell", "cell": "b5", "occupied": False}, {"t": "cell", "cell": "b5", "occupied": True}

    async def go():
        async with running(Bridge([ringo_table("ha-turn")], str(tmp_path / "j.sqlite"), mqtt=broker.url,
                                  simulate=True)) as b:
            await until(lambda: ha.last(b.hass.avail) == b"online", what="the bridge's availability")
            s = b.sessions["ha-turn"]
            # one loop turn: nothing awaited from here to the new game
            assert s.apply(lift, "host page")["ok"]
            assert s.undo()["ok"]
            assert s.apply(lift, "host page")["ok"] and s.apply(put, "host page")["ok"]
            s.new_game()
            assert not s.match.inputs
            await asyncio.sleep(0)
            assert s.apply(lift, "host page")["ok"]  # the new game's: after it, nothing more is coming
            topic = "battlement/ha-turn/event"
            await until(lambda: len(ha.all(topic)) >= 4, what="four events")
            got = [(m["cell"], m["occupied"]) for m in map(json.loads, ha.all(topic))]
            assert got == [("b5", False), ("b5", False), ("b5", True), ("b5", False)]

    asyncio.run(go())


def test_discovery_is_sent_again_when_home_assistant_comes_online(mosquitto_fresh, ha, tmp_path):
    broker = mosquitto_fresh

    async def go():
        bridge = Bridge([ringo_table("ha-birth")], str(tmp_path / "j.sqlite"), mqtt=broker.url, simulate=True)
        async with running(bridge) as b:
            await until(lambda: len(ha.configs()) == 3 + len(b.tmaps["ha-birth"].boards), what="discovery")
            # each board's device again with its firmware once its hello came: the picture is whole after that
            await until(lambda: set(versions(ha.configs()).values()) == {"sim-1"}, what="every board's firmware")
            first = ha.configs()
            sent = b.hass.counters["discovery-sent"]
            ha.clear()
            ha.c.publish("homeassistant/status", b"offline", qos=1)  # HA going away asks for nothing...
            ha.c.publish("homeassistant/status", b"online", qos=1)  # ...its birth message after its restart does
            # The birth is the marker: the bridge reads the two in order, so once it has answered the birth
            # it had read "offline" before, and what it sent for it would be counted already.
            await until(lambda: b.hass.counters["ha-restarts"] == 1, what="the birth message read")
            assert b.hass.counters["discovery-sent"] == sent + len(first)  # one round, for the birth alone
            await until(lambda: ha.configs() == first, what="discovery sent again")
            assert sorted(t for t, _p, _r in ha.got if CONFIG_TOPIC.match(t)) == sorted(first)  # each once
            late = HomeAssistant(broker)  # a Home Assistant that starts later finds them: retained
            try:
                await until(lambda: late.configs() == first, what="retained discovery")
            finally:
                late.close()
            assert ha.last(hass.game_topic("ha-birth")) is not None  # and the state with it
            assert b.hass.counters["ha-restarts"] == 1

    asyncio.run(go())


def test_the_bridges_availability_goes_offline_when_it_is_killed_and_its_ids_stay(bridge_process, mosquitto_fresh,
                                                                                 ha):
    broker = mosquitto_fresh
    bp = bridge_process("--game", "ringo", "--simulate", "--mqtt", broker.url)
    assert "Home Assistant: discovery under homeassistant/" in bp.output()
    avail = hass.availability_topic(hass.bridge_id(["ringo"]))
    deadline = time.monotonic() + 10
    while (ha.last(avail) != b"online" or len(ha.configs()) < 3 or set(versions(ha.configs()).values()) != {"sim-1"}) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ha.last(avail) == b"online"
    first = ha.configs()  # each board's device with the firmware its hello said: the restart sends it from the journal
    bp.kill9()
    while ha.last(avail) != b"offline" and time.monotonic() < deadline + 10:
        time.sleep(0.05)
    assert ha.last(avail) == b"offline"  # the last will: Home Assistant shows every entity unavailable
    later = HomeAssistant(broker)  # one that connects afterwards learns it too (retained)
    try:
        deadline = time.monotonic() + 5
        while later.last(avail) is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert later.last(avail) == b"offline"
    finally:
        later.close()
    ha.clear()
    bp.start()  # the same table again: the same topics, unique ids and devices
    deadline = time.monotonic() + 10
    while (ha.last(avail) != b"online" or len(ha.configs()) < len(first)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ha.last(avail) == b"online" and ha.configs() == first


def test_no_hass_publishes_nothing_for_home_assistant(mosquitto_fresh, ha, tmp_path):
    broker = mosquitto_fresh

    async def go():
        bridge = Bridge([ringo_table("ha-off")], str(tmp_path / "j.sqlite"), mqtt=broker.url, simulate=True,
                        hass_prefix=None)
        async with running(bridge) as b:
            sim = b.sims["ha-off"]
            await until(lambda: all(sim.led_of(o) for o in sim.tmap.objects), what="the table lit")
            sim.press("b5", 0)
            sim.press("b4", 1)
            await until(lambda: b.sessions["ha-off"].match.view()["cells"].get("b4"), what="a move")

    asyncio.run(go())  # a clean stop: a publisher would say "offline" now, having sent the last state first
    settle(ha.c, "battlement/test-marker", ha.all)  # the marker: what the bridge sent came before it
    mine = [t for t, _p, _r in ha.got if t.startswith(("homeassistant/", "battlement/bridge/")) or t.endswith(("/game", "/event"))]
    assert mine == []


def test_every_sensed_input_of_every_game_is_an_event_type():
    for name in sorted(shared_rules.GAMES):
        for t in shared_rules.load(name).SENSED:
            assert hass.EVENT_OF_INPUT[t] in hass.EVENT_TYPES, (name, t)


def test_a_bad_prefix_is_one_clear_line(tmp_path):
    with pytest.raises(UserError, match="--hass-prefix 'home/#' is not a discovery prefix"):
        Bridge([ringo_table("ha-bad")], str(tmp_path / "j.sqlite"), mqtt="mqtt://127.0.0.1:1", hass_prefix="home/#")
