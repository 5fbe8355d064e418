"""No single message stops anything: faults below and inside the event pump, with real boards on ptys."""

import asyncio

from battlement.link.messages import Event
from bridge.test_session import ringo_bridge
from support.aio import until
from support.web import next_health, next_state, serving, ws


def _move(sim, s, frm, to):
    sim.press(frm, 0)
    sim.press(to, 1)
    return until(lambda: s.match.view()["cells"].get(to) == "attackers", what="the move %s-%s" % (frm, to))


def test_an_event_with_a_number_sqlite_cannot_hold_stops_nothing(tmp_path):
    """Injected below the decoder (as if decoding let it through): seq 2^64 and value 2^63."""
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (b, s, sim):
            t = b.transports[0]
            boot = t.boards[(None, "ring-5")].boot
            t._deliver(Event(None, "ring-5", boot, 1 << 64, "zz", "presence", 1 << 63, 0, 0))
            await until(lambda: b.journal.errors == 1, what="the odd row journalled")
            await _move(sim, s, "c5", "c4")  # every later event is journalled and applied
            await until(lambda: b.journal.db.execute("SELECT COUNT(*) FROM events WHERE outcome LIKE 'input %'")
                        .fetchone()[0] == 2, what="the move's events committed")
            row = b.journal.db.execute("SELECT seq, value FROM events WHERE sensor='zz'").fetchone()
            assert row == (b"%d" % (1 << 64), b"%d" % (1 << 63))  # kept as it came, as digits
            assert b.supervisor.restarts() == 0 and b.counters["journal-errors"] == 0
    asyncio.run(go())


def test_a_message_that_breaks_its_handler_is_counted_and_logged_and_the_next_goes_on(tmp_path, caplog):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (b, s, sim):
            place = s.router.place

            def broken(ev, *args):
                if ev.seq == 4242:
                    raise ValueError("a fault in the rules' plumbing")
                return place(ev, *args)
            s.router.place = broken
            t = b.transports[0]
            t._deliver(Event(None, "ring-5", t.boards[(None, "ring-5")].boot, 4242, "b", "presence", 0, 0, 0))
            await until(lambda: b.counters["handler-errors"] == 1, what="the failure counted")
            await _move(sim, s, "c5", "c4")
            assert any("a fault in the rules' plumbing" in n and "4242" in n for n in b.notes)
            assert b.supervisor.restarts() == 0
    asyncio.run(go())
    assert any("4242" in r.getMessage() and "Traceback" in r.getMessage() for r in caplog.records)


def test_a_task_that_dies_is_restarted_and_says_so(tmp_path):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (b, s, sim):
            t = b.transports[0]
            get = t.get
            calls = []

            async def dies_once():
                calls.append(1)
                if len(calls) == 1:
                    raise RuntimeError("the pump fell over")
                return await get()
            t.get = dies_once
            await _move(sim, s, "c5", "c4")  # the pump handles what it awaited, then dies on its next get()
            st = b.supervisor.tasks["event pump (serial)"]
            await until(lambda: st.restarts == 1 and st.state == "running", what="the pump restarted")
            seen = s.counters["events"]
            sim.press("c4", 0)  # and play goes on: the next sensed events reach the session
            sim.press("c5", 1)
            await until(lambda: s.counters["events"] == seen + 2, what="events after the restart")
            words = [x["words"] for x in b.health()["tasks"]]
            assert any(w.startswith("event pump (serial): running, restarted 1 time") and "the pump fell over" in w
                       for w in words), words
            assert any("event pump (serial) stopped (RuntimeError: the pump fell over)" in n for n in b.notes)
    asyncio.run(go())


def test_a_transport_whose_own_loop_dies_is_restarted(tmp_path):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (b, s, sim):
            t = b.transports[0]

            async def broken():
                raise OSError("reopen loop broke")
            t._watch.cancel()
            t._watch = asyncio.get_running_loop().create_task(broken())
            st = b.supervisor.tasks["link (serial)"]
            await until(lambda: st.restarts == 1 and st.state == "running", timeout=5, what="the link restarted")
            await until(lambda: not t._watch.done(), what="a new reopen loop")
            await _move(sim, s, "c5", "c4")
    asyncio.run(go())


def test_the_host_page_is_told_in_words_when_a_task_restarted(tmp_path):
    async def go():
        async with ringo_bridge(tmp_path / "j.sqlite") as (b, _s, _sim), serving(b) as url, \
                ws(url, "/ws?role=host&code=" + b.host_code) as conn:
            first = await next_state(conn)
            assert "restarted" not in first["bridge"]["health"]["tasks"][0]["words"]
            t = b.transports[0]

            async def broken():
                raise OSError("reopen loop broke")
            t._watch.cancel()
            t._watch = asyncio.get_running_loop().create_task(broken())
            h = await next_health(conn, lambda h: any(x["restarts"] for x in h["tasks"]))
            words = [x["words"] for x in h["tasks"] if x["restarts"]]
            assert words[0].startswith("link (serial): ") and "restarted 1 time" in words[0]
            assert "OSError: reopen loop broke" in words[0]
    asyncio.run(go())
