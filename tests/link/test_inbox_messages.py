"""Exactly-once bookkeeping and the message objects the bridge consumes."""

import pytest
from battlement.link import wire
from battlement.link.inbox import DUP, LATE, NEW, Inbox
from battlement.link.messages import (
    Beat,
    Config,
    EvAck,
    Event,
    Hello,
    Led,
    Ping,
    Reply,
    from_frame,
    to_frame,
    up_frame,
)
from battlement.link.wire import WireError

KEY = (None, "tower-1")


def test_duplicates_are_dropped_and_the_ack_is_cumulative():
    counters = {}
    box = Inbox(counters)
    box.hello(KEY, 0xB1)
    assert [box.offer(KEY, 0xB1, s)[0] for s in (1, 2, 2, 3, 1)] == [NEW, NEW, DUP, NEW, DUP]
    assert counters["stale-seq"] == 2
    assert box.acked(KEY) == (0xB1, 3)


def test_gap_is_reported_held_open_and_filled_late():
    counters = {}
    box = Inbox(counters)
    box.hello(KEY, 0xB1)
    box.offer(KEY, 0xB1, 1)
    assert box.offer(KEY, 0xB1, 5) == (NEW, 3)
    assert box.missing(KEY) == [2, 3, 4] and box.acked(KEY) == (0xB1, 1)  # board must keep 2..4
    assert box.offer(KEY, 0xB1, 3) == (LATE, 0)
    assert box.offer(KEY, 0xB1, 3) == (DUP, 0)
    assert box.offer(KEY, 0xB1, 2) == (LATE, 0)
    assert box.acked(KEY) == (0xB1, 3)
    assert counters == {"gap": 3, "late": 2, "stale-seq": 1}


def test_a_gap_nobody_fills_is_given_up_so_acks_move_on():
    counters = {}
    box = Inbox(counters, gap_window=10)
    box.hello(KEY, 0xB1)
    box.offer(KEY, 0xB1, 1)
    box.offer(KEY, 0xB1, 3)
    for s in range(4, 14):
        box.offer(KEY, 0xB1, s)
    assert box.missing(KEY) == [] and counters["lost"] == 1
    assert box.acked(KEY) == (0xB1, 13)


def test_a_hole_a_board_of_a_large_outbox_still_holds_is_never_given_up():
    # A board with the outbox the tests give the firmware (1024 events) whose first 600 frames went
    # nowhere (a stalled USB-Serial/JTAG port drops them): the newer ones come first, then its resend of
    # the whole outbox. With a gap window of 256 the host gave the far part up and acknowledged past it,
    # and the board deleted events it still held.
    counters = {}
    box = Inbox(counters)
    box.hello(KEY, 0xB1, acked=0)
    assert [box.offer(KEY, 0xB1, s)[0] for s in range(601, 1001)] == [NEW] * 400
    assert box.acked(KEY) == (0xB1, 0)  # the board must keep 1..600
    assert [box.offer(KEY, 0xB1, s)[0] for s in range(1, 1001)] == [LATE] * 600 + [DUP] * 400
    assert box.acked(KEY) == (0xB1, 1000) and counters.get("lost", 0) == 0


def test_new_boot_restarts_the_sequence_and_first_event_is_the_baseline():
    box = Inbox()
    box.hello(KEY, 0xB1)
    box.offer(KEY, 0xB1, 1)
    assert box.hello(KEY, 0xB1) is False  # the same boot saying hello again changes nothing
    assert box.offer(KEY, 0xB1, 1)[0] == DUP
    assert box.hello(KEY, 0xB2) is True
    assert box.offer(KEY, 0xB2, 1)[0] == NEW
    other = (None, "keep-2")
    box.hello(other, 7)
    # a host that restarts sees a board mid-boot: earlier events were acknowledged before, not a gap
    assert box.offer(other, 7, 500) == (NEW, 0)


