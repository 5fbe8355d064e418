"""Getting phones and the TV onto the pages: LAN addresses, a QR code per page, `battlement.local` (mDNS).

With --host 0.0.0.0 (every interface) the addresses printed and shown are this machine's real LAN
addresses, never 0.0.0.0. With the default 127.0.0.1 only this machine can open the pages, so that is
said, and mDNS stays off (nothing leaves the machine). mDNS (python-zeroconf) announces an HTTP service
and the name battlement.local; where multicast is not available the bridge says so and carries on.
"""

from __future__ import annotations

import ipaddress
import logging
import socket

log = logging.getLogger("battlement.onboarding")

MDNS_NAME = "battlement.local."
EVERYWHERE = ("0.0.0.0", "", "::")


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses a phone on the same network can reach (no loopback, no link-local)."""
    import ifaddr

    out = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if not isinstance(ip.ip, str):
                continue  # IPv6: a phone types and scans IPv4 more easily; mDNS carries the name anyway
            a = ipaddress.ip_address(ip.ip)
            if not (a.is_loopback or a.is_link_local or a.is_unspecified) and ip.ip not in out:
                out.append(ip.ip)
    return out


def addresses(host: str) -> list[str]:
    """The addresses to print for the pages served on `host`."""
    if host in EVERYWHERE:
        return lan_addresses() or ["127.0.0.1"]
    return [host]


def loopback_only(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def base_url(address: str, port: int) -> str:
    return "http://%s:%d" % ("[%s]" % address if ":" in address else address, port)


def pages(bridge, base: str) -> list[dict]:
    """Every page of every table with its address: the scoreboard, the host page, each side's page."""
    out = []
    several = len(bridge.sessions) > 1
    for table, s in bridge.sessions.items():
        q = "?table=%s" % table if several else ""
        out.append({"table": table, "page": "scoreboard", "url": "%s/%s" % (base, q)})
        out.append({"table": table, "page": "host", "url": "%s/host?%scode=%s" % (
            base, "table=%s&" % table if several else "", bridge.host_code)})
        for side, code in sorted(s.codes.items()):
            out.append({"table": table, "page": "side " + side, "url": "%s/side/%s?%scode=%s" % (
                base, side, "table=%s&" % table if several else "", code)})
    return out


def qr_svg(url: str) -> str:
    """A QR code of the address as inline SVG (segno: no image library needed)."""
    import segno

    return segno.make(url, error="m").svg_inline(scale=4, border=2, dark="#000", light="#fff")


def terminal_qr(url: str) -> str:
    import io

    import segno

    buf = io.StringIO()
    segno.make(url, error="l").terminal(out=buf, compact=True, border=1)
    return buf.getvalue()


class Mdns:
    """battlement.local over mDNS, for as long as the bridge runs; quiet where multicast cannot work."""

    def __init__(self):
        self.zc = None
        self.info = None
        self.state = "off"

    async def start(self, host: str, port: int, addrs: list[str]) -> str:
        if loopback_only(host):
            self.state = "off (the pages are served on %s only)" % host
            return self.state
        try:
            from zeroconf import IPVersion, ServiceInfo
            from zeroconf.asyncio import AsyncZeroconf

            self.info = ServiceInfo(
                "_http._tcp.local.", "Battlement._http._tcp.local.", port=port,
                addresses=[socket.inet_aton(a) for a in addrs if ":" not in a],
                properties={"path": "/"}, server=MDNS_NAME)
            self.zc = AsyncZeroconf(ip_version=IPVersion.V4Only, interfaces=[a for a in addrs if ":" not in a])
            await self.zc.async_register_service(self.info, allow_name_change=True)
        except Exception as e:  # noqa: BLE001 -- no multicast (containers, some Wi-Fi): the addresses still work
            await self.stop()
            self.state = "not available here (%s: %s); use the addresses above" % (type(e).__name__, e)
            log.warning("mDNS %s", self.state)
            return self.state
        self.state = "http://%s:%d/" % (MDNS_NAME.rstrip("."), port)
        return self.state

    async def stop(self) -> None:
        zc, self.zc = self.zc, None
        if zc is None:
            return
        try:
            if self.info is not None:
                await zc.async_unregister_service(self.info)
            await zc.async_close()
        except Exception as e:  # noqa: BLE001 -- stopping must never fail the bridge's stop
            log.warning("mDNS stop: %s", e)


def routes(bridge):
    """/api/onboarding?code=H: the addresses, each page's address and QR code (host page only: it names codes)."""
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def onboarding(request):
        if request.query_params.get("code") != bridge.host_code:
            return JSONResponse({"error": "the host code is needed"}, status_code=403)
        info = getattr(bridge, "onboarding", None) or {"addresses": [], "port": 0, "mdns": "off"}
        base = base_url(info["addresses"][0], info["port"]) if info["addresses"] else ""
        found = [dict(p, qr=qr_svg(p["url"])) for p in pages(bridge, base)] if base else []
        return JSONResponse({"addresses": info["addresses"], "mdns": info["mdns"], "hint": info.get("hint", ""),
                             "pages": found})

    return [Route("/api/onboarding", onboarding)]
