"""The journal's cost an event when a batch holds many tables' events, beside the same events in runs.

A batch journals each event and the input it became (the inputs are filed under their key, (game_id, n),
later: journalfiling.py). Under
overload a batch holds a few events of every table; at a quiet table, or in the overload benchmark's
closed loop, a run of one or two tables'. Each: 20 games that have played a while (their inputs on
pages of their own), then batches of 75 events, with a checkpoint every 40 batches as the bridge's
checkpointer makes. Printed: microseconds an event, spread over 20 games beside in runs of 2, and
the WAL's bytes an event, with the journal's pages (1 KiB, PAGE_SIZE) and with SQLite's default
4 KiB. Then the spread batches with their inputs unfiled, as the bridge writes a burst of fewer than
FILE_AT, and the filing after it (what the bridge does once the table is quiet), each timed, beside the
same written under their key at once, as before. Alternating rounds, the best of three each.
"""

import os
import tempfile
import time

import benchutil  # noqa: F401 -- puts tests/ and host/ on the path
from battlement.link.messages import Event
from battlement.table import journal, journalfiling

GAMES = 20
BATCH = 75
BATCHES = 400


def run(page_size, games_a_batch, tmp, unfiled="inputs_filed"):
    path = os.path.join(tmp, "j%d-%d.sqlite" % (page_size, games_a_batch))
    for suffix in ("", "-wal", "-shm", ".lock"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    keep, journal.PAGE_SIZE = journal.PAGE_SIZE, page_size
    try:
        j = journal.Journal(path, checkpoint_thread=False)
    finally:
        journal.PAGE_SIZE = keep
    ids = [j.new_game("t%d" % g, "ringo", {}, 1, {}) for g in range(GAMES)]
    j.UNFILED = unfiled
    seq = 0

    def batch(games):
        nonlocal seq
        j.begin()
        for e in range(BATCH):
            g = games[e * len(games) // BATCH]
            seq += 1
            ev = Event("t%d" % g, "ring-5", 5, seq, "b", "presence", e % 2, 1000, 0)
            j.write_input(ids[g], "b5", {"t": "cell", "cell": "b5", "occupied": bool(e % 2)}, ("t%d" % g, ev, "b5"))
        j.commit()

    for k in range(8 * GAMES):
        batch([k % GAMES])
    j.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = 0
    t0 = time.perf_counter()
    for k in range(BATCHES):
        batch(list(range(GAMES)) if games_a_batch == GAMES else [(2 * k) % GAMES, (2 * k + 1) % GAMES])
        if k % 40 == 39:
            wal += os.path.getsize(path + "-wal")
            j.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    dt = time.perf_counter() - t0
    t1 = time.perf_counter()
    j.file_all()
    filed = time.perf_counter() - t1
    j.close()
    n = BATCHES * BATCH
    return dt / n * 1e6, wal / n, filed / n * 1e6


def main():
    with tempfile.TemporaryDirectory() as tmp:
        best = {}
        for _ in range(3):
            for ps in (journal.PAGE_SIZE, 4096):
                for g in (GAMES, 2):
                    us, wal, _ = run(ps, g, tmp)
                    if (ps, g) not in best or us < best[(ps, g)][0]:
                        best[(ps, g)] = (us, wal)
            keep, journalfiling.FILE_AT = journalfiling.FILE_AT, 1 << 30  # the whole run one burst
            try:
                us, wal, filed = run(journal.PAGE_SIZE, GAMES, tmp, "inputs_recent")
            finally:
                journalfiling.FILE_AT = keep
            if "later" not in best or us < best["later"][0]:
                best["later"] = (us, wal, filed)
        for ps in (journal.PAGE_SIZE, 4096):
            (s, sw), (r, rw) = best[(ps, GAMES)], best[(ps, 2)]
            print("journal  pages of %4d B: %.1f us an event in batches of %d tables  (in runs of 2: %.1f us, "
                  "ratio %.2f); WAL %.0f B an event (runs %.0f B)" % (ps, s, GAMES, r, s / r, sw, rw), flush=True)
        print("journal  spread batches with %d B pages beside 4096 B: ratio %.2f"
              % (journal.PAGE_SIZE, best[(journal.PAGE_SIZE, GAMES)][0] / best[(4096, GAMES)][0]), flush=True)
        (s, sw, f), (k, kw) = best["later"], best[(journal.PAGE_SIZE, GAMES)]
        print("journal  spread batches, inputs unfiled: %.1f us an event, WAL %.0f B (under their key at once: "
              "%.1f us, %.0f B; ratio %.2f); filing them after: %.1f us an event more (in all, ratio %.2f)"
              % (s, sw, k, kw, s / k, f, (s + f) / k), flush=True)


if __name__ == "__main__":
    main()
