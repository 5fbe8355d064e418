"""Prometheus metrics of a running bridge, served at /metrics (prometheus-client's text format).

Counters are not kept twice: a Collector reads the transports', routers', sessions' and bridge's
own counter dicts when Prometheus scrapes, so an event costs nothing more for them. Only the
latencies are observed as they happen, once per batch the bridge takes from a transport (one
event alone is its own batch) and once per page state sent after one.

/metrics is public, like the scoreboard: it needs no code and holds only counts, table and board
ids and rejection reasons, never a hidden character or a placement. A side's own decisions (its
private page) are left out of the input counts, so not even their number or timing shows here.
"""

from __future__ import annotations

import bisect
import time

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily

# seconds: from a fraction of a millisecond (an idle bridge) to the seconds of an overloaded one
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
COMMIT_BUCKETS = (0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 2.0)


class Metrics:
    """One bridge's metrics: its own registry (several bridges in one process never mix)."""

    def __init__(self, bridge):
        self.registry = CollectorRegistry()  # (collect() runs only when scraped, never at registration)
        self.event_to_led = Latency(
            "battlement_event_to_led_seconds",
            "From the bridge taking a batch of board events to the last LED command it caused leaving",
            LATENCY_BUCKETS)
        self.event_to_page = Latency(
            "battlement_event_to_page_seconds",
            "From the bridge taking a batch of board events to a page's websocket state that shows it",
            LATENCY_BUCKETS)
        self.commit = Latency(
            "battlement_journal_commit_seconds", "Time of one journal commit of a batch of board events",
            COMMIT_BUCKETS)
        for h in (self.event_to_led, self.event_to_page, self.commit):
            self.registry.register(h)
        self.registry.register(_Counters(bridge))
        self.taking: float | None = None  # perf_counter when the batch being handled was taken, else None

    # --- hooks (the bridge's pump and the web app's page pusher) ----------------------------

    def committed(self, t_commit: float) -> None:
        """The batch is journalled (its commit began at t_commit): page changes from now on are not its."""
        self.taking = None
        self.commit.observe(time.perf_counter() - t_commit)

    def lit(self, t_taken: float) -> None:
        """The LED commands of a batch with board events in it have left (those held for a board's LED
        frame: when that board's round leaves)."""
        self.event_to_led.observe(time.perf_counter() - t_taken)

    def page_clock(self) -> PageClock:
        return PageClock(self)

    def scrape(self) -> bytes:
        return generate_latest(self.registry)


class Latency:
    """A histogram observed on the event path, exposed as a Prometheus histogram when scraped.

    Not prometheus-client's Histogram: its observe() takes a lock and walks the buckets in Python, and
    its three observations of a batch cost about three times all of this module's hooks of a batch
    together (`make bench`, bridge: "metrics hooks"). The bridge observes on its event loop only, so
    no lock is needed. Buckets are upper bounds, inclusive, as Prometheus' `le`.
    """

    __slots__ = ("bounds", "counts", "doc", "name", "sum")

    def __init__(self, name: str, doc: str, bounds: tuple):
        self.name, self.doc, self.bounds = name, doc, bounds
        self.counts = [0] * (len(bounds) + 1)  # the last: above every bound
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, seconds)] += 1
        self.sum += seconds

    def collect(self):
        cumulative, buckets = 0, []
        for bound, n in zip(self.bounds, self.counts):
            cumulative += n
            buckets.append((repr(float(bound)), cumulative))
        buckets.append(("+Inf", cumulative + self.counts[-1]))
        yield HistogramMetricFamily(self.name, self.doc, buckets=buckets, sum_value=self.sum)


class PageClock:
    """One page's event -> page latency: changed() as its session changes, take() before the state is
    built, sent(taken) once it has left."""

    __slots__ = ("metrics", "since")

    def __init__(self, metrics: Metrics):
        self.metrics = metrics
        self.since: float | None = None

    def changed(self) -> None:
        if self.since is None:
            self.since = self.metrics.taking  # None for a change no board event made (a page's action)

    def take(self) -> float | None:
        since, self.since = self.since, None
        return since

    def sent(self, since: float | None) -> None:
        if since is not None:
            self.metrics.event_to_page.observe(time.perf_counter() - since)


def _transport_name(t) -> str:
    name = type(t).__name__.lower()
    return name.removesuffix("transport")


