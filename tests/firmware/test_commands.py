"""Host commands under the real MicroPython: LEDs, settings, ping, evack, resend, bad frames."""

import pytest
from battlement.link import wire
from fwtest import MODELS, frame, run_scenario

CONFIG = {
    "board": "tower-1",
    "role": "pong-side",
    "profile": "pico-w",
    "sensors": [{"id": "cup-1", "kind": "beam", "pin": 2}, {"id": "tilt-1", "kind": "tilt", "pin": 3}],
    "leds": {"pin": 16, "count": 9, "status": 0, "groups": {"ring": "1-8", "top": [8]}},
}
RED = (255, 0, 0)
OFF = (0, 0, 0)


def ball():
    return ["set 2 0", "adv 8000", "set 2 1", "adv 20000", "sense"]


@pytest.mark.parametrize("model", MODELS)
def test_led_patterns_on_the_strip(fw_code, model):
    ops = ["line " + frame("led", "tower-1", 1, "ring", "solid", 0x00FF00, 0), "render 0"]
    ops += ["line " + frame("led", "tower-1", 2, "3", "blink", 0xFF0000, 400), "render 100", "render 300"]
    ops += ["line " + frame("led", "tower-1", 3, "1-4", "chase", 0xFF0000, 400)]
    ops += ["render %d" % t for t in (10, 110, 210, 310)]
    ops += ["line " + frame("led", "tower-1", 4, "top", "pulse", 0x0000FF, 1000), "render 250", "render 500"]
    ops += ["line " + frame("led", "tower-1", 5, "all", "off", 0, 0), "render 0"]
    r = run_scenario(fw_code, CONFIG, ops, model=model)
    assert [a[1] for a in r.of("ack")] == [1, 2, 3, 4, 5]
    solid, blink_on, blink_off, *rest = r.pixels
    assert solid[1:9] == [(0, 255, 0)] * 8
    assert blink_on[3] == RED and blink_off[3] == OFF
    chase = rest[:4]
    # One lit pixel walks along 1..4, one step per quarter period.
    assert [[i for i in range(1, 5) if p[i] == RED] for p in chase] == [[1], [2], [3], [4]]
    quarter, peak = rest[4], rest[5]
    assert 0 < quarter[8][2] < peak[8][2] and peak[8][2] >= 250
    assert rest[6][1:] == [OFF] * 8


def test_bad_commands_answered_with_the_reason(fw_code):
    ops = [
        "line " + frame("led", "tower-1", 7, "moat", "solid", 0xFF0000, 0),
        "line " + frame("led", "tower-1", 8, "42", "solid", 0xFF0000, 0),
        "line " + frame("led", "tower-1", 9, "1", "sparkle", 0xFF0000, 0),
        "line " + frame("config", "tower-1", 10, "beam.colour", "3"),
        "line " + frame("config", "tower-1", 11, "cup-9.min_us", "3"),
        "line " + frame("config", "tower-1", 12, "tilt.stable_ms", "lots"),
        "line " + frame("config", "tower-1", 13, "tilt-1.stable_ms", "50"),
        "line " + frame("ping", "someone-else", 14),  # not for us: ignored
        "line " + frame("event", "tower-1", 1, 1, "x", "beam", 1, 0, 0),  # wrong direction
        "line ping tower-1 15*00000000",  # bad CRC: ignored, like line noise
        "line hello there",
        "take",
    ]
    r = run_scenario(fw_code, CONFIG, ops)
    errors = {e[1]: e[2] for e in r.of("error")}
    assert errors == {
        7: "unknown-target",
        8: "unknown-target",
        9: "unknown-pattern",
        10: "unknown-key",
        11: "unknown-sensor",
        12: "bad-value",
        0: "wrong-direction",
    }
    assert r.of("ack") == [("tower-1", 13)]
    assert r.stats["rejected"] == 4


@pytest.mark.parametrize("model", MODELS)
def test_a_hello_whose_frame_finds_no_heap_is_made_next_cycle_and_goes_first(fw_code, model):
    # Defect: a hello whose frame found no heap (its ~500-byte blocks, in a fragmented heap) raised out of the
    # ping's handling, and at boot out of the link: the board reset, and in a heap that stays fragmented it reset
    # for ever. Now the hello is made again at the next cycle, and nothing goes out before it.
    ops = ["freeze"] + ball() + ["noheap 1", "line " + frame("ping", "tower-1", 5), "take", "house 0", "take"]
    r = run_scenario(fw_code, CONFIG, ops, model=model)
    kinds = [t for t, _ in r.frames]
    assert kinds[0] == "hello" and kinds.count("hello") == 1, kinds
    assert r.of("ack") == [("tower-1", 5)]
    assert [(e[2], e[3]) for e in r.events()] == [(1, "cup-1")]  # the ball, once, after the hello
    assert r.of("hello")[0][6] == 0  # where the board stands: nothing acknowledged yet


