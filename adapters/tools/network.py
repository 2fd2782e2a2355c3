"""What web_fetch needs to know about the network: where a host name really points, which
addresses are not the public internet, and what a session has fetched before."""

import asyncio
import ipaddress
import socket
from collections import OrderedDict
from collections.abc import Awaitable, Callable

Resolve = Callable[[str, int], Awaitable[tuple[str, ...]]]  # host, port -> addresses
Classify = Callable[[str], str | None]  # address -> what kind of non-public address, or None

PLANS_KEPT = 256
SESSIONS_KEPT = 1024


async def resolve_host(host: str, port: int) -> tuple[str, ...]:
    """The addresses a connection to `host` could reach, in the resolver's order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return tuple(dict.fromkeys(str(info[4][0]) for info in infos))


def address_kind(address: str) -> str | None:
    """'loopback', 'link-local', 'private' or 'non-public' for an address a fetch must not
    reach unasked; None for a public internet address."""
    ip = ipaddress.ip_address(address.partition("%")[0])  # an IPv6 scope id is not part of it
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_private:
        return "private"
    if not ip.is_global or ip.is_multicast:
        return "non-public"
    return None


class SessionMemory:
    """Per session: the addresses each planned URL was checked at (so the fetch connects to
    exactly those), and the hosts fetched so far. Bounded: old entries are forgotten, which
    only means asking again."""

    def __init__(self) -> None:
        self._plans: OrderedDict[tuple[str, str], tuple[str, ...]] = OrderedDict()
        self._hosts: OrderedDict[str, set[str]] = OrderedDict()

    def plan(self, session: str, url: str, addresses: tuple[str, ...]) -> None:
        self._plans[(session, url)] = addresses
        self._plans.move_to_end((session, url))
        while len(self._plans) > PLANS_KEPT:
            self._plans.popitem(last=False)

    def planned(self, session: str, url: str) -> tuple[str, ...] | None:
        return self._plans.pop((session, url), None)

    def fetched(self, session: str, host: str) -> None:
        self._hosts.setdefault(session, set()).add(host)
        self._hosts.move_to_end(session)
        while len(self._hosts) > SESSIONS_KEPT:
            self._hosts.popitem(last=False)

    def known(self, session: str, host: str) -> bool:
        return host in self._hosts.get(session, ())
