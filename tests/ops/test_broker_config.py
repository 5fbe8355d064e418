"""`battlement broker-config` files on a real Mosquitto: a board publishes its own events, cannot
publish as another board or read another's commands, and anonymous clients are refused; the bridge
writes Home Assistant's discovery and reads its birth message, Home Assistant reads them and the boards'
status, and a board can write none of Home Assistant's topics. Two tables on one broker whose boards
share an id (two Ringo tables, each with its ring-5) each get a login per board, `<table>.<board>`,
that reaches only its own table's topics."""

import grp
import os
import pathlib
import pwd
import shutil
import stat
import tempfile
import threading
import time
import tomllib

import paho.mqtt.client as mqtt
import pytest
from battlement import cli
from battlement.ops.broker import BRIDGE_USER, HASS_USER, write
from support.overload import table_files
from support.procs import Broker, free_port

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAP = ROOT / "hardware" / "tables" / "plingpong.toml"
MARK = b"marker "


def wait(cond, what, timeout=10):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting for " + what
        time.sleep(0.01)


class Client:
    def __init__(self, port, user=None, password=None, client_id=None, will=None):
        """will: (topic, payload) the broker publishes, retained, if this client's link ends without a goodbye."""
        self.got, self.marks, self.rc = [], set(), None
        self.subacked: set[int] = set()
        self.up = threading.Event()
        self.down = threading.Event()
        c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id or "t-%s-%d" % (user, time.monotonic_ns()))
        if user:
            c.username_pw_set(user, password)
        if will:
            c.will_set(will[0], will[1], qos=1, retain=True)
        c.on_disconnect = lambda *a: self.down.set()
        c.on_connect = self._connected
        c.on_message = self._message
        c.on_subscribe = lambda c, u, mid, codes, props=None: self.subacked.add(mid)
        c.connect("127.0.0.1", port)
        c.loop_start()
        self.c = c

    def _connected(self, c, userdata, flags, rc, props=None):
        self.rc = rc
        self.up.set()

    def _message(self, c, userdata, m):
        if m.payload.startswith(MARK):
            self.marks.add((m.topic, m.payload))
        else:
            self.got.append((m.topic, m.payload))

    def ok(self):
        self.up.wait(5)
        return self.rc is not None and not self.rc.is_failure

    def subscribe(self, *topics):
        """Subscribe at QoS 1 and wait for the SUBACK: from then on the broker passes on what this login may read."""
        _rc, mid = self.c.subscribe([(t, 1) for t in topics])
        wait(lambda: mid in self.subacked, "the SUBACK for %s" % ", ".join(topics))

    def send(self, topic, payload):
        """Publish at QoS 1 and wait for the broker's PUBACK (it answers a denied publish too)."""
        self.c.publish(topic, payload, qos=1).wait_for_publish(5)

    def close(self):
        self.c.disconnect()
        self.c.loop_stop()


def settle(*paths):
    """paths: (sender, topic, receiver). Mosquitto passes a QoS 1 message on to its subscribers (or
    drops it, denied) before it acknowledges it, and a subscriber is sent what it was passed in that
    order. So a marker published after every message under test was acknowledged reaches its receiver
    after anything of those it was ever going to get: once every marker is in, nothing more comes."""
    for i, (sender, topic, _receiver) in enumerate(paths):
        sender.send(topic, MARK + b"%d" % i)
    for i, (_sender, topic, receiver) in enumerate(paths):
        mark = (topic, MARK + b"%d" % i)
        wait(lambda r=receiver, m=mark: m in r.marks, "marker %d on %s" % (i, topic))


@pytest.fixture
def venue():
    """A folder as /etc/mosquitto is to a venue's broker: one the broker's own user can reach (a test's
    tmp_path is inside a folder only its owner may enter). Removed after the test."""
    d = pathlib.Path(tempfile.mkdtemp(prefix="battlement-venue-"))
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def broker_in():
    """broker_in(folder, port): Mosquitto running the mosquitto.conf broker-config wrote there."""
    started = []

    def start(d, port):
        started.append(Broker(d, port, conf=d / "mosquitto.conf").start())
        return started[-1]

    yield start
    for b in started:
        b.stop()


