"""The hand replay in a real Chromium, served by daphne: the arrow keys, Home and End step
through the hand by htmx swaps (no page load), and each step's URL is pushed."""

from __future__ import annotations

import random
import re
from typing import Any

from games import actions
from games.models import Hand
from tests import ui
from tests.live_daphne import DaphneServer, in_thread
from tests.play import random_move, seed_of, user_table


def finished_hand() -> Hand:
    table, users = user_table("duz")
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(4242))
    hand = match.hands.get()
    rng = random.Random(4)
    while hand.status == Hand.Status.PLAYING:
        seat, move = random_move(hand, rng)
        actions.play(hand, seat, move, by=users[seat], expected_version=hand.version)
        hand.refresh_from_db()
    return hand


def at_step(page: Any, hand: Hand, step: int) -> None:
    """Wait until the page shows ``step`` and its address is that step's."""
    page.locator(f'#replay-step[data-step="{step}"]').wait_for(timeout=10_000)
    page.wait_for_url(re.compile(rf"/hands/{hand.pk}/step/{step}/$"), timeout=10_000)


def test_the_keys_step_through_a_replay_without_reloading(
    daphne_live_server: DaphneServer, chromium_page: Any
) -> None:
    hand = in_thread(finished_hand)  # service calls outside Playwright's event loop
    page = chromium_page
    base = f"{daphne_live_server.url}/hands/{hand.pk}/"
    assert page.goto(base).ok
    page.wait_for_function("() => typeof window.htmx !== 'undefined'", timeout=10_000)
    page.evaluate("() => { window.__sameDocument = true; }")

    def at(step: int) -> None:
        at_step(page, hand, step)

    page.keyboard.press("ArrowRight")
    at(1)
    page.keyboard.press("ArrowRight")
    at(2)
    page.keyboard.press("ArrowLeft")
    at(1)
    page.keyboard.press("End")
    at(hand.version)
    words = page.locator("[data-replay-words]").inner_text()
    assert "finished the hand" in words or "the hand is over" in words
    page.keyboard.press("Home")
    at(0)
    # htmx takes over the swapped-in links as the swap settles; a click before that is a
    # plain link's (the step's whole page: right, but not what this test is about).
    ui.settled(page)
    page.locator('[data-replay="next"]').click()
    at(1)
    assert page.evaluate("() => window.__sameDocument === true"), "a step reloaded the page"
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


def test_quick_presses_each_take_a_step_and_the_address_and_back_follow_the_step_shown(
    daphne_live_server: DaphneServer, chromium_page: Any
) -> None:
    """A person tapping → four times faster than a step loads moves four steps (no press is
    lost while the previous one loads), the address is the step shown after each, and the
    browser's Back and Forward buttons go through the same steps."""
    hand = in_thread(finished_hand)
    page = chromium_page
    assert page.goto(f"{daphne_live_server.url}/hands/{hand.pk}/").ok
    ui.settled(page)
    page.evaluate("() => { window.__sameDocument = true; }")

    def at(step: int) -> None:
        at_step(page, hand, step)
        ui.settled(page)
        assert page.locator("[data-replay-position]").inner_text().startswith(f"Step {step} ")

    for _ in range(4):
        page.keyboard.press("ArrowRight")
    at(4)
    page.keyboard.press("ArrowLeft")
    at(3)
    page.keyboard.press("ArrowLeft")
    at(2)
    page.go_back()
    at(3)
    page.go_back()
    at(4)
    page.go_forward()
    at(3)
    page.keyboard.press("ArrowRight")
    at(4)
    assert page.evaluate("() => window.__sameDocument === true"), "a step reloaded the page"
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()
