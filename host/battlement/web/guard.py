"""The web app's front door: wrong codes rate-limited per client, security headers on every response.

Wrong codes: a token bucket per client address (BURST wrong codes at once, then one more every
REFILL seconds). A client whose bucket is empty is answered 429 with Retry-After, its code not
even looked at, until a token is back; other clients, the right code among them, are not
slowed at all. With 72-bit codes that leaves a guesser about 2^72 / 86,400 days per code.

Headers (every response, pages, API, static files and errors alike): a Content-Security-Policy
that lets a page load only this server's own scripts, styles and websocket (inline scripts
only with the response's nonce), X-Frame-Options DENY and frame-ancestors 'none' (no
click-jacking in someone else's frame), Referrer-Policy no-referrer (the code travels in the
URL, and must not leave in a Referer header), X-Content-Type-Options nosniff. Cache-Control no-store on
the host and side pages and on whatever is opened with a code (?code=, Authorization, a websocket's
handshake): no browser or proxy keeps the page, or its address with the code, in a cache.
"""

from __future__ import annotations

import secrets
import time
from urllib.parse import parse_qsl

BURST = 10  # wrong codes a client may give at once...
REFILL = 1.0  # ...then one more per this many seconds
CLIENTS_KEPT = 10_000  # buckets remembered; beyond it, the full (forgiven) ones are forgotten first

CSP = ("default-src 'self'; script-src 'self'%s; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
HEADERS = [
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
]


class Limited(Exception):
    def __init__(self, retry_after: float):
        super().__init__("too many wrong codes from this address: try again in %d s" % max(1, round(retry_after)))
        self.retry_after = max(1, round(retry_after))


class WrongCodes:
    """Per-client token buckets spent by wrong codes."""

    def __init__(self, burst: int = BURST, refill: float = REFILL):
        self.burst, self.refill = burst, refill
        self._buckets: dict[str, tuple[float, float]] = {}  # client -> (tokens, when counted)
        self.counters = {"wrong-code": 0, "rate-limited": 0}

    def _tokens(self, client: str, now: float) -> float:
        tokens, then = self._buckets.get(client, (self.burst, now))
        return min(self.burst, tokens + (now - then) / self.refill)

    def check(self, client: str) -> None:
        """Raise Limited if this client may not try a code now."""
        if client not in self._buckets:
            return
        now = time.monotonic()
        tokens = self._tokens(client, now)
        if tokens < 1:
            self.counters["rate-limited"] += 1
            raise Limited((1 - tokens) * self.refill)

    def wrong(self, client: str) -> None:
        """This client gave a wrong code: spend one of its tokens."""
        self.counters["wrong-code"] += 1
        now = time.monotonic()
        tokens = self._tokens(client, now)
        if client not in self._buckets and len(self._buckets) >= CLIENTS_KEPT:
            self._forget(now)
        self._buckets[client] = (max(0.0, tokens - 1), now)

    def _forget(self, now: float) -> None:
        full = [c for c in self._buckets if self._tokens(c, now) >= self.burst]
        for c in full or list(self._buckets)[: len(self._buckets) // 2]:
            del self._buckets[c]


def new_nonce() -> str:
    return secrets.token_urlsafe(16)


def csp(nonce: str | None = None) -> str:
    return CSP % ((" 'nonce-%s'" % nonce) if nonce else "")


def coded(scope) -> bool:
    """Does this request carry a code, or open a page that is reached with one?"""
    path = scope.get("path", "")
    if path == "/host" or path.startswith("/side/"):
        return True
    if any(k == "code" for k, _ in parse_qsl(scope.get("query_string", b"").decode("latin-1"))):
        return True
    return any(k.lower() == b"authorization" for k, _ in scope.get("headers", []))


class SecurityHeaders:
    """ASGI middleware: the headers above on every HTTP response (a page's own CSP, with its nonce, kept),
    and no-store on a coded one, its websocket handshake too."""

    def __init__(self, app):
        self.app = app
        self._csp = csp().encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        no_store = [(b"cache-control", b"no-store")] if coded(scope) else []
        if scope["type"] == "websocket":
            async def accept_with_headers(message):
                if message["type"] == "websocket.accept" and no_store:
                    message = dict(message, headers=list(message.get("headers", [])) + no_store)
                await send(message)

            return await self.app(scope, receive, accept_with_headers)

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if not (no_store and k.lower() == b"cache-control")]
                have = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in HEADERS + no_store if k not in have]
                if b"content-security-policy" not in have:
                    headers.append((b"content-security-policy", self._csp))
                message = dict(message, headers=headers)
            await send(message)

        return await self.app(scope, receive, send_with_headers)


async def refuse_socket(socket, e: Exception) -> None:
    """Tell a websocket why it is refused, then close it: 4429 while its client is slowed down, else 4403."""
    await socket.accept()
    await socket.send_json({"type": "error", "message": str(e)})
    await socket.close(code=4429 if isinstance(e, Limited) else 4403)
