"""A visitor becomes a guest with one click on a lobby Play-now button, plays at the table,
then keeps the account under a name of their own: in a real Chromium, against daphne."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from accounts.models import Profile
from games.catalog import ensure_variants
from games.models import Move, Seat, Table
from tests import ui
from tests.live_daphne import DaphneServer
from tests.users import make_user

PASSWORD = "tiles-and-racks-42"


def test_a_visitor_plays_as_a_guest_then_keeps_the_account(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path
) -> None:
    ensure_variants()  # a transactional test before this one flushed them
    server = daphne_live_server
    page = chromium.new_context(viewport=ui.DESKTOP).new_page()
    ui.watch_errors(page)
    page.add_init_script(ui.FRAME_LOG)
    page.add_init_script(
        "document.addEventListener('htmx:wsOpen', () => { window.__okeySocketOpen = true; });"
    )

    # One click in the lobby: a guest account, a table with three bots, the hand dealt.
    page.goto(f"{server.url}/")
    assert page.locator('header [data-action="guest"]').count() == 1
    page.locator('[data-action="practice"][data-variant="duz"]').click()
    page.wait_for_url("**/tables/*/")
    page.wait_for_function("() => window.__okeySocketOpen === true", timeout=15_000)
    page.locator("#rack-area .tile").first.wait_for(timeout=15_000)
    ui.wait_for_first_frame(page)  # it draws the rack again: a tile clicked before is not kept
    guest = get_user_model().objects.get(profile__is_guest=True)
    assert guest.username.startswith("guest-")
    table = Table.objects.get(seats__user=guest)
    assert page.url.endswith(f"/tables/{table.pk}/")
    assert ui.state(page)["seat"] == "0"
    assert page.locator(".who").inner_text().strip() == f"Signed in as {guest.username}"

    # A move through the page, as a person makes it (seat 0 starts: it discards).
    assert ui.simple_turn(page)
    assert Move.objects.filter(hand__match__table=table, user=guest).exists()

    # Keep the account.
    page.locator('[data-action="keep-account"]').click()
    page.wait_for_url("**/accounts/keep/")
    form = page.locator('form[data-form="keep-account"]')
    form.locator('input[name="username"]').fill("elif")
    form.locator('input[name="email"]').fill("elif@example.org")
    form.locator('input[name="password1"]').fill(PASSWORD)
    form.locator('input[name="password2"]').fill(PASSWORD)
    form.locator('button[type="submit"]').click()
    page.wait_for_url("**/players/elif/")
    assert page.locator(".who").inner_text().strip() == "Signed in as elif"
    assert page.locator('[data-action="keep-account"]').count() == 0
    assert page.locator("h1").inner_text().strip() == "elif"
    page.screenshot(path=str(artifacts / "profile-after-keeping.png"), full_page=True)

    # The same user row: renamed, with a password, still holding the seat.
    kept = get_user_model().objects.get(pk=guest.pk)
    assert kept.username == "elif" and kept.check_password(PASSWORD)
    assert not Profile.objects.get(user_id=guest.pk).is_guest
    assert Seat.objects.get(table=table, position=0).user_id == guest.pk
    # Back at the table, still signed in and seated.
    ui.open_table(page, server, table.pk)
    assert ui.state(page)["seat"] == "0"
    assert page.okey_errors == []
    assert not server.errors(), server.output_of_this_test()


@pytest.mark.parametrize("viewport", [ui.DESKTOP, ui.PHONE], ids=["desktop", "phone"])
def test_a_look_alike_name_is_refused_with_a_clear_error_and_another_is_taken(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path, viewport: dict[str, int]
) -> None:
    """Olga signs up as "0lga" (a zero for the O) beside an "olga": the form says the name
    looks too like another's; "olga.k" is hers. On her profile, a display name of Cyrillic
    capitals copying Mehmet's "Memo" is refused the same way; "Olga K" is saved."""
    server = daphne_live_server
    make_user("olga")
    make_user("mehmet", display_name="Memo")
    size = "phone" if viewport == ui.PHONE else "desktop"
    page = chromium.new_context(viewport=viewport).new_page()
    ui.watch_errors(page)

    page.goto(f"{server.url}/accounts/signup/")
    form = page.locator('form[action="/accounts/signup/"]')
    for name in ("0lga", "olga.k"):
        form.locator('input[name="username"]').fill(name)
        form.locator('input[name="password1"]').fill(PASSWORD)
        form.locator('input[name="password2"]').fill(PASSWORD)
        with page.expect_navigation():
            form.locator('button[type="submit"]').click()
        if name == "0lga":
            error = form.locator(".errorlist")
            expect(error).to_contain_text("looks too like, another player's name")
            error.scroll_into_view_if_needed()
            page.screenshot(path=str(artifacts / f"signup-look-alike-{size}.png"))
    assert page.url == f"{server.url}/"
    assert page.locator(".who").inner_text().strip() == "Signed in as olga.k"
    assert not get_user_model().objects.filter(username="0lga").exists()

    page.goto(f"{server.url}/players/olga.k/")
    profile = page.locator('form[data-form="profile"]')
    for name in ("\u041c\u0415\u041c\u041e", "Olga K"):
        profile.locator('input[name="display_name"]').fill(name)
        with page.expect_navigation():
            profile.locator('button[type="submit"]').click()
        if name != "Olga K":
            error = page.locator('form[data-form="profile"] .errorlist')
            expect(error).to_contain_text("looks too like, another player's name")
            error.scroll_into_view_if_needed()
            page.screenshot(path=str(artifacts / f"profile-look-alike-{size}.png"))
    expect(page.locator("h1")).to_have_text("Olga K")
    assert Profile.objects.get(user__username="olga.k").display_name == "Olga K"
    assert page.okey_errors == []
    assert not server.errors(), server.output_of_this_test()
