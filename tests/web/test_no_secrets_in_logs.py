"""No page code in any log: a whole game played through a real `battlement run` with simulated boards, its
pages opened with their codes over plain HTTP and websockets (junk sent, connections dropped without a
close), leaves no code in anything the bridge wrote: its terminal output and battlement.log beside the
journal. The one line allowed is the host page's address printed once at start-up, for the host to open.
A page that sends junk and drops its connection leaves no "exception was never retrieved" behind."""

import pathlib
import random
import socket
import struct
import urllib.request

from support.bridgeproc import Ws


def written(b) -> dict[str, str]:
    """Every line the bridge wrote: its terminal output (stdout and stderr) and its log files."""
    out = {"terminal": (b.tmp / ("bridge-%d.log" % b.port)).read_text()}
    for f in sorted(pathlib.Path(b.journal).parent.glob("battlement.log*")):
        out[f.name] = f.read_text()
    return out


def junk_then_drop(b, n=3, **query):
    """A page's websocket that sends n junk frames and then loses its connection (a phone leaving the Wi-Fi):
    a TCP reset, no close frame."""
    from urllib.parse import urlencode

    from websockets.client import ClientProtocol
    from websockets.protocol import State
    from websockets.uri import parse_uri

    proto = ClientProtocol(parse_uri("ws://127.0.0.1:%d/ws?%s" % (b.port, urlencode(query))))
    sock = socket.create_connection(("127.0.0.1", b.port), timeout=10)
    proto.send_request(proto.connect())
    sock.sendall(b"".join(proto.data_to_send()))
    while proto.state is State.CONNECTING:
        data = sock.recv(65536)
        assert data, "the bridge closed the handshake"
        proto.receive_data(data)
    assert proto.state is State.OPEN, proto.handshake_exc
    for _ in range(n):
        proto.send_text(b"{not json")
    sock.sendall(b"".join(proto.data_to_send()))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close() resets
    sock.close()


def open_pages(b, codes):
    """Each page and the health API over plain HTTP, opened with its code, as a browser or a script would."""
    paths = ["/host?code=" + b.host_code, "/api/health?code=" + b.host_code]
    paths += ["/side/%s?code=%s" % (side, code) for side, code in codes.items()]
    for path in paths:
        with urllib.request.urlopen(b.url + path, timeout=10) as r:
            assert r.status == 200, path
    bearer = urllib.request.Request(b.url + "/api/health", headers={"Authorization": "Bearer " + b.host_code})
    with urllib.request.urlopen(bearer, timeout=10) as r:
        assert r.status == 200


def play_to_the_end(b, rnd, limit=400):
    """Seeded legal play as the pages send it: each side's decisions from its own page, the host's from the
    host page, sensors pressed on the host page (through the simulated boards), each input awaited before
    the next, until the rules call a winner. Returns every code the host page was shown."""
    host = Ws(b.url, role="host", code=b.host_code)
    st = host.state()
    codes = set()
    for _ in range(limit):
        codes.update(st["codes"].values())
        if st["view"]["over"]:
            host.close()
            return codes
        pages = [Ws(b.url, role="side", side=side, code=code) for side, code in sorted(st["codes"].items())]
        options = [(host, "sense", i) for i in st["sensed"]] + [(host, "input", i) for i in st["decisions"]]
        for page in pages:
            options += [(page, "input", i) for i in page.state()["decisions"]]
        balls = [o for o in options if o[2]["t"] == "ball"]
        who, action, inp = rnd.choice(balls) if balls and rnd.random() < 0.9 else rnd.choice(options)
        n, bad = st["counters"]["inputs"], st["counters"]["illegal"]
        assert who.act(action=action, input=inp)["ok"], inp
        # applied (a ball first waits out the fire-at-will tie window on the bridge)
        st = host.state(lambda m, n=n, bad=bad: m["counters"]["inputs"] > n or m["counters"]["illegal"] > bad)
        assert st["counters"]["illegal"] == bad, inp
        for page in pages:
            page.close()
    raise AssertionError("no winner after %d inputs" % limit)


def test_a_whole_game_leaves_no_page_code_in_the_terminal_or_the_log(bridge_process):
    b = bridge_process("--simulate", "--game", "medieval-pong", "--log-level", "debug")
    host = Ws(b.url, role="host", code=b.host_code)
    first = host.state()["codes"]
    open_pages(b, first)
    codes = {b.host_code} | play_to_the_end(b, random.Random(3))
    # a page sending junk, then gone without a word
    assert not host.act(action="nothing-like-this")["ok"]
    host.conn.send("{junk")
    assert not host.act_reply()["ok"]
    host.close()
    junk_then_drop(b, role="host", code=b.host_code)
    for side, code in first.items():
        junk_then_drop(b, role="side", side=side, code=code)
    open_pages(b, first)  # after them, pages still open: the bridge went on
    b.stop()  # its last lines too (shutting down)
    logs = written(b)
    assert "battlement.log" in logs
    found = [(name, line) for name, text in logs.items() for line in text.splitlines()
             if any(c in line for c in codes)]
    printed = [f for f in found if f[0] == "terminal" and f[1].startswith("  host page:")]
    assert len(printed) == 1 and found == printed, found
    assert '"WebSocket /ws?role=side&side=red&code=***" [accepted]' in logs["battlement.log"]  # masked, not left out


def test_a_page_that_sends_junk_and_drops_its_connection_leaves_no_unretrieved_error(bridge_process):
    b = bridge_process("--simulate", "--game", "medieval-pong")
    host = Ws(b.url, role="host", code=b.host_code)
    codes = host.state()["codes"]
    host.close()
    for _ in range(30):  # the page's update may be under way as the connection goes: not every drop hits it
        junk_then_drop(b, role="host", code=b.host_code)
        junk_then_drop(b, role="side", side="red", code=codes["red"])
    ws = Ws(b.url, role="side", side="red", code=codes["red"])  # the marker: a page opened after them works
    ws.state()
    ws.conn.send("{junk")
    assert "not JSON" in ws.act_reply()["message"]
    ws.close()
    b.stop()  # every connection's end is logged by now
    out = written(b)["terminal"]
    assert "never retrieved" not in out and "WebSocketDisconnect" not in out and "Traceback" not in out, out[-3000:]
