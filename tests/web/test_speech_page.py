"""The host page's speech card in Chromium: mute silences the bridge's speaker, volume reaches the player,
and a table with no sound device says so on the page instead of counting 'said'."""

import time

import pytest
from support import speech
from support.bridgeproc import Ws

ILLEGAL = [{"t": "cell", "cell": "b5", "occupied": False}, {"t": "cell", "cell": "b3", "occupied": True}]
BACK = [{"t": "cell", "cell": "b3", "occupied": False}, {"t": "cell", "cell": "b5", "occupied": True}]


@pytest.fixture
def standins(tmp_path, monkeypatch):
    def use(**extra):
        env = speech.environ(tmp_path, tmp_path / "speech.log", **extra)
        for k in ("PATH", "STANDIN_LOG", *extra):
            monkeypatch.setenv(k, env[k])  # the bridge process inherits them
        return tmp_path / "speech.log"
    return use


def said(log):
    """What came out of the speaker: a phrase said before plays from the cache without espeak-ng."""
    return [r["heard"] for r in speech.records(log) if r["prog"] == "play" and r.get("heard")]


def now(b):
    """The host page's state as it is now (a fresh socket is sent it at once)."""
    ws = Ws(b.url, role="host", code=b.host_code)
    try:
        return ws.state()
    finally:
        ws.close()


def until(fn, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn():
            return True
        time.sleep(0.05)
    raise AssertionError("never happened")


def test_mute_on_the_host_page_silences_the_speaker(bridge_process, browser, standins, shots):
    log = standins()
    b = bridge_process("--simulate", "--game", "ringo", "--sound", "speaker")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(b.url + "/host?code=" + b.host_code)
    page.wait_for_selector("#sound-state:has-text('on the speaker')")
    ws = Ws(b.url, role="host", code=b.host_code)
    for inp in ILLEGAL:
        ws.act(action="sense", input=inp)
    until(lambda: said(log))  # the refusal is spoken
    page.wait_for_selector("#sound-counts:has-text('said')")
    spoken = len(said(log))

    page.check("#sound-mute")
    page.wait_for_selector("#sound-state:has-text('muted')")  # a selector: the page's CSP forbids eval'd waits
    events = now(b)["counters"]["events"]
    for inp in BACK + ILLEGAL:
        ws.act(action="sense", input=inp)
    page.wait_for_selector("#sound-counts:has-text('muted')")
    shots(page, "host-speech-muted")
    # The marker: every sensed change applied (what it had to say offered to the muted speaker), and the
    # speaker idle, nothing waiting: nothing more can come out of it while it is muted.
    def quiet():
        m = now(b)
        return m["counters"]["events"] >= events + len(BACK + ILLEGAL) and not m["sound"]["waiting"] \
            and not m["sound"]["playing"]

    until(quiet)
    assert len(said(log)) == spoken  # nothing more came out of the speaker

    page.uncheck("#sound-mute")
    page.fill("#sound-volume", "50")
    page.dispatch_event("#sound-volume", "change")
    page.wait_for_selector("#sound-volume-value:text-is('50')")
    until(lambda: "muted" not in page.inner_text("#sound-state"))
    for inp in BACK + ILLEGAL:
        ws.act(action="sense", input=inp)
    until(lambda: len(said(log)) > spoken)
    plays = [r for r in speech.records(log) if r["prog"] == "play"]
    until(lambda: [r for r in speech.records(log) if r["prog"] == "play"][-1]["args"][-2:] == ["vol", "0.50"])
    assert plays
    ws.close()


def test_no_sound_device_is_shown_on_the_host_page(bridge_process, browser, standins):
    standins(STANDIN_NODEVICE=1)
    b = bridge_process("--simulate", "--game", "ringo", "--sound", "speaker")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(b.url + "/host?code=" + b.host_code)
    ws = Ws(b.url, role="host", code=b.host_code)
    for inp in ILLEGAL:
        ws.act(action="sense", input=inp)
    page.wait_for_selector("#sound-problem:has-text('no sound device')")
    counts = page.inner_text("#sound-counts")
    assert "failed" in counts and "said" not in counts
    assert "no sound device" in b.output()  # and the terminal says it too
    ws.close()