@pytest.fixture
def clients(broker_in):  # closed before the broker stops
    made = []

    def connect(port, user=None, password=None, **kw):
        c = Client(port, user, password, **kw)
        made.append(c)
        return c

    yield connect
    for c in made:
        c.close()


def test_generated_password_file_and_acl_hold_on_a_real_mosquitto(venue, broker_in, clients):
    port = free_port()
    d = venue / "mq"
    users = write([str(MAP)], str(d), port, "127.0.0.1")
    assert stat.S_IMODE(os.stat(d / "credentials.toml").st_mode) == 0o600
    with open(d / "credentials.toml", "rb") as f:
        assert tomllib.load(f)["users"] == users
    boards = sorted(u.removeprefix("plingpong.") for u in users if u not in (BRIDGE_USER, HASS_USER))
    assert len(boards) >= 2 and all("plingpong.%s" % b in users for b in boards)
    a, b = boards[:2]
    ua, ub = "plingpong." + a, "plingpong." + b
    conf = (d / "mosquitto.conf").read_text()
    assert "set_tcp_nodelay true" in conf and "allow_anonymous false" in conf
    broker_in(d, port)
    bridge = clients(port, BRIDGE_USER, users[BRIDGE_USER])
    assert bridge.ok()
    bridge.subscribe("battlement/+/+/up", "battlement/+/+/status", "homeassistant/status")
    ha = clients(port, HASS_USER, users[HASS_USER])
    assert ha.ok()
    ha.subscribe("homeassistant/#", "battlement/#")
    board_a = clients(port, ua, users[ua])
    assert board_a.ok()
    board_a.subscribe("battlement/plingpong/%s/down" % b, "battlement/plingpong/%s/down" % a)
    board_a.send("battlement/plingpong/%s/up" % a, b"mine")
    board_a.send("battlement/plingpong/%s/up" % b, b"as another board")
    bridge.send("battlement/plingpong/%s/down" % b, b"for b only")
    for topic in ("homeassistant/sensor/battlement-plingpong/game/config", "battlement/plingpong/game",
                  "battlement/plingpong/event", "battlement/bridge/plingpong"):
        bridge.send(topic, b"from the bridge")
        board_a.send(topic, b"from a board")
    ha.send("homeassistant/status", b"online")
    ha.send("battlement/plingpong/%s/down" % a, b"from home assistant")
    anon = clients(port)
    wrong = clients(port, ua, users[ub])
    settle((board_a, "battlement/plingpong/%s/up" % a, bridge), (ha, "homeassistant/status", bridge),
           (bridge, "battlement/plingpong/game", ha), (board_a, "battlement/plingpong/%s/status" % a, ha),
           (bridge, "battlement/plingpong/%s/down" % a, board_a))
    assert bridge.got == [("battlement/plingpong/%s/up" % a, b"mine"), ("homeassistant/status", b"online")]
    assert board_a.got == []  # b's commands are not a's to read, nor Home Assistant's a's to write
    # Home Assistant reads the bridge's discovery and state and the boards' status, no board's events
    # or commands, and nothing a board wrote on its topics
    assert sorted(ha.got) == sorted(
        [(t, b"from the bridge") for t in ("homeassistant/sensor/battlement-plingpong/game/config",
                                           "battlement/plingpong/game", "battlement/plingpong/event",
                                           "battlement/bridge/plingpong")] + [("homeassistant/status", b"online")])
    assert not anon.ok() and not wrong.ok()


