"""The address the limits count: the peer's, as daphne reports it (REMOTE_ADDR), never a header
the client sends; behind a proxy (PROXY_HEADERS=true) daphne takes it from the proxy's
X-Forwarded-For, because `manage.py serve` and the Procfile then pass --proxy-headers."""

from __future__ import annotations

import http.cookiejar
import os
import re
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.test import Client, RequestFactory
from django.urls import reverse

from accounts.limits import client_address
from tests.live_daphne import serve_command_lines, serving
from tests.users import PASSWORD, make_user

BASE_DIR = Path(__file__).resolve().parent.parent.parent
TOO_MANY = "Too many failed log-ins. Try again in 15 minutes."


def test_the_address_is_the_peers_never_a_header_the_client_sends() -> None:
    factory = RequestFactory()
    forged = factory.get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert client_address(forged) == "10.0.0.1"
    # One IPv6 host holds a /64: it counts as one address.
    assert client_address(factory.get("/", REMOTE_ADDR="2001:db8:1:2:aaaa::1")) == "2001:db8:1:2::"
    assert client_address(factory.get("/", REMOTE_ADDR="not an address")) is None
    assert client_address(factory.get("/", REMOTE_ADDR="")) is None


@pytest.mark.django_db
def test_a_forged_forwarded_for_header_does_not_escape_the_limits(settings: Any) -> None:
    make_user("elif")
    for n in range(5):
        Client().post(
            reverse("login"),
            {"username": "elif", "password": "wrong"},
            REMOTE_ADDR="10.0.0.1",
            HTTP_X_FORWARDED_FOR=f"203.0.113.{n}",
        )
    refused = Client().post(
        reverse("login"),
        {"username": "elif", "password": PASSWORD},
        REMOTE_ADDR="10.0.0.1",
        HTTP_X_FORWARDED_FOR="203.0.113.99",
    )
    assert TOO_MANY in refused.content.decode()


# ----------------------------------------------------------------------------- starting daphne
def test_serve_passes_proxy_headers_only_when_behind_a_proxy(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.PROXY_HEADERS = False
    for command in serve_command_lines(monkeypatch, "--processes", "2"):
        assert "--proxy-headers" not in command
    settings.PROXY_HEADERS = True
    commands = serve_command_lines(monkeypatch, "--processes", "2")
    assert len(commands) == 2
    for command in commands:
        # An option, before the application.
        assert command.index("--proxy-headers") < command.index("okeysite.asgi:application")


def procfile_daphne_arguments(**env: str) -> list[str]:
    """The arguments the Procfile's web line gives daphne, as its shell expands them."""
    web = next(
        line for line in (BASE_DIR / "Procfile").read_text().splitlines() if line.startswith("web:")
    )
    daphne = web.split("&&", 1)[1].strip()
    assert daphne.startswith("python -m daphne "), web
    echo = "printf '%s\\n' " + daphne.removeprefix("python -m daphne ")
    clean = {k: v for k, v in os.environ.items() if k not in ("PROXY_HEADERS", "PORT")}
    run = subprocess.run(
        ["sh", "-c", echo], env={**clean, **env}, capture_output=True, text=True, check=True
    )
    return run.stdout.split()


def test_the_procfile_passes_proxy_headers_only_when_behind_a_proxy() -> None:
    assert "--proxy-headers" not in procfile_daphne_arguments()
    assert "--proxy-headers" not in procfile_daphne_arguments(PROXY_HEADERS="false")
    behind = procfile_daphne_arguments(PROXY_HEADERS="true", PORT="5000")
    assert behind[-1] == "okeysite.asgi:application"
    assert "--proxy-headers" in behind and behind[behind.index("-p") + 1] == "5000"


# ----------------------------------------------------------------------------- a real daphne
def fail_a_log_in(url: str, forwarded_for: str) -> None:
    """A failed log-in through ``url`` (an HTTP server), its request carrying X-Forwarded-For."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(f"{url}/accounts/login/", timeout=10) as page:
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode())
    assert token
    body = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": token.group(1), "username": "elif", "password": "wrong"}
    ).encode()
    request = urllib.request.Request(
        f"{url}/accounts/login/", data=body, headers={"X-Forwarded-For": forwarded_for}
    )
    with opener.open(request, timeout=10) as answer:
        assert answer.status == 200
        assert "Please enter a correct username and password" in answer.read().decode()


def test_daphne_without_proxy_headers_ignores_x_forwarded_for(daphne_live_server: Any) -> None:
    make_user("elif")
    fail_a_log_in(daphne_live_server.url, "203.0.113.7")

    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == ["127.0.0.1"]


@pytest.fixture
def served_behind_a_proxy(transactional_db: None, tmp_path: Path) -> Iterator[str]:
    """One daphne process started by `manage.py serve` with PROXY_HEADERS=true, on the test
    database: its address."""
    with serving(tmp_path / "serve.log", PROXY_HEADERS="true") as (_command, port):
        yield f"http://127.0.0.1:{port}"


def test_daphne_behind_a_proxy_counts_the_forwarded_address(served_behind_a_proxy: str) -> None:
    make_user("elif")
    fail_a_log_in(served_behind_a_proxy, "203.0.113.7")

    assert list(AccessAttempt.objects.values_list("ip_address", flat=True)) == ["203.0.113.7"]
