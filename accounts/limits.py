"""Counting attempts in Django's cache (``settings.CACHES``): a small fixed-window limiter,
and the log-in limits.

The window starts with the first counted attempt (``cache.add`` sets the counter to 0 with
the window as its lifetime only when it is missing; ``cache.incr`` keeps that lifetime), so
both steps are atomic in Redis and in the local-memory cache alike, and several server
processes share the count when the cache is shared (``CACHE_URL``).
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache


class Limiter:
    """At most ``limit`` hits per ``window`` seconds for each identity (an account name, an
    address)."""

    def __init__(self, name: str, limit: int, window: int) -> None:
        self.name = name
        self.limit = limit
        self.window = window

    def key(self, identity: str) -> str:
        # Hashed: any text makes a short, safe cache key.
        digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()
        return f"limit:{self.name}:{digest}"

    def count(self, identity: str) -> int:
        return int(cache.get(self.key(identity), 0))

    def exceeded(self, identity: str) -> bool:
        """The identity has used up its hits for this window."""
        return self.count(identity) >= self.limit

    def hit(self, identity: str) -> int:
        """Count one hit; returns the count in this window."""
        key = self.key(identity)
        cache.add(key, 0, timeout=self.window)
        try:
            return int(cache.incr(key))
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout=self.window)
            return 1

    def reset(self, identity: str) -> None:
        cache.delete(self.key(identity))


WINDOW = 15 * 60
# Failed log-ins: per account name, and per client address (REMOTE_ADDR).
LOGIN_PER_ACCOUNT = Limiter("login-account", 5, WINDOW)
LOGIN_PER_ADDRESS = Limiter("login-address", 20, WINDOW)


def account_key(username: str) -> str:
    """One counter for every spelling of a name (case and surrounding spaces)."""
    return username.strip().casefold()


def login_blocked(username: str, address: str) -> bool:
    return LOGIN_PER_ACCOUNT.exceeded(account_key(username)) or (
        bool(address) and LOGIN_PER_ADDRESS.exceeded(address)
    )


def login_failed(username: str, address: str) -> None:
    LOGIN_PER_ACCOUNT.hit(account_key(username))
    if address:
        LOGIN_PER_ADDRESS.hit(address)


def login_succeeded(username: str) -> None:
    LOGIN_PER_ACCOUNT.reset(account_key(username))
