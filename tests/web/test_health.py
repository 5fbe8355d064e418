"""The host page's "Bridge health" in Debian Chromium: tasks in words, rejected frames with their reason,
counters by reason; served under the page's Content-Security-Policy with nothing refused by it."""

import json
import pathlib
import urllib.request

import paho.mqtt.client as mqtt
from battlement.table import maps as tables


def table_file(tmp_path, tid, game="ringo"):
    path = tables.default_path(game)
    text = pathlib.Path(path).read_text().replace('table = "%s"' % game, 'table = "%s"' % tid)
    out = tmp_path / (tid + ".toml")
    out.write_text(text)
    return str(out)


def publish(broker, topic, payload):
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="stranger")
    c.connect(broker.host, broker.port)
    c.loop_start()
    c.publish(topic, payload, qos=1).wait_for_publish(10)
    c.loop_stop()
    c.disconnect()


def test_the_host_page_shows_tasks_and_rejected_frames_with_their_reason(bridge_process, browser, mosquitto,
                                                                         tmp_path, shots):
    tid = "health-%d" % mosquitto.port
    b = bridge_process("--simulate", "--table", table_file(tmp_path, tid), "--mqtt", mosquitto.url)
    page = browser.new_page()
    refused = []
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    page.goto(b.url + "/host?code=" + b.host_code)
    page.wait_for_selector("#turn:not(:empty)")  # page.js ran: its inline script's nonce was accepted
    summary = page.locator("#health-summary")
    summary.filter(has_text="tasks running.").wait_for()
    assert "All" in summary.inner_text()

    publish(mosquitto, "battlement/%s/ring-5/up" % tid, b"event ring-5 1 1 b presence 1 0 0*00000000")
    publish(mosquitto, "battlement/%s/ring-5/up" % tid, b"hello, I am a toaster")
    rejected = page.locator("#health ol.rejected li")
    rejected.filter(has_text="toaster").wait_for(timeout=10_000)
    texts = rejected.all_inner_texts()
    assert any("[crc]" in t for t in texts), texts
    assert any("toaster" in t and "[" in t for t in texts), texts
    assert "crc 1" in page.locator("#health .transport-counters").first.inner_text()
    # flow control is said on a line of its own, not among the rejections
    assert page.locator("#health .transport-flow").first.inner_text().startswith("reading; held back 0 times")
    shots(page, "host-health")
    assert refused == []

    with urllib.request.urlopen(b.url + "/api/health?code=" + b.host_code, timeout=10) as r:
        h = json.loads(r.read())
    t = h["transports"][0]
    assert t["counters"]["crc"] == 1 and next(r["reason"] for r in t["rejected"]) == "crc"
    assert all(x["state"] == "running" for x in h["tasks"])


def test_monitor_watches_a_running_bridge_by_asking_it(bridge_process, mosquitto, tmp_path):
    import subprocess
    import sys

    from cli.test_monitor import wait_line

    tid = "monitored-%d" % mosquitto.port
    b = bridge_process("--simulate", "--table", table_file(tmp_path, tid), "--mqtt", mosquitto.url)
    cmd = [sys.executable, "-m", "battlement.cli", "monitor", "--bridge", b.url]
    wrong = subprocess.run(cmd + ["--code", "not-the-code-at-all"], check=False, capture_output=True, text=True,
                           timeout=30)
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1
    assert "answered 403" in wrong.stderr and "host code" in wrong.stderr
    proc = subprocess.Popen(cmd + ["--code", b.host_code, "--every", "0.5", "--seconds", "30"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_line(proc, "watching the bridge")
        wait_line(proc, "== mqtt %s: accepted" % mosquitto.url)
        publish(mosquitto, "battlement/%s/ring-5/up" % tid, b"event ring-5 1 1 b presence 1 0 0*00000000")
        lines = wait_line(proc, "rejected crc frame from %s" % tid)
        wait_line(proc, "crc 1")  # and the counters by reason
        assert not any("Traceback" in x for x in lines)
    finally:
        proc.terminate()
        proc.wait(10)
