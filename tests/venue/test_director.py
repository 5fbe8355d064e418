"""The tournament director on a real hub and real bridge processes over a real Mosquitto: the host's
corrections (taken while the bracket can, refused in words after), a table that drops out holding its
match until the host moves it (said on the host page in Chromium), a table that refuses a match."""

import asyncio
import json
import sqlite3
import urllib.error
import urllib.request

import pytest
from battlement.errors import UserError
from battlement.venue import pages, protocol
from battlement.venue.director import Director
from support.procs import free_port
from support.venue import HubThread, Tap, make_key, play_ringo_to_end, venue_tables, wait

TEAMS = ["Knights", "Orcs", "Elves", "Dwarves"]


def start_bridges(bridge_process, mosquitto, tmp_path, venue, prefix, groups):
    """Bridges of the venue, each serving its group's count of Ringo tables: ([bridge], {table: bridge})."""
    keys, key = make_key(tmp_path, venue)
    files = venue_tables(tmp_path, sum(groups), "%s%d" % (prefix, mosquitto.port))
    bridges, of = [], {}
    for i, n in enumerate(groups):
        mine = files[sum(groups[:i]):sum(groups[:i]) + n]
        args = [x for _t, f in mine for x in ("--table", f)]
        b = bridge_process(*args, "--simulate", "--mqtt", mosquitto.url, "--venue", venue, "--keys-dir", keys,
                           journal=str(tmp_path / ("bridge-%d.sqlite" % i)))
        bridges.append(b)
        of.update({t: b for t, _f in mine})
    return bridges, of, key


def with_director(hub):
    d = hub.call(Director, hub.hub)
    return d, (lambda fn, *a: hub.call(fn, d, *a))


def table_of(hub, vmid):
    return hub.call(lambda: hub.hub.state.matches[vmid]["assign"]["table"])


def test_the_host_corrects_a_result_while_the_bracket_allows_and_is_told_why_not_after(
        bridge_process, mosquitto, tmp_path, browser):
    _, bridge_of, key = start_bridges(bridge_process, mosquitto, tmp_path, "dir-1", "dc", [2])
    journal = tmp_path / "hub.sqlite"
    hub = HubThread(journal, mosquitto.url, "dir-1", key)
    stop = None
    try:
        d, on = with_director(hub)
        url, stop = serve_pages(hub, d)
        wait(lambda: len(hub.call(hub.hub.table_states)) == 2, "both tables heard")
        tid = on(Director.create, {"title": "Cup", "game": "ringo", "format": "single_elimination",
                                   "teams": TEAMS, "seed": 1})
        assert tid == "cup"
        hub.wait_for("ready", match="cup/W1-1")
        hub.wait_for("ready", match="cup/W1-2")
        last = play_ringo_to_end(bridge_of[table_of(hub, "cup/W1-1")], table_of(hub, "cup/W1-1"))
        assert last["view"]["winner"] == "attackers"  # Knights, the match's first team
        wait(lambda: on(lambda d: d.tournaments["cup"].match("W1-1").state) == "played", "W1-1 in the bracket")

        # the next match of neither team has been played: a new winner is taken, with the host's words
        changed = on(Director.correct, "cup/W1-1", "Dwarves", None, "the castle sensor saw a hand")
        assert changed == ["W2-1"]
        corrections = sqlite3.connect(journal).execute("SELECT body FROM log WHERE kind='correct'").fetchall()
        assert [json.loads(b)["why"] for (b,) in corrections] == ["the castle sensor saw a hand"]
        w11 = on(lambda d: pages.match(d, "cup", d.tournaments["cup"].match("W1-1")))
        assert w11["winner"] == "Dwarves" and w11["corrected"] == "the castle sensor saw a hand"
        for bad, words in ((("cup/W1-1", "Goblins", None, "x"), "the winner is one of them, not 'Goblins'"),
                           (("cup/W1-1", "Knights", None, " "), "say why cup/W1-1 is corrected"),
                           (("cup/W2-1", "Dwarves", None, "x"), r"W2-1 is waiting for its teams \(winner of W1-1"),
                           (("nope/W1-1", "Dwarves", None, "x"), "no tournament 'nope'")):
            with pytest.raises(UserError, match=words):
                on(Director.correct, *bad)

        table = table_of(hub, "cup/W1-2")
        play_ringo_to_end(bridge_of[table], table)  # Orcs win; W2-1, Dwarves against Orcs, goes on a table
        hub.wait_for("ready", match="cup/W2-1")
        said = on(lambda d: [a["text"] for a in d.announcements])
        assert said[-1].endswith(": Dwarves against Orcs")
        # now W2-1 is under way: Knights back in it would change a game half-played. From the host page:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url + "/host?code=host-code-for-tests")
        page.wait_for_selector("#status:has-text('live')")
        page.select_option("#c-match", "cup/W1-1")
        page.select_option("#c-winner", "Knights")
        page.fill("#c-why", "no, it was fine")
        page.click("#correct-form button")
        page.wait_for_selector("#toast:has-text('correcting cup/W1-1 would change who plays W2-1, which is on Table')")
        page.select_option("#c-winner", "Dwarves")
        page.wait_for_selector("#c-scores-label:has-text('Scores, Knights - Dwarves')")
        page.fill("#c-scores", "1-3")
        page.fill("#c-why", "the score, counted again")
        page.click("#correct-form button")
        page.wait_for_selector("#toast:has-text('cup/W1-1 corrected')")
        page.wait_for_selector(".match[data-match='W1-1'] .foot:has-text('corrected')")
        before = on(lambda d: [s for s in d.tournaments["cup"].standings()])
        dwarves = next(s for s in before if s.team == "Dwarves")
        assert (dwarves.wins, dwarves.points_for, dwarves.points_against) == (1, 3, 1)
        starts = hub.hub.counters["starts-sent"]
    finally:
        if stop is not None:
            stop()
        hub.stop()

    # a hub started again on its journal: the same bracket, and W2-1, under way, is not started again
    hub = HubThread(journal, mosquitto.url, "dir-1", key)
    try:
        _, on = with_director(hub)
        assert on(lambda d: d.tournaments["cup"].standings()) == before
        wait(lambda: on(lambda d: pages.match(d, "cup", d.tournaments["cup"].match("W2-1"))["state"]) == "playing",
             "W2-1 playing after the restart")
        assert hub.hub.counters["starts-sent"] == 0 and starts >= 3
    finally:
        hub.stop()


