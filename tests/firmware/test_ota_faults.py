"""Updates over the air on the real firmware (MicroPython unix port) and a real Mosquitto, through the
faults a venue meets: the power going at any write of an update, a corrupted chunk, a forged or
misaddressed manifest, a new firmware that cannot start or never confirms.

The board (tests/firmware/otarig.py) keeps its flash in a folder and comes back whenever its process
ends; the bridge's transport takes and acknowledges its events; `battlement update`'s Updater updates
it. The firmware sets are the real firmware compiled as an update sends it; after the first update
(the whole set) they differ in their version module only, so the board copies the rest from the set
it runs and each round stays short (docs/protocol.md, "Updates").
"""

import asyncio
import collections
import random
import re

import pytest
from battlement.boards.update import MANIFEST, Updater, chunk_message, mac
from support.otaboard import BOARD, KEY, Rig, build_sets

FLASHED = "0.1.9-flashed"  # what the board runs as flashed (the sources, not compiled)
RANDOM_CUTS = 46  # power cuts at random writes, beside one at each named step


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    return build_sets(tmp_path_factory.mktemp("ota-sets"))


def with_rig(mosquitto, tmp_path, table, body, **kw):
    async def main():
        rig = Rig(mosquitto, tmp_path, table, **kw)
        await rig.start()
        try:
            await body(rig)
        finally:
            await rig.stop()

    asyncio.run(main())


def to(fw):
    return lambda platform: fw


def test_a_whole_firmware_update_end_to_end_loses_and_doubles_no_event(mosquitto, tmp_path, sets):
    async def body(rig):
        first = await rig.running()
        assert (first["version"], first["set"], first["trial"]) == (FLASHED, ".", False)
        await rig.arrived(rig.drop(3))
        during, sent = [], []

        def progress(done, total):
            sent.append((done, total))
            if done and not during:  # balls fall while the files go: the board restarts only once they are in
                during.extend(rig.drop(2))

        o = await rig.up.update(rig.table, BOARD, to(sets["a"]), progress)
        assert o.ok and o.words.startswith("updated %s -> 0.2.0-aaaaaaaa" % FLASHED), (o, rig.log())
        assert sent[-1] == (sets["a"].size(), sets["a"].size())  # the whole set went: the flashed one is sources
        assert rig.hellos[-1].firmware == "0.2.0-aaaaaaaa"  # the bridge hears the new version
        now = await rig.running()
        assert (now["version"], now["set"], now["trial"]) == ("0.2.0-aaaaaaaa", "s1", False)
        assert rig.exits == [3]  # one restart, the swap's
        await rig.arrived(during + rig.drop(2))
        rig.exactly_once()

    with_rig(mosquitto, tmp_path, "ota-whole", body)


def test_a_corrupted_chunk_and_unsigned_forged_or_misaddressed_manifests_are_refused(mosquitto, tmp_path, sets):
    async def body(rig):
        up, t = rig.up, rig.table
        boot = (await rig.running())["boot"]
        fw = sets["a"]

        def signed(body, key=KEY, table=t, board=BOARD):
            return b"ota manifest " + mac(key, MANIFEST, table, board, body) + b" " + body

        async def refused(payload, why):
            r = await up._ask(t, BOARD, payload, boot, ("ready", "staged", "got", "swapping", "refused"))
            assert (r["state"], r["why"]) == ("refused", why), r
            return r["detail"]

        good = fw.manifest(t, BOARD, boot, 8000)
        assert "not signed" in await refused(b"ota manifest - " + good, "mac")
        assert "not signed" in await refused(signed(good, key=bytes(16)), "mac")
        assert "cup-other" in await refused(signed(fw.manifest(t, "cup-other", boot, 8000), board="cup-other"),
                                            "other-board")
        assert "hall-9" in await refused(signed(fw.manifest("hall-9", BOARD, boot, 8000), table="hall-9"),
                                         "other-board")
        assert "boot" in await refused(signed(fw.manifest(t, BOARD, boot - 1, 8000)), "boot")  # played again
        # Taken, then a chunk with one bit flipped on the way: refused, and nothing is left to swap in.
        r = await up._ask(t, BOARD, signed(good), boot, ("ready",))
        i = r["need"][0]
        msg = chunk_message(i, 0, fw.files[i][1][:1024])
        assert "SHA-256" in await refused(msg[:-1] + bytes([msg[-1] ^ 1]), "chunk-hash")
        await refused(b"ota swap", "incomplete")
        now = await rig.running()
        assert (now["version"], now["set"], now["staged"]) == (FLASHED, ".", False)
        # An update signed as it should be still goes through, and the board played on throughout.
        await rig.arrived(rig.drop(2))
        assert (await up.update(t, BOARD, to(fw))).ok
        await rig.arrived(rig.drop(1))
        rig.exactly_once()

    with_rig(mosquitto, tmp_path, "ota-refused", body)