def test_two_tables_on_one_broker_each_board_of_one_id_reaches_only_its_own_table(tmp_path, venue, broker_in,
                                                                                   clients):
    (a, file_a), (b, file_b) = table_files(tmp_path, 2, prefix="hall")  # Ringo tables, both with ring-5
    port = free_port()
    d = venue / "mq"
    users = write([file_a, file_b], str(d), port, "127.0.0.1")
    ua, ub = "%s.ring-5" % a, "%s.ring-5" % b
    assert ua in users and ub in users and users[ua] != users[ub]
    assert "ring-5" not in users  # no login shared by both tables' ring-5

    def topic(table, leaf):
        return "battlement/%s/ring-5/%s" % (table, leaf)

    broker_in(d, port)
    bridge = clients(port, BRIDGE_USER, users[BRIDGE_USER])
    assert bridge.ok()
    bridge.subscribe("battlement/+/+/up", "battlement/+/+/status")
    ring_a, ring_b = clients(port, ua, users[ua]), clients(port, ub, users[ub])
    assert ring_a.ok() and ring_b.ok()
    for board in (ring_a, ring_b):
        board.subscribe(topic(a, "down"), topic(b, "down"))
    for me, other, board in ((a, b, ring_a), (b, a, ring_b)):
        board.send(topic(me, "status"), b"online")
        board.send(topic(me, "up"), b"event of " + me.encode())
        board.send(topic(other, "status"), b"offline, forged by " + me.encode())
        board.send(topic(other, "up"), b"event forged by " + me.encode())
    bridge.send(topic(a, "down"), b"led for " + a.encode())
    bridge.send(topic(b, "down"), b"led for " + b.encode())
    # A's password is not B's board's, and neither table's board logs in by its id alone
    swapped, bare = clients(port, ub, users[ua]), clients(port, "ring-5", users[ua])
    settle((ring_a, topic(a, "up"), bridge), (ring_b, topic(b, "up"), bridge),
           (bridge, topic(a, "down"), ring_a), (bridge, topic(b, "down"), ring_b))
    assert sorted(bridge.got) == sorted([(topic(t, "status"), b"online") for t in (a, b)]
                                        + [(topic(t, "up"), b"event of " + t.encode()) for t in (a, b)])
    assert ring_a.got == [(topic(a, "down"), b"led for " + a.encode())]
    assert ring_b.got == [(topic(b, "down"), b"led for " + b.encode())]
    assert not swapped.ok() and not bare.ok()


def _uid_of(pid):
    with open("/proc/%d/status" % pid) as f:
        return [int(x) for x in next(line for line in f if line.startswith("Uid:")).split()[1:]]


def test_the_broker_drops_to_its_own_user_and_reads_files_kept_from_everyone_else(venue, broker_in, clients):
    """As Debian's service starts it: root runs `mosquitto -c` on the generated config, and Mosquitto drops
    to its own user before it opens the password file and the ACL."""
    port = free_port()
    d = venue / "mq"
    users = write([str(MAP)], str(d), port, "127.0.0.1")
    conf = (d / "mosquitto.conf").read_text()
    assert "user root" not in conf and "user mosquitto" in conf
    if os.geteuid() == 0:
        group = grp.getgrnam("mosquitto").gr_gid
        for name in ("passwords", "acl"):  # the broker's to read, nobody else's
            st = os.stat(d / name)
            assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (0, group, 0o640), name
        st = os.stat(d / "credentials.toml")  # the plain passwords: root's alone
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o600)
    else:  # a broker run by the user who wrote them
        assert stat.S_IMODE(os.stat(d / "passwords").st_mode) == 0o600
    broker = broker_in(d, port)
    if os.geteuid() == 0:
        assert set(_uid_of(broker.proc.pid)) == {pwd.getpwnam("mosquitto").pw_uid}  # it is not root
    board = clients(port, "plingpong.plingpong-1", users["plingpong.plingpong-1"])
    assert board.ok()  # it read the password file as its own user
    bridge = clients(port, BRIDGE_USER, users[BRIDGE_USER])
    assert bridge.ok()
    bridge.subscribe("battlement/+/+/up")
    settle((board, "battlement/plingpong/plingpong-1/up", bridge))  # and the ACL: a board's own topic passes


def test_a_boards_login_cannot_take_another_boards_client_id_nor_fire_its_will(venue, broker_in, clients):
    port = free_port()
    d = venue / "mq"
    users = write([str(MAP)], str(d), port, "127.0.0.1")
    assert "use_username_as_clientid true" in (d / "mosquitto.conf").read_text()
    broker_in(d, port)
    ua, ub = "plingpong.plingpong-1", "plingpong.plingpong-2"
    status_b = "battlement/plingpong/plingpong-2/status"
    bridge = clients(port, BRIDGE_USER, users[BRIDGE_USER])
    assert bridge.ok()
    bridge.subscribe("battlement/+/+/status")
    b_id = "battlement/plingpong/plingpong-2"  # the client id board B's firmware uses
    board_b = clients(port, ub, users[ub], client_id=b_id, will=(status_b, b"offline"))
    assert board_b.ok()
    board_b.c.publish(status_b, b"online", qos=1, retain=True).wait_for_publish(5)
    board_a = clients(port, ua, users[ua], client_id=b_id)  # A's own login, B's client id
    assert board_a.ok()  # A is let in, as itself
    settle((board_b, status_b, bridge))  # B still publishes, on the link it had
    assert not board_b.down.is_set()  # never thrown off
    assert (status_b, b"offline") not in bridge.got
    late = clients(port, BRIDGE_USER, users[BRIDGE_USER])
    assert late.ok()
    late.subscribe(status_b)  # the broker still holds B online
    wait(lambda: (status_b, b"online") in late.got, "B's retained status")
    assert (status_b, b"offline") not in late.got


