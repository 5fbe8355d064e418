"""The bridge's web app served for real (uvicorn on a free loopback port) inside a test's event loop."""

import contextlib
import json

import uvicorn
import websockets
from battlement.web.app import create_app

from support.aio import until
from support.procs import free_port


@contextlib.asynccontextmanager
async def serving(bridge):
    """`async with serving(bridge) as url:` http://127.0.0.1:<port> answers with the bridge's pages."""
    import asyncio

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(bridge), host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="off"))
    task = asyncio.create_task(server._serve())  # _serve: the test, not uvicorn, owns the signals
    try:
        await until(lambda: server.started, what="the web server")
        yield "http://127.0.0.1:%d" % port
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 10)


@contextlib.asynccontextmanager
async def ws(url, path="/ws", **headers):
    async with websockets.connect(url.replace("http://", "ws://") + path, additional_headers=headers or None,
                                  open_timeout=10, max_size=None) as conn:
        yield conn


async def next_state(conn, pred=lambda s: True, timeout=10.0):
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        m = json.loads(await asyncio.wait_for(conn.recv(), max(0.05, deadline - loop.time())))
        if m.get("type") == "state" and pred(m):
            return m


async def next_health(conn, pred=lambda h: True, timeout=15.0):
    """The next bridge health a host socket gets (in a state, or on its own) that pred accepts."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        m = json.loads(await asyncio.wait_for(conn.recv(), max(0.05, deadline - loop.time())))
        h = m.get("health") if m.get("type") == "health" else (m.get("bridge") or {}).get("health")
        if h is not None and pred(h):
            return h
