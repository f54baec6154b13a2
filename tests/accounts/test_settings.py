"""The cache and the mail come from the environment (CACHE_URL, EMAIL_URL,
DEFAULT_FROM_EMAIL), like the rest of the settings."""

from __future__ import annotations

from typing import Any

from tests.test_settings_env import load_settings, loaded

PRINT = """
import json
from django.conf import settings
print(json.dumps({
    "cache": settings.CACHES["default"],
    "email_backend": settings.EMAIL_BACKEND,
    "email_host": settings.EMAIL_HOST,
    "email_port": settings.EMAIL_PORT,
    "email_user": settings.EMAIL_HOST_USER,
    "email_tls": settings.EMAIL_USE_TLS,
    "from": settings.DEFAULT_FROM_EMAIL,
    "middleware": settings.MIDDLEWARE,
}))
"""


def settings_with(**env: str) -> dict[str, Any]:
    return loaded(PRINT, SECRET_KEY="x", **env)


def test_development_defaults_local_cache_and_mail_on_the_console() -> None:
    found = settings_with()
    assert found["cache"]["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"
    assert found["email_backend"] == "django.core.mail.backends.console.EmailBackend"
    assert found["from"] == "okey@localhost"


def test_a_redis_cache_and_smtp_from_the_environment() -> None:
    found = settings_with(
        CACHE_URL="redis://127.0.0.1:6379/3",
        REDIS_URL="redis://127.0.0.1:6379/1",
        EMAIL_URL="smtp+tls://okey:secret@mail.example.org:587",
        DEFAULT_FROM_EMAIL="Okey <okey@example.org>",
    )
    assert found["cache"] == {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:6379/3",
    }
    assert found["email_backend"] == "django.core.mail.backends.smtp.EmailBackend"
    assert (found["email_host"], found["email_port"]) == ("mail.example.org", 587)
    assert found["email_user"] == "okey" and found["email_tls"] is True
    assert found["from"] == "Okey <okey@example.org>"


def test_the_cache_may_not_share_the_channel_layer_s_redis_database() -> None:
    for cache, layer in (
        ("redis://127.0.0.1:6379/1", "redis://127.0.0.1:6379/1"),
        ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379/0"),
    ):
        result = load_settings(PRINT, SECRET_KEY="x", CACHE_URL=cache, REDIS_URL=layer)
        assert result.returncode != 0
        assert "CACHE_URL and REDIS_URL name the same Redis database" in result.stderr
    assert settings_with(CACHE_URL="redis://127.0.0.1:6379/1", REDIS_URL="redis://other:6379/1")


def test_the_user_language_middleware_follows_authentication() -> None:
    middleware = settings_with()["middleware"]
    auth = middleware.index("django.contrib.auth.middleware.AuthenticationMiddleware")
    assert middleware[auth + 1] == "accounts.middleware.UserLanguageMiddleware"
    assert middleware.index("django.middleware.locale.LocaleMiddleware") < auth