def serve_pages(hub, d):
    """The venue's pages served by uvicorn on the hub's own loop: (url, stop)."""
    import uvicorn
    from battlement.web.venue import create_venue_app

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_venue_app(d, "host-code-for-tests"), host="127.0.0.1",
                                           port=port, log_level="warning", lifespan="off"))
    task = hub.call(lambda: asyncio.ensure_future(server._serve()))  # the test, not uvicorn, owns the signals
    wait(lambda: server.started, "the venue's pages")

    def stop():
        server.should_exit = True
        hub.call(lambda: None)
        wait(task.done, "the pages to stop")
    return "http://127.0.0.1:%d" % port, stop


def test_a_table_that_drops_out_holds_its_match_and_the_host_moves_it_to_a_free_table(
        bridge_process, mosquitto, tmp_path, monkeypatch, browser):
    from battlement.venue import hub as venuehub
    from battlement.venue import tablelink

    # sooner than the 15 s a hall waits, but above the bridges' status period: a quiet, live table must
    # never look dropped, or the host's "move it" finds no free table
    monkeypatch.setattr(venuehub, "DROPPED_AFTER", tablelink.STATUS_EVERY + 2.0)
    _, bridge_of, key = start_bridges(bridge_process, mosquitto, tmp_path, "dir-2", "dd", [1, 1])
    hub = HubThread(tmp_path / "hub.sqlite", mosquitto.url, "dir-2", key)
    stop = None
    try:
        d, on = with_director(hub)
        url, stop = serve_pages(hub, d)
        wait(lambda: len(hub.call(hub.hub.table_states)) == 2, "both tables heard")
        on(Director.create, {"title": "Duel", "game": "ringo", "format": "single_elimination",
                             "teams": ["Knights", "Orcs"]})
        hub.wait_for("ready", match="duel/W1-1")
        first = table_of(hub, "duel/W1-1")
        other = next(t for t in bridge_of if t != first)
        # the host's page, and its actions, only with the host code
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url + "/host?code=not-the-code")
        assert refused.value.code == 403 and b"needs the host code" in refused.value.read()
        move = urllib.request.Request(url + "/api/host", data=b'{"action": "move", "match": "duel/W1-1"}')
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(move)
        assert refused.value.code == 403
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url + "/host?code=host-code-for-tests")
        page.wait_for_selector("#status:has-text('live')")

        bridge_of[first].kill9()
        hub.wait_for("dropped", table=first)
        held = "dropped out: duel/W1-1 is held until it is back"
        assert on(lambda d: {t["table"]: t["words"] for t in pages.tables(d)})[first] == held
        assert on(lambda d: pages.team(d, None, "Orcs")["next"]["words"]) == (
            "On %s, against Knights: the table dropped out, the match is held" % pages.table_label(first))
        page.wait_for_selector("#held li:has-text('%s dropped out: duel/W1-1')" % pages.table_label(first))
        page.wait_for_selector("#tables li.dropped:has-text('%s')" % held)

        page.click("#held button:has-text('Move it to a free table')")
        page.wait_for_selector("#toast:has-text('duel/W1-1 moved to %s')" % pages.table_label(other))
        hub.wait_for("ready", match="duel/W1-1", table=other)
        assert on(lambda d: d.announcements[-1]["text"]) == "%s: Knights against Orcs" % pages.table_label(other)
        last = play_ringo_to_end(bridge_of[other], other)
        wait(lambda: on(lambda d: d.tournaments["duel"].champion) == last["venue"]["names"][last["view"]["winner"]],
             "the champion, from the table the match moved to")
        page.wait_for_selector("#champion:has-text('Knights win Duel!')")
    finally:
        if stop is not None:
            stop()
        hub.stop()


