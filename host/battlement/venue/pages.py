"""What the venue's pages show, as plain data: the TV's bracket, standings, queue and tables; a team's
phone page; the host's page. Read from the director and its hub, never kept: a page after a restart
shows what the journal says.
"""

from __future__ import annotations

import dataclasses

import shared_rules
from battlement.venue import protocol
from battlement.venue.director import Director, table_label, venue_match
from battlement.venue.formats import Match, Tournament

TITLES = {"winners": "Winners' bracket", "losers": "Losers' bracket", "grand_final": "Grand final",
          "round_robin": "Round robin"}
NAMED = {1: "Final", 2: "Semi-finals", 3: "Quarter-finals"}  # rounds from the end of a single elimination
HEADLINES = {"idle": "free", "playing": "playing", "held": "held: a board is offline or the game is paused",
             "over": "game over: the result is on its way", "dropped": "dropped out"}


def current(d: Director, tid: str | None = None) -> str | None:
    """The tournament a page shows: the one asked for, else the newest still running, else the newest."""
    if tid in d.tournaments:
        return tid
    running = [t for t, x in d.tournaments.items() if not x.finished]
    shown = running or list(d.tournaments)
    return shown[-1] if shown else None


def public(d: Director, tid: str | None = None) -> dict:
    """The TV page: the tournament's bracket and standings, the queue, every table, the latest calls."""
    tid = current(d, tid)
    return {"venue": d.hub.venue, "tournaments": [{"id": x, "title": d.hub.state.tournaments[x].get("title") or x,
                                                   "finished": t.finished} for x, t in d.tournaments.items()],
            "tournament": tournament(d, tid) if tid else None, "tables": tables(d), "queue": queue(d),
            "announcements": d.announcements[-8:]}


def tournament(d: Director, tid: str) -> dict:
    t, info = d.tournaments[tid], d.hub.state.tournaments[tid]
    brackets: dict[str, dict[int, list[dict]]] = {}
    states, pending = d.hub.table_states(), d.hub.state.pending()  # once for every match of the page
    for m in t.matches():
        brackets.setdefault(m.bracket, {}).setdefault(m.round, []).append(match(d, tid, m, states, pending))
    out = []
    for name, rounds in brackets.items():
        last = max(rounds)
        cols = [{"round": r, "title": _round_title(t, name, r, last), "matches": ms} for r, ms in sorted(rounds.items())]
        out.append({"name": name, "title": TITLES[name], "rounds": cols})
    return {"id": tid, "title": info.get("title") or tid, "game": info["game"], "format": t.format,
            "seed": t.seed, "champion": t.champion, "finished": t.finished, "brackets": out,
            "standings": [dataclasses.asdict(s) | {"diff": s.diff} for s in t.standings()],
            "teams": [{"name": x.name, "players": list(x.players) or d.hub.state.members(x.name)} for x in t.teams],
            "played": sum(1 for m in t.matches() if m.state == "played")}


def _round_title(t: Tournament, bracket: str, r: int, last: int) -> str:
    if bracket == "grand_final":
        return "Grand final" if r == 1 else "Reset"
    if bracket == "round_robin":
        return "Round %d" % r
    if bracket == "losers":
        return "Losers' final" if r == last else "Losers' round %d" % r
    if t.format == "double_elimination":
        return "Winners' final" if r == last else "Winners' round %d" % r
    return NAMED.get(last - r + 1, "Round %d" % r)


def match(d: Director, tid: str, m: Match, states: dict | None = None, pending: dict | None = None) -> dict:
    """A match as the pages draw it: its teams (or where they come from), its state, its table, its score.
    states, pending: the hub's table_states() and pending matches, if the caller has them already."""
    vmid = venue_match(tid, m.id)
    rec = d.hub.state.matches.get(vmid) or {}
    a = rec.get("assign")
    state, table = m.state, None
    if m.state in ("ready", "played") and a is not None:
        table = a["table"]
        if m.state == "ready" and vmid in (d.hub.state.pending() if pending is None else pending):
            state = (d.hub.table_states() if states is None else states).get(table, {}).get("state", "starting")
            state = {"idle": "starting", "over": "playing"}.get(state, state)
            if table in d.refused_on.get(vmid, {}):
                state, table = "queued", None
        elif m.state == "ready" and (rec.get("result") or rec.get("corrections")):
            state = "undecided"  # a draw, or a result the bracket did not take: the host gives it its winner
    elif m.state == "ready":
        state = "queued"
    r = m.result
    final = d.hub.state.final(vmid) if r is not None else None
    return {"id": m.id, "match": vmid, "state": state,
            "teams": [x if x is not None else (s if m.state == "waiting" else "bye")
                      for x, s in zip(m.teams, m.sources, strict=True)],
            "known": [x is not None for x in m.teams], "winner": r.winner if r else None,
            "scores": [r.scores.get(x or "", 0) for x in m.teams] if r else None,
            "table": table, "table_label": table_label(table) if table else None,
            "corrected": (final or {}).get("corrected")}


