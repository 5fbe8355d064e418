# Board entry point: MicroPython runs main.py after boot.py at every reset. It starts the firmware set
# the pointer file `fwset` names (firmware/ota.py, docs/protocol.md "Updates"): "." is the files beside
# this one, as flashed. A set an update swapped in is started once, on trial: before it runs, fwset says
# the old set again (written whole: a temporary file renamed over it), and only the new set's own
# confirmation makes it the one to start. Whatever fails here, the board starts a set.
import os
import sys

run = "."
trial = 0
try:
    with open("fwset") as f:
        w = f.read().split()
    run = w[0]
    if len(w) == 3 and w[1][0] != "-":
        ms = int(w[2])
        with open("fwset.tmp", "w") as f:
            f.write("%s -%s %d" % (w[0], w[1], ms))
        os.rename("fwset.tmp", "fwset")
        run, trial = w[1], ms
except Exception:  # noqa: BLE001, S110 - no pointer (as flashed) or an unreadable one: the set as it stands
    pass
if run != ".":
    sys.path.insert(0, run)
try:
    import app

    app.TRIAL = trial
    app.main()
except KeyboardInterrupt:  # Ctrl-C (mpremote): to the REPL, so the board can be flashed
    raise
except Exception as e:  # noqa: BLE001 - a set that cannot start: reset (a set on trial is then behind us)
    sys.print_exception(e)  # type: ignore[attr-defined]
    import time

    import machine

    time.sleep_ms(1000)  # type: ignore[attr-defined]
    machine.reset()
