"""`battlement hardware check` and `battlement flash --dry-run`, as a user runs them."""

import json
import shlex

import pytest
from battlement import cli
from battlement.boards import hardware

BOARDS = sorted(hardware.BOARDS.glob("*.json"))


def run(capsys, *argv):
    rc = cli.main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def write_map(tmp_path, m, name="board.json"):
    p = tmp_path / name
    p.write_text(json.dumps(m))
    return str(p)


def base(**kw):
    m = {
        "board": "pong-a",
        "profile": "esp32-s3-devkitc-1",
        "sensors": [{"id": "tower-a1", "kind": "beam", "pin": 4}],
    }
    m.update(kw)
    return m


def test_every_shipped_pin_map_passes(capsys):
    assert len(BOARDS) >= 5
    rc, out, err = run(capsys, "hardware", "check", *map(str, BOARDS))
    assert rc == 0, err
    assert out.count(": ok - board") == len(BOARDS)


@pytest.mark.parametrize(
    "change, message",
    [
        (
            {"sensors": [{"id": "tower-a1", "kind": "beam", "pin": 30}]},
            "GPIO 30 must not be used on esp32-s3-devkitc-1: it is wired to the SPI flash",
        ),
        (
            {"sensors": [{"id": "tower-a1", "kind": "beam", "pin": 0}]},
            "GPIO 0 must not be used on esp32-s3-devkitc-1: it is a strapping pin",
        ),
        (
            {"sensors": [{"id": "tower-a1", "kind": "beam", "pin": 19}]},
            "GPIO 19 must not be used on esp32-s3-devkitc-1: it is USB D-",
        ),
        (
            {"sensors": [{"id": "tower-a1", "kind": "beam", "pin": 23}]},
            "GPIO 23 does not exist on esp32-s3-devkitc-1",
        ),
        (
            {"profile": "pico-w", "sensors": [{"id": "cup-1", "kind": "beam", "pin": 24}]},
            "GPIO 24 must not be used on pico-w: it is not on the header: it is the CYW43 Wi-Fi data",
        ),
        (
            {
                "sensors": [
                    {"id": "tower-a1", "kind": "beam", "pin": 4},
                    {"id": "tilt-a1", "kind": "tilt", "pin": 4},
                ]
            },
            "sensors[1] (tilt-a1): GPIO 4 is already used by sensors[0] (tower-a1)",
        ),
        (
            {"sensors": [{"id": "tower-a1", "kind": "beam", "pin": 4}], "leds": {"pin": 4, "count": 3}},
            "leds data: GPIO 4 is already used by sensors[0] (tower-a1)",
        ),
        (
            {"sensors": [{"id": "tower-a1", "kind": "beam", "pin": 4, "min_pulse_us": 100}]},
            "min_pulse_us is 100; it must be a whole number from 700 to 1800: below it a 0.5 ms flicker",
        ),
        (
            {"sensors": [{"id": "tower-a1", "kind": "laser", "pin": 4}]},
            "kind 'laser' must be one of beam, tilt, presence",
        ),
        (
            {"sensors": [{"id": "tower a1", "kind": "beam", "pin": 4}]},
            "id 'tower a1' must be 1-32 of letters",
        ),
        ({"lockout": 8}, "unknown key 'lockout' (did you mean 'lockout_ms'?)"),
        (
            {"sensors": [{"id": "tower-a1", "kind": "beam", "pin": 4, "lowr": 5}]},
            "sensors[0] (tower-a1): unknown key 'lowr' (did you mean 'lower'?)",
        ),
        (
            {"profile": "arduino-uno"},
            "unknown board profile 'arduino-uno': known profiles are esp32-s3-devkitc-1, pico-w",
        ),
        (
            {
                "muxes": {"m": {"sig": 5, "select": [6, 7, 8, 9]}},
                "sensors": [{"id": "c1", "kind": "beam", "mux": "m", "channel": 0}],
            },
            "a beam needs its own IRQ pin",
        ),
        (
            {
                "muxes": {"m": {"sig": 5, "select": [6, 7, 8]}},
                "sensors": [{"id": "c1", "kind": "presence", "mux": "m", "channel": 8}],
            },
            "channel 8 must be 0 to 7 on mux m",
        ),
        (
            {
                "sensors": [
                    {"id": "cell-%d" % i, "kind": "presence", "mux": "m%d" % (i // 16), "channel": i % 16}
                    for i in range(41)
                ],
                "muxes": {
                    "m0": {"sig": 4, "select": [5, 6, 7, 8]},
                    "m1": {"sig": 9, "select": [10, 11, 12, 13]},
                    "m2": {"sig": 14, "select": [15, 16, 17, 18]},
                },
            },
            "41 sensors make the board's hello",
        ),
        (
            {"wdt_ms": 1},
            "wdt_ms is 1; a watchdog shorter than 2000 ms resets a healthy board",
        ),
        (
            {"sensors": [{"id": "cup-1", "kind": "beam", "pin": 48}]},
            "sensors[0] (cup-1): GPIO 48 cannot be a sensor input on esp32-s3-devkitc-1: it drives the on-board RGB LED",
        ),
        (
            {"sensors": [{"id": "cup-1", "kind": "beam", "pin": 4, "lower": 38}]},
            "sensors[0] (cup-1) lower beam: GPIO 38 cannot be a sensor input on esp32-s3-devkitc-1",
        ),
        (
            {"muxes": {"m": {"sig": 38, "select": [6, 7, 8]}}},
            "mux m sig: GPIO 38 cannot be a sensor input",
        ),
        (
            {
                "muxes": {"m": {"sig": 5, "select": [6, 7, 8]}},
                "sensors": [{"id": "t1", "kind": "tilt", "mux": "m", "channel": 0, "lower": 9}],
            },
            "sensors[0] (t1): lower (a second beam) is only for beams on their own pins",
        ),
        (
            {"sensors": [{"id": "cup-1", "kind": "beam", "pin": 4, "settle_ms": 50}]},
            ("sensors[0] (cup-1): settle_ms is for tilt and presence sensors (how long a reading must hold); "
            "a beam is filtered by min_pulse_us and lockout_ms"),
        ),
        (
            {"sensors": [{"id": "t1", "kind": "tilt", "pin": 4, "min_pulse_us": 1500}]},
            ("sensors[0] (t1): min_pulse_us is for beam sensors (the shortest break counted as a ball); "
            "a tilt sensor is filtered by settle_ms"),
        ),
    ],
)
def test_impossible_maps_rejected_naming_pin_and_reason(tmp_path, capsys, change, message):
    path = write_map(tmp_path, base(**change))
    rc, out, err = run(capsys, "hardware", "check", path)
    assert rc == 2
    assert message in err
    assert "Traceback" not in err + out


def test_broken_json_names_line_and_column(tmp_path, capsys):
    p = tmp_path / "bad.json"
    p.write_text('{"board": "pong-a",\n "profile": "pico-w"\n "sensors": []}')
    rc, _, err = run(capsys, "hardware", "check", str(p))
    assert rc == 2 and "bad.json line 3 column 2: not valid JSON" in err


def test_profiles_lists_usable_and_forbidden_pins(capsys):
    rc, out, _ = run(capsys, "hardware", "profiles")
    assert rc == 0
    assert "never GPIO 23: it is not on the header: it switches the CYW43" in out
    assert "never GPIO 45: it is a strapping pin" in out


def test_flash_dry_run_prints_every_step_and_touches_nothing(tmp_path, capsys):
    build = tmp_path / "build"
    rc, out, err = run(
        capsys,
        "flash",
        "--board",
        "esp32-s3-devkitc-1",
        "--port",
        "/dev/ttyACM0",
        "--id",
        "plingpong-1",
        "--mqtt",
        "mqtt://192.168.1.10:1883",
        "--table",
        "hall-1",
        "--wifi-ssid",
        "castle",
        "--wifi-password",
        "drawbridge",
        "--build-dir",
        str(build),
        "--dry-run",
    )
    assert rc == 0, err
    assert not build.exists()
    lines = out.splitlines()
    compiles = [shlex.split(x) for x in lines if "mpy-cross" in x]
    assert {c[-1].rsplit("/", 1)[1] for c in compiles} == {
        "app.py",
        "beam.py",
        "bootcount.py",
        "build.py",
        "edges.py",
        "hal.py",
        "improv.py",
        "improvwire.py",
        "leds.py",
        "pixels.py",
        "links.py",
        "mqttlink.py",
        "mqttlite.py",
        "ota.py",
        "outbox.py",
        "sensors.py",
        "wire.py",
    }
    assert all("-march=xtensawin" in c for c in compiles)
    (mp,) = [shlex.split(x) for x in lines if "mpremote" in x and "connect" in x]
    assert mp[1:4] == ["connect", "/dev/ttyACM0", "exec"]
    assert mp[-2:] == ["+", "reset"]
    assert str(build / "config.json") in mp and str(build / "main.py") in mp
    cfg = json.loads(next(x for x in lines if x.startswith("{")))
    assert cfg["board"] == "plingpong-1" and cfg["transport"] == "mqtt"
    assert cfg["table"] == "hall-1" and cfg["boots_from"] > 1_700_000_000  # its MACs' table; boots past the clock
    assert cfg["mqtt"] == {
        "host": "192.168.1.10",
        "port": 1883,
        "table": "hall-1",
        "user": "",
        "password": "",
    }
    assert cfg["wifi"]["password"] == "********" and "drawbridge" not in out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--board", "pico-w", "--id", "red-kingdom"], "--port (PORT=) is missing"),
        (["--port", "/dev/ttyACM0", "--id", "red-kingdom"], "--board (BOARD=) is missing"),
        (["--board", "pico-w", "--port", "/dev/ttyACM0", "--id", "moat-9"], "no pin map for board moat-9"),
        (
            ["--board", "esp32-s3-devkitc-1", "--port", "/dev/ttyACM0", "--id", "red-kingdom"],
            "is a pin map for pico-w, but --board is esp32-s3-devkitc-1",
        ),
        (
            ["--board", "pico-w", "--port", "/dev/ttyACM0", "--id", "red-kingdom", "--mqtt", "mqtt://h"],
            "--mqtt needs --table",
        ),
        (
            ["--board", "pico-w", "--port", "/dev/ttyACM0", "--id", "Pong_A"],
            "--id (ID=) 'Pong_A' must be the board id",
        ),
    ],
)
def test_flash_mistakes_are_one_clear_line(capsys, argv, message):
    rc, _, err = run(capsys, "flash", "--dry-run", *argv)
    assert rc == 2
    assert message in err and "Traceback" not in err


