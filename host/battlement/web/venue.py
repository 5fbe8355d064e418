"""The venue hub's pages (`battlement venue`), served beside the hub on its event loop.

    /                          the TV: the bracket or the standings, the queue, every table's headline,
                               the calls ("Table 3: Knights against Orcs"), spoken by the browser
    /team?t=TID&name=TEAM      a team's phone page: its next match and table, its record (public)
    /host?code=H               the host: teams and players, a new tournament, corrections, moving a held
                               match, a QR code of every team's page
    /ws?role=tv|team|host      the same, live: each page gets its whole state again on every change
    /api/venue, /api/team      the TV's and a team's state as JSON (public)
    /api/host?code=H           GET: the host's state; POST {"action": ...}: a host action (the CLI's way in)

The host code is checked as the bridge's is (web/guard.py): wrong codes are rate-limited per client, and
every response carries the bridge's security headers. An action's refusal is one line in the reply.
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import os
from collections.abc import Callable
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from battlement.errors import UserError
from battlement.table.tokens import same
from battlement.venue import pages
from battlement.venue.director import Director
from battlement.web.guard import Limited, SecurityHeaders, WrongCodes, csp, new_nonce, refuse_socket
from battlement.web.onboarding import qr_svg

log = logging.getLogger("battlement.web")
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
MAX_ACTION = 64 * 1024
ROLES = ("tv", "team", "host")


def act(d: Director, msg: dict) -> dict:
    """One host action (never trusted from the page: each is checked here); UserError says what is wrong."""
    action = msg.get("action")
    hub = d.hub
    if action == "team":
        names = msg.get("names") or [msg.get("name")]
        for name in names:
            hub.add("team", {"name": name})
        said = "team %s added" % ", ".join(names)
    elif action == "player":
        hub.add("player", {"name": msg.get("name"), "team": msg.get("team") or None})
        said = "player %s added%s" % (msg.get("name"), " to %s" % msg["team"] if msg.get("team") else "")
    elif action == "tournament":
        tid = d.create(msg.get("form") or {})
        n = len(d.tournaments[tid].ready())
        said = "tournament %s set up: %d match%s ready" % (tid, n, "" if n == 1 else "es")
    elif action == "correct":
        scores = msg.get("scores")
        if scores is not None and not isinstance(scores, dict):
            raise UserError("scores are by team name, e.g. {\"Knights\": 3, \"Orcs\": 1}")
        changed = d.correct(str(msg.get("match") or ""), str(msg.get("winner") or ""), scores, str(msg.get("why") or ""))
        said = "%s corrected%s" % (msg.get("match"), ": now %s" % ", ".join(changed) if changed else "")
    elif action == "move":
        table = d.move(str(msg.get("match") or ""))
        said = "%s moved to %s" % (msg.get("match"), pages.table_label(table))
    else:
        raise UserError("unknown action %r (actions: team, player, tournament, correct, move)" % (action,))
    d.update()
    return {"ok": True, "message": said}


def create_venue_app(d: Director, host_code: str, base: Callable[[], str] | None = None) -> Starlette:
    """The hub's web app. base(): the address phones reach the hub at, for the team pages' QR codes."""
    with open(os.path.join(STATIC, "venue.html"), encoding="utf-8") as f:
        page = f.read()
    guard = WrongCodes()
    counters = guard.counters
    counters.update({"ws-junk": 0, "actions": 0, "actions-refused": 0, "action-errors": 0})
    sockets: set[asyncio.Event] = set()
    qr_cache: dict[str, str] = {}

    def on_change(_kind: str, _body: dict) -> None:
        for ev in sockets:
            ev.set()
    d.listeners.append(on_change)

    def render(role: str, title: str) -> HTMLResponse:
        nonce = new_nonce()
        body = (page.replace("{{ROLE}}", role).replace("{{TITLE}}", html.escape(title))
                .replace("<script", '<script nonce="%s"' % nonce))
        return HTMLResponse(body, headers={"Content-Security-Policy": csp(nonce)})

    def code_ok(conn, given: str | None) -> bool:
        client = conn.client.host if conn.client else "?"
        guard.check(client)
        if same(given, host_code):
            return True
        guard.wrong(client)
        return False

    def base_of(conn) -> str:
        return (base() if base else "") or "%s://%s" % ("https" if conn.url.scheme in ("https", "wss") else "http",
                                                        conn.headers.get("host", "localhost"))

    def host_state(conn, tid: str | None) -> dict:
        out = pages.host(d, tid)
        root = base_of(conn)
        out["links"] = {"tv": root + "/", "host": root + "/host?code=" + host_code, "teams": []}
        t = out["tournament"]
        for team in (t or {}).get("teams", []):
            url = "%s/team?t=%s&name=%s" % (root, quote(t["id"]), quote(team["name"]))
            if url not in qr_cache:
                qr_cache[url] = qr_svg(url)
            out["links"]["teams"].append({"team": team["name"], "url": url, "qr": qr_cache[url]})
        if root + "/" not in qr_cache:
            qr_cache[root + "/"] = qr_svg(root + "/")
        out["links"]["tv_qr"] = qr_cache[root + "/"]
        return out

    def state_of(conn, role: str, q) -> dict:
        if role == "host":
            return host_state(conn, q.get("t"))
        if role == "team":
            found = pages.team(d, q.get("t"), q.get("name") or "")
            if found is None:
                return {"error": "no team %r in tournament %s" % (q.get("name"), q.get("t") or "(none yet)")}
            return found
        return pages.public(d, q.get("t"))

    def refuse(status: int, text: str) -> PlainTextResponse:
        return PlainTextResponse(text + "\n", status_code=status)

    def limited(e: Limited) -> PlainTextResponse:
        return PlainTextResponse(str(e) + "\n", status_code=429, headers={"Retry-After": str(e.retry_after)})

    async def tv(_request: Request):
        return render("tv", "Venue %s" % d.hub.venue)

    async def team(request: Request):
        return render("team", request.query_params.get("name") or "Team")

    async def host(request: Request):
        try:
            if not code_ok(request, request.query_params.get("code")):
                return refuse(403, "the venue's host page needs the host code printed by 'battlement venue' "
                                   "(/host?code=...)")
        except Limited as e:
            return limited(e)
        return render("host", "Venue %s - host" % d.hub.venue)

    async def api_venue(request: Request):
        return JSONResponse(pages.public(d, request.query_params.get("t")))

    async def api_team(request: Request):
        found = state_of(request, "team", request.query_params)
        return JSONResponse(found, status_code=404 if "error" in found else 200)

    async def api_host(request: Request):
        given = request.query_params.get("code")
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        try:
            if not code_ok(request, given):
                return JSONResponse({"ok": False, "message": "the host code is needed (?code=H or "
                                                             "Authorization: Bearer H)"}, status_code=403)
        except Limited as e:
            return JSONResponse({"ok": False, "message": str(e)}, status_code=429,
                                headers={"Retry-After": str(e.retry_after)})
        if request.method == "GET":
            return JSONResponse(host_state(request, request.query_params.get("t")))
        body = await request.body()
        reply = answer(body.decode("utf-8", "replace") if len(body) <= MAX_ACTION else None)
        return JSONResponse(reply, status_code=200 if reply["ok"] else 400)

    def answer(text: str | None) -> dict:
        """The reply to one host action, whatever it holds: never raises."""
        if text is None:
            counters["ws-junk"] += 1
            return {"ok": False, "message": "an action is a JSON object of at most %d bytes" % MAX_ACTION}
        try:
            msg = json.loads(text)
        except ValueError as e:
            counters["ws-junk"] += 1
            return {"ok": False, "message": "not JSON (%s): send an action like {\"action\": \"team\", "
                                            "\"name\": \"Knights\"}" % e}
        if not isinstance(msg, dict):
            counters["ws-junk"] += 1
            return {"ok": False, "message": "an action is a JSON object like {\"action\": \"team\", \"name\": \"Knights\"}"}
        counters["actions"] += 1
        try:
            return act(d, msg)
        except (UserError, ValueError, TypeError, KeyError) as e:
            counters["actions-refused"] += 1
            # (a KeyError's str() is its key quoted: its words are the key itself)
            return {"ok": False, "message": str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)}
        except Exception as e:  # one action must never take the hub's page down
            counters["action-errors"] += 1
            log.exception("the host's action %s", text[:200])
            d.hub._note("error in a host action: %s: %s" % (type(e).__name__, e))
            return {"ok": False, "message": "the hub could not do that (%s); it is noted on the host page"
                                            % type(e).__name__}

    async def ws(socket: WebSocket):
        q = socket.query_params
        role = q.get("role", "tv")
        try:
            if role not in ROLES:
                raise UserError("role is one of %s" % ", ".join(ROLES))
            if role == "host" and not code_ok(socket, q.get("code")):
                raise UserError("the host websocket needs the host code")
        except (UserError, Limited) as e:
            await refuse_socket(socket, e)
            return
        await socket.accept()
        dirty = asyncio.Event()
        dirty.set()
        sockets.add(dirty)

        async def pusher() -> None:
            while True:
                await dirty.wait()
                dirty.clear()
                try:
                    data = dict(state_of(socket, role, q), type="state")
                except Exception as e:  # say so, and carry on serving the others
                    log.exception("the %s page's state", role)
                    data = {"type": "error", "message": "the hub could not build this page (%s)" % type(e).__name__}
                await socket.send_text(json.dumps(data))
                await asyncio.sleep(0.05)  # a burst of changes is one update

        push = asyncio.create_task(pusher())
        try:
            while True:
                message = await socket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                if role != "host":
                    reply = {"ok": False, "message": "this page only watches; the host's page acts"}
                else:
                    text = message.get("text")
                    reply = answer(text if text is not None and len(text) <= MAX_ACTION else None)
                await socket.send_text(json.dumps(dict(reply, type="reply")))
                dirty.set()
        except WebSocketDisconnect:
            pass
        finally:
            sockets.discard(dirty)
            push.cancel()
            await asyncio.gather(push, return_exceptions=True)

    async def health(request: Request):
        try:
            if not code_ok(request, request.query_params.get("code")):
                return JSONResponse({"error": "the hub's health needs the host code"}, status_code=403)
        except Limited as e:
            return JSONResponse({"error": str(e)}, status_code=429, headers={"Retry-After": str(e.retry_after)})
        return JSONResponse({"counters": d.hub.counters, "web": counters, "notes": d.hub.notes,
                             "tables": d.hub.table_states()})

    routes = [
        Route("/", tv),
        Route("/team", team),
        Route("/host", host),
        Route("/api/venue", api_venue),
        Route("/api/team", api_team),
        Route("/api/host", api_host, methods=["GET", "POST"]),
        Route("/api/health", health),
        WebSocketRoute("/ws", ws),
        Route("/favicon.ico", lambda _r: FileResponse(os.path.join(STATIC, "favicon.svg"), media_type="image/svg+xml")),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    app.add_middleware(SecurityHeaders)
    return app
