"""Who the client is, for the failure limiters and the refusal log.

A request whose peer is a trusted proxy (SERVICE_TRUSTED_PROXIES, default
loopback only) is keyed on the first hop of X-Forwarded-For: the proxy is
assumed to overwrite that header with the address it saw, so the first hop is
the proxy's own word, not the client's. Any other request is keyed on its peer
address and its X-Forwarded-For is ignored: a client that reaches the service
directly cannot choose its key, rotate it, or borrow a victim's.
"""
from __future__ import annotations

import hashlib
import ipaddress

UNKNOWN = "unknown"


def client_key(remote_addr: str | None, forwarded_for: str | None, trusted_proxies) -> str:
    try:
        peer = ipaddress.ip_address(remote_addr or "")
    except ValueError:
        return UNKNOWN  # not an IP peer (a Unix socket): one shared key, never the client's word
    if forwarded_for and any(peer in network for network in trusted_proxies):
        first_hop = forwarded_for.split(",", 1)[0].strip()
        try:
            return str(ipaddress.ip_address(first_hop))
        except ValueError:
            pass  # a proxy that overwrites the header writes an address: anything else is not believed
    return str(peer)


def key_hash(key: str) -> str:
    """What the logs carry instead of the address: enough to correlate, not to identify."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]
