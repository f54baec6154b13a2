"""People's paths through the site, walked in Chromium as people walk them: click what a
person clicks, never reload unless the step says so, one browser context per person, against
a real daphne (the sockets really connect; the server's clock plays the bots).

Each journey ends with a turn played through the page: the proof that the page is the seat's
(a move refused as "not your seat" would leave the version where it was)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from games import actions
from games.catalog import ensure_variants
from games.models import Seat, Table
from tests import ui
from tests.live_daphne import DaphneServer, in_thread
from tests.users import make_user

VIEWPORTS = {"desktop": ui.DESKTOP, "phone": ui.PHONE}


def demo_table(variant: str = "classic") -> Table:
    """A table as the demo loader keeps one: three easy bots and a free seat, starting by
    itself once someone sits down."""

    def make() -> Table:
        ensure_variants()
        table = actions.create_table(
            variant=variant, created_by=None, name=f"Demo {variant}", auto_start=True
        )
        for position in range(1, table.players):
            actions.add_bot(table, position, "greedy", by=actions.SYSTEM)
        return table

    return in_thread(make)  # type: ignore[no-any-return]


def play_one_turn(page: Any, *others: Any, timeout: float = 30.0) -> None:
    """Wait for the viewer's turn and play it to its discard (draw, discard) through the
    page; the ``others`` (the other people's pages) play their turns meanwhile. A hand that
    ends before the viewer's turn (a bot can finish in its first turns) is followed by the
    next: everyone presses "Ready for the next hand", as people would."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        phase = ui.state(page)["phase"]
        if ui.simple_turn(page) and phase == "discard":
            return
        for other in others:
            ui.simple_turn(other)
        for person in (page, *others):
            ready = person.locator('#table-live [data-action="ready"]:enabled')
            if ui.state(person)["phase"] == "over" and ready.count():
                ready.first.click()
        page.wait_for_timeout(50)
    raise AssertionError(f"no turn of the viewer's came: {ui.state(page)}, {ui.frames(page)}")


def in_view(page: Any, selector: str) -> bool:
    """The element is inside the window as it stands (no scrolling needed to read it)."""
    return bool(
        page.evaluate(
            """s => { const r = document.querySelector(s).getBoundingClientRect();
                 return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight; }""",
            selector,
        )
    )


def my_turn_seen_and_heard(page: Any, shot: Path) -> None:
    """On the viewer's turn: a tab in the background says so in its title; a hint (discard
    with no tile selected) shows where the player looks, inside the window."""
    page.wait_for_function(
        "() => { const d = document.querySelector('#table-live').dataset;"
        " return d.turn === d.seat && d.seat !== ''; }",
        timeout=30_000,
    )
    title = page.title()
    page.evaluate(
        """() => { Object.defineProperty(document, 'hidden', {value: true, configurable: true});
             document.dispatchEvent(new Event('visibilitychange')); }"""
    )
    assert "Your turn" in page.title() and title in page.title()
    page.evaluate(
        """() => { Object.defineProperty(document, 'hidden', {value: false, configurable: true});
             document.dispatchEvent(new Event('visibilitychange')); }"""
    )
    assert page.title() == title
    if ui.state(page)["phase"] == "draw":
        ui.click_action(page, "draw")
        page.wait_for_function(
            "() => document.querySelector('#table-live').dataset.phase === 'discard'"
        )
    ui.click_action(page, "discard")  # nothing selected
    assert ui.error_text(page)
    assert in_view(page, "#move-error"), page.evaluate("window.scrollY")
    page.screenshot(path=str(shot))
    ui.select(page, [next(i for i, t in enumerate(ui.rack_layout(page)) if t)])
    before = ui.version(page)
    ui.click_action(page, "discard")
    ui.wait_version(page, before + 1)


def wait_watching(page: Any, count: int) -> None:
    page.wait_for_function(
        "n => (document.querySelector('#watchers').dataset.watching || '0') === String(n)",
        arg=count,
        timeout=15_000,
    )


def wait_seated(page: Any, position: int) -> None:
    """The page is the seat's: ``data-seat`` says so, its rack is on screen and the seat
    shows its player as here (the socket is the seat's, not a spectator's)."""
    page.wait_for_function(
        "p => document.querySelector('#table-live').dataset.seat === String(p)",
        arg=position,
        timeout=15_000,
    )
    page.locator(f'.player.is-me[data-seat="{position}"] .badge.here').wait_for(timeout=15_000)


def sit_here(page: Any) -> None:
    # The seat controls are loaded again with each frame, the first one included: click the
    # ones that are wired and staying.
    ui.wait_for_first_frame(page)
    ui.settled(page)
    page.locator('[data-action="sit"]').first.click()


@pytest.mark.parametrize("size", ["desktop", "phone"])
def test_a_person_sits_at_a_demo_table_from_its_page_and_plays_at_once(
    daphne_live_server: DaphneServer, chromium: Any, size: str, artifacts: Path
) -> None:
    table = demo_table()
    player = in_thread(make_user, f"sitter-{size}")
    page = ui.signed_in_page(chromium, daphne_live_server, player, VIEWPORTS[size])
    ui.open_table(page, daphne_live_server, table.pk)
    assert ui.state(page)["seat"] == ""
    sit_here(page)
    wait_seated(page, 0)
    page.locator("#rack-area .tile").first.wait_for(timeout=15_000)
    wait_watching(page, 0)
    page.screenshot(path=str(artifacts / f"journey-sat-down-{size}.png"))
    my_turn_seen_and_heard(page, artifacts / f"journey-hint-{size}.png")
    play_one_turn(page)
    assert ui.error_text(page) == ""
    assert Seat.objects.get(table=table, position=0).away is False
    assert page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


def test_a_friend_follows_an_invite_link_sits_and_plays(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    host, friend = in_thread(make_user, "host"), in_thread(make_user, "friend")

    def make() -> Table:
        ensure_variants()
        table = actions.open_table(
            variant="classic", user=host, is_private=True, auto_start=True, name="Friends"
        )
        for position in (2, 3):
            actions.add_bot(table, position, "greedy", by=host)
        return table

    table = in_thread(make)
    host_page = ui.signed_in_page(chromium, daphne_live_server, host)
    host_page.context.grant_permissions(
        ["clipboard-read", "clipboard-write"], origin=daphne_live_server.url
    )
    ui.open_table(host_page, daphne_live_server, table.pk)
    # The first frame redraws the seat controls: the host taps Copy on the ones it leaves.
    ui.wait_for_first_frame(host_page)
    ui.settled(host_page)
    # The host copies the invite link with one tap; the friend opens what was copied.
    copy = host_page.locator("#seat-controls [data-copy-invite]")
    copy.click()
    host_page.wait_for_function(
        "() => document.querySelector('#seat-controls [data-copy-invite]').textContent === 'Copied'"
    )
    link = host_page.evaluate("() => navigator.clipboard.readText()")
    assert link == f"{daphne_live_server.url}/tables/{table.pk}/?invite={table.invite_token}"
    share = host_page.locator("#seat-controls [data-share-invite]")
    assert share.is_hidden() == (
        not host_page.evaluate("() => typeof navigator.share === 'function'")
    )
    # Someone without the link is told the table is private.
    outsider = ui.signed_in_page(chromium, daphne_live_server, in_thread(make_user, "outsider"))
    outsider.goto(f"{daphne_live_server.url}/tables/{table.pk}/")
    assert outsider.locator("h1").inner_text() == "This table is private"
    outsider.context.close()
    friend_page = ui.signed_in_page(chromium, daphne_live_server, friend)
    friend_page.add_init_script(
        "document.addEventListener('htmx:wsOpen', () => { window.__okeySocketOpen = true; });"
    )
    friend_page.goto(link)
    ui.wait_for_socket(friend_page)
    sit_here(friend_page)
    wait_seated(friend_page, 1)
    # Both play; each sees the other's moves without a reload.
    play_one_turn(host_page, friend_page)
    seen = ui.version(host_page)
    ui.wait_version(friend_page, seen)
    play_one_turn(friend_page, host_page)
    ui.wait_version(host_page, ui.version(friend_page))
    for page in (host_page, friend_page):
        assert ui.error_text(page) == ""
        assert page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


def test_a_spectator_takes_a_free_seat_plays_and_standing_up_makes_them_a_spectator_again(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    host, guest = in_thread(make_user, "host2"), in_thread(make_user, "watcher")

    def make() -> Table:
        ensure_variants()
        table = actions.open_table(variant="classic", user=host, name="Open to all")
        actions.add_bot(table, 2, "greedy", by=host)
        actions.add_bot(table, 3, "greedy", by=host)
        return table

    table = in_thread(make)
    host_page = ui.signed_in_page(chromium, daphne_live_server, host)
    ui.open_table(host_page, daphne_live_server, table.pk)
    page = ui.signed_in_page(chromium, daphne_live_server, guest)
    ui.open_table(page, daphne_live_server, table.pk)
    wait_watching(host_page, 1)

    sit_here(page)
    wait_seated(page, 1)
    # Counted as a player now, not as one watching; the host sees them here.
    host_page.locator('.player[data-seat="1"] .badge.here').wait_for(timeout=15_000)
    wait_watching(host_page, 0)
    page.locator('[data-action="stand"]').click()
    page.wait_for_function(
        "() => document.querySelector('#table-live').dataset.seat === ''", timeout=15_000
    )
    wait_watching(host_page, 1)

    sit_here(page)
    wait_seated(page, 1)
    host_page.locator('.player[data-seat="1"] .badge.here').wait_for(timeout=15_000)
    ui.settled(host_page)
    host_page.locator('[data-action="start"]').click()
    page.locator("#rack-area .tile").first.wait_for(timeout=15_000)
    play_one_turn(page, host_page)
    assert ui.error_text(page) == ""
    assert page.okey_errors == [] and host_page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


def two_people_and_two_bots(
    first: Any, second: Any, *, timer: int | None = None
) -> tuple[Table, Any]:
    """A running classic match: ``first`` at seat 0, ``second`` at seat 1, easy bots on 2
    and 3 (``timer``: the move timer in seconds, set past the form's choices for speed)."""

    def make() -> tuple[Table, Any]:
        ensure_variants()
        table = actions.open_table(variant="classic", user=first, name="Two and two")
        actions.sit(table, second, 1)
        for position in (2, 3):
            actions.add_bot(table, position, "greedy", by=first)
        if timer is not None:
            Table.objects.filter(pk=table.pk).update(move_timer=timer)
        match = actions.start_match(table.pk, by=first)
        return Table.objects.get(pk=table.pk), match

    return in_thread(make)  # type: ignore[no-any-return]


def test_a_player_leaves_during_a_match_a_bot_takes_the_seat_and_play_now_works_again(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    leaver, stayer = in_thread(make_user, "leaver"), in_thread(make_user, "stayer")
    table, match = two_people_and_two_bots(leaver, stayer)
    pages = [ui.signed_in_page(chromium, daphne_live_server, u) for u in (leaver, stayer)]
    for page in pages:
        ui.open_table(page, daphne_live_server, table.pk)
    wait_seated(pages[0], 0)
    play_one_turn(pages[0], pages[1])

    # Off to the lobby mid-match, Play now is refused with the way back to the table, which
    # the link in the refusal takes.
    pages[0].locator(".site-header .brand").click()
    pages[0].locator('[data-action="play-now"][data-variant="classic"]').click()
    refusal = pages[0].locator(".messages", has_text="You already have a seat")
    refusal.locator('[data-action="return-to-table"]').click()
    pages[0].wait_for_url(f"**/tables/{table.pk}/", timeout=15_000)
    ui.wait_for_socket(pages[0])
    ui.wait_for_first_frame(pages[0])

    asked: list[str] = []

    def confirm(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.accept()

    pages[0].once("dialog", confirm)
    pages[0].locator('[data-action="leave"]').click()
    pages[0].wait_for_url(f"{daphne_live_server.url}/", timeout=15_000)
    assert asked and "placed last" in asked[0]
    # The other player sees a bot on the seat, and the match goes on.
    pages[1].locator('.player[data-seat="0"]').get_by_text("Bot 1").wait_for(timeout=15_000)
    left = f"{leaver.username} left; a bot plays the seat."
    pages[1].locator(".event-log li", has_text=left).wait_for(timeout=15_000)
    seat = Seat.objects.get(table=table, position=0)
    assert seat.user_id is None and seat.bot_level
    assert match.abandonments.filter(user=leaver).exists()
    # The leaver is free to play elsewhere at once.
    pages[0].locator('[data-action="play-now"][data-variant="classic"]').click()
    pages[0].wait_for_url("**/tables/*/", timeout=15_000)
    assert f"/tables/{table.pk}/" not in pages[0].url
    assert pages[0].locator(".messages .error, [role='alert'].error").count() == 0
    play_one_turn(pages[1])
    for page in pages:
        assert page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


def test_two_timeouts_make_a_player_away_and_im_back_gives_them_the_seat_again(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path
) -> None:
    sleeper = in_thread(make_user, "sleeper")
    other = in_thread(lambda: make_user("diger", language="tr"))
    table, _match = two_people_and_two_bots(sleeper, other, timer=3)
    mine = ui.signed_in_page(chromium, daphne_live_server, sleeper)
    theirs = ui.signed_in_page(chromium, daphne_live_server, other)
    for page in (mine, theirs):
        ui.open_table(page, daphne_live_server, table.pk)
    # Neither plays (a page racing a 3 s timer on a loaded machine would click a button the
    # clock has just disabled): the sleeper's seat goes to a bot after two timeouts.
    mine.locator("[data-away]").wait_for(timeout=60_000)
    in_thread(lambda: Table.objects.filter(pk=table.pk).update(move_timer=0))
    notice = mine.locator("[data-away]")
    assert "a bot is playing" in notice.inner_text()
    # The other player reads it in their own language.
    theirs.locator('.player[data-seat="0"] .badge.away').get_by_text("uzakta").wait_for()
    mine.screenshot(path=str(artifacts / "journey-away.png"))
    theirs.screenshot(path=str(artifacts / "journey-away-seen-in-turkish.png"))
    # Frames keep coming while bots play: the notice and its button stay the same element
    # through them, so a press is never lost to a frame landing between the button's down and
    # up. A frame is sure to come when the other player's page opens again (the server tells
    # the table they are back), whether or not the bots' hand has ended meanwhile.
    button = mine.locator('[data-action="im-back"]')
    button.evaluate("b => { b.dataset.kept = 'yes'; }")
    frames = len(mine.evaluate("() => window.__okeyFrames"))
    theirs.reload()
    mine.wait_for_function(
        "n => window.__okeyFrames.slice(n).some(f => /^\\d/.test(f))", arg=frames
    )
    assert button.get_attribute("data-kept") == "yes"
    ui.wait_for_socket(theirs)
    button.click()
    notice.wait_for(state="detached", timeout=15_000)
    theirs.locator('.player[data-seat="0"] .badge.away').wait_for(state="detached")
    assert Seat.objects.get(table=table, position=0).away is False
    in_thread(lambda: actions.come_back(table.pk, other))  # the other player is back too
    play_one_turn(mine, theirs)
    assert ui.error_text(mine) == ""
    for page in (mine, theirs):
        assert page.okey_errors == []
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


def test_past_the_guests_limit_a_player_signs_up_in_one_step_and_plays(
    own_server: DaphneServer, chromium: Any
) -> None:
    """Twenty guests have played from this address in the hour (a café's Wi-Fi): the next
    visitor pressing "Practice with bots" is offered a sign-up on the spot, and once signed
    up is back in the lobby, signed in, and practises. (A server of the test's own: its
    count of guests from this address must not follow the other tests.)"""
    in_thread(ensure_variants)
    others = chromium.new_context()
    token = others.request.get(f"{own_server.url}/")
    assert token.ok
    for _ in range(20):
        csrf = next(c["value"] for c in others.cookies() if c["name"] == "csrftoken")
        made = others.request.post(
            f"{own_server.url}/accounts/guest/",
            form={"csrfmiddlewaretoken": csrf},
            headers={"Referer": own_server.url + "/"},
        )
        assert made.ok, made.status
        others.clear_cookies()
        others.request.get(f"{own_server.url}/")
    others.close()

    page = chromium.new_context().new_page()
    ui.watch_errors(page)
    page.goto(f"{own_server.url}/")
    page.locator('[data-action="practice"][data-variant="duz"]').click()
    form = page.locator("[data-inline-signup]")
    form.wait_for()
    form.locator('input[name="username"]').fill("cafe-player")
    form.locator('input[name="password1"]').fill("a long pass phrase 42")
    form.locator('input[name="password2"]').fill("a long pass phrase 42")
    form.locator('button[type="submit"]').click()
    page.wait_for_url(f"{own_server.url}/")
    assert "cafe-player" in page.locator("header").inner_text()
    page.locator('[data-action="practice"][data-variant="duz"]').click()
    page.wait_for_url("**/tables/*/")
    assert page.okey_errors == []
