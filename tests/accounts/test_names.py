"""The name policy (accounts/names.py): what a username and a display name may be, wherever one
is set (sign-up, "Keep this account", the profile, the admin) and how a stored name is shown
(display names, the header, a chat line's author). Table names: tests/pages/test_table_names.py.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse

from accounts import names
from accounts.models import NameKey, Profile, display_name
from games import actions, chat
from games.models import ChatMessage
from tests.live_daphne import fail_or_skip
from tests.play import user_table
from tests.threads import at_once
from tests.users import PASSWORD, SignedIn, client_for, make_user

from .helpers import parse

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("variants")]

User = get_user_model()

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "\u202enimda" reads "admin"
SPOOF = RLO + "nimda"
CYRILLIC_AYSE = "\u0430yse"  # Cyrillic а, then Latin "yse"
ALL_CYRILLIC_AYSE = "\u0430\u0443\u0455\u0435"  # а у ѕ е: Cyrillic letters only
CYRILLIC_GUEST = "gu\u0435st-abc"  # Cyrillic е


def set_display_name(user: Any, name: str) -> Any:
    """The owner posts the profile form with ``name``: the response."""
    return client_for(user).post(
        reverse("profile", args=[user.get_username()]), {"display_name": name, "language": ""}
    )


def stored_display_name(user: Any) -> str:
    return Profile.objects.filter(user=user).values_list("display_name", flat=True).first() or ""


def sign_up(username: str, address: str = "10.0.0.1") -> Any:
    return Client(REMOTE_ADDR=address).post(
        reverse("signup"), {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    )


def keep_as(username: str) -> tuple[Any, Any]:
    """A new guest asks to keep their account as ``username``: the response and the guest."""
    client = Client()
    client.post(reverse("guest"))
    guest = User.objects.get(profile__is_guest=True)
    response = client.post(
        reverse("keep_account"),
        {"username": username, "password1": PASSWORD, "password2": PASSWORD},
    )
    return response, guest


def errors(response: Any, field: str) -> str:
    assert response.status_code == 200, response.status_code
    return " ".join(response.context["form"].errors.get(field, []))


# ----------------------------------------------------------------------------- cleaning
def test_a_display_name_loses_direction_overrides_and_invisible_characters() -> None:
    user = make_user("elif")
    response = set_display_name(user, SPOOF)
    assert response.status_code == 302
    assert stored_display_name(user) == "nimda"
    # Zero-width and format characters, control characters and runs of spaces go too.
    set_display_name(user, "\u200bEl\u00adif\u2066 \t  K\u2069\ufeff\x07")
    assert stored_display_name(user) == "Elif K"


@pytest.mark.parametrize(
    "name",
    ["\u2800", "\u2800\u2800 \u2800", "\u0301\u0301", "a\u0301"[1:] * 3],
    ids=["braille-blank", "braille-blanks", "combining-marks", "combining-alone"],
)
def test_a_display_name_without_a_letter_or_digit_is_refused(name: str) -> None:
    """A blank braille pattern or combining marks alone show nothing one could read."""
    user = make_user("elif", display_name="Elif")
    response = set_display_name(user, name)
    assert "visible" in errors(response, "display_name")
    assert stored_display_name(user) == "Elif"


def test_a_display_name_with_nothing_visible_left_is_refused() -> None:
    user = make_user("elif", display_name="Elif")
    response = set_display_name(user, RLO + "\u200b\u2066\u3164")
    assert "visible" in errors(response, "display_name")
    assert stored_display_name(user) == "Elif"


def test_a_stored_display_name_is_shown_clean(signed_in: SignedIn) -> None:
    # A row written before the policy (or behind every form) still reads clean.
    spoofer = make_user("mallory", display_name=SPOOF)
    assert display_name(spoofer) == "nimda"
    blank = make_user("can", display_name=RLO + "\u200b")
    assert display_name(blank) == "can"
    page = parse(signed_in(spoofer).get("/").content)
    assert page.one("a", class_="who").text() == "Signed in as nimda"
    profile = parse(Client().get(reverse("profile", args=["mallory"])).content)
    assert profile.one("h1").text() == "nimda"


def test_the_chat_author_of_a_spoofed_display_name_is_shown_clean() -> None:
    table, users = user_table("duz")
    Profile.objects.update_or_create(user=users[0], defaults={"display_name": SPOOF})
    said = actions.send_chat(table.pk, users[0], text="hello")
    assert said.author == "nimda"
    # A line kept from before, under the spoofed name, is shown clean too.
    old = ChatMessage.objects.create(table=table, user=users[0], author=SPOOF, text="hi")
    assert chat.line(old)["author"] == "nimda"


# ----------------------------------------------------------------------------- display names
@pytest.mark.parametrize(
    "name", ["Ayşe", "Çağrı", "Işıl", "İpek", "ÇAĞRI ŞÜKRÜ Öz", "Иван", "Ελένη"]
)
def test_turkish_and_single_script_display_names_are_accepted(name: str) -> None:
    make_user("ayse")  # ş is a letter of its own, not a look-alike of s
    user = make_user("elif")
    response = set_display_name(user, name)
    assert response.status_code == 302, response.context["form"].errors
    assert stored_display_name(user) == name


@pytest.mark.parametrize("name", ["ayse", "AYSE", " Ayse ", ALL_CYRILLIC_AYSE, "Memo", "MEMO"])
def test_a_display_name_may_not_be_another_players_name(name: str) -> None:
    make_user("ayse")
    make_user("mehmet", display_name="Memo")
    user = make_user("elif", display_name="Elif")
    response = set_display_name(user, name)
    assert "another player" in errors(response, "display_name")
    assert stored_display_name(user) == "Elif"


def test_a_player_may_show_their_own_username() -> None:
    # The form offers the username when there is no display name: saving it is fine, even
    # for a guest's generated name or an old account whose name is reserved today.
    for username in ("ayse", "guest-abc123", "admin"):
        user = make_user(username)
        response = set_display_name(user, username.upper())
        assert response.status_code == 302, response.context["form"].errors
        assert stored_display_name(user) == username.upper()


def test_a_display_name_kept_as_it_is_is_not_judged_again(signed_in: SignedIn) -> None:
    # Two players shared a name before the policy: either may still change their language.
    make_user("ayse", display_name="Ayşe")
    user = make_user("elif", display_name="Ayşe")
    response = signed_in(user).post(
        reverse("profile", args=["elif"]), {"display_name": "Ayşe", "language": "tr"}
    )
    assert response.status_code == 302, response.context["form"].errors
    assert Profile.objects.get(user=user).language == "tr"
    # A new name is judged (the page speaks Turkish now: the error's code is compared).
    refused = set_display_name(user, "AYşE")
    assert refused.context["form"].has_error("display_name", "taken")


@pytest.mark.parametrize(
    "name",
    [
        "admin",
        "Admin",
        "ADMİN",
        "Site Admin",
        "yönetici",
        "Moderatör",
        "okey",
        "Bot (strong)",
        "guest-abc123",
        CYRILLIC_GUEST,
        "\u0430dmin",  # Cyrillic а
        # Latin look-alikes, a dotless ı, and the bots' own names with a number or small
        # capitals: these passed before.
        "\u0251dmin",  # LATIN SMALL LETTER ALPHA
        "\u1d00dmin",  # LATIN LETTER SMALL CAPITAL A
        "Adm\u0131n",  # dotless ı
        "Bot3 (strong)",
        "\u0299\u1d0f\u1d1b 3 (strong)",  # small capitals B, O, T
        "\uff41\uff44\uff4d\uff49\uff4e",  # full-width
    ],
)
def test_reserved_display_names_are_refused(name: str) -> None:
    user = make_user("elif", display_name="Elif")
    response = set_display_name(user, name)
    assert errors(response, "display_name")
    assert stored_display_name(user) == "Elif"


@pytest.mark.parametrize("name", [CYRILLIC_AYSE, "Pav\u0435l", "p\u0430ypal"])
def test_mixed_script_look_alikes_are_refused_as_display_names(name: str) -> None:
    user = make_user("elif", display_name="Elif")
    response = set_display_name(user, name)
    assert "mixes" in errors(response, "display_name")
    assert stored_display_name(user) == "Elif"


@pytest.mark.parametrize("name", ["Okey Sevdalısı", "Botan", "Rootkit Ali", "Elif 2"])
def test_names_that_merely_contain_a_reserved_word_are_accepted(name: str) -> None:
    user = make_user("elif")
    response = set_display_name(user, name)
    assert response.status_code == 302, response.context["form"].errors
    assert stored_display_name(user) == name


# ----------------------------------------------------------------------------- usernames
@pytest.mark.parametrize(
    ("username", "error"),
    [
        (CYRILLIC_AYSE, "Enter a valid username"),
        ("Ayşe", "Enter a valid username"),
        (CYRILLIC_GUEST, "Enter a valid username"),
        ("guest-abc", "kept for guests"),
        ("admin", "reserved"),
        ("Administrator", "reserved"),
        ("okey", "reserved"),
        ("support_team", "reserved"),
        ("0lga", "too like"),  # 0 looks like O
        ("AYSE", "already exists"),
        ("memo", "another player"),
    ],
)
def test_sign_up_refuses_look_alike_and_reserved_usernames(username: str, error: str) -> None:
    make_user("ayse")
    make_user("olga")
    make_user("mehmet", display_name="Memo")
    response = sign_up(username)
    assert error in errors(response, "username")
    assert User.objects.count() == 3


# Cyrillic capitals only (М Е М О): a copy of the display name "Memo" in another script.
CYRILLIC_MEMO = "\u041c\u0415\u041c\u041e"


def test_a_display_name_may_not_copy_another_display_name_in_another_script() -> None:
    make_user("mehmet", display_name="Memo")
    user = make_user("elif", display_name="Elif")
    response = set_display_name(user, CYRILLIC_MEMO)
    assert response.context["form"].has_error("display_name", "taken")
    assert stored_display_name(user) == "Elif"


def test_a_username_may_not_look_like_another_players_display_name() -> None:
    make_user("mehmet", display_name="Memo")
    response = sign_up("mem0")  # a digit zero for the O
    assert "too like" in errors(response, "username")
    assert not User.objects.filter(username="mem0").exists()


def test_a_name_given_up_or_an_account_deleted_frees_its_look_alikes() -> None:
    mehmet = make_user("mehmet", display_name="Memo")
    user = make_user("elif", display_name="Elif")
    assert set_display_name(mehmet, "Mehmet").status_code == 302
    assert set_display_name(user, CYRILLIC_MEMO).status_code == 302
    assert stored_display_name(user) == CYRILLIC_MEMO
    mehmet.delete()
    assert sign_up("mehmet").status_code == 302


def test_whether_a_name_looks_taken_is_one_indexed_lookup_however_many_players(
    django_assert_num_queries: Any,
) -> None:
    for n in range(60):
        make_user(f"player{n}", display_name=f"Oyuncu {n}")
    with django_assert_num_queries(1):
        assert names.looks_taken("0yuncu 7")  # a zero for the O
    with django_assert_num_queries(1):
        assert not names.looks_taken("Oyuncu 70")


@pytest.mark.django_db(transaction=True)
def test_look_alike_sign_ups_at_the_same_moment_let_one_in_on_postgresql(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two people sign up as "olga" and "0lga" at once, each in its own thread and database
    connection: both pass the checks before either is saved (a barrier holds them there), and
    the unique key lets exactly one of them in; the other is told the name is taken."""
    if connection.vendor != "postgresql":
        fail_or_skip(
            "POSTGRESQL TEST: two sign-ups at once need two writers (SQLite has one). "
            "Run with e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/okey."
        )
    barrier = threading.Barrier(2)
    checked = names.looks_taken

    def looks_taken_then_wait(name: str, user: Any = None) -> bool:
        taken = checked(name, user)
        barrier.wait(timeout=30)  # both checked: neither name saved yet
        return taken

    monkeypatch.setattr(names, "looks_taken", looks_taken_then_wait)
    olga, zero = at_once([lambda: sign_up("olga", "10.0.0.1"), lambda: sign_up("0lga", "10.0.0.2")])
    answers = {"olga": olga, "0lga": zero}
    codes = sorted(getattr(answer, "status_code", answer) for answer in answers.values())
    assert codes == [200, 302], answers
    refused = next(name for name in answers if answers[name].status_code == 200)
    assert answers[refused].context["form"].has_error("username", "taken")
    assert list(User.objects.values_list("username", flat=True)) == [
        next(name for name in answers if name != refused)
    ]
    assert NameKey.objects.filter(key="olga").count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_each_players_keys_and_a_shared_one_to_the_oldest_account() -> None:
    before, latest = ("accounts", "0003_play_options"), ("accounts", "0004_name_keys")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    old = executor.loader.project_state([before]).apps
    OldUser, OldProfile = old.get_model("auth", "User"), old.get_model("accounts", "Profile")
    olga = OldUser.objects.create(username="olga")
    zero = OldUser.objects.create(username="0lga")  # a look-alike from before the rule
    OldProfile.objects.create(user_id=zero.pk, display_name="Sıfır")
    MigrationExecutor(connection).migrate([latest])
    assert dict(NameKey.objects.values_list("key", "user_id")) == {
        "olga": olga.pk,
        "sıfır": zero.pk,
    }