def test_flash_of_an_mqtt_board_without_broker_settings_makes_it_a_usb_board_until_provisioned(capsys):
    # plingpong-1's pin map says transport mqtt: without --mqtt the board talks over USB, where it is reachable
    # (and answers Improv), until `battlement provision` gives it Wi-Fi and its broker.
    rc, out, err = run(
        capsys, "flash", "--dry-run", "--board", "esp32-s3-devkitc-1", "--port", "/dev/ttyACM0", "--id", "plingpong-1"
    )
    assert rc == 0, err
    cfg = json.loads(next(x for x in out.splitlines() if x.startswith("{")))
    assert cfg["transport"] == "serial" and "mqtt" not in cfg and "wifi" not in cfg
    assert ("# network: none yet (plingpong-1 says mqtt): the board talks over USB until `battlement provision "
            "/dev/ttyACM0 --broker HOST --table TABLE`") in out
    # Half the network settings is still a mistake, said in one line.
    rc, _, err = run(capsys, "flash", "--dry-run", "--board", "esp32-s3-devkitc-1", "--port", "/dev/ttyACM0",
                     "--id", "plingpong-1", "--mqtt", "mqtt://192.168.1.10", "--table", "hall-1")
    assert rc == 2 and err.count("\n") == 1 and "--wifi-ssid" in err


