"""A board updated over the air is said on its table's page, whoever runs `battlement update`: the bridge hears
the board's own signed answers on .../ota (boards/otawatch.py). During a game it is a warning, since the board
restarts in play; a stranger's answer, or one signed with another key, says nothing and is counted."""

import json

from battlement.boards.update import REPLY, mac
from battlement.link import keys as boardkeys
from battlement.table import maps as tables
from ops.test_metrics import samples, scrape, scrape_until, value
from support.bridgeproc import Ws
from web.test_health import publish, table_file


def answer(key, table, board, boot, state, **kw):
    """An answer as firmware/ota.py's reply() makes it: the MAC, a space, the JSON."""
    body = json.dumps({"board": board, "boot": boot, "state": state, "version": "0.1.0-old", "platform": "esp32",
                       "set": ".", "trial": False, "failed": "", "outbox": 0, **kw}).encode()
    return mac(key, REPLY, table, board, body) + b" " + body


def notices(ws, pred, timeout=20):
    return ws.state(lambda s: pred([(n["kind"], n["text"]) for n in s.get("notices", [])]), timeout)["notices"]


def test_an_update_during_play_is_a_warning_on_the_host_page_and_forgeries_say_nothing(bridge_process, mosquitto,
                                                                                     tmp_path):
    tid = "ota-%d" % mosquitto.port
    tmap = table_file(tmp_path, tid)
    keys = tmp_path / "keys"
    path = boardkeys.path_of(tid, keys)
    for board in tables.load(tmap).boards:
        boardkeys.provision(path, board)
    key = boardkeys.of_table(tid, tmap, str(keys)).keys["ring-2"]
    b = bridge_process("--simulate", "--table", tmap, "--mqtt", mosquitto.url, "--keys-dir", str(keys))
    ws = Ws(b.url, role="host", code=b.host_code)
    topic = "battlement/%s/ring-2/ota" % tid

    # forged: no MAC, another board's key, a MAC over other words: nothing is said, each is counted
    publish(mosquitto, topic, b"- " + answer(key, tid, "ring-2", 7, "ready").partition(b" ")[2])
    publish(mosquitto, topic, answer(bytes(16), tid, "ring-2", 7, "swapping", to="9.9.9-evil"))
    publish(mosquitto, topic, answer(key, tid, "ring-3", 7, "swapping", to="9.9.9-evil"))
    publish(mosquitto, topic, answer(key, tid, "ring-2", 7, "info"))  # genuine, but no step of an update
    publish(mosquitto, "battlement/%s-other/ring-2/ota" % tid, answer(key, tid + "-other", "ring-2", 7, "ready"))
    m = scrape_until(b, lambda m: value(m, "battlement_bridge_total", what="ota-unsigned") >= 3)
    assert value(m, "battlement_bridge_total", what="ota-unsigned") == 3

    # genuine, a game under way: a warning, said once however often the board answers
    for _ in range(2):
        publish(mosquitto, topic, answer(key, tid, "ring-2", 7, "ready", need=[0, 1]))
    publish(mosquitto, topic, answer(key, tid, "ring-2", 7, "swapping", to="0.2.0-new"))
    got = notices(ws, lambda ns: any("restarts into" in t for _, t in ns))
    ours = [(n["kind"], n["text"]) for n in got if "Board ring-2" in n["text"]]
    during = ": a game is under way, and the board restarts during play."
    assert ours == [("warning", "Board ring-2 is receiving new firmware (it runs 0.1.0-old)" + during),
                    ("warning", "Board ring-2 restarts into new firmware 0.2.0-new" + during)], got
    assert not any("evil" in n["text"] for n in got)

    # paused on the host page: said, but not as a warning; the new boot's confirmation is news too
    assert ws.act(action="pause", paused=True)["ok"]
    publish(mosquitto, topic, answer(key, tid, "ring-2", 8, "confirmed", version="0.2.0-new"))
    publish(mosquitto, topic, answer(key, tid, "ring-2", 8, "ready"))
    got = notices(ws, lambda ns: any("receiving" in t and kind == "info" for kind, t in ns))
    assert ("info", "Board ring-2 runs firmware 0.2.0-new after its update.") in [(n["kind"], n["text"]) for n in got]
    ws.close()
    assert value(samples(scrape(b)), "battlement_bridge_total", what="ota-unsigned") == 3
