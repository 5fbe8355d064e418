"""What Home Assistant discovery costs a table: inputs/s of a Session with the hass Publisher attached
(event payloads per input, the game payload once per flush) beside the same Session without it, in the
same run. Medieval Pong, random legal inputs, a recording link in place of the MQTT transport."""

import random
import time

import benchutil  # noqa: F401 -- puts host/ and tests/ on the path
from battlement.ops import hass
from battlement.table import maps as tables
from battlement.table.journal import Journal
from battlement.table.session import Session
from support.secrets import HassLink

INPUTS = 3000


def run(with_hass: bool, flush_every: int) -> tuple[float, int]:
    s = Session(tables.for_game("medieval-pong"), Journal(":memory:"))
    link = HassLink()
    if with_hass:
        pub = hass.Publisher(link, {s.table: s})
        pub.attach()
        pub.connected()
    rng = random.Random(1)
    n, busy = 0, 0.0
    while n < INPUTS:
        if s.match.over:
            s.new_game(None, None, seed=rng.randrange(1 << 20))
        inp = rng.choice(s.match.legal())
        source = "side %s" % inp["by"] if inp.get("by") else "host page"
        t0 = time.perf_counter()
        s.apply(inp, source)
        n += 1
        if with_hass and n % flush_every == 0:  # one loop turn: the bridge publishes the state once
            pub.flush()
        busy += time.perf_counter() - t0
    return n / busy, len(link.sent)


def main():
    best = {}
    for _ in range(3):  # best of three, alternating, so both see the same machine
        for key, args in (("plain", (False, 1)), ("hass-1", (True, 1)), ("hass-10", (True, 10))):
            rate, sent = run(*args)
            if rate > best.get(key, (0, 0))[0]:
                best[key] = (rate, sent)
    base = best["plain"][0]
    for key, what in (("hass-1", "the state published after every input"),
                      ("hass-10", "after every 10th (a burst, or inputs within STATE_EVERY)")):
        rate, sent = best[key]
        print("hass     inputs/s %9s  (session without it %s, ratio %.2f)   %s, %d messages"
              % (f"{rate:,.0f}", f"{base:,.0f}", rate / base, what, sent), flush=True)


if __name__ == "__main__":
    main()