def test_an_update_waits_for_the_outbox_to_reach_the_bridge(mosquitto, tmp_path, sets):
    async def body(rig):
        rig.bridge.acknowledges = False  # the bridge takes events but says nothing: they stay in the outbox
        widths = rig.drop(2)
        await rig.arrived(widths)
        o = await rig.up.update(rig.table, BOARD, to(sets["a"]))
        assert not o.ok and "2 events not yet acknowledged after 2 s" in o.words and "(outbox)" in o.words, o
        assert (await rig.running())["version"] == FLASHED
        rig.bridge.acknowledges = True  # the board resends, the bridge drops the copies and acknowledges
        assert (await rig.up.update(rig.table, BOARD, to(sets["a"]))).ok
        rig.exactly_once()

    with_rig(mosquitto, tmp_path, "ota-outbox", body, drain_s=2.0)


def test_a_new_version_that_crashes_at_start_rolls_back_by_itself(mosquitto, tmp_path, sets):
    async def body(rig):
        o = await rig.up.update(rig.table, BOARD, to(sets["crash"]))
        assert not o.ok and o.words.startswith("ROLLED BACK: 0.2.0-crashing never said hello"), o
        assert o.version == FLASHED
        now = await rig.running()
        assert (now["version"], now["set"], now["failed"], now["trial"]) == (FLASHED, ".", "s1", False)
        assert "this firmware cannot start" in "".join(rig.logs)
        assert rig.exits == [3, 3]  # the swap's restart, and the crash's
        await rig.arrived(rig.drop(2))
        assert (await rig.up.update(rig.table, BOARD, to(sets["b"]))).ok  # a good one after it goes in
        rig.exactly_once()

    with_rig(mosquitto, tmp_path, "ota-crash", body)


class NeverConfirms(Updater):
    def _evack(self, table, board, boot):
        pass  # the new firmware hears nothing from its host


def test_a_new_version_never_confirmed_goes_back_when_its_trial_ends(mosquitto, tmp_path, sets):
    async def body(rig):
        o = await rig.up.update(rig.table, BOARD, to(sets["a"]))
        assert not o.ok and o.words.startswith("ROLLED BACK: 0.2.0-aaaaaaaa said hello but restarted on trial"), o
        assert "no evack within the 2500 ms trial" in "".join(rig.logs)
        now = await rig.running()
        assert (now["version"], now["failed"]) == (FLASHED, "s1")
        await rig.arrived(rig.drop(1))
        rig.exactly_once()

    with_rig(mosquitto, tmp_path, "ota-trial", body, updater=NeverConfirms, trial_s=2.5)


# Every step of an update by name: the power goes at the n-th write whose "<op> <path>" the regex matches
# (tests/firmware/fakes/powercut/os.py). A write() is cut half way.
STEPS = {
    "cleaning the staging folder": (2, "^remove s"),
    "copying a file the board holds": (3, "^write s./app"),
    "writing a chunk sent": (1, "^write s./fwversion"),
    "writing the swap's pointer": (1, "^write fwset.tmp"),
    "the swap's rename": (1, "^rename fwset"),
    "first boot: writing the trial's pointer": (2, "^write fwset.tmp"),
    "first boot: the trial's rename": (2, "^rename fwset"),
    "first boot: its boot counter": (1, "^write .*boot[.]"),
    "confirming the new set": (3, "^rename fwset"),
}
ROLLBACK = {  # updates to a firmware that crashes at start
    "rolling back: the crashing trial's rename": (2, "^rename fwset"),
    "rolling back: the old set's boot counter": (1, "^write .*boot[.]"),
}


def test_power_cut_at_every_step_of_an_update_leaves_the_old_or_the_new_firmware(mosquitto, tmp_path, sets):
    rng = random.Random(2024)

    async def body(rig):
        up, t = rig.up, rig.table
        assert (await up.update(t, BOARD, to(sets["a"]))).ok  # the whole set once; from here a <-> b
        rig.cut_power_at(10 ** 6)  # counts every write, cuts none: what one update writes
        assert (await up.update(t, BOARD, to(sets["b"]))).ok
        writes = len(rig.writes())
        rig.power_stays()
        cuts = [(name, n, at) for name, (n, at) in (STEPS | ROLLBACK).items()]
        cuts += [("random", rng.randint(1, writes), None) for _ in range(RANDOM_CUTS)]
        rng.shuffle(cuts)
        came_back = collections.Counter()
        runs = "0.2.0-bbbbbbbb"
        for name, n, at in cuts:
            await rig.arrived(rig.drop())
            target = sets["crash" if name in ROLLBACK else "a" if runs != sets["a"].version else "b"]
            rig.cut_power_at(n, at)
            o = await up.update(t, BOARD, to(target))
            done = rig.writes()
            rig.power_stays()
            cut = rig.was_cut()
            now = await rig.running()
            assert now["version"] in (runs, target.version), (name, n, at, o, now, rig.log())
            if at:
                assert cut and re.search(at, done[-1]), (name, done[-3:])  # it died where it was meant to
            if o.ok:
                assert now["version"] == target.version and not now["trial"]
            came_back[(name, "new" if now["version"] == target.version else "old")] += 1
            runs = now["version"]
            if now["version"] == "0.2.0-crashing":
                raise AssertionError("the board runs a firmware that cannot start: %s" % rig.log())
            await rig.arrived(rig.drop())
        rig.exactly_once()
        assert len(cuts) >= 50 and {k for k, _ in came_back} == set(STEPS) | set(ROLLBACK) | {"random"}
        print("power cuts, and what the board came back on:", dict(sorted(came_back.items())))

    with_rig(mosquitto, tmp_path, "ota-power", body)
