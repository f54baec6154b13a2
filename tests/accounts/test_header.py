"""The header of every page ("Signed in as ...", "Keep this account"): its name and guest flag
come from the session (``accounts.context_processors``), kept there at log-in and whenever
the site changes them, so that a page reads no profile for it."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts import context_processors
from accounts.models import Profile
from tests.users import PASSWORD, SignedIn, make_user

from .helpers import form_values, parse

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]

PAGE = reverse("rules_index")  # a page that reads nothing else about players


def header(client: Client) -> tuple[str, bool, list[str]]:
    """The header's name, whether it offers "Keep this account", and the page's queries."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(PAGE)
    page = parse(response.content)
    keep = bool(page.all("a", data_action="keep-account"))
    return page.one(class_="who").text(), keep, [q["sql"] for q in queries]


def reads_profile(queries: list[str]) -> bool:
    return any(Profile._meta.db_table in sql for sql in queries)


def test_the_header_reads_no_profile(signed_in: SignedIn) -> None:
    client = signed_in(make_user("elif", display_name="Elif K"))
    name, keep, queries = header(client)
    assert name == "Signed in as Elif K" and not keep
    assert not reads_profile(queries)


def test_a_log_in_with_the_form_keeps_the_name_too() -> None:
    make_user("mehmet", display_name="Memo")
    client = Client()
    assert client.login(username="mehmet", password=PASSWORD)
    name, _keep, queries = header(client)
    assert name == "Signed in as Memo" and not reads_profile(queries)


def test_a_new_display_name_shows_at_once(signed_in: SignedIn) -> None:
    user = make_user("elif", display_name="Elif")
    client = signed_in(user)
    url = reverse("profile", args=["elif"])
    form = parse(client.get(url).content).one("form", data_form="profile")
    client.post(url, {**form_values(form), "display_name": "Elif Kaya", "language": ""})
    assert Profile.objects.get(user=user).display_name == "Elif Kaya"
    name, _keep, queries = header(client)
    assert name == "Signed in as Elif Kaya" and not reads_profile(queries)


def test_a_guest_sees_keep_this_account_until_they_keep_it() -> None:
    client = Client()
    client.post(reverse("guest"))
    name, keep, _queries = header(client)
    assert name.startswith("Signed in as guest-") and keep
    form = parse(client.get(reverse("keep_account")).content).one("form", data_form="keep-account")
    values: dict[str, Any] = {
        **form_values(form),
        "username": "elif",
        "password1": PASSWORD,
        "password2": PASSWORD,
    }
    client.post(reverse("keep_account"), values)
    name, keep, queries = header(client)
    assert name == "Signed in as elif" and not keep and not reads_profile(queries)


def test_a_session_without_the_name_reads_it_once(signed_in: SignedIn) -> None:
    user = make_user("can", display_name="Can B")
    client = signed_in(user)
    session = client.session
    del session[context_processors.SESSION_KEY]
    session.save()
    name, _keep, queries = header(client)
    assert name == "Signed in as Can B" and reads_profile(queries)
    name, _keep, queries = header(client)
    assert name == "Signed in as Can B" and not reads_profile(queries)


def test_a_name_kept_for_another_user_is_not_shown(signed_in: SignedIn) -> None:
    client = signed_in(make_user("ayse", display_name="Ayşe"))
    other = make_user("zeynep", display_name="Zeynep")
    session = client.session
    context_processors.remember(session, other.pk, "Zeynep", True)
    session.save()
    name, keep, _queries = header(client)
    assert name == "Signed in as Ayşe" and not keep
