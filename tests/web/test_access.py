"""Access control as the field does it, over real HTTP and websockets against a real `battlement run`:
long random codes, wrong ones rate-limited per client, Origin checked, security headers everywhere,
junk on any websocket answered in words with the socket left open."""

import http.client
import json
import re
import socket
import subprocess
import time

import pytest
from battlement.bridge import Bridge
from battlement.table.maps import for_game
from support.bridgeproc import BATTLEMENT, ROOT, Ws
from support.procs import free_port
from websockets.sync.client import connect


def get(b, path, source="127.0.0.1", headers=None):
    c = http.client.HTTPConnection("127.0.0.1", b.port, timeout=10, source_address=(source, 0))
    c.request("GET", path, headers=headers or {})
    r = c.getresponse()
    body = r.read().decode()
    c.close()
    return r.status, r.headers, body  # headers: case-insensitive, as HTTP has them


@pytest.fixture
def pong(bridge_process):
    return bridge_process("--simulate", "--game", "medieval-pong")


def test_codes_are_long_random_tokens(pong, tmp_path):
    codes = Ws(pong.url, role="host", code=pong.host_code).state()["codes"]
    assert sorted(codes) == ["blue", "red"]
    for c in codes.values():
        assert re.fullmatch(r"[A-Za-z0-9_-]{12,}", c), c  # secrets.token_urlsafe: >= 72 bits
    b = Bridge([for_game("ringo")], str(tmp_path / "j.sqlite"), simulate=True)  # no --host-code: one is made
    assert re.fullmatch(r"[A-Za-z0-9_-]{16,}", b.host_code)  # 96 bits
    b.journal.close()


def test_a_short_host_code_is_refused_in_one_line(tmp_path):
    r = subprocess.run([BATTLEMENT, "run", "--simulate", "--host-code", "a", "--journal", str(tmp_path / "j.sqlite"),
                        "--port", str(free_port())], check=False, capture_output=True, text=True, cwd=str(ROOT), timeout=30)
    assert r.returncode == 2
    assert r.stderr == ("battlement run: error: --host-code must be at least 12 characters (got 1); leave it out "
                        "for a random one\n")


def test_every_response_carries_the_security_headers(pong):
    side = Ws(pong.url, role="host", code=pong.host_code).state()["codes"]["red"]
    for path in ("/", "/host?code=" + pong.host_code, "/side/red?code=" + side, "/api/state", "/api/history",
                 "/static/page.js", "/host?code=wrong-code-xx", "/side/red", "/nowhere"):
        _, h, _ = get(pong, path)
        assert h.get("X-Frame-Options") == "DENY", path
        assert h.get("Referrer-Policy") == "no-referrer", path
        assert h.get("X-Content-Type-Options") == "nosniff", path
        policy = h.get("Content-Security-Policy", "")
        assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy, path
        assert "'unsafe-inline'" not in policy, path
    _, h, body = get(pong, "/host?code=" + pong.host_code)
    nonce = re.search(r"'nonce-([^']+)'", h["Content-Security-Policy"]).group(1)
    assert '<script nonce="%s">' % nonce in body  # the page's own inline script, and only it, may run


def test_whatever_is_opened_with_a_code_is_kept_in_no_cache(pong):
    codes = Ws(pong.url, role="host", code=pong.host_code).state()["codes"]
    for path in ("/host?code=" + pong.host_code, "/side/red?code=" + codes["red"], "/side/blue?code=" + codes["blue"],
                 "/api/health?code=" + pong.host_code, "/host?code=wrong-code-xx", "/side/red?code=wrong-code-yy"):
        status, h, _ = get(pong, path)
        assert h.get("Cache-Control") == "no-store", (path, status)
    _, h, _ = get(pong, "/api/health", headers={"Authorization": "Bearer " + pong.host_code})
    assert h.get("Cache-Control") == "no-store"
    for query in ("role=host&code=" + pong.host_code, "role=side&side=red&code=" + codes["red"]):
        with connect("ws://127.0.0.1:%d/ws?%s" % (pong.port, query), open_timeout=10) as c:
            assert c.response.headers.get("Cache-Control") == "no-store", query
            assert json.loads(c.recv(timeout=10))["type"] == "state"


