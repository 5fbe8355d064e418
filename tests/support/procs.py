"""Real processes for tests: a private Mosquitto broker and a socat pty pair.

Each object owns one child process, picks a free loopback port or a private
directory, and cleans up on stop(); safe to use from parallel pytest-xdist workers.
"""

import os
import pathlib
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
MOSQUITTO_PASSWD = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
SOCAT = shutil.which("socat") or "/usr/bin/socat"
VENV_BIN = pathlib.Path(sys.executable).parent
MICROPYTHON = str(VENV_BIN / "micropython") if (VENV_BIN / "micropython").exists() else shutil.which("micropython")


def _ctrl_c_stops_it():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def command(*args):
    """`battlement ARGS` as a child a test reads line by line (stdout, stderr: text pipes) and stops with SIGINT,
    as Ctrl-C stops it. A background job's children inherit SIGINT ignored (`make test &`, nohup): this one
    gets the default back, as a terminal gives it."""
    return subprocess.Popen([sys.executable, "-m", "battlement.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_ctrl_c_stops_it)  # noqa: PLW1509


def free_port():
    """A TCP port on 127.0.0.1 nobody is listening on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(cond, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.01)
    raise RuntimeError("timed out waiting for " + what)


def _stop_proc(proc):
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(3)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(3)


class Broker:
    """A private Mosquitto on 127.0.0.1:<free port> with its own config file.

    .host .port .url; stop()/start() keep the same port so clients can reconnect,
    restart() is stop()+start() (retained messages are not persisted across it).
    """

    def __init__(self, workdir=None, port=None, users=None, nodelay=False, tls=False, conf=None):
        """users: {name: password} to require a login (anonymous clients are then refused).

        conf: run this mosquitto.conf as it is (one `battlement broker-config` wrote, listening on
        127.0.0.1:port) instead of one made here; workdir and port must then be its folder and port.

        nodelay: set_tcp_nodelay, as docs/bridge.md advises for a table's broker; without it
        Mosquitto's Nagle delay holds a small frame ~40 ms whenever an earlier one is unacknowledged.
        tls: the listener speaks TLS only, with a certificate for 127.0.0.1 signed by a CA of its own
        (.ca is that CA's PEM file, for clients to trust); .url is then mqtts://.
        """
        self.dir = pathlib.Path(workdir or tempfile.mkdtemp(prefix="battlement-mqtt-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.host = "127.0.0.1"
        self.port = port or free_port()
        self.url = "%s://%s:%d" % ("mqtts" if tls else "mqtt", self.host, self.port)
        self.ca = None
        self.proc = None
        self.conf = self.dir / "mosquitto.conf"
        self.own = None  # the broker's own folder, if it is not self.dir (see _own_folder)
        self.log = None
        if conf is not None:  # run as it is: it must work as a venue runs it (never `user root`)
            self.conf = pathlib.Path(conf)
            return
        own = self._own_folder()
        tls_conf = ""
        if tls:
            self.ca, cert, key = _certificates(own, self.host)
            tls_conf = "cafile %s\ncertfile %s\nkeyfile %s\n" % (self.ca, cert, key)
        auth = "allow_anonymous true\n"
        if users:
            pw = own / "passwords"
            for i, name in enumerate(sorted(users)):
                create = ["-c"] if i == 0 else []
                subprocess.run([MOSQUITTO_PASSWD, *create, "-b", str(pw), name, users[name]], check=True, capture_output=True)
            auth = "allow_anonymous false\npassword_file %s\n" % pw
        self.log = own / "mosquitto.log"
        self.conf.write_text(
            "listener %d %s\n%s%spersistence false\nlog_dest file %s\nmax_queued_messages 100000\n"
            % (self.port, self.host, tls_conf, auth, self.log)
            + ("set_tcp_nodelay true\n" if nodelay else "")
        )
        _give_to_broker(own)

    def _own_folder(self):
        """Where the files the broker opens after it drops to its own user go (Debian's Mosquitto, started
        as root, runs as `mosquitto`): self.dir, or, as root, a folder of that user's that it can reach
        (a test's tmp_path is inside a folder only root may enter)."""
        if os.geteuid() != 0:
            return self.dir
        self.own = pathlib.Path(tempfile.mkdtemp(prefix="battlement-mqtt-own-"))
        return self.own

    def _accepting(self):
        try:
            with socket.create_connection((self.host, self.port), timeout=0.2):
                return True
        except OSError:
            return False

    def start(self):
        if self.proc is not None and self.proc.poll() is None:
            return self
        with open(self._stderr, "ab") as err:
            self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=err)

        def up():
            if self.proc.poll() is not None:
                log = "".join(p.read_text() for p in (self._stderr, self.log) if p and p.exists())
                raise RuntimeError("mosquitto exited with %s: %s" % (self.proc.returncode, log[-500:]))
            return self._accepting()

        _wait(up, 10, "mosquitto on port %d" % self.port)
        return self

    def stop(self):
        _stop_proc(self.proc)
        self.proc = None

    def kill(self):
        """SIGKILL: the broker dies without a goodbye to anyone (no will, no DISCONNECT)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self.proc = None

    def restart(self):
        self.stop()
        self.start()

    @property
    def _stderr(self):
        """What the broker says on stderr (where a config without log_dest logs), written by us, not it."""
        return (self.own or self.dir) / "mosquitto.stderr"

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
        if self.own is not None:
            shutil.rmtree(self.own, ignore_errors=True)


def _give_to_broker(folder):
    """As root: the folder and what is in it become the `mosquitto` user's (0700), for the broker that drops to
    it; secret from everyone else still."""
    if os.geteuid() != 0:
        return
    user = pwd.getpwnam("mosquitto")
    for p in [folder, *folder.iterdir()]:
        os.chown(p, user.pw_uid, user.pw_gid)
    os.chmod(folder, 0o700)


def settle(client, topic, payloads, timeout=10):
    """Publish a marker with the paho `client` on `topic`, which it subscribes to, and wait until
    payloads(topic) holds it: what the broker had to pass on to that client before it has come. After
    another client's clean stop that holds for what its end made the broker send (a will, a last
    message): its DISCONNECT was in the broker's socket before the marker was sent, and Mosquitto reads
    its sockets in the order data came in."""
    mark = b"marker %d" % time.monotonic_ns()
    client.publish(topic, mark, qos=1)
    _wait(lambda: mark in payloads(topic), timeout, "the marker on " + topic)


def _certificates(d, ip):
    """A CA and a server certificate for ip signed by it (openssl, a few milliseconds each)."""
    ca, ca_key, cert, key, csr = (d / n for n in ("ca.pem", "ca.key", "server.pem", "server.key", "server.csr"))
    run = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True)
    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
        "-subj", "/CN=battlement test CA", "-keyout", str(ca_key), "-out", str(ca))
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=%s" % ip,
        "-keyout", str(key), "-out", str(csr))
    ext = d / "san.ext"
    ext.write_text("subjectAltName=IP:%s\n" % ip)
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial", "-days", "2",
        "-extfile", str(ext), "-out", str(cert))
    return ca, cert, key


class PtyPair:
    """Two linked pty paths (.a and .b) made by socat; bytes written to one are read on the other.

    Either end can be opened by pyserial or by MicroPython's open(path, 'r+b'),
    closed and reopened while the pair lives. unplug() makes both paths vanish
    (readers get an I/O error, like a USB board pulled out); replug() brings them
    back under the same names.
    """

    def __init__(self, workdir=None):
        self.dir = pathlib.Path(workdir or tempfile.mkdtemp(prefix="battlement-pty-"))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.a = str(self.dir / "tty-a")
        self.b = str(self.dir / "tty-b")
        self.proc = None

    def __iter__(self):
        return iter((self.a, self.b))

    def start(self):
        if self.proc is not None and self.proc.poll() is None:
            return self
        for p in (self.a, self.b):
            if os.path.lexists(p):
                os.unlink(p)
        self.proc = subprocess.Popen(
            [SOCAT, "pty,raw,echo=0,link=%s" % self.a, "pty,raw,echo=0,link=%s" % self.b],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait(lambda: os.path.exists(self.a) and os.path.exists(self.b), 10, "socat pty pair")
        return self

    def stop(self):
        _stop_proc(self.proc)
        self.proc = None
        for p in (self.a, self.b):
            if os.path.lexists(p):
                os.unlink(p)

    unplug = stop
    replug = start

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
