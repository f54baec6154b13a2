"""Settings come from the environment: both configurations, and the refusal without a key."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

BASE_DIR = Path(__file__).resolve().parent.parent
ENV_KEYS = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DEBUG", "ALLOWED_HOSTS")

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
}))
"""


def load_settings(**env_vars: str) -> subprocess.CompletedProcess[str]:
    """Import the settings in a fresh interpreter with exactly these variables set."""
    env = {key: value for key, value in os.environ.items() if key not in ENV_KEYS}
    env.update(env_vars, DJANGO_SETTINGS_MODULE="okeysite.settings")
    return subprocess.run(
        [sys.executable, "-c", PRINT_SETTINGS],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def loaded(**env_vars: str) -> dict[str, Any]:
    result = load_settings(**env_vars)
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
    assert resolved["layer"]["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    assert resolved["layer"]["CONFIG"]["hosts"] == ["redis://cache.example.test:6379/3"]
    assert resolved["debug"] is False
    assert resolved["secret_key"] == "a-real-secret"
    assert resolved["allowed_hosts"] == ["okey.example.test", "www.okey.example.test"]
    assert resolved["csrf_trusted_origins"] == ["https://okey.example.test"]


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
        assert backend == "channels_redis.core.RedisChannelLayer"
    else:
        assert backend == "channels.layers.InMemoryChannelLayer"
