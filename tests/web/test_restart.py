"""An open host page survives a bridge restart: the host code is kept in the journal, so the page
reconnects by itself, says so while it waits, and its buttons work again without a reload."""

from bridge.conftest import BridgeProcess

SLOW = 60_000  # ms: the most a loaded machine may take to show what is waited on (never a fixed sleep)


def test_the_host_page_reconnects_across_a_real_bridge_restart(tmp_path, browser, shots):
    b = BridgeProcess(tmp_path, "--simulate", "--game", "ringo", host_code=None).start()
    try:
        code, port = b.host_code, b.port
        assert code and len(code) >= 8
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(b.url + "/host?code=" + code, timeout=SLOW)
        page.wait_for_selector("#status:text-is('live')", timeout=SLOW)

        b.kill9()  # a crash, not a clean stop
        page.wait_for_selector("#status:has-text('reconnecting')", timeout=SLOW)
        assert page.evaluate("document.body.classList.contains('offline')")  # the buttons wait meanwhile
        shots(page, "host-reconnecting")

        b.start(port=port)  # the same journal, the same port
        assert b.host_code == code  # kept, not new
        page.wait_for_selector("#status:text-is('live')", timeout=SLOW)
        assert not page.evaluate("document.body.classList.contains('offline')")
        page.click("#pause", timeout=SLOW)  # the page's buttons act on the new bridge
        page.wait_for_selector("#title:has-text('(paused)')", timeout=SLOW)
    finally:
        b.stop()
