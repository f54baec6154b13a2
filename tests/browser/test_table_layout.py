"""The table is a room on one screen: at desktop, laptop and phone sizes (portrait and
landscape) a player mid-hand sees every tile of the rack on its two rows, the move buttons,
the discard they may take, the pile and their countdown without scrolling, and the page never
scrolls sideways. Each size's screenshot is written under ``test-artifacts/`` for a reviewer."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from django.utils import translation

from games import actions, engine, reads
from games.engine.bots import choose_moves
from games.models import Hand
from tests import ui
from tests.live_daphne import DaphneServer, in_thread
from tests.play import four_opened, seed_of, user_table

SIZES = [(1280, 800), (1366, 768), (1920, 1080), (390, 844), (844, 390)]

# What a player must see without scrolling, by selector (each match must lie in the window).
MUST_SEE = {
    "rack tile": ".rack .tile",
    "move button": "#table-live .actions [data-action]",
    "discard to take": ".discard-spot.takeable",
    "pile": ".pile",
    "countdown": ".player.is-me .countdown",
}

OUTSIDE = """sel => [...document.querySelectorAll(sel)].filter(e => {
  const r = e.getBoundingClientRect();
  return r.width === 0 || r.left < -1 || r.top < -1 ||
         r.right > innerWidth + 1 || r.bottom > innerHeight + 1;
}).map(e => e.outerHTML.slice(0, 80))"""

ROWS_WRAP = """() => [...document.querySelectorAll('.rack .rack-row')].some(row => {
  const tops = [...row.querySelectorAll('.slot')]
    .map(s => Math.round(s.getBoundingClientRect().top));
  return Math.max(...tops) - Math.min(...tops) > 2;
})"""


def mid_hand(variant: str, n: int, melds: int = 0) -> tuple[Any, Any, int]:
    """A hand at a seat's draw: the previous seat has discarded (so there is a discard to
    take) and, with ``melds``, at least that many melds lie on the table (greedy bots' moves
    made through the service, from the first deal that gets there). Returns the table, the
    user on turn and their seat."""

    def make() -> tuple[Any, Any, int]:
        for attempt in range(n, n + 30):  # a deal whose hand gets there before it ends
            table, users = user_table(variant)
            match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(attempt))
            hand = match.hands.get()
            rng = random.Random(attempt)
            while hand.status == Hand.Status.PLAYING:
                eng = hand.engine_hand()
                public = eng.public_view()
                drawing = public["phase"] == "draw" and any(public["discards"])
                if len(public["table"]) >= melds and drawing:
                    return table, users[eng.turn], eng.turn
                seat = eng.turn
                for move in choose_moves(eng.view(seat), "greedy", rng):
                    if engine.Hand.from_state(hand.state).play(seat, move).ok:
                        actions.play(hand, seat, move, by=users[seat])
                        break
                else:
                    raise AssertionError("the bot found no legal move")
                hand.refresh_from_db()
        raise AssertionError("no such moment")

    return in_thread(make)  # type: ignore[no-any-return]


# Seats' names cut short (an ellipsis): a side seat's name takes two lines instead.
CUT_NAMES = """() => [...document.querySelectorAll('.felt .player .player-name')]
  .filter(e => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)
  .map(e => e.textContent)"""

NEWEST_SHOWN = """text => {
  const log = document.querySelector('#table-live .event-log');
  const line = [...log.querySelectorAll('li')].find(li => li.textContent.trim() === text);
  if (!line) return 'not in the log';
  const [box, r] = [log.getBoundingClientRect(), line.getBoundingClientRect()];
  return r.top >= box.top - 1 && r.bottom <= box.bottom + 1 ? '' : 'scrolled out of sight';
}"""


def newest_log_line(table_id: int, user: Any, language: str) -> str:
    """The last line of the table's log as ``user`` reads it in ``language``."""
    with translation.override(language):
        return str(reads.table_context(table_id, user)["log"][-1])