def test_frames_become_messages_and_back():
    hello = Hello(None, "tower-1", 0xAB, "1.0", 1, "tower", {"tilt-1": "tilt", "cup-1": "beam"})
    ev = Event("hall-1", "tower-1", 0xAB, 4, "cup-1", "beam", 1, 1000, 7000)
    beat = Beat(None, "tower-1", 0xAB, 5000, 1, 2, 3, 4)
    for msg in (hello, ev, beat, Reply(None, "tower-1", 9, True), Reply(None, "tower-1", 9, False, "no-such-led")):
        typ, fields = wire.decode(up_frame(msg))
        assert from_frame(typ, fields, msg.table) == msg
    assert b"cup-1:beam,tilt-1:tilt" in up_frame(hello)  # sensors in a stable order
    for cmd in (Led("tower-1", "ring", "pulse", 0x00FF00, 900), Config("tower-1", "beam.min_us", "1500"), Ping("tower-1")):
        typ, fields = wire.decode(to_frame(cmd, 42))
        assert from_frame(typ, fields) == cmd and fields[1] == 42
    assert wire.decode(to_frame(EvAck("tower-1", 0xAB, 4), 0)) == ("evack", ("tower-1", 0xAB, 4))


@pytest.mark.parametrize(
    "cmd, words",
    [
        (Led("tower-1", "ring", "sparkle", 0), "pattern 'sparkle'"),
        (Led("tower-1", "ring", "solid", 0x1000000), "colour"),
        (Led("tower-1", "ring", "blink", 0xFF, -5), "negative"),
        (Led("tower 1", "ring", "solid", 0xFF), "board .tower 1. is not 1-32 of a-z"),
    ],
)
def test_bad_commands_say_what_is_wrong(cmd, words):
    with pytest.raises(WireError, match=words):
        to_frame(cmd, 1)


def test_bad_values_in_frames_are_field_errors():
    bad = [
        ("event", ("tower-1", 1, 1, "cup-1", "laser", 1, 0, 0), "fields"),
        ("hello", ("tower-1", 1, "1.0", 1, "tower", "cup-1"), "fields"),
        ("hello", ("tower-1", 1, "1.0", 1, "tower", "cup-1:beam,cup-1:tilt"), "fields"),
        ("hello", ("tower-1", 1, "1.0", 1, "tower", "Cup-1:beam"), "id"),
    ]
    for typ, fields, reason in bad:
        with pytest.raises(WireError) as e:
            from_frame(typ, fields)
        assert e.value.reason == reason, fields


def test_a_late_hello_of_an_earlier_boot_does_not_replay_its_events():
    box = Inbox()
    box.hello(KEY, 0xB1)
    box.offer(KEY, 0xB1, 1)
    box.hello(KEY, 0xB2)
    assert box.hello(KEY, 0xB1) is False  # seen before: its record comes back
    assert box.offer(KEY, 0xB1, 1)[0] == DUP


def test_the_hello_says_where_the_board_stands_so_no_first_event_is_mistaken_for_the_baseline():
    """A host that restarts while a board keeps 5..11 unacknowledged: the first event it happens to
    see (11) must not make 5..10 look like duplicates when the outbox comes again."""
    box = Inbox()
    box.hello(KEY, 0xB1, acked=4)
    assert box.acked(KEY) == (0xB1, 4)
    assert box.offer(KEY, 0xB1, 11) == (NEW, 6)  # 5..10 are missing, not stale
    assert [box.offer(KEY, 0xB1, s)[0] for s in range(5, 11)] == [LATE] * 6
    assert box.offer(KEY, 0xB1, 11)[0] == DUP and box.acked(KEY) == (0xB1, 11)
    box.hello(KEY, 0xB1, acked=3)  # a late hello never moves it back
    assert box.acked(KEY) == (0xB1, 11)


def test_what_an_earlier_run_journalled_is_never_new_again():
    box = Inbox()
    box.seed(KEY, 0xB1, {5, 6, 8})  # journalled, then the host was killed before its evack left
    box.hello(KEY, 0xB1, acked=4)
    assert box.acked(KEY) == (0xB1, 6)
    verdicts = [box.offer(KEY, 0xB1, s)[0] for s in (5, 6, 7, 8, 9)]
    assert verdicts == [DUP, DUP, LATE, DUP, NEW]
    assert box.acked(KEY) == (0xB1, 9)
    other = (None, "keep-2")
    box.seed(other, 7, {1, 2})
    box.hello(other, 8, acked=0)  # a newer boot: the old boot's seqs say nothing about it
    assert box.offer(other, 8, 1)[0] == NEW