def test_flash_with_tls_puts_the_ca_in_the_config(tmp_path, capsys):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n")
    argv = ["flash", "--dry-run", "--board", "esp32-s3-devkitc-1", "--port", "/dev/ttyACM0", "--id", "plingpong-1",
            "--table", "hall-1", "--wifi-ssid", "castle", "--build-dir", str(tmp_path / "b")]
    rc, out, err = run(capsys, *argv, "--mqtt", "mqtts://broker.lan", "--tls-ca", str(ca))
    assert rc == 0, err
    cfg = json.loads(next(x for x in out.splitlines() if x.startswith("{")))
    assert cfg["mqtt"]["tls"] is True and cfg["mqtt"]["port"] == 8883
    assert cfg["mqtt"]["ca"].startswith("-----BEGIN CERTIFICATE-----")
    # TLS without a CA to check the broker against would trust anyone: refused.
    rc, _, err = run(capsys, *argv, "--mqtt", "mqtts://broker.lan")
    assert rc == 2 and "--tls-ca" in err and "Traceback" not in err
    rc, _, err = run(capsys, *argv, "--mqtt", "mqtts://broker.lan", "--tls-ca", str(tmp_path / "nope.pem"))
    assert rc == 2 and "no such file" in err


def test_simulated_boards_never_get_a_reserved_pin_as_input():
    m = hardware.pins_for("esp32-s3-devkitc-1", {"s%02d" % i: "beam" for i in range(22)}, leds=4)
    assert not hardware.check(m, "sim")


