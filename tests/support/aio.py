"""Small asyncio helpers for transport tests."""

import asyncio
import contextlib
import time


async def take(transport, n, timeout=10.0):
    """The next n messages from transport.get(); fails the test (TimeoutError) if they do not come."""
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < n:
        out.append(await asyncio.wait_for(transport.get(), max(0.01, deadline - time.monotonic())))
    return out


async def until(cond, timeout=10.0, what="condition"):
    """Wait until cond() is true, yielding to the loop; raises AssertionError naming what never happened."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        await asyncio.sleep(0.01)


def drain(transport):
    """Every message already waiting, without blocking."""
    out = []
    while True:
        m = transport.get_nowait()
        if m is None:
            return out
        out.append(m)


@contextlib.asynccontextmanager
async def running(transport, *closables):
    """`async with running(SerialTransport([...]), board) as t:` starts the transport; always stops it
    and closes the closables (boards) afterwards."""
    await transport.start()
    try:
        yield transport
    finally:
        for c in closables:
            c.close()
        await transport.stop()
