"""The ASGI app the bridge serves.

    /                      public scoreboard (anyone at the table may look: never a secret)
    /host?code=H           host controls: new game with a form of the game's options (their help, the
                           table map's values as defaults), sensor buttons (dice and pawns for
                           Medieval Madness), miss, undo, pause, every question with its answers
    /side/<side>?code=C    one side's private page: secret set-up, swaps, private answers
    /ws?role=...           live state for each of those (public / host / side), and the page's actions
    /api/state             the public state as JSON; /api/history finished games;
    /api/spaces            the spaces of a board game (Medieval Madness), [] for the others

Each page gets only what its role may see: the public websocket carries
Session.public(), built from the rules' public view. A wrong or missing code is a
403 that says which code is needed, and the bridge carries on.
"""

from __future__ import annotations

import asyncio
import html
import json
import os

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from battlement import onboarding
from battlement.errors import UserError
from battlement.session import Session

STATIC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "static")


def create_app(bridge) -> Starlette:
    with open(os.path.join(STATIC, "page.html"), encoding="utf-8") as f:
        page = f.read()

    def session_of(table: str | None) -> Session:
        if not table:
            return next(iter(bridge.sessions.values()))
        if table not in bridge.sessions:
            raise UserError("no table %r here (tables: %s)" % (table, ", ".join(sorted(bridge.sessions))))
        return bridge.sessions[table]

    def render(role: str, s: Session, side: str = "") -> HTMLResponse:
        title = "%s - %s" % (s.match.game.TITLE, {"public": "scoreboard", "host": "host", "side": side}[role])
        body = (page.replace("{{ROLE}}", role).replace("{{TABLE}}", html.escape(s.table))
                .replace("{{SIDE}}", html.escape(side)).replace("{{TITLE}}", html.escape(title))
                .replace("{{TABLES}}", html.escape(json.dumps(sorted(bridge.sessions)))))
        return HTMLResponse(body)

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
        if request.query_params.get("code") != bridge.host_code:
            return refuse(403, "the host page needs the host code printed by 'battlement run' (/host?code=...)")
        try:
            return render("host", session_of(request.query_params.get("table")))
        except UserError as e:
            return refuse(404, str(e))

    async def side_page(request: Request):
        side = request.path_params["side"]
        try:
            s = session_of(request.query_params.get("table"))
            s.check_code(side, request.query_params.get("code"))
        except UserError as e:
            return refuse(403 if "code" in str(e) else 404, str(e))
        return render("side", s, side)

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

    async def ws(socket: WebSocket):
        q = socket.query_params
        role, side = q.get("role", "public"), q.get("side", "")
        try:
            s = session_of(q.get("table"))
            if role == "host" and q.get("code") != bridge.host_code:
                raise UserError("the host websocket needs the host code")
            if role == "side":
                s.check_code(side, q.get("code"))
            if role not in ("public", "host", "side"):
                raise UserError("role must be public, host or side")
        except UserError as e:
            await socket.accept()
            await socket.send_json({"type": "error", "message": str(e)})
            await socket.close(code=4403)
            return
        await socket.accept()
        dirty = asyncio.Event()
        dirty.set()

        def snapshot() -> dict:
            if role == "host":
                data = s.for_host()
                data["bridge"] = {"notes": bridge.notes[-10:], "counters": bridge.counters,
                                  "simulated": s.table in bridge.sims}
                data["sound"] = bridge.sound.status()
            elif role == "side":
                data = s.for_side(side)
            else:
                data = s.public()
            data["type"] = "state"
            return data

        def changed(_session, _fx) -> None:
            dirty.set()

        async def pusher() -> None:
            # coalesce bursts: a page gets the latest state, not every intermediate one
            while True:
                await dirty.wait()
                dirty.clear()
                try:
                    text = json.dumps(snapshot())
                except Exception as e:  # noqa: BLE001 -- say so on the host page rather than go quiet
                    bridge._note("page update for %s failed: %s: %s" % (role, type(e).__name__, e))
                    text = json.dumps({"type": "error", "message": "the bridge could not build this page's state"})
                await socket.send_text(text)

        s.listeners.append(changed)
        push = asyncio.create_task(pusher())
        try:
            while True:
                msg = await socket.receive_text()
                try:
                    reply = act(s, role, side, json.loads(msg))
                except (UserError, ValueError, KeyError, TypeError) as e:
                    reply = {"ok": False, "message": str(e)}
                await socket.send_text(json.dumps(dict(reply, type="reply")))
                dirty.set()
        except WebSocketDisconnect:
            pass
        finally:
            s.listeners.remove(changed)
            push.cancel()

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
        if action == "input":
            return s.apply(msg["input"], source="host page")
        if action == "sense":
            return bridge.sensor_press(s.table, msg["input"])
        if action == "miss":
            inp = s.miss_input()
            if inp is None:
                return {"ok": False, "message": "a miss is not possible now"}
            return s.apply(inp, source="host page (miss)")
        if action == "undo":
            return s.undo()
        if action == "pause":
            s.paused = bool(msg.get("paused", not s.paused))
            s._note("Game paused: sensors are ignored." if s.paused else "Game resumed.")
            s._changed()
            return {"ok": True, "message": ""}
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
            s.new_game(msg.get("game") or None, options, msg.get("seed"))
            return {"ok": True, "message": ""}
        raise UserError("unknown action %r" % (action,))

    routes = [
        Route("/", public),
        Route("/host", host),
        Route("/side/{side}", side_page),
        Route("/api/state", state),
        Route("/api/history", history),
        Route("/api/spaces", spaces),
        WebSocketRoute("/ws", ws),
        Route("/favicon.ico", lambda _r: FileResponse(os.path.join(STATIC, "favicon.svg"), media_type="image/svg+xml")),
        *onboarding.routes(bridge),  # /api/onboarding: addresses and QR codes for the host page
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes)
