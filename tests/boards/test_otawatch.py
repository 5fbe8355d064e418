"""What the bridge says of boards' update answers over many reboots (boards/otawatch.py)."""

import json
import pathlib
import types

from battlement.boards.otawatch import OtaWatch
from battlement.boards.update import REPLY, mac
from battlement.link.keys import TableKeys

KEY = b"k" * 32


def _answer(state, boot, version="0.2.0"):
    body = json.dumps({"state": state, "boot": boot, "version": version, "to": version}).encode()
    return mac(KEY, REPLY, "hall-1", "ring-2", body) + b" " + body


class _Page:
    """The table's notices, as Session.tell gets them."""

    def __init__(self):
        self.said = []
        self.paused = True
        self.match = types.SimpleNamespace(over=False)

    def tell(self, text, kind="info"):
        self.said.append(text)


def test_each_step_said_once_a_boot_and_the_bridge_keeps_only_the_latest_boot():
    # Defect: what had been said was kept per (table, board, boot) for the bridge's life, a few bytes a reboot
    # that were never let go. Now only each board's latest boot is kept, and an older boot's late answer says
    # nothing (boots only rise), so a reboot cannot make the page repeat itself.
    page = _Page()
    w = OtaWatch({"hall-1": TableKeys("hall-1", pathlib.Path("tables/hall-1.toml"), {"ring-2": KEY})},
                 {"hall-1": page}, {})
    topic = "battlement/hall-1/ring-2/ota"
    for boot in range(1, 201):
        for state in ("ready", "ready", "swapping"):
            w.answer(topic, _answer(state, boot))
        w.answer(topic, _answer("confirmed", boot + 1))
    assert len(page.said) == 200 * 3
    assert page.said[:3] == ["Board ring-2 is receiving new firmware (it runs 0.2.0).",
                             "Board ring-2 restarts into new firmware 0.2.0.",
                             "Board ring-2 runs firmware 0.2.0 after its update."]
    w.answer(topic, _answer("swapping", 7))  # a late answer of a boot long gone
    assert len(page.said) == 600
    assert len(w._said) == 1  # one board, one boot kept
