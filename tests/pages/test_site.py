"""The HTTP side: home page, admin, sign-up and log-in, static files, demo data."""

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.test import Client

pytestmark = pytest.mark.django_db


def test_it_serves_the_home_page(client: Client) -> None:
    response = client.get("/")

    assert response.status_code == 200
    html = response.content.decode()
    assert "vendor/htmx/htmx.min.js" in html
    assert "vendor/htmx-ext-ws/ws.min.js" in html
    assert "vendor/sortablejs/Sortable.min.js" in html
    assert 'ws-connect="/ws/lobby/"' in html


def test_it_renders_the_admin_login_page(client: Client) -> None:
    response = client.get("/admin/login/")

    assert response.status_code == 200
    assert 'name="username"' in response.content.decode()


def test_it_lets_the_admin_into_the_admin(client: Client, settings: Any) -> None:
    settings.DEBUG = True  # load_demo makes the demo accounts only in development
    call_command("load_demo")
    assert client.login(username="admin", password="admin")

    response = client.get("/admin/")

    assert response.status_code == 200
    page = response.content.decode()
    for section in ("Tables", "Matches", "Hands", "Seats", "Leagues"):
        assert f">{section}<" in page, section
    tables = client.get("/admin/games/table/").content.decode()
    assert "Demo Okey 51" in tables or "Demo" in tables


@pytest.mark.parametrize("url", ["/accounts/login/", "/accounts/signup/"])
def test_it_renders_the_account_pages(client: Client, url: str) -> None:
    response = client.get(url)

    assert response.status_code == 200
    assert 'name="username"' in response.content.decode()


def test_it_signs_up_and_logs_in_a_new_player(client: Client) -> None:
    response = client.post(
        "/accounts/signup/",
        {"username": "elif", "password1": "tiles-and-racks-42", "password2": "tiles-and-racks-42"},
    )

    assert response.status_code == 302
    assert response["Location"] == "/"
    assert get_user_model().objects.filter(username="elif").exists()
    assert "Signed in as elif" in client.get("/").content.decode()


def test_it_logs_a_demo_player_in_and_out(client: Client, settings: Any) -> None:
    settings.DEBUG = True  # load_demo makes the demo accounts only in development
    call_command("load_demo")

    response = client.post("/accounts/login/", {"username": "ayse", "password": "okey1234"})
    assert response.status_code == 302
    assert "Signed in as ayse" in client.get("/").content.decode()

    client.post("/accounts/logout/")
    assert "Signed in as" not in client.get("/").content.decode()


def test_it_speaks_turkish_when_asked(client: Client) -> None:
    response = client.get("/", headers={"accept-language": "tr"})

    assert response.status_code == 200
    assert '<html lang="tr">' in response.content.decode()


def test_it_finds_the_front_end_libraries_in_node_modules() -> None:
    for path in (
        "vendor/htmx/htmx.min.js",
        "vendor/htmx-ext-ws/ws.min.js",
        "vendor/sortablejs/Sortable.min.js",
        "css/site.css",
        "js/site.js",
    ):
        assert finders.find(path), f"{path} not found: run `npm ci` (make does)"


def test_it_loads_the_demo_accounts_idempotently(settings: Any) -> None:
    settings.DEBUG = True  # load_demo makes the demo accounts only in development
    call_command("load_demo")
    call_command("load_demo")

    users = get_user_model().objects
    assert users.count() == 5
    admin = users.get(username="admin")
    assert admin.is_superuser and admin.is_staff
    assert admin.check_password("admin")
    for name in ("ayse", "mehmet", "can", "deniz"):
        player = users.get(username=name)
        assert player.check_password("okey1234")
        assert not player.is_staff
