"""The journal's write-ahead log starts over under a stream of events that never pauses.

SQLite copies the WAL back into the journal at a checkpoint, and starts the WAL over only when a
checkpoint has copied all of it and then a write begins. A checkpoint run beside a writer that never
stops never catches up (SQLite's "checkpoint starvation"): the WAL grew with every commit, without
bound (gigabytes in a minute of the journal's own fastest pace), and every read in it got slower.
Checked on a real `battlement run` fed by firmware-like boards as fast as it takes them: the WAL's
size is set against the events handled, a ratio, so a busy machine cannot make it pass or fail.
"""

import os
import time

from support.overload import events_handled, start, table_broker


def _wal_mb(bridge):
    try:
        return os.path.getsize(bridge.journal + "-wal") / 1e6
    except FileNotFoundError:
        return 0.0


def _plateau(samples):
    """Two samples (events, WAL MB) between which the events doubled and the WAL grew less than 20%, or None."""
    for i, (e1, w1) in enumerate(samples):
        for e2, w2 in samples[i + 1:]:
            if e1 > 0 and w1 > 0 and e2 >= 2 * e1 and w2 < 1.2 * w1:
                return (e1, w1), (e2, w2)
    return None


def test_the_wal_starts_over_under_a_stream_that_never_pauses(bridge_process, tmp_path):
    broker = table_broker(tmp_path / "mosquitto")
    b, boards, pager = start(bridge_process, broker, tmp_path, 10, "wal")
    try:
        boards.warm_up()
        with boards.lock:
            boards.closed_loop = True  # every board sends again as soon as it is acknowledged: never quiet
        # A WAL that never starts over grows as the events do; one that does stays at its high-water mark. So wait
        # (however slow the machine) for a stretch in which the events handled doubled and the WAL grew under 20%.
        samples, deadline = [], time.monotonic() + 120
        while not _plateau(samples):
            assert time.monotonic() < deadline, "the WAL grew with the events: (events, MB) %s" % samples[::5]
            time.sleep(1)  # a sample a second: the stream is the condition, there is nothing to await
            samples.append((events_handled(b)[0], _wal_mb(b)))
        (e1, w1), (e2, w2) = _plateau(samples)
        print("\nWAL %.1f MB after %d events, %.1f MB after %d" % (w1, e1, w2, e2))
    finally:
        pager.close()
        boards.close()
        broker.close()