def tables(d: Director) -> list[dict]:
    """Every table the hub has heard: its state in words, its match and who plays it, its boards."""
    out = []
    pending = d.hub.state.pending()
    for table, st in d.hub.table_states().items():
        vmid = st["match"] or next((mid for mid, a in pending.items() if a["table"] == table), None)
        a = ((d.hub.state.matches.get(vmid) or {}).get("assign") or {}) if vmid else {}
        title = " against ".join(protocol.side_name(s, e) for s, e in sorted(a.get("sides", {}).items()))
        words = HEADLINES.get(st["state"], st["state"])
        if st["state"] == "dropped":
            words = "dropped out%s" % (": %s is held until it is back" % vmid if vmid else "")
        elif st["state"] == "idle" and vmid:
            words = "starting %s" % vmid
        out.append({"table": table, "label": table_label(table), "state": st["state"], "match": vmid,
                    "title": title, "boards": st["boards"], "silent": st["silent"], "words": words})
    return out


def queue(d: Director) -> list[dict]:
    """The matches waiting for a table, then those waiting for a team still playing ("after Table 2")."""
    out = []
    for tid, m in d.queued():
        vmid = venue_match(tid, m.id)
        refused = d.refused_on.get(vmid, {})
        where = "next free table" + ("; refused by %s" % "; ".join(
            "%s: %s" % (table_label(x), why) for x, why in sorted(refused.items())) if refused else "")
        out.append({"match": vmid, "title": "%s against %s" % m.teams, "where": where})
    pending = d.hub.state.pending()
    for tid, t in d.tournaments.items():
        for m in t.matches():
            if m.state != "waiting" or not any(m.teams):
                continue
            for src in m.sources:
                on = pending.get(venue_match(tid, src.partition(" of ")[2]))
                if on is not None:
                    teams = [x if x is not None else s for x, s in zip(m.teams, m.sources, strict=True)]
                    out.append({"match": venue_match(tid, m.id), "title": "%s against %s" % tuple(teams),
                                "where": "after %s" % table_label(on["table"])})
                    break
    return out


def team(d: Director, tid: str | None, name: str) -> dict | None:
    """A team's phone page: its next match and where, its record, its games. None: no such team there."""
    tid = current(d, tid)
    if tid is None or name not in d.tournaments[tid].names:
        return None
    t = d.tournaments[tid]
    nxt = t.next_match(name)
    line = next(s for s in t.standings() if s.team == name)
    games: list[dict] = []
    out: dict = {"team": name, "tournament": {"id": tid, "title": d.hub.state.tournaments[tid].get("title") or tid},
           "record": dataclasses.asdict(line), "champion": t.champion == name, "next": None,
           "players": next(list(x.players) for x in t.teams if x.name == name) or d.hub.state.members(name),
           "games": games}
    if nxt is not None:
        view = match(d, tid, nxt)
        other = [x for x, known in zip(view["teams"], view["known"], strict=True) if x != name]
        view["against"] = other[0] if other else "?"
        view["words"] = _next_words(view)
        out["next"] = view
    else:
        out["words"] = ("Won it: no match left to play" if t.champion == name else
                        "Out: place %d" % line.rank if line.out or t.finished else "No match to play now")
    for m in t.matches():
        if m.result is not None and name in m.teams:
            them = next(str(x) for x in m.teams if x != name)
            games.append({"match": m.id, "against": them, "won": m.result.winner == name,
                          "score": "%g-%g" % (m.result.scores[name], m.result.scores[them]),
                          "table": ((d.hub.state.matches.get(venue_match(tid, m.id)) or {}).get("assign")
                                    or {}).get("table")})
    return out


def _next_words(view: dict) -> str:
    where = view["table_label"]
    if view["state"] in ("playing", "starting"):
        return "Now on %s, against %s" % (where, view["against"])
    if view["state"] == "held":
        return "On %s, against %s: the game is held" % (where, view["against"])
    if view["state"] == "dropped":
        return "On %s, against %s: the table dropped out, the match is held" % (where, view["against"])
    if view["state"] == "undecided":
        return "Against %s on %s: no winner yet, the host gives it" % (view["against"], where)
    if view["state"] == "queued":
        return "Next, against %s: waiting for a free table" % view["against"]
    return "Next: against %s (waiting for that match)" % view["against"]


def host(d: Director, tid: str | None = None) -> dict:
    """The host's page: the TV's view, and the venue's players and teams, the games, the hub's notes."""
    out = public(d, tid)
    h = d.hub
    out.update({"players": [{"name": p, "team": v["team"]} for p, v in sorted(h.state.players.items())],
                "teams": sorted(h.state.teams), "notes": h.notes[-15:], "counters": h.counters,
                "games": sorted(shared_rules.GAMES)})
    return out