def test_wrong_codes_are_rate_limited_per_client_and_the_right_code_still_works(pong):
    statuses = [get(pong, "/host?code=guess-%04d-xxxx" % i)[0] for i in range(25)]
    assert statuses[:10] == [403] * 10  # a typo or ten is answered as such...
    assert set(statuses[10:]) == {429}  # ...then this client must wait
    status, h, body = get(pong, "/host?code=" + pong.host_code)
    assert status == 429 and int(h["Retry-After"]) >= 1 and "too many wrong codes" in body  # even the right one
    for path in ("/side/red?code=guess-xxxxxxxx", "/api/health?code=guess"):
        assert get(pong, path)[0] == 429
    # another client (another address) is not slowed at all, on pages, the API and websockets
    assert get(pong, "/host?code=" + pong.host_code, source="127.0.0.2")[0] == 200
    assert get(pong, "/api/health", source="127.0.0.2",
               headers={"Authorization": "Bearer " + pong.host_code})[0] == 200
    sock = socket.create_connection(("127.0.0.1", pong.port), source_address=("127.0.0.2", 0))
    with connect("ws://127.0.0.1:%d/ws?role=host&code=%s" % (pong.port, pong.host_code), sock=sock) as c:
        assert json.loads(c.recv(timeout=10))["type"] == "state"
    # and the first client, after the pause it was told (Retry-After), gets in with the right code
    time.sleep(int(h["Retry-After"]))  # the time the limit is about: it must pass
    assert get(pong, "/host?code=" + pong.host_code)[0] == 200
    counters = json.loads(get(pong, "/api/health?code=" + pong.host_code)[2])["web"]
    assert counters["wrong-code"] >= 10 and counters["rate-limited"] >= 15


def test_a_websocket_from_another_sites_page_is_refused(pong):
    url = "ws://127.0.0.1:%d/ws?role=public" % pong.port
    with pytest.raises(Exception, match="403"):
        connect(url, origin="http://evil.example", open_timeout=10)
    with connect(url, origin="http://127.0.0.1:%d" % pong.port, open_timeout=10) as c:  # the page's own
        assert json.loads(c.recv(timeout=10))["type"] == "state"
    health = json.loads(get(pong, "/api/health?code=" + pong.host_code)[2])
    assert health["web"]["ws-foreign-origin"] == 1
    assert any("http://evil.example" in n for n in health["notes"])


JUNK = ["[1, 2]", "42", "null", '"undo"', "true", "{not json", "", "\u00e9\u00e8" * 10, "x" * 1_000_000,
        '{"action": "input", "input": [1]}', '{"action": "new", "options": [1]}', '{"action": 5}',
        '{"action": "sense", "input": null}']


@pytest.mark.parametrize("role", ["public", "host", "side"])
def test_junk_on_any_websocket_gets_an_error_reply_and_the_socket_stays_open(pong, role):
    query = {"role": role}
    if role == "host":
        query["code"] = pong.host_code
    if role == "side":
        query.update(side="red", code=Ws(pong.url, role="host", code=pong.host_code).state()["codes"]["red"])
    ws = Ws(pong.url, **query)
    ws.state()
    for junk in JUNK:
        ws.conn.send(junk)
        reply = ws.act_reply()
        assert reply["ok"] is False and reply["message"], junk[:40]
    ws.conn.send(b"\x00\x01binary")
    assert "text frames" in ws.act_reply()["message"]
    if role == "host":  # still the host's socket: a real action works
        assert ws.act(action="pause", paused=True)["ok"]
        assert ws.state(lambda m: m["paused"])["paused"]
    else:  # still its socket: answered as that page
        assert "only" in ws.act(action="undo")["message"]
    log = pong.output()
    assert "Traceback" not in log and "AttributeError" not in log