def test_the_sign_up_form_says_which_letters_a_username_may_have() -> None:
    page = Client().get(reverse("signup")).content.decode()
    assert "letters a–z without accents" in page


@pytest.mark.parametrize(
    ("username", "error"),
    [
        (CYRILLIC_AYSE, "Enter a valid username"),
        (CYRILLIC_GUEST, "Enter a valid username"),
        ("admin", "reserved"),
        ("0lga", "too like"),
    ],
)
def test_keeping_an_account_refuses_look_alike_and_reserved_usernames(
    username: str, error: str
) -> None:
    make_user("olga")
    response, guest = keep_as(username)
    assert error in errors(response, "username")
    guest.refresh_from_db()
    assert guest.username.startswith("guest-") and Profile.objects.get(user=guest).is_guest


def test_plain_usernames_are_still_accepted() -> None:
    make_user("ayse")
    names = ("elif", "ayse.k", "can_1987", "deniz@home", "mehmet+okey", "sysadmin")
    for n, username in enumerate(names):  # from several addresses: sign-ups are limited
        assert sign_up(username, f"10.0.0.{n}").status_code == 302, username
    response, guest = keep_as("isil")
    assert response.status_code == 302
    guest.refresh_from_db()
    assert guest.username == "isil"


# ----------------------------------------------------------------------------- the admin
def test_the_admin_cleans_display_names_and_keeps_usernames_ascii(signed_in: SignedIn) -> None:
    staff = signed_in(make_user("boss", superuser=True))
    user = make_user("elif", display_name="Elif")
    profile = Profile.objects.get(user=user)
    response = staff.post(
        f"/admin/accounts/profile/{profile.pk}/change/",
        {"user": user.pk, "display_name": SPOOF, "language": "", "is_guest": ""},
    )
    assert response.status_code == 302
    assert stored_display_name(user) == "nimda"

    response = staff.post(
        "/admin/auth/user/add/",
        {
            "username": CYRILLIC_AYSE,
            "usable_password": "true",
            "password1": PASSWORD,
            "password2": PASSWORD,
            "profile-TOTAL_FORMS": "0",
            "profile-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 200
    assert "Enter a valid username" in " ".join(
        response.context["adminform"].form.errors["username"]
    )
    assert not User.objects.filter(username=CYRILLIC_AYSE).exists()
