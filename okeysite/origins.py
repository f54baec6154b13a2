"""The WebSocket handshake's origin check: the page that opens a socket must be of this very
site, scheme, host and port alike (a socket carries the session cookie, and no CSRF token
protects it). Channels' ``AllowedHostsOriginValidator`` compares the host name alone, so a page
served on another port or over plain HTTP of an allowed host could open a signed-in socket.

An ``Origin`` is accepted when it is the socket's own origin (the ``Host`` it was opened on,
with ``http`` for ``ws`` and ``https`` for ``wss``; behind a TLS proxy the scheme the
``SECURE_PROXY_SSL_HEADER`` says, as Django decides ``request.is_secure()``), or one of
``CSRF_TRUSTED_ORIGINS`` (a front end served from another origin, declared as for forms).
Written here rather than taken from a library: Channels has no such check, and it is a
comparison of three strings."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings


def _headers(scope: dict[str, Any]) -> dict[bytes, bytes]:
    return {k.lower(): v for k, v in scope.get("headers") or []}


def own_origin(scope: dict[str, Any]) -> str | None:
    """``scheme://host[:port]`` of the socket itself, as a browser writes an Origin."""
    headers = _headers(scope)
    host = headers.get(b"host", b"").decode("latin-1").strip().lower()
    if not host:
        return None
    secure = scope.get("scheme") == "wss"
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy:
        name, value = proxy
        header = name.removeprefix("HTTP_").replace("_", "-").lower().encode("latin-1")
        secure = headers.get(header, b"").decode("latin-1").split(",")[0].strip() == value
    scheme = "https" if secure else "http"
    default = ":443" if secure else ":80"
    return f"{scheme}://{host.removesuffix(default)}"


def _normal(origin: str) -> str:
    parts = urlsplit(origin.strip().lower())
    default = ":443" if parts.scheme == "https" else ":80"
    return f"{parts.scheme}://{parts.netloc.removesuffix(default)}"


def allowed(scope: dict[str, Any]) -> bool:
    origin = _headers(scope).get(b"origin", b"").decode("latin-1")
    if not origin:
        return False
    origin = _normal(origin)
    trusted = {_normal(o) for o in settings.CSRF_TRUSTED_ORIGINS}
    return origin == own_origin(scope) or origin in trusted


class SameOriginValidator:
    """ASGI middleware: a socket whose Origin is not the site's own is refused (403) before
    the session is read."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not allowed(scope):
            denier = WebsocketDenier()
            return await denier(scope, receive, send)
        return await self.application(scope, receive, send)
