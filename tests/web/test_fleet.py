"""The host page's fleet in Debian Chromium: each board's card and its line in the fleet view say its firmware,
when it was last seen, whether it has a key, its transport and when `battlement flash` wrote it; a board
with a key that no map lists and that was never heard is listed too, as never seen."""

import os
import time

from battlement.link import keys as boardkeys
from battlement.table import maps as tables

from web.test_health import table_file


def test_the_host_page_shows_each_boards_firmware_and_last_seen(bridge_process, browser, mosquitto, tmp_path, shots):
    tid = "fleet-%d" % mosquitto.port
    keys = tmp_path / "keys"
    path = boardkeys.path_of(tid, keys)
    for board in tables.load(table_file(tmp_path, tid)).boards:  # a signed table: every board has its key
        boardkeys.provision(path, board)
    boardkeys.provision(path, "ring-9")  # provisioned, on no map yet, never heard
    boardkeys.record_flash(path, "ring-5", "0.0.9", "mqtt", time.time() - 3 * 86400)
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    b = bridge_process("--simulate", "--table", table_file(tmp_path, tid), "--mqtt", mosquitto.url,
                       "--keys-dir", str(keys))
    page = browser.new_page()
    page.goto(b.url + "/host?code=" + b.host_code)
    page.locator("#health .boards-fold > summary").filter(has_text="6 of 6 online").wait_for(timeout=20_000)

    # the card: firmware from the board's hello (the simulated boards run "sim-1"), seen just now
    page.locator("#health .boards-fold > summary").click()
    card = page.locator('.board-card[data-board="ring-5"] .board-facts')
    facts = card.inner_text()
    assert facts.startswith("firmware sim-1, last seen ") and " s ago)" in facts, facts
    assert "key yes, mqtt (flash), flashed " in facts and "3 days ago" in facts, facts
    assert "key yes, serial (pin map), flashed not by flash --table" in page.locator(
        '.board-card[data-board="ring-4"] .board-facts').inner_text()

    # the fleet: one line a board of every table served, with the same facts
    fold = page.locator("#health .fleet-fold > summary")
    assert fold.inner_text() == "Fleet: 7 boards on 1 table"
    fold.click()
    row = page.locator('#fleet tr[data-board="ring-5"]')
    row.wait_for()
    cell = {k: row.locator(".fleet-" + k).inner_text() for k in ("state", "key", "transport", "firmware", "seen")}
    assert cell["state"] == "online on mqtt %s" % mosquitto.url and cell["key"] == "yes"
    assert cell["firmware"] == "sim-1" and cell["transport"] == "mqtt (flash)" and " s ago)" in cell["seen"]
    stray = page.locator('#fleet tr[data-board="ring-9"]')
    assert stray.locator(".fleet-board").inner_text() == "ring-9 (on no map)"
    assert stray.locator(".fleet-seen").inner_text() == "never seen" and stray.locator(".fleet-firmware").inner_text() \
        == "unknown"
    shots(page, "host-fleet")

    h = b.get("/api/health?code=" + b.host_code)["board_health"]
    fleet = {f["board"]: f for f in h["fleet"]}
    assert fleet["ring-5"]["firmware"] == "sim-1" and fleet["ring-5"]["key"] is True
    assert fleet["ring-9"]["last_seen"] is None and fleet["ring-9"]["mapped"] is False
    assert boardkeys.load(path)["ring-5"].hex() not in str(h)  # a key is never shown
