"""Supervision of the bridge's long-running tasks: nothing one message does may stop a table.

Every task (each transport's event pump and the transport itself, the web server, the
checkpointer, the throw timer) runs under a Supervisor. A task that raises is logged with its
traceback, counted, shown on the host page in words ("event pump of serial restarted 2 times,
last: OverflowError ...") and started again after a short pause that grows while it keeps dying
(0.1 s doubling to 5 s), so a fault that repeats cannot spin the loop. A task that returns
normally is finished (the web server after Ctrl-C), not restarted.

`guard_frames` does the same one level down, for the frames a transport decodes: an exception
while handling one frame is caught, counted as `handler-error`, logged with the frame, and the
next frame goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
import traceback
from collections.abc import Awaitable, Callable

log = logging.getLogger("battlement.supervise")

RESTART_MIN = 0.1  # seconds before the first restart of a task that died...
RESTART_MAX = 5.0  # ...doubling while it keeps dying, up to this
HEALTHY_AFTER = 30.0  # a task that ran this long before dying starts again from RESTART_MIN
GC_YOUNG = 10_000  # new objects between the cycle collector's collections of the youngest (CPython's: 700)


def shown(obj, limit: int = 160) -> str:
    """A message or frame as one printable line for a note (bytes shown as text, long ones cut)."""
    if isinstance(obj, (bytes, bytearray)):
        text = "".join(chr(c) if 32 <= c < 127 else "?" for c in bytes(obj[:limit]).rstrip(b"\r\n"))
    else:
        text = repr(obj)
    return text if len(text) <= limit else text[:limit] + "..."


class TaskState:
    def __init__(self, name: str):
        self.name = name
        self.state = "starting"  # running, restarting, finished, stopped
        self.restarts = 0
        self.last_error = ""
        self.last_error_at = 0.0

    def as_dict(self) -> dict:
        return {"name": self.name, "state": self.state, "restarts": self.restarts,
                "last_error": self.last_error, "words": self.words()}

    def words(self) -> str:
        if self.restarts == 0:
            return "%s: %s" % (self.name, self.state)
        ago = time.time() - self.last_error_at
        return "%s: %s, restarted %d time%s (last %s ago: %s)" % (
            self.name, self.state, self.restarts, "" if self.restarts == 1 else "s", _ago(ago), self.last_error)


def _ago(seconds: float) -> str:
    if seconds < 90:
        return "%d s" % seconds
    if seconds < 5400:
        return "%d min" % (seconds / 60)
    return "%.1f h" % (seconds / 3600)


class Supervisor:
    def __init__(self, note: Callable[[str], None] | None = None):
        self.note = note or (lambda text: None)
        self.tasks: dict[str, TaskState] = {}
        self._running: dict[str, asyncio.Task] = {}

    def spawn(self, name: str, run: Callable[[], Awaitable[object]],
              recover: Callable[[], Awaitable[object]] | None = None) -> asyncio.Task:
        """Run `run()` under supervision as task `name`; `recover()` (if given) runs before each restart."""
        st = self.tasks[name] = TaskState(name)
        task = asyncio.create_task(self._keep(st, run, recover), name=name)
        self._running[name] = task
        return task

    async def _keep(self, st: TaskState, run, recover) -> None:
        delay = RESTART_MIN
        while True:
            st.state = "running"
            began = time.monotonic()
            try:
                await run()
            except asyncio.CancelledError:
                st.state = "stopped"
                raise
            except Exception as e:  # noqa: BLE001 -- the point: a task that dies is started again
                st.restarts += 1
                st.last_error = "%s: %s" % (type(e).__name__, e)
                st.last_error_at = time.time()
                st.state = "restarting"
                log.error("task %s died, restarting:\n%s", st.name, traceback.format_exc())
                self.note("%s stopped (%s); restarting it" % (st.name, st.last_error))
                if time.monotonic() - began > HEALTHY_AFTER:
                    delay = RESTART_MIN
                await asyncio.sleep(delay)
                delay = min(delay * 2, RESTART_MAX)
                if recover is not None:
                    try:
                        await recover()
                    except Exception as e2:  # noqa: BLE001 -- try again on the next round
                        log.error("recovering task %s failed:\n%s", st.name, traceback.format_exc())
                        st.last_error = "%s (and recovering: %s: %s)" % (st.last_error, type(e2).__name__, e2)
                continue
            st.state = "finished"
            return

    async def stop(self) -> None:
        tasks = list(self._running.values())
        self._running.clear()
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):  # stopping: logged when it happened
                await t

    def health(self) -> list[dict]:
        return [st.as_dict() for st in self.tasks.values()]

    def restarts(self) -> int:
        return sum(st.restarts for st in self.tasks.values())


def settle_heap() -> None:
    """Once the bridge has started: what start-up made (every module, table map, session and rules) stays for
    good, so the cycle collector leaves it out of its full collections (gc.freeze), and it looks at the
    youngest objects every GC_YOUNG of them rather than every 700. At 100 tables its collections walked all of
    it: 4-7 us an event, about 1 us after (docs/bridge.md, "Capacity")."""
    gc.freeze()
    gc.set_threshold(GC_YOUNG, *gc.get_threshold()[1:])


def guard_frames(transport, note: Callable[[str], None]) -> None:
    """Make an exception while handling one frame of `transport` a counted, logged rejection.

    The transport's frame intake (_handle_line) is wrapped on this instance: the serial and MQTT
    links call it for every frame, so the next frame goes on whatever this one did.
    """
    inner = transport._handle_line

    def handle_line(line, link, table=None, board=None):
        try:
            inner(line, link, table, board)
        except Exception as e:  # noqa: BLE001 -- one frame must never stop a link
            transport.counters["handler-error"] = transport.counters.get("handler-error", 0) + 1
            log.error("error handling frame %s from %s:\n%s", shown(line), link, traceback.format_exc())
            note("error handling frame from %s: %s: %s (frame %s)" % (link, type(e).__name__, e, shown(line)))

    transport._handle_line = handle_line


def own_tasks(obj) -> list[asyncio.Task]:
    """The asyncio tasks an object keeps in its attributes (a transport's reopen or reconnect loop)."""
    return [v for v in vars(obj).values() if isinstance(v, asyncio.Task)]


async def watch_tasks(obj) -> None:
    """Return when one of obj's own tasks has died (raise its error), so a supervisor restarts obj."""
    while True:
        for t in own_tasks(obj):
            if t.done() and not t.cancelled() and t.exception() is not None:
                e = t.exception()
                raise RuntimeError("%s: %s" % (type(e).__name__, e)) from e
        await asyncio.sleep(0.5)


def forget_dead_tasks(obj) -> None:
    """Clear obj's attributes that hold finished tasks, so its stop() does not wait on (and re-raise) them."""
    for k, v in list(vars(obj).items()):
        if isinstance(v, asyncio.Task) and v.done():
            setattr(obj, k, None)
