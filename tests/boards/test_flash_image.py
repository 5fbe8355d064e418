"""`battlement flash --image`: MicroPython itself onto a board, its SHA-256 checked before anything is written.

A Pico W in BOOTSEL mode is a drive with an INFO_UF2.TXT: here a folder laid out like one. The ESP32-S3 is
written by esptool: the exact command is run against a stand-in that records it and fails as esptool does
with no board there, and against the real esptool, which takes the same command and fails the same way."""

import hashlib
import json
import os
import pathlib
import struct
import sys

import pytest
from battlement.cli import main

RP2040 = 0xE48BFF56
RP2350 = 0xE48BFF59


def uf2(family=RP2040, blocks=3):
    out = b""
    for i in range(blocks):
        head = struct.pack("<IIIIIIII", 0x0A324655, 0x9E5D5157, 0x2000, 0x10000000 + 256 * i, 256, i, blocks, family)
        out += head + bytes([i]) * 476 + struct.pack("<I", 0x0AB16F30)
    return out


def esp_image(chip_id=9):
    # magic, segments, flash mode, size/freq, entry; extended header: wp pin, drive settings, chip id
    return bytes([0xE9, 3, 2, 0x2F]) + struct.pack("<I", 0x403C98D0) + bytes([0xEE, 0, 0, 0]) \
        + struct.pack("<H", chip_id) + bytes(16) + os.urandom(4000)


def sha(data):
    return hashlib.sha256(data).hexdigest()


def drive(tmp_path, board_id="RPI-RP2", name="RPI-RP2"):
    d = tmp_path / "media" / "alice" / name
    d.mkdir(parents=True)
    (d / "INFO_UF2.TXT").write_text("UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: %s\n" % board_id)
    (d / "INDEX.HTM").write_text("<html></html>")
    return d


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_a_pico_gets_micropython_copied_onto_its_bootsel_drive_once_the_hash_checks(tmp_path, capsys):
    pico = drive(tmp_path)
    drive(tmp_path, board_id="ADAFRUIT-QTPY", name="QTPY-BOOT")  # another board's UF2 drive is left alone
    img = tmp_path / "RPI_PICO_W-v1.25.0.uf2"
    img.write_bytes(uf2())
    (tmp_path / (img.name + ".sha256")).write_text("%s  %s\n" % (sha(img.read_bytes()), img.name))  # sha256sum's
    rc, out, err = run(capsys, "flash", "--board", "pico-w", "--image", str(img), "--drive", str(tmp_path / "media"))
    assert rc == 0, err
    assert (pico / img.name).read_bytes() == img.read_bytes()
    assert not any(p.name.endswith(".uf2") for p in (tmp_path / "media" / "alice" / "QTPY-BOOT").iterdir())
    assert "MicroPython copied onto %s (SHA-256 %s)" % (pico, sha(img.read_bytes())) in out
    assert "next: battlement flash --board pico-w --port PORT --id BOARD" in out


def test_a_dry_run_with_the_firmware_too_says_each_step_in_order_and_writes_nothing(tmp_path, capsys):
    pico = drive(tmp_path)
    img = tmp_path / "fw.uf2"
    img.write_bytes(uf2())
    rc, out, err = run(capsys, "flash", "--dry-run", "--board", "pico-w", "--image", str(img), "--sha256",
                       sha(img.read_bytes()), "--drive", str(pico), "--port", "/dev/ttyACM7", "--id", "red-kingdom",
                       "--build-dir", str(tmp_path / "build"))
    assert rc == 0, err
    lines = out.splitlines()
    copy = lines.index("cp %s %s/" % (img, pico))
    assert copy < next(i for i, x in enumerate(lines) if "mpremote" in x and "connect" in x)
    assert sorted(p.name for p in pico.iterdir()) == ["INDEX.HTM", "INFO_UF2.TXT"]
    assert not (tmp_path / "build").exists()


@pytest.mark.parametrize("how", ["--sha256", "sidecar"])
def test_an_image_whose_hash_differs_is_refused_in_one_line_and_nothing_is_written(tmp_path, capsys, how):
    pico = drive(tmp_path)
    img = tmp_path / "fw.uf2"
    img.write_bytes(uf2())
    wrong = sha(b"another download")
    argv = ["flash", "--board", "pico-w", "--image", str(img), "--drive", str(pico)]
    if how == "--sha256":
        argv += ["--sha256", wrong]
    else:
        (tmp_path / "fw.uf2.sha256").write_text(wrong + "\n")
    rc, _, err = run(capsys, *argv)
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "has SHA-256 %s, but %s says %s: not written" % (
        sha(img.read_bytes()), "--sha256" if how == "--sha256" else tmp_path / "fw.uf2.sha256", wrong) in err
    assert sorted(p.name for p in pico.iterdir()) == ["INDEX.HTM", "INFO_UF2.TXT"]


