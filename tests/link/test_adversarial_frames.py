"""CRC-valid frames with hostile field values: each is refused for the reason docs/protocol.md names,
counted once, and nothing raises past the transport or reaches the journal.

The CRC is right on every frame here, so these are what a confused board or anyone on the broker
can send, not line noise: numbers out of range (2^63 once stopped every table at the journal),
signs, leading zeros, '_' and '0x' spellings, upper-case, over-long and non-ASCII ids, undeclared
sensors, boot 0.
"""

import asyncio
from binascii import crc32

import pytest
from battlement.link import wire
from battlement.link.messages import Event
from battlement.table.journal import Journal
from hypothesis import given, settings
from hypothesis import strategies as st

from link.test_intake_fuzz import Recorder

BOARD, BOOT = "tower-1", 0x5F3A9C
SENSORS = {"cup-1": "beam", "tilt-a": "tilt"}
UP = ("hello", "event", "beat", "ack", "error")


def raw(typ, tokens):
    """A frame with a correct CRC around whatever tokens are given (bytes or str)."""
    body = b" ".join(t if isinstance(t, bytes) else str(t).encode() for t in (typ, *tokens))
    return body + b"*%08x\n" % (crc32(body) & 0xFFFFFFFF)


def token(spec, v):
    return ("%x" if spec[1] == "x" else "%d") % v if spec[1] in "ix" else v


def valid_tokens(typ, draw):
    """Tokens of a valid frame of typ from this board (an event of a declared sensor)."""
    if typ == "hello":
        return [BOARD, "%x" % BOOT, "1.0", str(wire.VERSION), "tower", "cup-1:beam,tilt-a:tilt", "0", "0"]
    if typ == "event":
        sensor = draw(st.sampled_from(sorted(SENSORS)))
        return [BOARD, "%x" % BOOT, str(draw(st.integers(1, 2**32 - 1))), sensor, SENSORS[sensor],
                str(draw(st.integers(0, 1))), str(draw(st.integers(0, 2**30 - 1))), str(draw(st.integers(0, 2**30 - 1)))]
    out = []
    for fs in wire.SPEC[typ]:
        if fs[0] == "board":
            out.append(BOARD)
        elif fs[0] == "boot":
            out.append("%x" % BOOT)
        elif fs[1] in "ix":
            out.append(token(fs, draw(st.integers(fs[2], fs[3]))))
        elif fs[1] == "n":
            out.append(draw(st.sampled_from(["ring", "cup-3", "all", "0"])))
        else:
            out.append(draw(st.sampled_from(["unknown-target", "ring", "1.5", "a=b:c,d"])))
    return out


def bad_number(spec, draw):
    """(token, reason) for a number field: out of range, or spelled in a way the protocol forbids."""
    lo, hi = spec[2], spec[3]
    hexa = spec[1] == "x"
    fmt = "%x" if hexa else "%d"
    good = draw(st.integers(max(lo, 1), hi))
    choices = [
        (fmt % draw(st.integers(hi + 1, 2**70)), wire.R_RANGE),
        (fmt % draw(st.sampled_from([2**63, 2**63 - 1 if 2**63 - 1 > hi else 2**64, 2**64])), wire.R_RANGE),
        ("-" + fmt % good, wire.R_FIELDS),
        ("+" + fmt % good, wire.R_FIELDS),
        ("0" + fmt % good, wire.R_FIELDS),
        (" " + fmt % good, wire.R_FIELDS),  # an empty token before it
        (fmt % good + "_0", wire.R_FIELDS),
        ("0x" + "%x" % good, wire.R_FIELDS),
        ("%X" % (good | 0xA), wire.R_FIELDS),
    ]
    if lo >= 1:
        choices.append(("0", wire.R_RANGE))
    if not hexa:
        choices.append(("%x" % (good | 0xA), wire.R_FIELDS))
    return draw(st.sampled_from(choices))


def bad_id(draw):
    tok = draw(st.sampled_from([
        ("Tower-1", wire.R_ID), ("TOWER", wire.R_ID), ("a" * 33, wire.R_ID), ("tower_1", wire.R_ID),
        ("tower.1", wire.R_ID), ("cup:1", wire.R_ID), ("t#1", wire.R_ID),
    ]))
    return tok


