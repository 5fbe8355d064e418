"""Simulated `socket`: the unix port's real sockets, with a TCP send buffer as small as the board's lwIP.

On a board a TCP socket holds at most TCP_SND_BUF bytes the peer has not acknowledged; past that
a non-blocking write takes less than it was given (or nothing), and the writer must wait for room:

    rp2    MicroPython's extmod/lwip-include/lwipopts_common.h: TCP_MSS 800, TCP_SND_BUF 8 x MSS = 6400
    esp32  ESP-IDF components/lwip/Kconfig: LWIP_TCP_SND_BUF_DEFAULT 5744 (4 x MSS 1436)

The kernel enforces the same limit here (SO_SNDBUF; Linux doubles what it is given and counts its
own bookkeeping in it, so a little less payload fits than on the board: the harder case). A peer
that stops reading (a stalled broker or access point) then blocks the board's writes within a few KB.
"""

import os

import usocket
from usocket import *  # the rest of the module as the port has it

PORT = "esp32" if (os.getenv("BATTLEMENT_BOARD") or "").startswith("esp32") else "rp2"
TCP_SND_BUF = 5744 if PORT == "esp32" else 6400
_SOL_SOCKET = 1  # Linux values (the unix port's module does not name SO_SNDBUF)
_SO_SNDBUF = 7
_real = usocket.socket


def socket(af=usocket.AF_INET, type=usocket.SOCK_STREAM, proto=0):
    s = _real(af, type, proto)
    if type == usocket.SOCK_STREAM:
        s.setsockopt(_SOL_SOCKET, _SO_SNDBUF, TCP_SND_BUF // 2)
    return s
