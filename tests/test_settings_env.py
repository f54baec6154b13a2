"""Settings come from the environment: both configurations, and the refusal without a key."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

BASE_DIR = Path(__file__).resolve().parent.parent
# Variables the settings read: none of the outer environment's may leak into the checks.
ENV_KEYS = (
    "DATABASE_URL",
    "REDIS_URL",
    "CHANNEL_LAYER_BACKEND",
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "LOG_LEVEL",
    "NEXT_HAND_PAUSE_SECONDS",
    "CLOCK_IN_SERVER",
    "CLOCK_INTERVAL_SECONDS",
    "BOT_DELAY_SECONDS",
    "AWAY_GRACE_SECONDS",
    "SECURE_SSL_REDIRECT",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_PROXY_SSL_HEADER",
    "PROXY_HEADERS",
    "CACHE_URL",
    "EMAIL_URL",
    "DEFAULT_FROM_EMAIL",
    "DB_POOL",
    "DB_POOL_MIN",
    "DB_POOL_MAX",
    "DB_POOL_TIMEOUT",
    "DB_PREPARED_STATEMENTS",
    "DB_LOOP_READS",
    "DB_LOOP_POOL_MAX",
)

PRINT_SETTINGS = """
import json
from django.conf import settings
db = settings.DATABASES["default"]
print(json.dumps({
    "engine": db["ENGINE"],
    "name": str(db["NAME"]),
    "host": db.get("HOST", ""),
    "port": str(db.get("PORT", "")),
    "options": db.get("OPTIONS", {}),
    "conn_max_age": db["CONN_MAX_AGE"],
    "layer": settings.CHANNEL_LAYERS["default"],
    "debug": settings.DEBUG,
    "secret_key": settings.SECRET_KEY,
    "allowed_hosts": settings.ALLOWED_HOSTS,
    "csrf_trusted_origins": settings.CSRF_TRUSTED_ORIGINS,
    "ssl_redirect": settings.SECURE_SSL_REDIRECT,
    "session_cookie_secure": settings.SESSION_COOKIE_SECURE,
    "csrf_cookie_secure": settings.CSRF_COOKIE_SECURE,
    "hsts_seconds": settings.SECURE_HSTS_SECONDS,
    "hsts_include_subdomains": settings.SECURE_HSTS_INCLUDE_SUBDOMAINS,
    "hsts_preload": settings.SECURE_HSTS_PRELOAD,
    "proxy_ssl_header": settings.SECURE_PROXY_SSL_HEADER,
    "proxy_headers": settings.PROXY_HEADERS,
}))
"""

# What the channel layer really hands to redis-py: the pool's and a connection's read timeout
# (a connection object only; nothing connects to Redis).
PRINT_LAYER_TIMEOUTS = """
import json
import django
django.setup()
from channels.layers import get_channel_layer
layer = get_channel_layer()
pool = layer.create_pool(0)
connection = pool.connection_class(**pool.connection_kwargs)
print(json.dumps({
    "brpop_timeout": layer.brpop_timeout,
    "pool_socket_timeout": pool.connection_kwargs.get("socket_timeout", "default"),
    "socket_timeout": connection.socket_timeout,
}))
"""


def load_settings(
    script: str = PRINT_SETTINGS, **env_vars: str
) -> subprocess.CompletedProcess[str]:
    """Import the settings in a fresh interpreter with exactly these variables set."""
    env = {key: value for key, value in os.environ.items() if key not in ENV_KEYS}
    env.update(env_vars, DJANGO_SETTINGS_MODULE="okeysite.settings")
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def loaded(script: str = PRINT_SETTINGS, **env_vars: str) -> dict[str, Any]:
    result = load_settings(script, **env_vars)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_it_defaults_to_sqlite_and_the_in_memory_layer() -> None:
    resolved = loaded(DEBUG="true")

    assert resolved["engine"] == "django.db.backends.sqlite3"
    assert resolved["name"] == str(BASE_DIR / "db.sqlite3")
    assert resolved["options"]["transaction_mode"] == "IMMEDIATE"
    assert resolved["conn_max_age"] == 0
    assert resolved["layer"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"
    assert resolved["debug"] is True
    assert resolved["secret_key"]  # the development key, allowed because DEBUG is on


def test_it_uses_postgresql_and_redis_from_the_environment() -> None:
    resolved = loaded(
        DATABASE_URL="postgres://okey:secret@db.example.test:5433/okey_prod",
        REDIS_URL="redis://cache.example.test:6379/3",
        SECRET_KEY="a-real-secret",
        DEBUG="false",
        ALLOWED_HOSTS="okey.example.test,www.okey.example.test",
        CSRF_TRUSTED_ORIGINS="https://okey.example.test",
    )

    assert resolved["engine"] == "django.db.backends.postgresql"
    assert resolved["host"] == "db.example.test"
    assert resolved["port"] == "5433"
    assert resolved["name"] == "okey_prod"
    assert "transaction_mode" not in resolved["options"]
    assert resolved["conn_max_age"] == 0
    # A pool of connections per process (psycopg_pool), sized from the environment.
    assert resolved["options"]["pool"] == {"min_size": 1, "max_size": 20, "timeout": 10.0}
    assert resolved["layer"]["BACKEND"] == "okeysite.channel_layers.RedisChannelLayer"
    [host] = resolved["layer"]["CONFIG"]["hosts"]
    assert host["address"] == "redis://cache.example.test:6379/3"
    assert resolved["debug"] is False
    assert resolved["secret_key"] == "a-real-secret"
    assert resolved["allowed_hosts"] == ["okey.example.test", "www.okey.example.test"]
    assert resolved["csrf_trusted_origins"] == ["https://okey.example.test"]


@pytest.mark.slow
def test_the_redis_sockets_outlast_the_layers_blocking_receive() -> None:
    """The layer's receive blocks in Redis for up to brpop_timeout seconds; a socket read
    timeout no longer than that kills every quiet WebSocket (channels_redis#422)."""
    resolved = loaded(
        PRINT_LAYER_TIMEOUTS,
        REDIS_URL="redis://cache.example.test:6379/3",
        SECRET_KEY="a-real-secret",
    )

    assert resolved["pool_socket_timeout"] != "default"  # set, not left to redis-py's default
    timeout = resolved["socket_timeout"]
    assert timeout is None or timeout > resolved["brpop_timeout"], resolved


def test_it_is_secure_by_default_when_debug_is_off() -> None:
    resolved = loaded(SECRET_KEY="a-real-secret", DEBUG="false")

    assert resolved["ssl_redirect"] is True
    assert resolved["session_cookie_secure"] is True
    assert resolved["csrf_cookie_secure"] is True
    # HSTS is opt-in (browsers remember it), and no proxy header is trusted unless named.
    assert resolved["hsts_seconds"] == 0
    assert resolved["hsts_include_subdomains"] is False
    assert resolved["hsts_preload"] is False
    assert resolved["proxy_ssl_header"] is None


def test_it_serves_plain_http_in_development() -> None:
    resolved = loaded(DEBUG="true")

    assert resolved["ssl_redirect"] is False
    assert resolved["session_cookie_secure"] is False
    assert resolved["csrf_cookie_secure"] is False


def test_it_reads_the_https_settings_from_the_environment() -> None:
    resolved = loaded(
        SECRET_KEY="a-real-secret",
        SECURE_SSL_REDIRECT="false",
        SESSION_COOKIE_SECURE="false",
        CSRF_COOKIE_SECURE="false",
        SECURE_HSTS_SECONDS="31536000",
        SECURE_HSTS_INCLUDE_SUBDOMAINS="true",
        SECURE_HSTS_PRELOAD="true",
        SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO,https",
    )

    assert resolved["ssl_redirect"] is False
    assert resolved["session_cookie_secure"] is False
    assert resolved["csrf_cookie_secure"] is False
    assert resolved["hsts_seconds"] == 31536000
    assert resolved["hsts_include_subdomains"] is True
    assert resolved["hsts_preload"] is True
    assert resolved["proxy_ssl_header"] == ["HTTP_X_FORWARDED_PROTO", "https"]  # a tuple in JSON


def test_it_refuses_a_proxy_header_without_its_value() -> None:
    result = load_settings(
        SECRET_KEY="a-real-secret", SECURE_PROXY_SSL_HEADER="HTTP_X_FORWARDED_PROTO"
    )

    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SECURE_PROXY_SSL_HEADER" in result.stderr


@pytest.mark.slow
def test_daphne_reads_the_proxys_headers_only_when_told() -> None:
    assert loaded(SECRET_KEY="a-real-secret")["proxy_headers"] is False
    assert loaded(SECRET_KEY="a-real-secret", PROXY_HEADERS="false")["proxy_headers"] is False
    assert loaded(SECRET_KEY="a-real-secret", PROXY_HEADERS="true")["proxy_headers"] is True
    # The Procfile's shell compares with "true" exactly: any other spelling is refused here.
    for value in ("yes", "1", "True", "on"):
        result = load_settings(SECRET_KEY="a-real-secret", PROXY_HEADERS=value)
        assert result.returncode != 0, value
        assert "ImproperlyConfigured" in result.stderr and "PROXY_HEADERS" in result.stderr


def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off() -> None:
    for env_vars in ({"DEBUG": "false"}, {}):
        result = load_settings(**env_vars)

        assert result.returncode != 0
        assert "ImproperlyConfigured" in result.stderr
        assert "SECRET_KEY" in result.stderr


def test_it_runs_the_suite_against_the_configured_database() -> None:
    expected = "postgresql" if os.environ.get("DATABASE_URL", "").startswith("postgres") else None
    if expected:
        assert connection.vendor == expected
    elif not os.environ.get("DATABASE_URL"):
        assert connection.vendor == "sqlite"
    assert settings.DATABASES["default"]["CONN_MAX_AGE"] == 0


def test_it_uses_the_layer_the_environment_asks_for() -> None:
    backend = settings.CHANNEL_LAYERS["default"]["BACKEND"]
    if os.environ.get("REDIS_URL"):
        assert backend == "okeysite.channel_layers.RedisChannelLayer"
    else:
        assert backend == "channels.layers.InMemoryChannelLayer"


def test_the_postgresql_pool_is_sized_or_turned_off_from_the_environment() -> None:
    url = "postgres://okey@db.example.test/okey"
    sized = loaded(DATABASE_URL=url, DEBUG="true", DB_POOL_MAX="8", DB_POOL_MIN="2")
    assert sized["options"]["pool"]["max_size"] == 8
    assert sized["options"]["pool"]["min_size"] == 2
    assert "pool" not in loaded(DATABASE_URL=url, DEBUG="true", DB_POOL="false")["options"]
    # SQLite has no pool.
    assert "pool" not in loaded(DEBUG="true")["options"]


def test_postgresql_prepares_statements_unless_told_not_to() -> None:
    url = "postgres://okey@db.example.test/okey"
    options = loaded(DATABASE_URL=url, DEBUG="true")["options"]
    assert options["server_side_binding"] is True and options["prepare_threshold"] == 5
    off = loaded(DATABASE_URL=url, DEBUG="true", DB_PREPARED_STATEMENTS="false")["options"]
    assert "server_side_binding" not in off and "prepare_threshold" not in off
    # SQLite binds and plans in the process: nothing to set.
    assert "server_side_binding" not in loaded(DEBUG="true")["options"]


# What the event loop's pool would connect with (games.loop_reads; nothing connects).
PRINT_LOOP_READS = """
import json
import django
django.setup()
from django.conf import settings
from games.live import loop_reads
on = loop_reads.enabled()
kwargs = loop_reads._connection_kwargs("default") if on else {}
print(json.dumps({
    "enabled": on,
    "max": settings.DB_LOOP_POOL_MAX,
    "cursor": kwargs.get("cursor_factory").__name__ if kwargs.get("cursor_factory") else None,
    "prepare_threshold": kwargs.get("prepare_threshold"),
    "autocommit": kwargs.get("autocommit"),
    "dbname": kwargs.get("dbname"),
    "application_name": kwargs.get("application_name"),
}))
"""


@pytest.mark.slow
def test_the_loop_reads_connect_as_django_does_unless_turned_off() -> None:
    url = "postgres://okey@db.example.test/okey"
    on = loaded(PRINT_LOOP_READS, DATABASE_URL=url, DEBUG="true", DB_LOOP_POOL_MAX="6")
    assert on["enabled"] and on["max"] == 6
    # Server-side binding (psycopg's own default cursor), prepared the fifth time, autocommit.
    assert on["cursor"] is None and on["prepare_threshold"] == 5 and on["autocommit"]
    assert on["dbname"] == "okey" and on["application_name"] == "okey loop reads"
    # Behind PgBouncer without prepared statements: client-side binding, nothing prepared.
    off = loaded(PRINT_LOOP_READS, DATABASE_URL=url, DEBUG="true", DB_PREPARED_STATEMENTS="false")
    assert off["cursor"] == "AsyncClientCursor" and off["prepare_threshold"] is None
    assert not loaded(PRINT_LOOP_READS, DATABASE_URL=url, DEBUG="true", DB_LOOP_READS="false")[
        "enabled"
    ]
    assert not loaded(PRINT_LOOP_READS, DEBUG="true")["enabled"]  # SQLite


@pytest.mark.slow
def test_the_site_hashes_passwords_with_pbkdf2_while_the_suite_uses_a_fast_hasher() -> None:
    script = (
        "import django, json; django.setup(); from django.conf import settings; "
        "print(json.dumps(settings.PASSWORD_HASHERS))"
    )
    site = loaded(script, DEBUG="true")
    assert site[0] == "django.contrib.auth.hashers.PBKDF2PasswordHasher"
    assert "MD5" not in " ".join(site)
    assert settings.PASSWORD_HASHERS[0] == "django.contrib.auth.hashers.MD5PasswordHasher"


@pytest.mark.parametrize(
    "layer",
    ["okeysite.channel_layers.RedisChannelLayer", "channels_redis.pubsub.RedisPubSubChannelLayer"],
)
@pytest.mark.slow
def test_a_benchmark_may_ask_for_channels_redis_pubsub_layer(layer: str) -> None:
    script = (
        "import django, json; django.setup(); from django.conf import settings; "
        "print(json.dumps(settings.CHANNEL_LAYERS['default']))"
    )
    resolved = loaded(
        script, DEBUG="true", REDIS_URL="redis://r.example.test:6379/2", CHANNEL_LAYER_BACKEND=layer
    )
    assert resolved["BACKEND"] == layer
    assert resolved["CONFIG"]["hosts"][0]["address"] == "redis://r.example.test:6379/2"
    refused = load_settings(
        script, DEBUG="true", CHANNEL_LAYER_BACKEND="channels.layers.InMemoryChannelLayer"
    )
    assert refused.returncode != 0 and "CHANNEL_LAYER_BACKEND" in refused.stderr
