"""The host page says, per table, whether its boards sign: in Debian Chromium, a signed table's line and an
unsigned table's warning (anyone on the broker can act as its boards)."""

import os

from web.test_health import table_file

KEY = bytes(range(16))


def test_the_host_page_says_which_table_signs(bridge_process, browser, mosquitto, tmp_path):
    signed, open_ = "sign-%d" % mosquitto.port, "open-%d" % mosquitto.port
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / (signed + ".keys.toml")).write_text('[keys]\nring-5 = "%s"\nring-4 = "%s"\n' % (KEY.hex(), KEY.hex()))
    os.chmod(keys / (signed + ".keys.toml"), 0o600)
    b = bridge_process("--simulate", "--table", table_file(tmp_path, signed), "--table", table_file(tmp_path, open_),
                       "--mqtt", mosquitto.url, "--keys-dir", str(keys))
    page = browser.new_page()
    page.goto(b.url + "/host?code=" + b.host_code + "&table=" + signed)
    lines = page.locator("#signing li")
    lines.filter(has_text=open_).wait_for()
    assert lines.all_inner_texts() == ["%s: signing: OFF: anyone on the broker can act as a board" % open_,
                                       "%s: signing: on (2 boards)" % signed]
    assert "warn" in (lines.filter(has_text=open_).get_attribute("class") or "")
    assert "warn" not in (lines.filter(has_text=signed).get_attribute("class") or "")
