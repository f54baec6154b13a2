"""A signed-in player's language wins everywhere (pages and sockets); visitors get their
cookie, then their browser's Accept-Language."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client
from django.urls import reverse

from accounts.language import SESSION_KEY
from accounts.models import Profile
from games.live import table_socket
from games.live.lobby_socket import LobbyConsumer
from games.live.table_socket import language_of
from tests.sockets import cookie_for, cookie_of, lobby_sockets
from tests.users import PASSWORD, SignedIn, make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]

ENGLISH_BROWSER = {"accept-language": "en"}


def lang_of(response: Any) -> str:
    html = response.content.decode()
    start = html.index("<html lang=") + len('<html lang="')
    return html[start : html.index('"', start)]


def log_in(client: Client, username: str) -> None:
    response = client.post(
        reverse("login"), {"username": username, "password": PASSWORD}, headers=ENGLISH_BROWSER
    )
    assert response.status_code == 302


# ----------------------------------------------------------------------------- pages
def test_a_first_visit_speaks_the_browser_s_language() -> None:
    response = Client().get("/", headers={"accept-language": "tr,en;q=0.5"})
    assert lang_of(response) == "tr" and response["Content-Language"] == "tr"
    response = Client().get("/", headers={"accept-language": "de"})
    assert lang_of(response) == "en"


def test_a_visitor_s_cookie_beats_the_browser() -> None:
    client = Client()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "tr"
    assert lang_of(client.get("/", headers=ENGLISH_BROWSER)) == "tr"


def test_the_profile_language_wins_after_log_in() -> None:
    make_user("elif", language="tr")
    client = Client()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    log_in(client, "elif")
    assert client.session[SESSION_KEY] == "tr"

    for url in ("/", "/rules/", "/players/elif/"):
        response = client.get(url, headers=ENGLISH_BROWSER)
        assert lang_of(response) == "tr", url
        assert response["Content-Language"] == "tr"

    client.post(reverse("logout"))
    assert lang_of(client.get("/", headers=ENGLISH_BROWSER)) == "en"


def test_without_a_profile_language_the_browser_decides() -> None:
    make_user("elif", language="")
    make_user("can")  # no profile at all
    for name in ("elif", "can"):
        client = Client()
        log_in(client, name)
        assert SESSION_KEY not in client.session
        assert lang_of(client.get("/", headers={"accept-language": "tr"})) == "tr"
        assert lang_of(client.get("/", headers=ENGLISH_BROWSER)) == "en"


def test_the_language_switch_saves_a_player_s_choice(signed_in: SignedIn) -> None:
    user = make_user("elif")
    client = signed_in(user)

    response = client.post(reverse("set_language"), {"language": "tr", "next": "/rules/"})

    assert response.status_code == 302 and response["Location"] == "/rules/"
    assert Profile.objects.get(user=user).language == "tr"
    assert client.session[SESSION_KEY] == "tr"
    client.cookies.pop(settings.LANGUAGE_COOKIE_NAME)  # another browser, same session
    assert lang_of(client.get("/", headers=ENGLISH_BROWSER)) == "tr"
    # And back; a language the site does not have changes nothing.
    client.post(reverse("set_language"), {"language": "en"})
    client.post(reverse("set_language"), {"language": "xx"})
    assert Profile.objects.get(user=user).language == "en"
    assert lang_of(client.get("/", headers={"accept-language": "tr"})) == "en"


def test_the_language_switch_of_a_visitor_sets_the_cookie_only() -> None:
    client = Client()
    response = client.post(reverse("set_language"), {"language": "tr", "next": "/"})
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "tr"
    assert not Profile.objects.exists() and SESSION_KEY not in client.session
    assert lang_of(client.get("/", headers=ENGLISH_BROWSER)) == "tr"


def test_the_header_switch_posts_to_our_view() -> None:
    html = Client().get("/").content.decode()
    assert f'action="{reverse("set_language")}"' in html
    assert reverse("set_language") == "/i18n/setlang/"


def test_following_the_browser_again_from_the_profile() -> None:
    user = make_user("elif", display_name="Elif", language="tr")
    client = Client()
    log_in(client, "elif")
    client.post("/players/elif/", {"display_name": "Elif", "language": ""})
    assert Profile.objects.get(user=user).language == ""
    assert SESSION_KEY not in client.session
    assert lang_of(client.get("/", headers=ENGLISH_BROWSER)) == "en"


# ----------------------------------------------------------------------------- sockets
def scope(session: Any = None, cookie: str = "", accept: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {
        "cookies": {settings.LANGUAGE_COOKIE_NAME: cookie} if cookie else {},
        "headers": [(b"accept-language", accept.encode())] if accept else [],
    }
    if session is not None:
        found["session"] = session
    return found


def test_a_socket_speaks_the_session_s_language_first() -> None:
    session = SessionStore()
    session[SESSION_KEY] = "tr"
    session.save()
    stored = SessionStore(session.session_key)
    assert language_of(scope(stored, cookie="en", accept="en")) == "tr"
    assert lobby_language(scope(stored, cookie="en", accept="en")) == "tr"


def test_a_socket_without_a_session_language_uses_cookie_then_browser() -> None:
    empty = SessionStore()
    assert language_of(scope(empty, cookie="tr", accept="en")) == "tr"
    assert language_of(scope(empty, accept="tr-TR,en;q=0.5")) == "tr"
    assert language_of(scope(accept="en")) == "en"  # no session in the scope at all
    assert language_of(scope()) == settings.LANGUAGE_CODE
    odd = SessionStore()
    odd[SESSION_KEY] = "xx"
    assert language_of(scope(odd, accept="tr")) == "tr"


def lobby_language(found: dict[str, Any]) -> str:
    consumer = LobbyConsumer()
    consumer.scope = found
    return consumer._language()


@pytest.fixture
def turkish_and_plain_cookies(transactional_db: None) -> tuple[str, str]:
    """The cookies of a player whose profile speaks Turkish (signed in through the form, as
    the language is taken from the profile at log-in), and of one without a language."""
    make_user("elif", language="tr")
    other = make_user("can")
    client = Client()
    log_in(client, "elif")
    return cookie_of(client), cookie_for(other)


@pytest.mark.django_db(transaction=True)
async def test_the_lobby_socket_of_a_player_uses_their_language(
    monkeypatch: pytest.MonkeyPatch, turkish_and_plain_cookies: tuple[str, str]
) -> None:
    """Through the real stack (AuthMiddlewareStack loads the session before the consumer)."""
    seen: list[str] = []

    def recording(found: dict[str, Any]) -> str:
        code = language_of(found)
        seen.append(code)
        return code

    monkeypatch.setattr(table_socket, "language_of", recording)
    turkish, plain = turkish_and_plain_cookies
    async with lobby_sockets(turkish + "; django_language=en", plain):
        pass
    assert seen == ["tr", "en"]
