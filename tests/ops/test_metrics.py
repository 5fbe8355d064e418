"""/metrics scraped over HTTP from `battlement run` while a game is played on its simulated boards over a
real Mosquitto: the counters and latency histograms move with the game, a malformed frame shows up by
its reason, and nothing a side keeps hidden ever appears."""

import re
import time
import urllib.error
import urllib.request

import paho.mqtt.client as mqtt
from battlement.link.messages import Event, up_frame
from prometheus_client.parser import text_string_to_metric_families
from support.bridgeproc import Ws


def play(ws, s, n):
    """Move the first piece the host page offers, n times, from host state s; returns the last state."""
    for _ in range(n):
        turns = s["view"]["turns"]
        assert ws.act(action="sense", input=s["sensed"][0])["ok"]
        s = ws.state(lambda m, turns=turns: m["view"]["turns"] > turns)
    return s


def scrape(b):
    with urllib.request.urlopen(b.url + "/metrics", timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/plain")
        return r.read().decode()


def samples(text):
    """{(name, frozenset(labels)): value} of a scrape."""
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def scrape_until(b, cond, timeout=10):
    """The first scrape cond accepts; the last one when none did in time (the asserts then say what is wrong)."""
    deadline = time.monotonic() + timeout
    while True:
        m = samples(scrape(b))
        if cond(m) or time.monotonic() > deadline:
            return m
        time.sleep(0.05)


def value(m, name, **labels):
    return m.get((name, frozenset(labels.items())), 0.0)


def rejected(m, transport):
    return {dict(k[1])["reason"]: v for k, v in m.items() if k[0] == "battlement_transport_frames_total"
            and dict(k[1])["transport"] == transport and dict(k[1])["reason"] != "accepted"}


def test_metrics_follow_a_game_and_name_a_malformed_frames_reason(bridge_process, mosquitto_fresh):
    b = bridge_process("--simulate", "--mqtt", mosquitto_fresh.url, "--game", "ringo")
    page = Ws(b.url, role="public")  # a scoreboard watching: its states are what event -> page times
    host = Ws(b.url, role="host", code=b.host_code)
    s = play(host, host.state(), 1)
    first = samples(scrape(b))
    assert value(first, "battlement_boards_online", table="ringo") == 6  # the default Ringo table's boards
    assert value(first, "battlement_board_online", table="ringo", board="ring-5") == 1

    s = play(host, s, 3)  # three more moves: each a lift and a put-down, two events and two inputs
    page.state(lambda s: s["view"]["turns"] >= 4)
    hists = ("battlement_event_to_led_seconds", "battlement_event_to_page_seconds", "battlement_journal_commit_seconds")
    # the last page push and LED commands have left: each latency observed for the three moves
    then = scrape_until(b, lambda m: all(value(m, h + "_count") - value(first, h + "_count") >= 3 for h in hists))
    assert value(then, "battlement_events_total", table="ringo") - value(first, "battlement_events_total", table="ringo") == 6
    assert value(then, "battlement_inputs_total", table="ringo") - value(first, "battlement_inputs_total", table="ringo") == 6
    for hist in hists:
        grew = value(then, hist + "_count") - value(first, hist + "_count")
        assert grew >= 3, "%s observed %d times in three moves" % (hist, grew)
        assert 0 < value(then, hist + "_sum") / value(then, hist + "_count") < 5.0
    assert value(then, "battlement_transport_frames_total", transport="mqtt", reason="accepted") > \
        value(first, "battlement_transport_frames_total", transport="mqtt", reason="accepted")
    assert value(then, "battlement_bridge_total", what="led-sent") > value(first, "battlement_bridge_total", what="led-sent")
    assert rejected(then, "mqtt") == rejected(first, "mqtt")
    try:
        urllib.request.urlopen(b.url + "/host?code=guess", timeout=10)
    except urllib.error.HTTPError as e:
        assert e.code == 403
    assert value(samples(scrape(b)), "battlement_web_total", reason="wrong-code") == 1

    # A malformed frame on a board's topic, and one whose CRC is wrong: counted by reason, the game goes on.
    good = up_frame(Event(None, "ring-5", 0x77, 1, "b", "presence", 1, 0, 0))
    star = good.rindex(b"*")
    bad_crc = good[:star + 1] + (b"0" if good[star + 1:star + 2] != b"0" else b"1") + good[star + 2:]
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="stranger")
    c.connect(mosquitto_fresh.host, mosquitto_fresh.port)
    c.loop_start()
    try:
        for payload in (b"event ring-5 this is not a frame\n", bad_crc):
            c.publish("battlement/ringo/ring-5/up", payload, qos=1).wait_for_publish(5)
    finally:
        c.loop_stop()
        c.disconnect()
    after = scrape_until(b, lambda m: sum(rejected(m, "mqtt").values()) >= 2)
    reasons = rejected(after, "mqtt")
    assert reasons.get("crc") == 1 and reasons.get("syntax") == 1, reasons
    play(host, s, 1)
    assert value(samples(scrape(b)), "battlement_events_total", table="ringo") == \
        value(after, "battlement_events_total", table="ringo") + 2
    page.close()
    host.close()


def test_metrics_hold_no_secret_of_a_side(bridge_process):
    """Medieval Pong: each side places its characters in secret. No character, code or placement, and not
    even the count of a side's own decisions, reaches /metrics; its labels are ids and reasons only."""
    b = bridge_process("--simulate", "--game", "medieval-pong")
    host = Ws(b.url, role="host", code=b.host_code)
    codes = host.state()["codes"]
    before = samples(scrape(b))
    hidden = set()
    for side in sorted(codes):
        for _ in range(30):
            ws = Ws(b.url, role="side", side=side, code=codes[side])  # a new socket starts with the state
            s = ws.state()
            hidden.update(s["view"]["sides"][side].get("to_place", []))
            step = [i for i in s["decisions"] if i["t"] == "ready"] or [i for i in s["decisions"] if i["t"] == "place"]
            assert ws.act(action="input", input=step[0])["ok"]
            ws.close()
            if step[0]["t"] == "ready":
                break
    assert hidden
    host.state(lambda m: m["counters"].get("private-inputs", 0) >= 2)
    text = scrape(b)
    after = samples(text)
    for word in sorted(hidden) + sorted(codes.values()) + [b.host_code]:
        assert not re.search(r"\b%s\b" % re.escape(word), text), "%r on /metrics" % word
    # placements are side decisions: not counted where everyone can look
    assert value(after, "battlement_inputs_total", table=b.state()["table"]) == \
        value(before, "battlement_inputs_total", table=b.state()["table"])
    for (name, labels) in after:
        assert name.startswith("battlement_"), name
        for k, v in labels:
            assert k in ("transport", "reason", "what", "table", "board", "firmware", "le"), (name, k)
            assert re.fullmatch(r"[a-z0-9.+-]*|\+Inf", v), (name, k, v)
    host.close()


def test_a_latency_on_a_bucket_bound_counts_in_that_bucket_as_prometheus_reads_it():
    from battlement.ops.metrics import Latency
    from prometheus_client import CollectorRegistry, generate_latest

    h = Latency("t_seconds", "test", (0.001, 0.01))
    for v in (0.0005, 0.001, 0.002, 0.01, 3.0):
        h.observe(v)
    reg = CollectorRegistry()
    reg.register(h)
    m = samples(generate_latest(reg).decode())
    assert [value(m, "t_seconds_bucket", le=le) for le in ("0.001", "0.01", "+Inf")] == [2, 4, 5]
    assert value(m, "t_seconds_count") == 5 and abs(value(m, "t_seconds_sum") - 3.0135) < 1e-9
