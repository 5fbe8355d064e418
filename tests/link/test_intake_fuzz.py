"""Whatever arrives, the shared intake never raises, never applies an event twice, and counts every rejection."""

import asyncio

import pytest
from battlement.link import wire
from battlement.link.messages import Event, Led
from battlement.link.transport.base import Transport
from hypothesis import given, settings
from hypothesis import strategies as st


class Recorder(Transport):
    """The real intake with the link replaced by a list of written frames."""

    def __init__(self):
        super().__init__()
        self.written = []

    def _link_for(self, board, table):
        return "link"

    def _write(self, link, board, frame):
        self.written.append(frame)


boards = st.sampled_from(["tower-1", "keep-2"])
boots = st.sampled_from([1, 2])
valid = st.one_of(
    st.builds(lambda b, boot: wire.encode("hello", (b, boot, "1.0", wire.VERSION, "tower", "cup-1:beam", 0, 0)), boards, boots),
    st.builds(
        lambda b, boot, seq, v: wire.encode("event", (b, boot, seq, "cup-1", "beam", v, seq * 10, 5000)),
        boards, boots, st.integers(1, 40), st.integers(0, 1),
    ),
    st.builds(lambda b, boot: wire.encode("beat", (b, boot, 1, 0, 0, 0, 0)), boards, boots),
    st.builds(lambda b, m: wire.encode("ack", (b, m)), boards, st.integers(0, 99)),
    st.builds(lambda b: wire.encode("evack", (b, 1, 3)), boards),
)
noise = st.binary(max_size=80)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(valid, valid, noise), max_size=60))
def test_any_stream_of_frames_is_handled_without_raising(lines):
    async def main():
        t = Recorder()
        await t.start()
        for line in lines:
            t._handle_line(line, "link")
        delivered = []
        while (m := t.get_nowait()) is not None:
            delivered.append(m)
        keys = [(e.board, e.boot, e.seq) for e in delivered if isinstance(e, Event)]
        assert len(keys) == len(set(keys))  # never applied twice
        assert t.counters["accepted"] == len(delivered)
        nonblank = sum(1 for x in lines if x.strip(b"\r\n\t "))
        per_line = ("crc", "syntax", "length", "fields", "unknown-type", "wrong-direction", "stale-seq",
                    "unknown-board")
        counted = t.counters["accepted"] + sum(t.counters.get(k, 0) for k in per_line)
        # every line is counted at least once (a held event is counted again when applied after the hello)
        assert nonblank <= counted and t.counters["accepted"] <= nonblank
        await t.stop()

    asyncio.run(main())


def test_send_finishes_without_awaiting_so_a_command_leaves_in_the_same_loop_turn():
    t = Recorder()
    coro = t.send(Led("tower-1", "ring", "solid", 0x00FF00))
    with pytest.raises(StopIteration) as done:
        coro.send(None)
    assert done.value.value == 1 and t.written == [wire.encode("led", ("tower-1", 1, "ring", "solid", 0x00FF00, 0))]


def _general(line):
    from battlement.link.messages import from_frame
    try:
        typ, fields = wire.decode(line)
        msg = from_frame(typ, fields, "hall")
    except wire.WireError:
        return None
    return msg if isinstance(msg, Event) else None


event_frames = st.builds(
    lambda b, boot, seq, s, k, v, t, w: wire.encode("event", (b, boot, seq, s, k, v, t, w)),
    st.sampled_from(["tower-1", "keep-2a", "x"]), st.integers(1, 2**32 - 1), st.integers(1, 2**32 - 1),
    st.sampled_from(["cup-1", "tilt-a", "b"]), st.sampled_from(list(wire.KINDS)), st.integers(0, 1),
    st.integers(0, 2**30 - 1), st.integers(0, 2**30 - 1),
)


@settings(max_examples=400, deadline=None)
@given(event_frames, st.integers(0, 200), st.binary(min_size=1, max_size=3), st.sampled_from([b"", b"\r\n", b"\r"]))
def test_the_fast_event_path_agrees_with_the_general_decoder(frame, at, junk, end):
    """Events take a one-regex path; on any frame, valid or damaged, it must give exactly what the
    general decoder gives, or leave the frame to it (never accept what the decoder refuses)."""
    from battlement.link.transport.base import _fast_event

    body = frame.rstrip(b"\n")
    for line in (body + end, body[:at] + junk + body[at + len(junk):] + b"\n", body.upper() + b"\n",
                 body.replace(b"event", b"event ", 1), body.replace(b" 1 ", b" 0 ", 1) + b"\n"):
        fast = _fast_event(line, "hall")
        assert fast is None or fast == _general(line), line
    assert _fast_event(frame, "hall") == _general(frame)
