"""The ASGI app the bridge serves.

    /                      public scoreboard (anyone at the table may look: never a secret)
    /host?code=H           host controls: new game with a form of the game's options (their help, the
                           table map's values as defaults), sensor buttons, timeout, undo, pause, every
                           question in words with the answers the game lets the host give
    /side/<side>?code=C    one side's private page: secret set-up, swaps, private answers; with the code of
                           an earlier game of the table, which game it was and what the table plays now
    /ws?role=...           live state for each of those (public / host / side), and the page's actions
    /api/state             the public state as JSON; /api/history finished games;
    /api/spaces            the spaces of a game played on a board of spaces, [] for the others
    /games/<game>.js       the game's page board (beside its rules), loaded by the page shell
    /metrics               Prometheus metrics: counts and latencies only, public (battlement.ops.metrics)
    /api/health?code=H     the bridge's tasks, every counter by reason, the last rejected frames, the
                           boards' heartbeats (host code, also as "Authorization: Bearer H")

Each page gets only what its role may see: the public websocket carries
Session.public(), built from the rules' public view. A wrong or missing code is a
403 that says which code is needed, and the bridge carries on; a client that keeps
giving wrong codes is answered 429 for a while (web.guard), others are not slowed.
A websocket opened from another site's page (its Origin is not this server) is
refused. Whatever arrives on a websocket, a reply says what was wrong with it and
the socket stays open.
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import os
import traceback
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

import shared_rules
from battlement.errors import UserError
from battlement.ops.metrics import route as metrics_route
from battlement.table.adapter import page_script
from battlement.table.session import Session
from battlement.table.tokens import same
from battlement.web import onboarding
from battlement.web.guard import Limited, SecurityHeaders, WrongCodes, csp, new_nonce, refuse_socket

log = logging.getLogger("battlement.web")
MAX_ACTION = 64 * 1024  # bytes: an action from a page is a few hundred; anything longer is refused in words

HEALTH_EVERY = 2.0  # seconds between looks at the bridge's health for the host page
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")


def create_app(bridge) -> Starlette:
    with open(os.path.join(STATIC, "page.html"), encoding="utf-8") as f:
        page = f.read()

    def session_of(table: str | None) -> Session:
        if not table:
            return next(iter(bridge.sessions.values()))
        if table not in bridge.sessions:
            raise UserError("no table %r here (tables: %s)" % (table, ", ".join(sorted(bridge.sessions))))
        return bridge.sessions[table]

    guard = WrongCodes()
    bridge.web_counters = guard.counters  # the host page and /api/health show them
    counters = guard.counters
    counters.update({"ws-junk": 0, "ws-foreign-origin": 0, "ws-errors": 0})

    def render(role: str, s: Session, side: str = "", mine: dict | None = None) -> HTMLResponse:
        """mine: the game of a side page's code when the table plays another now: the page of that game."""
        rules = shared_rules.load(mine["game"]) if mine and mine["game"] in shared_rules.GAMES else s.match.game
        title = "%s - %s" % (rules.TITLE, {"public": "scoreboard", "host": "host", "side": side}[role])
        nonce = new_nonce()  # the page's own inline script runs; any other inline script does not
        body = (page.replace("{{ROLE}}", role).replace("{{TABLE}}", html.escape(s.table))
                .replace("{{SIDE}}", html.escape(side)).replace("{{TITLE}}", html.escape(title))
                .replace("{{GAME}}", html.escape(rules.NAME))
                .replace("{{TABLES}}", html.escape(json.dumps(sorted(bridge.sessions))))
                .replace("<script>", '<script nonce="%s">' % nonce))
        return HTMLResponse(body, headers={"Content-Security-Policy": csp(nonce)})

    def client_of(conn) -> str:
        return conn.client.host if conn.client else "?"

    def host_code_ok(conn, given: str | None) -> bool:
        """Is `given` the host code? A wrong one spends one of the client's tokens (Limited when none is left)."""
        client = client_of(conn)
        guard.check(client)
        if same(given, bridge.host_code):
            return True
        guard.wrong(client)
        return False

    def side_code_ok(conn, s: Session, side: str, given: str | None) -> dict | None:
        """None if `given` is the side's code; the game it opens if it is an earlier game's code of that side
        on this table (its page says what the table plays now); else UserError. A code that opens nothing
        costs one of the client's tokens (an unknown side and no code is no guess: it costs nothing)."""
        client = client_of(conn)
        guard.check(client)
        if side in s.codes and same(given, s.codes[side]):
            return None
        mine = s.code_game(side, given)
        if mine is not None:
            return mine
        if side in s.codes or given:
            guard.wrong(client)
        s.check_code(side, given)
        return None

    def limited(e: Limited) -> PlainTextResponse:
        return PlainTextResponse(str(e) + "\n", status_code=429, headers={"Retry-After": str(e.retry_after)})

    boards: dict[str, list] = {}

    def spaces_of(s: Session) -> list:
        """A board game's spaces (number, name, wall) for the page's board and the host's 'put a pawn on'
        list; [] for a game with no board of spaces. Never secret: they are printed on the board."""
        board_view = getattr(s.match.game, "board_view", None)
        if board_view is None:
            return []
        key = s.match.game.NAME + json.dumps(s.match.options, sort_keys=True)
        if key not in boards:  # the board is read from a file: once per set of options
            boards[key] = [{"id": sp["id"], "name": sp["name"], "wall": sp["wall"]} for sp in board_view(s.match.options)]
        return boards[key]

    def refuse(status: int, text: str) -> PlainTextResponse:
        return PlainTextResponse(text + "\n", status_code=status)

    async def public(request: Request):
        try:
            return render("public", session_of(request.query_params.get("table")))
        except UserError as e:
            return refuse(404, str(e))

    async def host(request: Request):
        try:
            if not host_code_ok(request, request.query_params.get("code")):
                return refuse(403, "the host page needs the host code printed by 'battlement run' (/host?code=...)")
        except Limited as e:
            return limited(e)
        try:
            return render("host", session_of(request.query_params.get("table")))
        except UserError as e:
            return refuse(404, str(e))

    async def side_page(request: Request):
        side = request.path_params["side"]
        try:
            s = session_of(request.query_params.get("table"))
            mine = side_code_ok(request, s, side, request.query_params.get("code"))
        except Limited as e:
            return limited(e)
        except UserError as e:
            return refuse(403 if "code" in str(e) else 404, str(e))
        return render("side", s, side, mine)

    async def state(request: Request):
        try:
            return JSONResponse(session_of(request.query_params.get("table")).public())
        except UserError as e:
            return JSONResponse({"error": str(e)}, status_code=404)

    async def spaces(request: Request):
        try:
            return JSONResponse(spaces_of(session_of(request.query_params.get("table"))))
        except UserError as e:
            return JSONResponse({"error": str(e)}, status_code=404)

    async def history(request: Request):
        return JSONResponse(bridge.journal.history(request.query_params.get("table"), 50))

    async def health(request: Request):
        given = request.query_params.get("code")
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        try:
            if not host_code_ok(request, given):
                return JSONResponse({"error": "the bridge's health needs the host code (?code=H or "
                                              "Authorization: Bearer H)"}, status_code=403)
        except Limited as e:
            return JSONResponse({"error": str(e)}, status_code=429, headers={"Retry-After": str(e.retry_after)})
        return JSONResponse(bridge.health())

    def foreign_origin(socket: WebSocket) -> str | None:
        """The Origin of a websocket opened by another site's page, or None (same site, or no browser)."""
        origin = socket.headers.get("origin")
        if origin is None:
            return None  # not a browser: nothing a page of another site could ride on
        try:
            there = urlsplit(origin).netloc.lower()
        except ValueError:
            return origin
        return None if there and there == socket.headers.get("host", "").lower() else origin

    async def ws(socket: WebSocket):
        q = socket.query_params
        role, side = q.get("role", "public"), q.get("side", "")
        origin = foreign_origin(socket)
        if origin is not None:
            counters["ws-foreign-origin"] += 1
            bridge._note("refused a websocket opened from %s (not this server's page)" % origin[:80])
            await socket.close(code=1008)  # before accept: the handshake is answered 403
            return
        try:
            s = session_of(q.get("table"))
            if role == "host" and not host_code_ok(socket, q.get("code")):
                raise UserError("the host websocket needs the host code")
            if role == "side":
                side_code_ok(socket, s, side, q.get("code"))
            if role not in ("public", "host", "side"):
                raise UserError("role must be public, host or side")
        except (UserError, Limited) as e:
            await refuse_socket(socket, e)
            return
        await socket.accept()
        dirty = asyncio.Event()
        dirty.set()
        clock = bridge.metrics.page_clock() if getattr(bridge, "metrics", None) else None  # event -> page
        code = q.get("code")
        mine: dict = {}  # a side page's own game while the table plays another (Session.code_game)

        def moved() -> dict:
            """A side page whose code is not its side's now: its game was set aside or is over."""
            mine.update(mine or s.code_game(side, code) or {})
            return s.moved(side, mine) if mine else {"type": "error", "message": "this page's code opens no game"}

        def snapshot() -> dict:
            if role == "host":
                data = s.for_host()
                data["bridge"] = {"notes": bridge.notes[-10:], "counters": bridge.counters,
                                  "simulated": s.table in bridge.sims, "health": bridge.health(),
                                  "games": bridge.games_for(s.table)}
                data["sound"] = bridge.sound.status()
            elif role == "side" and not same(code, s.codes.get(side)):
                return moved()  # never the view of a game this page's code does not open
            elif role == "side":
                mine.clear()
                data = s.for_side(side)
            else:
                data = s.public()
            data["link"] = bridge.link_of(s.table)  # boards online: no page says "live" with every board gone
            data["type"] = "state"
            return data

        def changed(_session, _fx) -> None:
            dirty.set()
            if clock:
                clock.changed()

        async def pusher() -> None:
            # coalesce bursts: a page gets the latest state, not every intermediate one
            health_sent = ""
            while True:
                if role == "host":
                    try:
                        await asyncio.wait_for(dirty.wait(), HEALTH_EVERY)
                    except TimeoutError:
                        # The bridge's health changes without the game changing: sent on its own, so the
                        # page redraws its health section only, not the buttons under the host's finger.
                        text = json.dumps({"type": "health", "health": bridge.health()})
                        if text != health_sent:
                            health_sent = text
                            await socket.send_text(text)
                        continue
                else:
                    await dirty.wait()
                dirty.clear()
                since = clock.take() if clock else None
                try:
                    text = json.dumps(snapshot())
                except Exception as e:  # noqa: BLE001 -- say so on the host page rather than go quiet
                    bridge._note("page update for %s failed: %s: %s" % (role, type(e).__name__, e))
                    text = json.dumps({"type": "error", "message": "the bridge could not build this page's state"})
                await socket.send_text(text)
                if clock:
                    clock.sent(since)

        s.listeners.append(changed)
        push = asyncio.create_task(pusher())
        try:
            while True:
                message = await socket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                reply = answer(s, role, side, message) if role != "side" or same(code, s.codes.get(side)) else {
                    "ok": False, "message": "this page's game is not the one being played: ask the host for your new page"}
                await socket.send_text(json.dumps(dict(reply, type="reply")))
                dirty.set()
        except WebSocketDisconnect:
            pass
        finally:
            s.listeners.remove(changed)
            push.cancel()
            # its end is taken here: a page gone in the middle of an update is just gone, anything else is said
            end = (await asyncio.gather(push, return_exceptions=True))[0]
            if isinstance(end, Exception) and not isinstance(end, WebSocketDisconnect):
                bridge._note("updates to a %s page stopped: %s: %s" % (role, type(end).__name__, end))

    def answer(s: Session, role: str, side: str, message) -> dict:
        """The reply to one websocket message, whatever it holds: never raises, never closes the socket."""
        text = message.get("text")
        if text is None:
            counters["ws-junk"] += 1
            return {"ok": False, "message": "send actions as text frames of JSON, e.g. {\"action\": \"undo\"}"}
        if len(text) > MAX_ACTION:
            counters["ws-junk"] += 1
            return {"ok": False, "message": "an action of %d characters is too long (at most %d)" % (len(text), MAX_ACTION)}
        try:
            msg = json.loads(text)
        except ValueError as e:
            counters["ws-junk"] += 1
            return {"ok": False, "message": "not JSON (%s): send an action like {\"action\": \"undo\"}" % e}
        if not isinstance(msg, dict):
            counters["ws-junk"] += 1
            return {"ok": False, "message": "an action is a JSON object like {\"action\": \"undo\"}, not %s"
                    % _json_kind(msg)}
        try:
            return act(s, role, side, msg)
        except (UserError, ValueError, KeyError, TypeError) as e:
            return {"ok": False, "message": str(e)}
        except Exception as e:  # noqa: BLE001 -- one action must never take the page's socket down
            counters["ws-errors"] += 1
            log.error("error in action %s from the %s page:\n%s", text[:200], role, traceback.format_exc())
            bridge._note("error in an action from the %s page: %s: %s" % (role, type(e).__name__, e))
            return {"ok": False, "message": "the bridge could not do that (%s); it is noted on the host page"
                    % type(e).__name__}

    def act(s: Session, role: str, side: str, msg: dict) -> dict:
        """One action from a page; what each role may do is checked here, not trusted from the page."""
        action = msg.get("action")
        if role == "public":
            raise UserError("the scoreboard only watches; use the host page or your side's page")
        if role == "side":
            if action != "input":
                raise UserError("a side page can only send its own decisions")
            inp = msg.get("input")
            if not isinstance(inp, dict) or inp.get("by") != side:
                raise UserError("the %s page can only decide for %s" % (side, side))
            return s.apply(inp, source="side " + side)
        if action in ("input", "sense") and not isinstance(msg.get("input"), dict):
            raise UserError("%s needs an input object, e.g. {\"action\": \"%s\", \"input\": {\"t\": \"miss\"}}"
                            % (action, action))
        if action == "input":
            return s.apply(msg["input"], source="host page")
        if action == "sense":
            return bridge.sensor_press(s.table, msg["input"])
        if action in ("timeout", "miss"):
            inp = s.timeout_input()
            if inp is None:
                return {"ok": False, "message": "nothing times out now"}
            return s.apply(inp, source="host page (timeout)")
        if action == "blind":  # the host's answer about a break a board could not time
            return s.answer_blind(msg.get("id"), msg.get("ball") is True)
        if action == "undo":
            return s.undo()
        if action == "pause":
            s.pause(bool(msg.get("paused", not s.paused)))
            return {"ok": True, "message": ""}
        if action == "led-test":
            # the host page shows every table's boards: the card says which table's (the same id may be on several)
            return bridge.led_test(str(msg.get("table") or s.table), str(msg.get("board", "")))
        if action == "resume-previous":
            return bridge.resume_previous(s.table)
        if action == "resume":  # "Resume this game": the one the host picked in the list of games set aside
            if msg.get("id") is None:
                raise UserError("resume needs the id of a game set aside, e.g. {\"action\": \"resume\", \"id\": 12}")
            return bridge.resume_previous(s.table, msg["id"])
        if action == "sound":
            volume = msg.get("volume")
            if volume is not None and (not isinstance(volume, int) or not 0 <= volume <= 200):
                raise UserError("volume is a whole number from 0 to 200; got %r" % (volume,))
            bridge.sound.set(msg.get("muted"), volume)
            bridge.sound_changed()
            return {"ok": True, "message": ""}
        if action == "new":
            options = msg.get("options") or {}
            if not isinstance(options, dict):
                raise UserError("new game: options are an object of option names and values, e.g. {\"sets\": 2}; got %r"
                                % (options,))
            bridge.new_game(s.table, msg.get("game") or None, options, msg.get("seed"))
            return {"ok": True, "message": ""}
        raise UserError("unknown action %r" % (action,))

    async def game_script(request: Request):
        """A game's page board (beside its rules); a game without one gets an empty script."""
        name = request.path_params["game"]
        name = name.removesuffix(".js")
        try:
            path = page_script(shared_rules.load(name))
        except KeyError as e:
            return refuse(404, str(e).strip('"'))
        if path is None:
            return Response("", media_type="text/javascript")
        return FileResponse(path, media_type="text/javascript")

    routes = [
        Route("/", public),
        Route("/host", host),
        Route("/side/{side}", side_page),
        Route("/api/state", state),
        Route("/api/history", history),
        Route("/api/spaces", spaces),
        Route("/games/{game}", game_script),
        Route("/api/health", health),
        WebSocketRoute("/ws", ws),
        metrics_route(bridge),
        Route("/favicon.ico", lambda _r: FileResponse(os.path.join(STATIC, "favicon.svg"), media_type="image/svg+xml")),
        *onboarding.routes(bridge),  # /api/onboarding: addresses and QR codes for the host page
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes)
    app.add_middleware(SecurityHeaders)
    return app


def _json_kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    return {list: "an array", str: "a string", int: "a number", float: "a number"}.get(type(value), type(value).__name__)