@st.composite
def hostile(draw):
    """(frame, reason): a board -> host frame that is right but for one field."""
    typ = draw(st.sampled_from(UP))
    tokens = valid_tokens(typ, draw)
    spec = wire.SPEC[typ]
    what = draw(st.sampled_from(["field", "field", "field", "ascii", "count", "undeclared", "hello-sensors"]))
    if what == "ascii":  # valid UTF-8 or not: a frame is ASCII, anything else is syntax
        i = draw(st.integers(0, len(tokens) - 1))
        tokens[i] = tokens[i].encode() + draw(st.sampled_from(["é".encode(), b"\xff", b"\x00", b"\t", "€".encode()]))
        return raw(typ, tokens), wire.R_SYNTAX
    if what == "count":
        if draw(st.booleans()):
            tokens.append("1")
        else:
            tokens.pop()
        return raw(typ, tokens), wire.R_FIELDS
    if what == "undeclared":
        tokens = valid_tokens("event", draw)
        tokens[3], tokens[4] = draw(st.sampled_from([("cup-2", "beam"), ("cup-1", "tilt"), ("tilt-a", "presence")]))
        return raw("event", tokens), "undeclared"
    if what == "hello-sensors":
        tokens = valid_tokens("hello", draw)
        tokens[5], reason = draw(st.sampled_from([
            ("cup-1:laser", wire.R_FIELDS), ("cup-1", wire.R_FIELDS), ("Cup-1:beam", wire.R_ID),
            ("cup-1:beam,cup-1:tilt", wire.R_FIELDS), ("cup-1:beam,", wire.R_FIELDS), (":beam", wire.R_ID),
            ("a" * 33 + ":beam", wire.R_ID),
        ]))
        return raw("hello", tokens), reason
    i = draw(st.integers(0, len(spec) - 1))
    fs = spec[i]
    if fs[1] in "ix":
        tokens[i], reason = bad_number(fs, draw)
    elif fs[1] == "n":
        tokens[i], reason = bad_id(draw)
    elif typ == "event" and fs[0] == "kind":
        tokens[i], reason = draw(st.sampled_from(["laser", "Beam", "beam,"])), wire.R_FIELDS
    else:
        tokens[i], reason = draw(st.sampled_from(["a#b", "x!", "(y)", "a/b", "ü"])), wire.R_FIELDS
        if tokens[i] == "ü":
            reason = wire.R_SYNTAX
    return raw(typ, tokens), reason


async def _said_hello():
    t = Recorder()
    await t.start()
    t._handle_line(raw("hello", valid_tokens("hello", None)), "link")
    assert isinstance(t.get_nowait(), object) and t.counters["accepted"] == 1
    return t


@settings(max_examples=600, deadline=None)
@given(hostile())
def test_each_hostile_frame_is_refused_for_its_reason_and_counted_once(case):
    frame, reason = case

    async def main():
        t = await _said_hello()
        before = dict(t.counters)
        t._handle_line(frame, "link")  # never raises
        # (an undeclared event still takes its seq: a far one opens a gap, which is counted as such)
        grown = {k: v - before.get(k, 0) for k, v in t.counters.items()
                 if v != before.get(k, 0) and k not in ("gap", "lost")}
        assert grown == {reason: 1}, (frame, grown)
        assert t.get_nowait() is None  # nothing reached the bridge

    asyncio.run(main())


down_specs = st.sampled_from(["led", "config", "ping", "evack"])


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_hostile_host_frames_are_refused_by_the_shared_decoder(data):
    """The boards decode with the same wire.decode: a host frame out of range never gets through."""
    typ = data.draw(down_specs)
    spec = wire.SPEC[typ]
    tokens = valid_tokens(typ, data.draw)
    i = data.draw(st.integers(0, len(spec) - 1))
    fs = spec[i]
    if fs[1] in "ix":
        tokens[i], reason = bad_number(fs, data.draw)
    elif fs[1] == "n":
        tokens[i], reason = bad_id(data.draw)
    else:
        tokens[i], reason = "a#b", wire.R_FIELDS
    with pytest.raises(wire.WireError) as e:
        wire.decode(raw(typ, tokens))
    assert e.value.reason == reason


@settings(max_examples=120, deadline=None)
@given(st.lists(st.one_of(hostile().map(lambda c: c[0]),
                          st.builds(lambda s: raw("event", [BOARD, "%x" % BOOT, s, "cup-1", "beam", "1", "5", "9"]),
                                    st.integers(1, 60))), max_size=40))
def test_a_stream_of_hostile_frames_journals_only_valid_events(lines):
    """What the transport lets through goes into the journal without an error (a value of 2^63 once
    raised OverflowError there and stopped every table)."""

    async def main():
        t = await _said_hello()
        t.get_nowait()
        for line in lines:
            t._handle_line(line, "link")
        j = Journal(":memory:")
        j.begin()
        n = 0
        while (m := t.get_nowait()) is not None:
            if isinstance(m, Event):
                assert m.value in (0, 1) and 1 <= m.seq < 2**32 and m.sensor in SENSORS
                j.write_event("hall", m, None, "ignored")
                n += 1
        j.commit()
        assert j.db.execute("SELECT COUNT(*) FROM events").fetchone()[0] == n
        j.close()

    asyncio.run(main())


def test_a_value_of_two_to_the_63_is_refused_at_decode():
    frame = raw("event", [BOARD, "%x" % BOOT, "1", "cup-1", "beam", str(2**63), "5", "9"])
    with pytest.raises(wire.WireError) as e:
        wire.decode(frame)
    assert e.value.reason == "range" and "value" in str(e.value)
    for seq in (2**63, 2**64 + 1, 0):
        with pytest.raises(wire.WireError) as e:
            wire.decode(raw("event", [BOARD, "%x" % BOOT, str(seq), "cup-1", "beam", "1", "5", "9"]))
        assert e.value.reason == "range"
    with pytest.raises(wire.WireError) as e:
        wire.decode(raw("hello", [BOARD, "0", "1.0", "2", "tower", "-", "0", "0"]))
    assert e.value.reason == "range" and "boot 0" in str(e.value)
