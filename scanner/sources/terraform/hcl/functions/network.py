"""IP network functions: ``cidrsubnet``, ``cidrhost``, ``cidrnetmask``, ``cidrsubnets``.
"""

from __future__ import annotations

import functools
import ipaddress
from typing import Any

from scanner.sources.terraform.hcl.functions.registry import (
    value_fn,
)
from scanner.sources.terraform.hcl.values import (
    EvalError,
    to_number,
    to_str,
)

# networks
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1024)
def _parse_net(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    return ipaddress.ip_network(text, strict=False)


def _net(prefix: Any) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return _parse_net(to_str(prefix))
    except ValueError as exc:
        raise EvalError(f"invalid CIDR: {exc}") from None


@value_fn("cidrsubnet")
def f_cidrsubnet(prefix: Any, newbits: Any, netnum: Any) -> Any:
    net = _net(prefix)
    nb, num = int(to_number(newbits)), int(to_number(netnum))
    return _subnet(net, nb, num)


@functools.lru_cache(maxsize=4096)
def _subnet(net: ipaddress.IPv4Network | ipaddress.IPv6Network, nb: int, num: int) -> str:
    new_len = net.prefixlen + nb
    if new_len > net.max_prefixlen or num < 0 or num >= 2**nb:
        raise EvalError("cidrsubnet: not enough address space")
    base = int(net.network_address) + (num << (net.max_prefixlen - new_len))
    return str(ipaddress.ip_network((base, new_len)))


@value_fn("cidrsubnets")
def f_cidrsubnets(prefix: Any, *newbits: Any) -> Any:
    net = _net(prefix)
    out: list[str] = []
    cur = int(net.network_address)
    end = int(net.broadcast_address) + 1
    for nb in newbits:
        plen = net.prefixlen + int(to_number(nb))
        if plen > net.max_prefixlen:
            raise EvalError("cidrsubnets: not enough address space")
        size = 1 << (net.max_prefixlen - plen)
        cur = (cur + size - 1) // size * size
        if cur + size > end:
            raise EvalError("cidrsubnets: not enough address space")
        out.append(str(ipaddress.ip_network((cur, plen))))
        cur += size
    return out


@value_fn("cidrhost")
def f_cidrhost(prefix: Any, hostnum: Any) -> Any:
    net = _net(prefix)
    n = int(to_number(hostnum))
    size = net.num_addresses
    if n < 0:
        n += size
    if n < 0 or n >= size:
        raise EvalError("cidrhost: host number out of range")
    return str(net.network_address + n)


@value_fn("cidrnetmask")
def f_cidrnetmask(prefix: Any) -> Any:
    net = _net(prefix)
    if net.version != 4:
        raise EvalError("cidrnetmask: IPv4 only")
    return str(net.netmask)
