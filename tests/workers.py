"""What each pytest-xdist worker keeps to itself when the workers share one Redis.

``make test`` runs the suite in several worker processes (pytest-xdist: ``-n``). Each has its
own test database (pytest-django names it ``test_<name>_gw0``, ``..._gw1``; on SQLite each
worker's file is in its own temporary folder), its own session daphne, pause file and ports.
Redis is the one thing they share with ``REDIS_URL`` and ``CACHE_URL`` set, and there:

- channels_redis's group names are global within a Redis database, and every worker's test
  database numbers its tables from 1: a "table-1" message of one worker would reach another
  worker's sockets. ``layer.flush()`` deletes every key under the layer's prefix.
- ``cache.clear()`` on Django's RedisCache empties the whole Redis database (FLUSHDB), which
  would wipe another worker's log-in and request counts in the middle of its test.

So each worker gives the channel layer a prefix of its own (groups, channels and ``flush``
stay within it) and the cache a ``KEY_PREFIX`` of its own, and empties only its own keys
(``clear_cache`` before each test; ``forget_earlier_runs`` for the layer, once per session).
``isolate`` runs in the test process (tests/conftest.py) and in every server the tests start
(tests/live_asgi.py), which inherit ``PYTEST_XDIST_WORKER`` with the rest of the
environment: a server started by one worker shares the layer with that worker only. Run
serially (``-n 0``, or without xdist), nothing changes: the site's own prefixes.
"""

from __future__ import annotations

import os
from typing import Any

# "gw0", "gw1", ... in a pytest-xdist worker and the processes it starts; "" otherwise.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


def layer_prefix() -> str:
    """The channel layer's key prefix in this worker. It ends in a separator, so that one
    worker's ``flush`` (which deletes ``<prefix>*``) never matches another's keys (gw1, gw10)."""
    return f"asgi-{WORKER}-"


def isolate(settings: Any) -> None:
    """Give this worker's channel layer and cache their own keys on a shared Redis. Call it
    before the first channel layer or cache of the process is made."""
    if not WORKER:
        return
    layer = settings.CHANNEL_LAYERS["default"]
    if layer["BACKEND"] != "channels.layers.InMemoryChannelLayer":
        layer.setdefault("CONFIG", {})["prefix"] = layer_prefix()
    cache = settings.CACHES["default"]
    if cache["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
        cache["KEY_PREFIX"] = WORKER


def forget_earlier_runs(settings: Any) -> None:
    """Delete the channel layer keys an earlier run of this worker left on Redis: a server
    killed mid-test (tests/live/test_faults.py) leaves its sockets in their groups for a day, and
    this run's test database numbers its tables from 1 again. Only this worker's prefix."""
    if not WORKER:
        return
    config = settings.CHANNEL_LAYERS["default"].get("CONFIG", {})
    if config.get("prefix") != layer_prefix():
        return
    import redis

    for host in config.get("hosts", []):
        address = host["address"] if isinstance(host, dict) else host
        client = redis.Redis.from_url(str(address), socket_timeout=10)
        try:
            keys = list(client.scan_iter(match=f"{layer_prefix()}*", count=1000))
            if keys:
                client.delete(*keys)
        finally:
            client.close()


def clear_cache() -> None:
    """Empty this worker's cache: on a shared Redis only the keys under its own prefix (a
    FLUSHDB would empty the other workers' too), elsewhere ``cache.clear()``."""
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    cache = caches["default"]
    if WORKER and isinstance(cache, RedisCache) and cache.key_prefix == WORKER:
        client = cache._cache.get_client(write=True)
        keys = list(client.scan_iter(match=f"{WORKER}:*", count=1000))
        if keys:
            client.delete(*keys)
    else:
        cache.clear()