def test_a_second_bridge_gets_a_login_of_its_own_and_both_keep_their_links(venue, broker_in, clients):
    """One connection per login: two bridges on one broker (or a monitor beside a bridge) each need their own,
    or the second throws the first off."""
    port = free_port()
    d = venue / "mq"
    users = write([str(MAP)], str(d), port, "127.0.0.1", bridges=["east"])
    east = BRIDGE_USER + "-east"
    assert east in users and users[east] != users[BRIDGE_USER]
    broker_in(d, port)
    first, second = clients(port, BRIDGE_USER, users[BRIDGE_USER]), clients(port, east, users[east])
    assert first.ok() and second.ok()
    for b in (first, second):
        b.subscribe("battlement/+/+/up")
    board = clients(port, "plingpong.plingpong-1", users["plingpong.plingpong-1"])
    assert board.ok()
    board.send("battlement/plingpong/plingpong-1/up", b"event")
    settle((board, "battlement/plingpong/plingpong-1/up", first), (board, "battlement/plingpong/plingpong-1/up", second))
    assert first.got == second.got == [("battlement/plingpong/plingpong-1/up", b"event")]
    assert not first.down.is_set() and not second.down.is_set()
    again = clients(port, BRIDGE_USER, users[BRIDGE_USER])  # the first bridge's login a second time
    assert again.ok()
    wait(first.down.is_set, "the first bridge thrown off by its own login's second connection")


def test_running_it_again_keeps_every_password_of_every_table(tmp_path, capsys):
    ((_a, file_a),) = table_files(tmp_path, 1, prefix="hall")
    out = str(tmp_path / "mq")
    first = write([str(MAP)], out, 1883)
    both = write([str(MAP), file_a], out, 1883)  # a second table joins the broker
    assert {u: both[u] for u in first} == first
    assert write([file_a, str(MAP)], out, 1883) == both
    # A run naming one table only writes a broker for it, and keeps the other's passwords for when it is back.
    assert cli.main(["broker-config", "--table", file_a, "--out", out]) == 0
    said = capsys.readouterr().out
    assert "plingpong" in said and "not on this broker" in said
    with open(pathlib.Path(out) / "passwords") as f:
        assert not any(line.startswith("plingpong.") for line in f)
    assert write([str(MAP), file_a], out, 1883) == both


@pytest.mark.parametrize("problem, message", [
    ("clash", "{0} and {1} are both table hall-0"),
    ("missing", "table map {2}: No such file or directory"),
    ("bad", "{3}: not valid TOML"),
])
def test_tables_that_clash_or_do_not_load_are_one_clear_line(tmp_path, capsys, problem, message):
    (_a, file_a), _ = table_files(tmp_path, 2, prefix="hall")
    twin = tmp_path / "twin.toml"
    twin.write_text(pathlib.Path(file_a).read_text())  # table = "hall-0" as well
    bad = tmp_path / "bad.toml"
    bad.write_text("game = \n")
    missing = tmp_path / "nowhere.toml"
    second = {"clash": twin, "missing": missing, "bad": bad}[problem]
    rc = cli.main(["broker-config", "--table", file_a, "--table", str(second), "--out", str(tmp_path / "mq")])
    _out, err = capsys.readouterr()
    assert rc == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert message.format(file_a, twin, missing, bad) in err
    assert not (tmp_path / "mq").exists()  # nothing written


def test_help_says_how_tables_and_logins_go_together(capsys):
    with pytest.raises(SystemExit):
        cli.main(["broker-config", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "repeat" in text and "<table>.<board>" in text