class _Counters:
    """Reads the counters the bridge already keeps, at scrape time."""

    def __init__(self, bridge):
        self.bridge = bridge

    def collect(self):
        b = self.bridge
        frames = CounterMetricFamily(
            "battlement_transport_frames",
            "Frames from boards by outcome: accepted, or the reason they were rejected or set aside",
            labels=["transport", "reason"])
        for t in b.transports:
            for reason, n in sorted(t.counters.items()):
                frames.add_metric([_transport_name(t), reason], n)
        yield frames

        bridge = CounterMetricFamily("battlement_bridge", "The bridge's own counts (LED commands, board errors...)",
                                     labels=["what"])
        for what, n in sorted(b.counters.items()):
            bridge.add_metric([what], n)
        yield bridge

        web = CounterMetricFamily("battlement_web", "The web app's refusals: wrong codes, rate-limited, websocket junk",
                                  labels=["reason"])
        for reason, n in sorted(getattr(b, "web_counters", {}).items()):
            web.add_metric([reason], n)
        yield web
        yield CounterMetricFamily("battlement_journal_row_errors", "Journal rows that needed storing another way",
                                  value=getattr(b.journal, "errors", 0))
        yield GaugeMetricFamily("battlement_journal_unfiled", "Inputs journalled, not yet filed under their game "
                                "(filed once the table is quiet, or a step at a time past 20,000)",
                                value=getattr(b.journal, "recent", 0))

        router = CounterMetricFamily("battlement_router_events",
                                     "Board events the table map could not place, or that mean nothing in the game",
                                     labels=["table", "reason"])
        events = CounterMetricFamily("battlement_events", "Board events handled", labels=["table"])
        inputs = CounterMetricFamily("battlement_inputs", "Inputs the rules accepted (sensors, host page, timeouts)",
                                     labels=["table"])
        refused = CounterMetricFamily("battlement_inputs_refused", "Inputs the rules refused", labels=["table"])
        undone = CounterMetricFamily("battlement_undo", "Inputs taken back with undo", labels=["table"])
        for table, s in sorted(b.sessions.items()):
            c = s.counters
            for reason, n in sorted(s.router.counters.items()):
                router.add_metric([table, reason], n)
            events.add_metric([table], c.get("events", 0))
            inputs.add_metric([table], c.get("inputs", 0) - c.get("private-inputs", 0))
            refused.add_metric([table], c.get("illegal", 0) - c.get("private-illegal", 0))
            undone.add_metric([table], c.get("undo", 0))
        yield from (router, events, inputs, refused, undone)

        up = GaugeMetricFamily("battlement_board_online", "1 if the board's link is up and it said hello, else 0",
                               labels=["table", "board"])
        online = GaugeMetricFamily("battlement_boards_online", "Boards of the table online", labels=["table"])
        info = GaugeMetricFamily("battlement_board_info", "1 per board, with the firmware it runs as its hello said "
                                 "(the registry's; \"\" while unknown)", labels=["table", "board", "firmware"])
        for name, tmap in sorted(b.tmaps.items()):
            n = 0
            for board in sorted(tmap.boards):
                v = b.watch.state(name, board, b.transports)[0] == "online"  # as the host page's card says
                up.add_metric([name, board], 1 if v else 0)
                n += v
                info.add_metric([name, board, b.watch.firmware_of(name, board) or ""], 1)
            online.add_metric([name], n)
        yield up
        yield online
        yield info

        sound = b.sound
        said = CounterMetricFamily("battlement_sound", "Announcements and cue tones by outcome", labels=["what"])
        for what, n in sorted(sound.counters.items()):
            said.add_metric([what], n)
        yield said
        yield GaugeMetricFamily("battlement_speech_queue", "Announcements and tones waiting or playing",
                                value=_speech_queue(sound))


def _speech_queue(sound) -> int:
    status = getattr(sound, "status", None)
    if status is not None:  # the queued player: what waits, plus the one playing
        st = status()
        return int(st.get("waiting", 0)) + (1 if st.get("playing") else 0)
    return sum(1 for p in getattr(sound, "procs", ()) if p.poll() is None)  # one child process per sound


def route(bridge):
    """The /metrics route for the web app."""
    from starlette.responses import Response
    from starlette.routing import Route

    async def endpoint(_request):  # async: collected on the event loop, beside everything it reads
        m = getattr(bridge, "metrics", None)
        if m is None:
            return Response("metrics are off in this bridge\n", status_code=404, media_type="text/plain")
        return Response(m.scrape(), media_type=CONTENT_TYPE_LATEST)

    return Route("/metrics", endpoint)