def test_flash_gives_the_board_its_broker_login_as_broker_config_names_it(tmp_path, capsys):
    # `battlement broker-config` names a board's login <table>.<board>: it goes into config.json unchanged.
    argv = ["flash", "--dry-run", "--board", "pico-w", "--port", "/dev/ttyACM0", "--id", "ring-5",
            "--table", "hall-2", "--wifi-ssid", "castle", "--build-dir", str(tmp_path / "b")]
    rc, out, err = run(capsys, *argv, "--mqtt", "mqtt://hall-2.ring-5:Zx_9-qT@192.168.1.10")
    assert rc == 0, err
    cfg = json.loads(next(x for x in out.splitlines() if x.startswith("{")))
    assert cfg["mqtt"]["user"] == "hall-2.ring-5" and cfg["mqtt"]["table"] == "hall-2"
    assert cfg["mqtt"]["password"] == "********" and "Zx_9-qT" not in out
    # The login of the same board id on another table, or of another board of this table, would connect
    # and then have everything it publishes dropped by the broker: refused, saying which login it needs.
    for wrong in ("hall-1.ring-5", "hall-2.ring-4"):
        rc, _, err = run(capsys, *argv, "--mqtt", "mqtt://%s:pw@192.168.1.10" % wrong)
        assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
        assert "give it hall-2.ring-5" in err
    rc, _, err = run(capsys, *argv, "--mqtt", "mqtt://192.168.1.10", "--username", "hall-1.ring-5", "--password", "x")
    assert rc == 2 and "give it hall-2.ring-5" in err


@pytest.mark.parametrize(
    ("key", "lo", "hi", "why"),
    [
        ("min_pulse_us", 700, 1800, "below it a 0.5 ms flicker of noise may count as a ball"),
        ("lockout_ms", 1, 5, "below it a rim flicker's light (up to 0.5 ms) splits one ball in two"),
        ("block_ms", 100, 5000, "a beam dark longer is blocked, not a ball"),
    ],
)
def test_beam_settings_only_where_the_detection_holds_each_limit_said_why(tmp_path, capsys, key, lo, hi, why):
    # Defect: lockout_ms 0 to 500 passed (at 0 every flickering ball counted twice, at 8 bursts merged).
    for where in ("board", "sensor"):
        for v, ok in ((lo - 1, False), (lo, True), (hi, True), (hi + 1, False)):
            if where == "board":
                m = base(**{key: v})
            else:
                m = base(sensors=[{"id": "tower-a1", "kind": "beam", "pin": 4, key: v}])
            rc, _out, err = run(capsys, "hardware", "check", write_map(tmp_path, m))
            if ok:
                assert rc == 0, err
            else:
                assert rc == 2
                line = [x for x in err.splitlines() if key in x]
                assert len(line) == 1 and "%s is %d; it must be a whole number from %d to %d: %s" % (key, v, lo, hi, why) in line[0]
