"""A table that feels alive: sounds for a tile placed, your turn, the last seconds of your
timer and a finish, behind one switch that the browser remembers; tiles that slide from the
pile to the stand, and none for a player who asked for less motion."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from games import actions
from games.catalog import ensure_variants
from games.models import Hand
from tests import ui
from tests.live_daphne import DaphneServer, in_thread
from tests.users import make_user

SOUNDS = """
window.__sounds = [];
document.addEventListener("okey-sound",
  e => window.__sounds.push(e.detail.name + (e.detail.on ? "" : ":off")));
"""


def practice(name: str, timer: int = 0) -> tuple[Any, Any]:
    def make() -> tuple[Any, Any]:
        ensure_variants()
        player = make_user(name)
        match = actions.play_now(player, "duz", level="greedy")
        table = match.table
        if timer:
            table.options = {**table.options, "timer": timer}
            table.save(update_fields=["options"])
        return player, table

    return in_thread(make)  # type: ignore[no-any-return]


def sounds(page: Any) -> list[str]:
    return list(page.evaluate("() => window.__sounds"))


def test_sounds_follow_the_table_and_one_switch_silences_them_for_good(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    player, table = practice("listener")
    page = ui.signed_in_page(chromium, daphne_live_server, player)
    page.add_init_script(SOUNDS)
    ui.open_table(page, daphne_live_server, table.pk)
    toggle = page.locator("#sound-toggle")
    assert toggle.get_attribute("aria-pressed") == "true"
    assert ui.simple_turn(page)  # the player's discard; the three bots play; the turn is back
    ui.wait_for_turn(page)
    heard = sounds(page)
    assert heard[0] == "placed" and heard[-1] == "your-turn", heard
    assert heard.count("placed") >= 3

    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "false"
    page.reload()  # a person coming back later: the switch is as they left it
    ui.wait_for_socket(page)
    assert page.locator("#sound-toggle").get_attribute("aria-pressed") == "false"
    assert ui.simple_turn(page) and ui.simple_turn(page)  # draw, then discard
    ui.wait_for_turn(page)
    heard = sounds(page)
    assert heard and all(s.endswith(":off") for s in heard), heard
    assert page.okey_errors == []


def test_the_last_seconds_of_the_timer_are_counted_out(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    player, table = practice("hurried", timer=15)

    def four_seconds_left() -> None:
        hand = Hand.objects.get(match__table=table)
        Hand.objects.filter(pk=hand.pk).update(deadline=timezone.now() + timedelta(seconds=4.5))

    in_thread(four_seconds_left)
    page = ui.signed_in_page(chromium, daphne_live_server, player)
    page.add_init_script(SOUNDS)
    ui.open_table(page, daphne_live_server, table.pk)
    page.wait_for_function(
        "() => window.__sounds.filter(s => s === 'time-low').length >= 2", timeout=5_000
    )


def test_a_drawn_tile_slides_from_the_pile_unless_the_player_wants_less_motion(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    for motion in (True, False):
        player, table = practice(f"mover-{motion}")
        page = ui.signed_in_page(chromium, daphne_live_server, player, motion=motion)
        ui.open_table(page, daphne_live_server, table.pk)
        assert ui.simple_turn(page)
        ui.wait_for_turn(page)
        page.evaluate(
            """() => { window.__slid = [];
              new MutationObserver(() => {
                for (const a of document.getAnimations()) {
                  const t = a.effect && a.effect.target;
                  if (t && t.closest && t.closest('#rack-area')) window.__slid.push(t.dataset.tile);
                }
              }).observe(document.body, { subtree: true, childList: true }); }"""
        )
        before = ui.version(page)
        ui.click_action(page, "draw")
        ui.wait_version(page, before + 1)
        page.wait_for_timeout(100)
        slid = page.evaluate("() => window.__slid")
        assert bool(slid) is motion, (motion, slid)
        page.context.close()