def test_an_image_with_no_hash_to_check_is_refused(tmp_path, capsys):
    img = tmp_path / "fw.uf2"
    img.write_bytes(uf2())
    rc, _, err = run(capsys, "flash", "--board", "pico-w", "--image", str(img), "--drive", str(drive(tmp_path)))
    assert rc == 2 and err.count("\n") == 1
    assert "no SHA-256 to check %s against: give --sha256 HEX" % img in err


@pytest.mark.parametrize(("board", "data", "message"), [
    ("pico-w", esp_image(), "is not a UF2 image"),
    ("pico-w", uf2(RP2350), "is a UF2 image for chip family 0xe48bff59, not pico-w's (0xe48bff56)"),
    ("esp32-s3-devkitc-1", uf2(), "is not an ESP32 image"),
    ("esp32-s3-devkitc-1", esp_image(chip_id=0), "is an image for ESP chip id 0, not the esp32-s3-devkitc-1's esp32s3"),
])
def test_an_image_for_another_chip_is_refused_before_anything_is_written(tmp_path, capsys, board, data, message):
    pico = drive(tmp_path)
    img = tmp_path / "fw.img"
    img.write_bytes(data)
    rc, _, err = run(capsys, "flash", "--board", board, "--port", "/dev/ttyNOPE", "--image", str(img),
                     "--sha256", sha(data), "--drive", str(pico))
    assert rc == 2 and err.count("\n") == 1 and message in err, err
    assert sorted(p.name for p in pico.iterdir()) == ["INDEX.HTM", "INFO_UF2.TXT"]


def test_no_pico_in_bootsel_mode_is_one_line(tmp_path, capsys):
    img = tmp_path / "fw.uf2"
    img.write_bytes(uf2())
    (tmp_path / "media").mkdir()
    rc, _, err = run(capsys, "flash", "--board", "pico-w", "--image", str(img), "--sha256", sha(img.read_bytes()),
                     "--drive", str(tmp_path / "media"))
    assert rc == 2 and err.count("\n") == 1 and "no RPI-RP2 drive" in err and "hold BOOTSEL" in err


STAND_IN = """#!%s
import json, pathlib, sys
pathlib.Path(%r).write_text(json.dumps(sys.argv[1:]))
print("esptool v5.6.0")
port = sys.argv[sys.argv.index("--port") + 1]
print("Serial port %%s:" %% port)
sys.stderr.write("\\nA fatal error occurred: Could not open %%s, the port is busy or doesn't exist.\\n"
                 "([Errno 2] could not open port %%s: [Errno 2] No such file or directory: '%%s')\\n\\n"
                 "Hint: Check if the port is correct and ESP connected\\n" %% (port, port, port))
sys.exit(2)
"""


def test_esptool_erases_and_writes_the_esp32_s3_at_offset_0_and_its_failure_is_one_line(tmp_path, capsys,
                                                                                          monkeypatch):
    img = tmp_path / "ESP32_GENERIC_S3-v1.25.0.bin"
    img.write_bytes(esp_image())
    record = tmp_path / "argv.json"
    tool = tmp_path / "esptool"
    tool.write_text(STAND_IN % (sys.executable, str(record)))
    tool.chmod(0o755)
    monkeypatch.setenv("BATTLEMENT_ESPTOOL", str(tool))
    argv = ["flash", "--board", "esp32-s3-devkitc-1", "--port", "/dev/ttyNOPE", "--image", str(img),
            "--sha256", sha(img.read_bytes())]
    rc, out, err = run(capsys, *argv)
    want = ["--chip", "esp32s3", "--port", "/dev/ttyNOPE", "--baud", "460800", "write-flash", "--erase-all",
            "-z", "0x0", str(img)]
    assert json.loads(record.read_text()) == want
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert ("esptool could not write MicroPython on /dev/ttyNOPE (exit 2): A fatal error occurred: Could not open "
            "/dev/ttyNOPE, the port is busy or doesn't exist.; put the board in download mode") in err
    assert "Serial port /dev/ttyNOPE:" in out  # esptool's own words reach the user as it runs
    # The project's esptool takes the very same command, and with no board there fails the same way.
    assert (pathlib.Path(sys.executable).parent / "esptool").exists(), "esptool is missing: run `make setup`"
    monkeypatch.delenv("BATTLEMENT_ESPTOOL")
    rc, _, err = run(capsys, *argv)
    assert rc == 2 and err.count("\n") == 1
    assert "Could not open /dev/ttyNOPE, the port is busy or doesn't exist" in err
