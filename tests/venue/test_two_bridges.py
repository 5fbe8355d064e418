"""Two signed bridges of one venue on one real Mosquitto, each `battlement run --simulate --mqtt --venue`
serving two Ringo tables of its own (the same board ids on all four) with its own boards' keys and a copy
of the venue key. Games are played by the simulated boards of both bridges through the rules, and each
bridge journals, shows and acknowledges only its own tables' events: every frame on a table's down
topic carries the MAC of that table's key, which only the bridge serving it holds. A match start for one
bridge's table never reaches the other bridge."""

import os
import shutil
import sqlite3

from battlement.link import keys as boardkeys
from battlement.link import wire
from battlement.table import maps as tables
from battlement.venue import key as venuekey
from battlement.venue import protocol
from support.venue import SIDES, HubThread, Tap, play_ringo_to_end, venue_tables, wait

VENUE = "bar-7"


def keys_dir(tmp_path, name, venue_key, tables_of_bridge):
    """A bridge's own keys folder: its tables' board keys, made here, and a copy of the venue key."""
    d = tmp_path / name
    d.mkdir()
    shutil.copy(venue_key, d / venue_key.name)
    os.chmod(d / venue_key.name, 0o600)
    for table, f in tables_of_bridge:
        for board in tables.load(f).boards:
            boardkeys.provision(boardkeys.path_of(table, d), board)
    return d


def health(bridge):
    return bridge.get("/api/health?code=" + bridge.host_code)


def journalled(journal):
    """The tables a bridge's journal holds events and games of."""
    db = sqlite3.connect(journal, timeout=10)
    try:
        return ({t for (t,) in db.execute("SELECT DISTINCT tbl FROM events")},
                {t for (t,) in db.execute("SELECT DISTINCT tbl FROM games")})
    finally:
        db.close()


def unsigned_down(heard, table, keys):
    """Frames sent to the table's boards without the MAC of the board's key: what a bridge that does not
    hold the table's keys (another bridge's table) would send it. A ping is signed for the board's boot,
    or for boot 0 before its hello; an evack for the boot it names."""
    boots = {}
    for topic, payload in heard:
        if topic.startswith("battlement/%s/" % table) and topic.endswith("/up") and payload.startswith(b"hello "):
            _typ, fields = wire.decode(payload)
            boots.setdefault(fields[0], {0}).add(fields[1])
    out = []
    for topic, payload in heard:
        if not (topic.startswith("battlement/%s/" % table) and topic.endswith("/down")):
            continue
        board = topic.split("/")[2]
        if not any(wire.verify(payload, keys[board], table, board, b) for b in boots.get(board, {0})):
            out.append((topic, payload))
    return out


def test_two_signed_bridges_on_one_broker_each_journal_show_and_answer_only_their_own_tables(
        bridge_process, mosquitto, tmp_path):
    four = venue_tables(tmp_path, 4, "tw%d" % mosquitto.port)
    mine, theirs = four[:2], four[2:]
    (a0, _), (a1, _) = mine
    (b0, _), (b1, _) = theirs
    venuekey.make(VENUE, tmp_path / "hub-keys")
    key = venuekey.load(VENUE, tmp_path / "hub-keys")
    venue_key = venuekey.path_of(VENUE, tmp_path / "hub-keys")
    kp, kq = keys_dir(tmp_path, "keys-p", venue_key, mine), keys_dir(tmp_path, "keys-q", venue_key, theirs)
    tap = Tap(mosquitto, "battlement/#")

    def bridge(keys, files, journal):
        args = [x for _t, f in files for x in ("--table", f)]
        return bridge_process(*args, "--simulate", "--mqtt", mosquitto.url, "--venue", VENUE, "--keys-dir",
                              str(keys), journal=str(tmp_path / journal))

    # P first: its boards' hellos are out before Q listens, and Q's come while P listens
    p = bridge(kp, mine, "p.sqlite")
    q = bridge(kq, theirs, "q.sqlite")
    hub = HubThread(tmp_path / "hub.sqlite", mosquitto.url, VENUE, key)
    try:
        for b, own in ((p, mine), (q, theirs)):
            out = b.output()
            for table, _f in own:
                assert "%s: signing: on (6 boards)" % table in " ".join(out.split())
        hub.call(hub.hub.start_match, "M-A", a0, "ringo", {}, SIDES)
        hub.call(hub.hub.start_match, "M-B", b0, "ringo", {}, SIDES)
        assert hub.wait_for("ready", match="M-A")["table"] == a0
        assert hub.wait_for("ready", match="M-B")["table"] == b0
        last_a = play_ringo_to_end(p, a0)
        last_b = play_ringo_to_end(q, b0)
        assert hub.wait_for("result", match="M-A")["winner"] == last_a["view"]["winner"]
        assert hub.wait_for("result", match="M-B")["winner"] == last_b["view"]["winner"]
        # markers: a start on each bridge's other table, answered after everything the games sent it
        hub.call(hub.hub.start_match, "M-A2", a1, "ringo", {}, SIDES)
        hub.call(hub.hub.start_match, "M-B2", b1, "ringo", {}, SIDES)
        hub.wait_for("ready", match="M-A2")
        hub.wait_for("ready", match="M-B2")
        wait(lambda: all(health(b)["counters"]["venue-acks"] == 1 for b in (p, q)), "each result acknowledged")
        mark = "battlement/marker"
        tap.publish(mark, b"marker")
        wait(lambda: (mark, b"marker") in tap.heard, "the tap's marker")

        for b, own, other, journal in ((p, mine, theirs, "p.sqlite"), (q, theirs, mine, "q.sqlite")):
            names = {t for t, _f in own}
            h = health(b)
            # journals: its own table's events and games only
            assert journalled(tmp_path / journal) == ({own[0][0]}, names)
            # shows: its own tables only, and not a word about the other bridge's boards or their events
            assert set(h["tables"]) == names and h["tables"][own[0][0]]["events"] > 0
            assert not [n for n in h["notes"] if any(t in n for t, _f in other)], h["notes"]
            assert h["counters"]["unknown-table"] == 0
            assert {(c["table"], c["state"]) for c in h["board_health"]["boards"]} == {(t, "online") for t in names}
            # venue: its own starts only; nothing of the other bridge's tables came to be refused
            c = h["counters"]
            assert (c["venue-starts"], c["venue-results"], c["venue-acks"]) == (2, 1, 1)
            assert not [r for r in protocol.REASONS if c["venue-refused-" + r]], c
            assert [b.get("/api/state?table=" + t)["venue"]["match"] for t, _f in own] == (
                ["M-A", "M-A2"] if b is p else ["M-B", "M-B2"])
        # acknowledges: every frame to a table's boards is signed with that table's keys, which only its
        # own bridge holds (a ping or evack from the other bridge would be unsigned: it has no key for them)
        for (table, _f), d in ((mine[0], kp), (theirs[0], kq)):
            keys = boardkeys.load(boardkeys.path_of(table, d))
            assert unsigned_down(tap.heard, table, keys) == []
        assert hub.hub.counters["results"] == 2 and len(hub.of("result")) == 2
    finally:
        hub.stop()
        tap.close()