def test_a_board_that_owes_its_hello_queues_no_beats_and_a_beat_without_heap_is_skipped(fw_code):
    # Defect: while its hello found no heap, a board queued a beat every 5 s behind it, each one more block
    # of the heap that it was short of, all of them useless to a host that does not know its boot yet. And a
    # beat whose frame found no heap raised out of the cycle, skipping its housekeeping and its collection.
    ops = ["freeze"] + ball() + ["noheap 1", "line " + frame("ping", "tower-1", 5), "beat", "beat", "take"]
    ops += ["house 0", "take", "noheap 1", "beat", "take", "beat", "take"]
    r = run_scenario(fw_code, CONFIG, ops)
    kinds = [t for t, _ in r.frames]
    assert kinds == ["hello", "ack", "event", "beat"], kinds  # the two owed beats skipped, the starved one too


def test_ping_answers_ack_and_hello(fw_code):
    r = run_scenario(fw_code, CONFIG, ["line " + frame("ping", "tower-1", 77), "take"])
    assert r.of("ack") == [("tower-1", 77)]
    (hello,) = r.of("hello")
    assert hello[0] == "tower-1" and hello[4] == "pong-side" and hello[3] == wire.VERSION
    assert hello[5] == "cup-1:beam,tilt-1:tilt" and hello[6] == 0 and hello[7] == 0


def test_a_ping_is_a_resync_where_the_board_stands_then_its_whole_outbox(fw_code):
    """A host that has just started pings: the hello says what was acknowledged, then every
    unacknowledged event comes again, oldest first, so the host takes nothing as new before it knows."""
    ops = ["freeze"] + ball() + ball() + ["take", "flush"] + ball() + ball() + ["take"]
    ops += ["line " + frame("ping", "tower-1", 5), "take"]
    r = run_scenario(fw_code, CONFIG, ops)
    assert [e[2] for e in r.events()] == [1, 2, 3, 4, 3, 4]
    (hello,) = r.of("hello")
    assert hello[6] == 2  # acknowledged up to 2: the host may take 3 and 4 as new


@pytest.mark.parametrize("model", MODELS)
def test_outbox_kept_until_evack_and_resent_when_the_host_is_silent(fw_code, model):
    ops = ["freeze"] + ball() + ball() + ball() + ["take"]  # sent once
    ops += ["take"]  # nothing new
    ops += ["house 1100", "take"]  # no evack for a second: all three again
    ops += ["line " + frame("evack", "tower-1", 2, 2)]  # for another boot (the driver's board is in boot 1): ignored
    ops += ["house 1100", "take"]
    r = run_scenario(fw_code, CONFIG, ops + ["beat"], model=model)
    seqs = [e[2] for e in r.events()]
    assert seqs == [1, 2, 3, 1, 2, 3, 1, 2, 3]
    assert r.stats["outbox"] == 3


def test_evack_trims_the_outbox_and_resend_covers_only_the_rest(fw_code):
    # "flush" has the driver acknowledge with the board's own boot (up to seq 2).
    ops = ["freeze"] + ball() + ball() + ["flush"] + ball() + ["take", "house 1100", "take", "beat", "take"]
    r = run_scenario(fw_code, CONFIG, ops)
    seqs = [e[2] for e in r.events()]
    assert seqs == [1, 2, 3, 3]
    (beat,) = r.of("beat")
    dropped, outbox = beat[3], beat[6]
    assert (dropped, outbox) == (0, 1)


def test_full_outbox_drops_the_oldest_and_counts_it(fw_code):
    cfg = dict(CONFIG, outbox=8)
    ops = ["freeze"]
    for _ in range(10):
        ops += ball()
    ops += ["beat", "take"]
    r = run_scenario(fw_code, cfg, ops)
    assert [e[2] for e in r.events()] == list(range(3, 11))
    assert r.of("beat")[0][3] == 2  # dropped
