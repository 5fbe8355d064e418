"""Board health per board, as ESPHome shows its devices, with a real MQTT table: its boards run as
`battlement sim` on a real Mosquitto, the bridge apart. The host page shows each board online with its
hello, beat and every sensor's last trigger (a beam's break widths plotted against min_pulse_us); when
the boards' process dies the broker tells their wills, and the page, the scoreboard's "live" and
`battlement monitor --bridge` all say the boards are offline."""

import json
import os
import signal
import subprocess
import sys
import urllib.request

from cli.test_monitor import wait_line
from support.bridgeproc import BATTLEMENT

from web.test_health import table_file


def health(b):
    with urllib.request.urlopen(b.url + "/api/health?code=" + b.host_code, timeout=10) as r:
        return json.loads(r.read())


def test_boards_online_then_offline_on_the_host_page_the_scoreboard_and_the_monitor(bridge_process, browser, mosquitto,
                                                                                   tmp_path, shots):
    tid = "bh-%d" % mosquitto.port
    path = tables_file = table_file(tmp_path, tid, game="medieval-pong")
    b = bridge_process("--table", tables_file, "--mqtt", mosquitto.url)
    script = tmp_path / "throws.jsonl"
    script.write_text("".join(json.dumps({"at": 0.2 * i, "board": "red-kingdom", "sensor": "tower-a1", "value": 1}) + "\n"
                              for i in range(1, 4)))
    sim = subprocess.Popen([BATTLEMENT, "sim", "--table", path, "--mqtt", mosquitto.url, "--script", str(script),
                            "--wait", "1.5", "--linger", "600"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, start_new_session=True)
    monitor = subprocess.Popen([sys.executable, "-m", "battlement.cli", "monitor", "--bridge", b.url, "--code",
                                b.host_code, "--every", "1", "--seconds", "60"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        host = browser.new_page(viewport={"width": 1280, "height": 1000})
        host.goto(b.url + "/host?code=" + b.host_code)
        card = host.locator("#health .board-card[data-board='red-kingdom']")
        host.locator("#health .board-card[data-board='red-kingdom'][data-state='online']").wait_for(timeout=20_000,
                                                                                                  state="attached")
        host.locator("#health .board-card[data-board='blue-kingdom'][data-state='online']").wait_for(state="attached")
        host.locator("#health .boards-fold:not([open])").wait_for()  # folded while all is well
        host.locator("#health .boards-fold > summary").click()
        assert "firmware sim-1" in card.locator(".board-hello").inner_text()
        beam = card.locator("li[data-sensor='tower-a1']")
        beam.locator("svg.width-plot circle").nth(2).wait_for(timeout=15_000)  # three breaks plotted
        assert beam.locator("svg.width-plot circle").count() == 3
        assert "a ball counts from 1.0 ms" in beam.locator("svg title").text_content()
        assert "(red.A1) beam: last" in beam.inner_text() and "3 in all" in beam.inner_text()
        assert card.locator(".led-test").is_enabled()
        score = browser.new_page()
        score.goto(b.url + "/")
        score.wait_for_selector("#status:text-is('live')")
        shots(host, "host-board-health-online")

        card.locator(".led-test").click()  # through the normal LED path: the board acknowledges each light
        before = health(b)["counters"]["led-sent"]
        host.locator("#health .notes li", has_text="LED test: board %s/red-kingdom blinks its 9 lights" % tid).wait_for()
        assert health(b)["counters"]["led-sent"] >= before

        wait_line(monitor, "board %s/red-kingdom online (boot" % tid)
        wait_line(monitor, "sensor tower-a1 (red.A1) beam = 1, width 12.0 ms (a ball counts from 1.0 ms)")

        os.killpg(sim.pid, signal.SIGKILL)  # the boards die at once: the broker sends their wills
        sim.wait(10)
        host.locator("#health .board-card[data-board='red-kingdom'][data-state='offline']").wait_for(timeout=20_000)
        host.locator("#health .board-card[data-board='blue-kingdom'][data-state='offline']").wait_for()
        host.locator("#health .boards-fold[open]").wait_for()
        assert "OFFLINE" in card.locator(".board-state").inner_text()
        assert not card.locator(".led-test").is_enabled()
        assert "2 of 2 boards not online" in host.inner_text("#health-summary")
        score.wait_for_selector("#status:has-text('no board of the table is online')")
        assert score.inner_text("#status") != "live"
        host.wait_for_selector("#status:has-text('no board of the table is online')")
        host.locator("#health .notes li", has_text="board %s/red-kingdom is offline" % tid).wait_for()
        shots(host, "host-board-health-offline")
        wait_line(monitor, "board %s/red-kingdom offline" % tid)
        assert [x for x in health(b)["board_health"]["boards"] if x["state"] == "offline"]
    finally:
        if sim.poll() is None:
            os.killpg(sim.pid, signal.SIGKILL)
            sim.wait(10)
        monitor.terminate()
        monitor.wait(10)


def test_a_blocked_beam_is_said_on_the_host_page_and_is_no_ball(bridge_process, browser, mosquitto, tmp_path):
    # A beam dark longer than any ball (a hand, a cup) is reported "blocked" by its board: the host page
    # says so on the board's card, no ball is played, and clearing it is no ball either.
    tid = "bb-%d" % mosquitto.port
    path = table_file(tmp_path, tid, game="medieval-pong")
    b = bridge_process("--table", path, "--mqtt", mosquitto.url)
    script = tmp_path / "blocked.jsonl"
    step = {"board": "red-kingdom", "sensor": "tower-a1", "kind": "blocked"}
    script.write_text(json.dumps(dict(step, at=0.2, value=1)) + "\n" + json.dumps(dict(step, at=6.0, value=0)) + "\n")
    sim = subprocess.Popen([BATTLEMENT, "sim", "--table", path, "--mqtt", mosquitto.url, "--script", str(script),
                            "--wait", "1.5", "--linger", "600"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, start_new_session=True)
    try:
        host = browser.new_page(viewport={"width": 1280, "height": 1000})
        host.goto(b.url + "/host?code=" + b.host_code)
        beam = host.locator("#health .board-card[data-board='red-kingdom'] li[data-sensor='tower-a1']")
        beam.locator(".beam-blocked", has_text="red.A1 is blocked").wait_for(timeout=20_000, state="attached")
        counters = health(b)["counters"]
        assert not any(k.startswith("played") and v for k, v in counters.items()), counters
        beam.locator(".beam-blocked").wait_for(timeout=20_000, state="detached")  # clear again
        rows = next(x for x in health(b)["board_health"]["boards"] if x["board"] == "red-kingdom")["sensors"]
        tower = next(s for s in rows if s["id"] == "tower-a1")
        assert "blocked" not in tower and tower["count"] == 0  # neither blocking nor clearing was a trigger
    finally:
        os.killpg(sim.pid, signal.SIGKILL)
        sim.wait(10)
