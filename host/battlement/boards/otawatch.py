"""What the host page hears of an update (`battlement update`, boards/update.py), from the boards themselves.

A board answers every update message on battlement/<table>/<board>/ota, signed with its key. The bridge
listens there beside the updater, so whoever runs the update, the table's page says that a board is
taking new firmware, that it restarts now, and what it runs after; during a game as a warning, since the
board restarts in play (`battlement update --during-game`). Only answers signed with the board's key are
believed: a stranger's is counted ("ota-unsigned") and says nothing. Each step is said once per boot; only a board's latest boot is remembered.
"""

from __future__ import annotations

import hmac
import json

from battlement.boards.update import REPLY, mac
from battlement.link.transport.mqtt.names import ROOT

STEPS = {  # a board's answer -> what the page says of it
    "ready": "%s is receiving new firmware (it runs %s)",
    "staged": "%s has new firmware staged (it runs %s)",
    "swapping": "%s restarts into new firmware %s",
    "confirmed": "%s runs firmware %s after its update",
}


class OtaWatch:
    def __init__(self, keys: dict, sessions: dict, counters: dict[str, int]):
        """keys: table -> its TableKeys; sessions: table -> its Session (the bridge's own dicts: a game switched
        keeps them); counters: the bridge's (on the host page and in /metrics)."""
        self.keys, self.sessions, self.counters = keys, sessions, counters
        self.counters.setdefault("ota-unsigned", 0)
        self._said: dict[tuple, tuple[int, set]] = {}  # (table, board) -> its latest boot, the steps said in it

    def attach(self, transport) -> None:
        """Before the transport starts (the subscription is made again on every connect)."""
        transport.subscribe_extra("%s/+/+/ota" % ROOT, self.answer)

    def answer(self, topic: str, payload: bytes) -> None:
        parts = topic.split("/")
        if len(parts) != 4 or parts[1] not in self.keys or parts[1] not in self.sessions:
            return  # another bridge's table on a shared broker: not ours to tell
        table, board = parts[1], parts[2]
        key = self.keys[table].keys.get(board)
        sig, _, body = payload.partition(b" ")
        try:
            if key is None or not hmac.compare_digest(sig, mac(key, REPLY, table, board, body)):
                raise ValueError("not signed with the board's key")
            d = json.loads(body)
            state, boot = d["state"], d["boot"]
            if type(boot) is not int:
                raise TypeError("boot is not a number")
        except (ValueError, KeyError, TypeError):
            self.counters["ota-unsigned"] += 1
            return
        if state not in STEPS:
            return  # info, got (each chunk), refused, aborted: the updater's business
        latest = self._said.get((table, board))
        if latest is not None and boot < latest[0]:
            return  # a late answer from a boot gone by (boots only rise): said then, or moot now
        if latest is None or boot > latest[0]:
            latest = self._said[(table, board)] = (boot, set())
        said = latest[1]
        if state in said or (state == "staged" and "ready" in said):
            return
        said.add(state)
        version = d.get("to") if state == "swapping" else d.get("version")
        text = STEPS[state] % ("Board " + board, version or "?")
        s = self.sessions[table]
        if state != "confirmed" and not (s.paused or s.match.over):
            s.tell(text + ": a game is under way, and the board restarts during play.", "warning")
        else:
            s.tell(text + ".")