# Countdowns whose seconds do not fit in their bar (the text's box taller than the bar). The
# viewer's own is copied onto the seat on the right first, as another seat's countdown shows
# when that seat is to play (in the same call: a frame could redraw the seats in between).
CLIPPED_SECONDS = """() => {
  const right = document.querySelector('.player[data-side="right"]');
  if (!right.querySelector('.countdown')) {
    const bar = document.querySelector('.player.is-me .countdown').cloneNode(true);
    bar.classList.remove('is-mine');
    bar.querySelector('.countdown-label').textContent = '30 s';
    right.append(bar);
  }
  return [...document.querySelectorAll('.countdown')].filter(bar => {
    const label = bar.querySelector('.countdown-label');
    if (!label || !label.textContent.trim() || getComputedStyle(label).display === 'none') {
      return false;
    }
    const text = document.createRange();
    text.selectNodeContents(label);
    return text.getBoundingClientRect().height > bar.getBoundingClientRect().height + 1;
  }).map(bar => bar.closest('.player').dataset.side);
}"""


def check_every_size(page: Any, name: str, artifacts: Path, newest: str = "") -> None:
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        ui.painted(page)
        page.screenshot(path=str(artifacts / f"table-{name}-{width}x{height}.png"))
        where = f"{name} at {width}×{height}"
        for what, selector in MUST_SEE.items():
            assert page.locator(selector).count() > 0, f"no {what} ({where})"
            outside = page.evaluate(OUTSIDE, selector)
            assert not outside, f"{what} outside the window ({where}): {outside}"
        assert not page.evaluate(ROWS_WRAP), f"a rack row wraps ({where})"
        clipped = page.evaluate(CLIPPED_SECONDS)
        assert not clipped, f"a countdown's seconds are cut ({where}): {clipped}"
        cut = page.evaluate(CUT_NAMES)
        assert not cut, f"names cut short ({where}): {cut}"
        if newest:
            shown = page.evaluate(NEWEST_SHOWN, newest)
            assert not shown, f"the log's newest line is {shown} ({where}): {newest!r}"
        sideways = page.evaluate("() => document.documentElement.scrollWidth - innerWidth")
        assert sideways <= 0, f"the page scrolls sideways by {sideways}px ({where})"
        # "Fair deal" opens within the window: the commitment and "Check the deal" readable.
        page.locator(".fair-deal summary").click()
        outside = page.evaluate(OUTSIDE, ".fair-deal-body")
        if width < 500:
            page.screenshot(path=str(artifacts / f"table-{name}-fair-deal-{width}x{height}.png"))
        page.locator(".fair-deal summary").click()
        assert not outside, f"the fair deal opens outside the window ({where})"


@pytest.mark.parametrize(
    ("variant", "melds", "language"),
    [
        ("classic", 0, "en"),
        ("duz", 0, "tr"),
        ("okey51", 8, "en"),
        ("okey51", 8, "tr"),
        ("gobek17", 0, "en"),
        ("okey101", 4, "tr"),
    ],
)
def test_mid_hand_everything_a_player_needs_is_on_one_screen(
    daphne_live_server: DaphneServer,
    chromium: Any,
    artifacts: Path,
    variant: str,
    melds: int,
    language: str,
) -> None:
    table, user, seat = mid_hand(variant, 40 + len(variant), melds)
    page = ui.signed_in_page(chromium, daphne_live_server, user)
    page.context.add_cookies(
        [{"name": "django_language", "value": language, "url": daphne_live_server.url}]
    )
    ui.open_table(page, daphne_live_server, table.pk)
    assert ui.state(page)["turn"] == str(seat) == ui.state(page)["seat"]
    if melds:
        assert page.locator(".melds .meld").count() >= melds
    newest = in_thread(lambda: newest_log_line(table.pk, user, language))
    check_every_size(page, f"{variant}-{language}", artifacts, newest)
    assert not daphne_live_server.errors(), daphne_live_server.output_of_this_test()


CONTRAST = """sel => {
  const b = document.querySelector(sel);
  const rgb = s => s.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = c => { const [r, g, bl] = c.map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl; };
  const style = getComputedStyle(b);
  const bg = style.backgroundImage !== 'none'
    ? rgb(style.backgroundImage) : rgb(style.backgroundColor);
  const [a, c] = [lum(rgb(style.color)), lum(bg)].sort((x, y) => y - x);
  return (a + 0.05) / (c + 0.05);
}"""