def test_a_match_a_table_refuses_waits_for_another_table_and_the_queue_says_why(
        bridge_process, mosquitto, tmp_path):
    _, key = make_key(tmp_path, "dir-3")
    ghost = "ghost%d" % mosquitto.port  # a table that answers as a bridge would, built for another game
    up, down = protocol.up_topic("dir-3", ghost), protocol.down_topic("dir-3", ghost)
    tap = Tap(mosquitto, down)
    voice = protocol.Sender(key, ghost)
    hub = HubThread(tmp_path / "hub.sqlite", mosquitto.url, "dir-3", key)
    try:
        _, on = with_director(hub)
        tap.publish(up, voice.seal(up, protocol.status(ghost, "idle", None, 1, 1)))
        wait(lambda: ghost in hub.call(hub.hub.table_states), "the ghost table heard")
        on(Director.create, {"title": "Duel", "game": "ringo", "format": "single_elimination",
                             "teams": ["Knights", "Orcs"]})
        wait(lambda: any(t == down for t, _p in tap.heard), "the start sent to the ghost table")
        tap.publish(up, voice.seal(up, protocol.refused("duel/W1-1", ghost, "table %s is built for plingpong" % ghost)))
        hub.wait_for("refused", match="duel/W1-1")
        queue = on(pages.queue)
        assert queue == [{"match": "duel/W1-1", "title": "Knights against Orcs",
                          "where": "next free table; refused by Table %s: table %s is built for plingpong"
                                   % (ghost, ghost)}]

        # a real table joins: the match goes there, and is played
        bridges, bridge_of, _ = start_bridges(bridge_process, mosquitto, tmp_path, "dir-3", "dr", [1])
        (table,) = bridge_of
        hub.wait_for("ready", match="duel/W1-1", table=table)
        assert on(pages.queue) == []
        play_ringo_to_end(bridges[0], table)
        wait(lambda: on(lambda d: d.tournaments["duel"].finished), "the duel over")
    finally:
        hub.stop()
        tap.close()


def test_a_draw_waits_for_the_host_to_give_the_match_its_winner(mosquitto, tmp_path):
    _, key = make_key(tmp_path, "dir-4")
    ghost = "ghost%d" % mosquitto.port  # a table speaking the venue's messages, whose game ends in a draw
    up, down = protocol.up_topic("dir-4", ghost), protocol.down_topic("dir-4", ghost)
    tap = Tap(mosquitto, down)
    voice = protocol.Sender(key, ghost)
    hub = HubThread(tmp_path / "hub.sqlite", mosquitto.url, "dir-4", key)
    try:
        _, on = with_director(hub)
        tap.publish(up, voice.seal(up, protocol.status(ghost, "idle", None, 1, 1)))
        wait(lambda: ghost in hub.call(hub.hub.table_states), "the ghost table heard")
        on(Director.create, {"title": "Duel", "game": "ringo", "format": "single_elimination",
                             "teams": ["Knights", "Orcs"]})
        wait(lambda: any(t == down for t, _p in tap.heard), "the start sent to the ghost table")
        sides = hub.call(lambda: hub.hub.state.matches["duel/W1-1"]["assign"]["sides"])
        tap.publish(up, voice.seal(up, protocol.ready("duel/W1-1", ghost, "ringo", 7, sides)))
        draw = protocol.result("duel/W1-1", ghost, "ringo", 7, sides, None, {}, "Ringo: draw after 80 inputs")
        tap.publish(up, voice.seal(up, draw))
        hub.wait_for("result", match="duel/W1-1")
        w11 = on(lambda d: pages.match(d, "duel", d.tournaments["duel"].match("W1-1")))
        assert w11["state"] == "undecided" and w11["winner"] is None
        assert "match duel/W1-1 ended in a draw: a bracket needs a winner" in " ".join(hub.hub.notes)
        assert on(lambda d: pages.team(d, None, "Orcs")["next"]["words"]) == (
            "Against Knights on %s: no winner yet, the host gives it" % pages.table_label(ghost))
        assert on(pages.queue) == []  # it is not put on a table again

        on(Director.correct, "duel/W1-1", "Orcs", {"Knights": 1, "Orcs": 2}, "Orcs won the shoot-out")
        assert on(lambda d: d.tournaments["duel"].champion) == "Orcs"
    finally:
        hub.stop()
        tap.close()
