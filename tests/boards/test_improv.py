"""The Improv codec the boards and `battlement provision` share, and provision's one-line refusals.

The board's side runs under MicroPython in tests/firmware/test_improv.py; here the other end of the pty is
played by the test where the real firmware never goes: silence, a garbled answer."""

import os
import select
import threading

from battlement.boards.provision import Reader
from battlement.cli import main
from battlement.link import improvwire as iw


def test_the_standards_own_example_is_what_goes_on_the_wire():
    # improv-wifi.com/serial: SSID MyWirelessAP, password mysecurepassword -> 01 1E 0C {ssid} 10 {password}
    pkt = iw.rpc(iw.WIFI, ["MyWirelessAP", "mysecurepassword"])
    assert pkt[:9] == b"IMPROV\x01\x03\x20"
    assert pkt[9:-2] == b"\x01\x1e\x0cMyWirelessAP\x10mysecurepassword"
    assert pkt[-2] == sum(pkt[:-2]) & 0xFF and pkt[-1:] == b"\n"
    typ, data = iw.unpack(pkt)
    assert (typ, iw.command(data)) == (iw.RPC, (iw.WIFI, ["MyWirelessAP", "mysecurepassword"]))


def test_packets_are_found_among_frames_and_console_text_however_the_bytes_come():
    info = iw.result(iw.GET_INFO, ["Battlement", "0.1.0", "pico-w/rp2", "red-kingdom\nx"])  # a b"\n" inside
    bad = bytearray(iw.packet(iw.STATE, b"\x02"))
    bad[-2] ^= 1
    stream = (b"hello red-kingdom 1 0.1.0 3 x - 0 0*00000000\nIMPROVISED text\n" + info
              + b"mqtt: session ended\n" + bytes(bad) + iw.packet(iw.ERROR, b"\x03"))
    for step in (1, 7, len(stream)):
        r = Reader()
        got = []
        for i in range(0, len(stream), step):
            got += r.feed(stream[i : i + step])
        assert [g if isinstance(g, tuple) else str(g) for g in got] == [
            (iw.RESULT, info[9:-2]), "wrong checksum", (iw.ERROR, b"\x03")]


def _board_side(path, answer):
    """Play the board on the pty: read one question, write answer(question) back."""
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)

    def run():
        try:
            if select.select([fd], [], [], 10)[0]:
                q = os.read(fd, 4096)
                os.write(fd, answer(q))
                select.select([fd], [], [], 2)  # the answer stays in the pty until it is read
        finally:
            os.close(fd)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def test_a_board_that_does_not_answer_is_one_line(pty_pair, capsys):
    rc = main(["provision", pty_pair.a, "--ssid", "castle", "--password", "x", "--wait", "0.5"])
    _, err = capsys.readouterr()
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "no answer from the board within 0.5 s" in err


def test_an_answer_with_a_wrong_checksum_is_one_line(pty_pair, capsys):
    def garbled(_question):
        p = bytearray(iw.result(iw.GET_INFO, ["Battlement", "0.1.0", "pico-w/rp2", "red-kingdom"]))
        p[12] ^= 0x20  # a bit flipped on the cable
        return b"\n" + bytes(p)

    t = _board_side(pty_pair.b, garbled)
    rc = main(["provision", pty_pair.a, "--ssid", "castle", "--password", "x"])
    _, err = capsys.readouterr()
    t.join(5)
    assert rc == 2 and err.count("\n") == 1
    assert "the board's answer has a wrong checksum" in err


def test_a_stock_improv_device_gets_wifi_only(pty_pair, capsys):
    # Another firmware (ESPHome, say) answers Improv too: Battlement's broker and table are not sent to it.
    t = _board_side(pty_pair.b, lambda _q: iw.result(iw.GET_INFO, ["ESPHome", "2025.1.0", "esp32-s3", "lamp"]))
    rc = main(["provision", pty_pair.a, "--ssid", "castle", "--password", "x", "--broker", "127.0.0.1",
               "--table", "hall-1"])
    _, err = capsys.readouterr()
    t.join(5)
    assert rc == 2 and err.count("\n") == 1
    assert "runs ESPHome, not Battlement: it takes Wi-Fi only" in err


def test_without_a_terminal_to_ask_on_what_is_missing_is_one_line(pty_pair, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", open(os.devnull))  # noqa: SIM115 - nobody at the keyboard
    rc = main(["provision", pty_pair.a])
    _, err = capsys.readouterr()
    assert rc == 2 and err == "battlement provision: error: --ssid is missing, and there is no terminal to ask on: give it\n"
    rc = main(["provision", pty_pair.a, "--broker", "127.0.0.1", "--ssid", "castle", "--password", ""])
    _, err = capsys.readouterr()
    assert rc == 2 and "--broker needs --table" in err