def test_a_coloured_button_keeps_its_label_under_the_mouse(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    """The primary move buttons turned white with white text on hover: the label vanished.
    Under the mouse, as at rest, the label keeps a contrast of at least 4.5:1."""
    table, user, seat = mid_hand("duz", 47)

    def discard_phase() -> None:
        hand = table.matches.get().hands.get()
        actions.play(hand, seat, {"do": "draw"}, by=user)

    in_thread(discard_phase)
    page = ui.signed_in_page(chromium, daphne_live_server, user)
    ui.open_table(page, daphne_live_server, table.pk)
    ui.wait_version(page, 1)
    button = '#table-live [data-action="discard"]'
    page.wait_for_selector(f"{button}:not([disabled])")
    assert page.evaluate(CONTRAST, button) >= 4.5
    page.hover(button)
    # Hovered, and its colours no longer changing (a transition would show a colour between).
    page.wait_for_function(
        "sel => { const b = document.querySelector(sel);"
        " return b.matches(':hover') && b.getAnimations().length === 0; }",
        arg=button,
    )
    assert page.evaluate(CONTRAST, button) >= 4.5, "the label fades under the mouse"


def test_the_end_of_a_match_is_a_screen_with_the_ranking_and_where_to_go_next(
    daphne_live_server: DaphneServer, chromium: Any, artifacts: Path
) -> None:
    """The last hand's scoreboard lies over the felt with the final ranking, Rematch, New
    game and Back to lobby, all within the window at desktop and phone size."""
    from tests.play import played_out

    table, users, match = in_thread(lambda: played_out("okey51", {"hands": 1}, 3))
    page = ui.signed_in_page(chromium, daphne_live_server, users[0])
    ui.open_table(page, daphne_live_server, table.pk)
    places = page.locator("[data-hand-over] .final-ranking tbody tr")
    assert places.count() == 4
    first = places.nth(0).locator("td")
    assert first.nth(0).inner_text().strip() == "1"
    for width, height in ((1280, 800), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        ui.painted(page)
        page.screenshot(path=str(artifacts / f"table-match-over-{width}x{height}.png"))
        for selector in (
            '[data-action="rematch"]',
            '[data-action="new-game"]',
            '[data-action="lobby"]',
        ):
            page.locator(selector).scroll_into_view_if_needed()
            assert page.locator(selector).is_visible(), selector
    # "New game" (in a frame the socket brought) takes the player to a new table of the variant.
    with page.expect_navigation(timeout=15_000) as navigation:
        page.click('[data-action="new-game"]')
    assert navigation.value is None or navigation.value.status < 400, navigation.value.status
    page.wait_for_url("**/tables/*/", timeout=15_000)
    assert f"/tables/{table.pk}/" not in page.url
    assert page.okey_errors == []
    # "Back to lobby" is the lobby, for another of the players.
    other = ui.signed_in_page(chromium, daphne_live_server, users[1])
    ui.open_table(other, daphne_live_server, table.pk)
    other.click('[data-action="lobby"]')
    other.wait_for_url(f"{daphne_live_server.url}/")


# Melds not wholly in sight: outside the window, or cut by the box that holds them (the melds'
# own, which would scroll, and the felt's centre or the felt, which clip).
MELDS_OUT_OF_SIGHT = """() => {
  const boxes = ['#table-melds', '.felt'].map(s => document.querySelector(s));
  const melds = document.querySelector('#table-melds');
  if (!melds.classList.contains('is-open')) boxes.push(document.querySelector('.centre-area'));
  return [...document.querySelectorAll('#table-melds .meld')].filter(m => {
    const r = m.getBoundingClientRect();
    if (r.width === 0 || r.top < 0 || r.left < 0) return true;
    if (r.bottom > innerHeight || r.right > innerWidth) return true;
    return boxes.some(box => {
      const b = box.getBoundingClientRect();
      return r.top < b.top - 1 || r.bottom > b.bottom + 1 || r.left < b.left - 1 ||
        r.right > b.right + 1;
    });
  }).map(m => m.dataset.meld);
}"""


@pytest.mark.parametrize(
    ("size", "language"), [((1280, 800), "en"), ((1366, 768), "tr"), ((390, 844), "tr")]
)
def test_every_meld_of_four_opened_players_is_in_view(
    daphne_live_server: DaphneServer,
    chromium: Any,
    artifacts: Path,
    size: tuple[int, int],
    language: str,
) -> None:
    """An okey101 hand where all four players have opened (16 melds): at desktop sizes every
    meld is in view without scrolling; on a phone the melds open over the felt with one tap
    and close with one. A "+" shows only on the meld the selected tile fits (the engine's
    targets), and the table passes axe-core."""
    from tests.browser.test_accessibility import violations

    table, users, hand = in_thread(four_opened)
    width, height = size
    page = ui.signed_in_page(
        chromium, daphne_live_server, users[0], {"width": width, "height": height}
    )
    ui.in_language(page, daphne_live_server, language)
    ui.open_table(page, daphne_live_server, table.pk)
    melds = page.locator("#table-melds .meld")
    assert melds.count() == 16
    phone = width < 500
    if phone:
        assert not page.locator("#table-melds").is_visible()
        assert page.locator(".melds-toggle").inner_text() == "Yerdeki perler (16)"
        page.locator(".melds-toggle").click()
        assert page.locator("#table-melds").is_visible()
        assert page.locator(".melds-toggle").get_attribute("aria-expanded") == "true"
    page.screenshot(path=str(artifacts / f"okey101-four-opened-{width}x{height}-{language}.png"))
    assert page.evaluate(MELDS_OUT_OF_SIGHT) == []
    assert violations(page) == []
    if phone:
        page.locator(".melds-close").click()
        assert not page.locator("#table-melds").is_visible()

    # Seat 0 draws and selects its K10: "+" appears on its K11-K13 alone, and adds it there.
    ui.click_action(page, "draw")
    ui.wait_version(page, hand.version + 1)
    assert page.locator('#table-live button[data-action="add"]:visible').count() == 0
    ui.select_tile(page, "K10")
    run = next(
        m["id"]
        for m in in_thread(lambda: hand.engine_hand().public_view()["table"])
        if m["tiles"] == ["K11", "K12", "K13"] and m["owner"] == 0
    )
    if phone:
        page.locator(".melds-toggle").click()
    shown = page.locator('#table-live button[data-action="add"]:visible')
    assert shown.count() == 1 and shown.get_attribute("data-meld") == str(run)
    shown.click()
    ui.wait_version(page, hand.version + 2)
    assert "K10" not in ui.rack_tiles(page)
    assert page.locator(f'.meld[data-meld="{run}"] [data-tile="K10"]').count() == 1
    if phone:  # the melds stayed open across the frames
        assert page.locator("#table-melds").is_visible()
        page.keyboard.press("Escape")
        assert not page.locator("#table-melds").is_visible()
    assert page.okey_errors == []


def test_small_words_on_the_felt_and_the_lobbys_empty_seats_are_readable(
    daphne_live_server: DaphneServer, chromium: Any
) -> None:
    """Contrast of at least 4.5:1 for the felt's small words (the opening hint, the labels of
    the centre and the discard spots, the seats' counts and badges, an empty seat waiting for a
    player) and the lobby's "empty" seat labels."""
    from tests.users import make_user

    table, user, seat = mid_hand("okey101", 40 + len("okey101"), 0)
    page = ui.signed_in_page(chromium, daphne_live_server, user)
    ui.open_table(page, daphne_live_server, table.pk)
    felt = ".moves .hint, .centre-label, .discard-label, .player-stats, .player-name, .badge"
    assert ui.low_contrast(page, felt) == []

    host = in_thread(lambda: make_user("host-of-a-forming-table"))
    forming = in_thread(lambda: actions.open_table(variant="classic", user=host))
    page.goto(f"{daphne_live_server.url}/tables/{forming.pk}/")
    page.locator(".player.empty").first.wait_for()
    assert ui.low_contrast(page, ".player.empty, .player.empty *, #table-live .hint") == []
    page.goto(f"{daphne_live_server.url}/")
    page.locator(".table-seats .seat.empty").first.wait_for()
    assert ui.low_contrast(page, ".table-seats .seat.empty, .table-seats .seat.empty em") == []
