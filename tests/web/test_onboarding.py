"""Onboarding: the bridge prints and shows its addresses and a QR code per page, battlement.local where
multicast works (quietly not where it does not), and a favicon. Tests stay on loopback."""

import asyncio
import urllib.error
import urllib.request

import pytest
from battlement.web import onboarding


def test_the_host_page_shows_a_qr_code_for_each_page(bridge_process, browser, shots):
    b = bridge_process("--simulate", "--game", "medieval-pong")
    out = b.output()
    assert "scoreboard: http://127.0.0.1:%d/" % b.port in out
    assert "--host 0.0.0.0" in out  # 127.0.0.1 reaches no phone: the terminal says how to let them in
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(b.url + "/host?code=" + b.host_code)
    page.wait_for_selector("#qr-codes figure[data-page='side red'] svg")
    pages = page.eval_on_selector_all("#qr-codes figure", "fs => fs.map(f => f.dataset.page)")
    assert pages == ["scoreboard", "host", "side blue", "side red"]
    assert "Put the scoreboard on the TV and scan the codes" in page.inner_text("#addresses")
    url = page.inner_text("#qr-codes figure[data-page='side red'] figcaption")
    state = b.get("/api/state")
    assert "/side/red?code=" in url and state["table"]
    shots(page, "host-onboarding")
    with pytest.raises(urllib.error.HTTPError) as refused:  # no host code: no codes
        urllib.request.urlopen(b.url + "/api/onboarding", timeout=10)
    assert refused.value.code == 403


def test_every_interface_means_the_real_lan_addresses():
    shown = onboarding.addresses("0.0.0.0")
    assert "0.0.0.0" not in shown and shown
    assert all(not a.startswith("127.") for a in shown) or shown == ["127.0.0.1"]
    assert onboarding.addresses("192.168.1.20") == ["192.168.1.20"]


def test_mdns_stays_off_on_loopback_and_degrades_where_multicast_fails(monkeypatch):
    m = onboarding.Mdns()
    assert asyncio.run(m.start("127.0.0.1", 8000, ["127.0.0.1"])).startswith("off")
    assert m.zc is None  # nothing was sent anywhere

    import zeroconf.asyncio

    def no_multicast(*a, **k):
        raise OSError(19, "No such device (no multicast route)")

    monkeypatch.setattr(zeroconf.asyncio, "AsyncZeroconf", no_multicast)
    state = asyncio.run(m.start("0.0.0.0", 8000, ["192.0.2.10"]))
    assert state.startswith("not available here") and "No such device" in state


def test_favicon(bridge_process):
    b = bridge_process("--simulate", "--game", "ringo")
    with urllib.request.urlopen(b.url + "/favicon.ico", timeout=10) as r:
        assert r.status == 200 and r.headers["content-type"].startswith("image/svg+xml")
        assert b"<svg" in r.read()


@pytest.mark.parametrize("url", ["http://192.168.1.5:8000/side/red?code=abc"])
def test_qr_codes_are_svg(url):
    svg = onboarding.qr_svg(url)
    assert svg.startswith("<svg") and "path" in svg
