"""A loopback TCP proxy for fault injection between a board and its broker.

It runs its own asyncio loop in a thread, so it keeps forwarding while the test
blocks (FirmwareProcess.sync, wait_pixels). Faults, each as a board would meet it:

    p = Proxy(broker.port).start()        # board connects to 127.0.0.1:p.port
    p.refuse(3)      # the next 3 connections: read the CONNECT, then close before any CONNACK
    p.blackhole()    # every open connection goes silent both ways and stays open (half-open TCP:
                     # Wi-Fi gone without a FIN); the board's close is not passed on either
    p.cut()          # close every open connection now; new ones are let through
    p.stall() / p.resume()   # stop forwarding everything (open and new connections), then go on
    p.choke() / p.resume()   # stop reading from the clients at all: their TCP send buffers fill
                             # (with Proxy(..., rcvbuf=4096) a few KB in, as a congested Wi-Fi link)

p.accepted counts connections, p.refused those refuse() turned away, and
p.closed_by_client those the client closed itself (a FIN from its side before the
proxy or the broker closed anything): a client that leaves dead sockets open
has closed_by_client < accepted - 1.
"""

import asyncio
import socket
import threading

from support.procs import free_port


class _Conn:
    def __init__(self):
        self.blackholed = False
        self.aborted = False  # the proxy closed the client's side (so its EOF is not the client's doing)
        self.writers = []


class Proxy:
    def __init__(self, target_port, target_host="127.0.0.1", rcvbuf=None):
        self.target = (target_host, target_port)
        self.rcvbuf = rcvbuf  # SO_RCVBUF of the accepted connections (set before listen, so the window is small from the SYN on)
        self.port = free_port()
        self.accepted = 0
        self.refused = 0
        self.closed_by_client = 0
        self._refuse = 0
        self._conns = []
        self._loop = None
        self._thread = None
        self._flowing = None  # asyncio.Event on the proxy's loop: set while forwarding

    def start(self):
        ready = threading.Event()

        def main():
            self._loop = asyncio.new_event_loop()
            self._loop.run_until_complete(self._serve(ready))

        self._thread = threading.Thread(target=main, daemon=True)
        self._thread.start()
        if not ready.wait(5):
            raise RuntimeError("proxy did not start")
        return self

    async def _serve(self, ready):
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._stop = asyncio.Event()
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if self.rcvbuf:
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.rcvbuf)
        ls.bind(("127.0.0.1", self.port))
        server = await asyncio.start_server(self._client, sock=ls)
        ready.set()
        await self._stop.wait()
        server.close()
        for c in self._conns:
            for w in c.writers:
                w.transport.abort()
        await asyncio.sleep(0)

    async def _client(self, cr, cw):
        self.accepted += 1
        conn = _Conn()
        self._conns.append(conn)
        if self._refuse > 0:
            self._refuse -= 1
            try:
                await asyncio.wait_for(cr.read(1024), 5)  # the CONNECT arrives; no CONNACK ever does
                self.refused += 1
                cw.write_eof()  # the broker closes: the client must close its end too
                while await cr.read(1024):
                    pass
                self.closed_by_client += 1
            except (TimeoutError, OSError):
                pass
            cw.transport.abort()
            return
        try:
            br, bw = await asyncio.open_connection(*self.target)
        except OSError:
            cw.transport.abort()
            return
        conn.writers = [cw, bw]
        await asyncio.gather(self._pump(conn, cr, bw, True), self._pump(conn, br, cw, False))

    async def _pump(self, conn, src, dst, from_client):
        while True:
            try:
                data = await src.read(65536)
            except OSError:
                data = b""
            if not data:
                if from_client and not conn.aborted:
                    self.closed_by_client += 1
                if not conn.blackholed:  # a half-open link passes nothing on, not even the close
                    if not from_client:
                        conn.aborted = True
                    dst.transport.abort()
                return
            await self._flowing.wait()
            if conn.blackholed:
                continue
            dst.write(data)
            try:
                await dst.drain()
            except OSError:
                return

    def _call(self, fn):
        self._loop.call_soon_threadsafe(fn)

    def refuse(self, n):
        self._refuse = n

    def blackhole(self):
        def go():
            for c in self._conns:
                c.blackholed = True

        self._call(go)

    def cut(self):
        """Close every open connection at once (a broker that drops its clients and stays up)."""

        def go():
            for c in self._conns:
                c.aborted = True
                for w in c.writers:
                    w.transport.abort()

        self._call(go)

    def stall(self):
        self._call(self._flowing.clear)

    def choke(self):
        def go():
            self._flowing.clear()
            for c in self._conns:
                if c.writers:
                    c.writers[0].transport.pause_reading()

        self._call(go)

    def resume(self):
        def go():
            for c in self._conns:
                if c.writers and not c.writers[0].transport.is_closing():
                    c.writers[0].transport.resume_reading()
            self._flowing.set()

        self._call(go)

    def close(self):
        if self._loop is not None:
            self._call(self._stop.set)
            self._thread.join(5)
            self._loop = None
