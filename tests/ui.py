"""Helpers for browser tests that play at a table through the page, as a person would: sign in
a browser context, read the table's contract (``#table-live`` data attributes, ``data-tile``,
``data-action``), arrange the rack by dragging, and play an engine move with clicks and drags.

Not a test module. See docs/ARCHITECTURE.md, "The table page's contract".
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator
from typing import Any

from games import engine
from games.engine import scoring
from games.engine.bots import choose_moves
from tests.sockets import cookie_for

SLOTS = 32
ROW = SLOTS // 2
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


# ----------------------------------------------------------------------------- sessions
def signed_in_page(
    browser: Any, server: Any, user: Any, viewport: dict[str, int] = DESKTOP, motion: bool = False
) -> Any:
    """A page in a new browser context signed in as ``user`` (its own cookies); it prefers
    reduced motion unless ``motion`` (tests/conftest.py, ``_still_unless_asked``)."""
    name, _, value = cookie_for(user).partition("=")
    motion_asked = {"reduced_motion": "no-preference"} if motion else {}
    context = browser.new_context(viewport=viewport, **motion_asked)
    context.add_cookies(
        [
            {
                "name": name,
                "value": value,
                "url": server.url,
            }
        ]
    )
    page = context.new_page()
    watch_errors(page)
    page.add_init_script(FRAME_LOG)
    return page


def in_language(page: Any, server: Any, language: str) -> None:
    """The page's site language from now on (the language cookie, as the footer's menu sets)."""
    page.context.add_cookies([{"name": "django_language", "value": language, "url": server.url}])


# What each frame from the table socket carried, for failure messages.
FRAME_LOG = """
window.__okeyFrames = [];
document.addEventListener("htmx:wsBeforeMessage", (e) => {
  const m = String(e.detail.message);
  const v = /data-version="(\\d+)"/.exec(m);
  window.__okeyFrames.push((v ? v[1] : "-") + (m.includes('id="rack-area"') ? "+rack" : "")
    + (m.includes('id="move-error"') ? "+error" : ""));
});
document.addEventListener("htmx:wsOpen", () => {
  window.__okeySocketOpen = true;
  window.__okeyFrames.push("open");
});
document.addEventListener("htmx:wsClose", () => window.__okeyFrames.push("close"));
"""


def watch_errors(page: Any) -> None:
    """Collect the page's script errors in ``page.okey_errors`` (assert it stays empty)."""
    page.okey_errors = []
    page.okey_console = []
    page.on("pageerror", lambda e: page.okey_errors.append(str(e)))
    page.on("console", lambda m: page.okey_console.append(f"{m.type}: {m.text}"))


def open_table(page: Any, server: Any, table_id: int) -> None:
    """Open the table page and wait until its socket is live and its first frame has arrived
    (that frame draws the seat's rack again: a tile pressed while it is swapped in, between the
    button's press and release, would not be selected)."""
    page.add_init_script(
        "document.addEventListener('htmx:wsOpen', () => { window.__okeySocketOpen = true; });"
    )
    page.goto(f"{server.url}/tables/{table_id}/")
    wait_for_socket(page)
    wait_for_first_frame(page)
    settled(page)  # the frame is in, and what it drew is wired (drags, buttons)


def practice(page: Any, server: Any, variant: str) -> None:
    """Press the lobby's "Practice with bots" for ``variant`` and wait on the table page until
    its socket is live and its first frame has come (as :func:`open_table`). A page already
    on the lobby (after leaving a table) presses it there, without loading the lobby again."""
    if page.url.rstrip("/") != server.url.rstrip("/"):
        page.goto(f"{server.url}/")
    page.locator(f'[data-action="practice"][data-variant="{variant}"]').click()
    page.wait_for_url("**/tables/*/")
    page.locator("#rack-area .tile").first.wait_for(timeout=15_000)
    wait_for_socket(page)
    wait_for_first_frame(page)


def painted(page: Any) -> None:
    """Wait until the page has been laid out and painted as it stands (two animation frames:
    after a change of the window's size, say)."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def wait_for_socket(page: Any) -> None:
    """Wait until the table page's socket is open (after :func:`open_table`, a reload too: the
    page's script has set up its keys and buttons by then)."""
    page.wait_for_function("() => window.__okeySocketOpen === true", timeout=15_000)


def settled(page: Any) -> None:
    """htmx has finished its requests and swaps: the new markup's hx- attributes are live (htmx
    wires them when the swap settles, 20 ms after it; a click before that, quicker than a
    person, would send a plain form instead), and no fragment is still coming (the seat
    controls a frame leaves to be fetched would replace what was clicked)."""
    page.wait_for_function(
        "() => !document.querySelector("
        "'.htmx-added, .htmx-settling, .htmx-swapping, .htmx-request')"
    )


def wait_for_first_frame(page: Any) -> None:
    """Wait for the socket's first frame (pages without the frame log go on at once)."""
    page.wait_for_function(
        "() => window.__okeyFrames === undefined || window.__okeyFrames.some(f => /^\\d/.test(f))"
    )


def wait_for_rack_frame(page: Any) -> None:
    """Wait for the socket's first frame, which re-sends the seat's rack (it can come after the
    socket opens: a tile selected or dragged before it would be swapped away)."""
    page.wait_for_function("() => (window.__okeyFrames || []).some(f => f.endsWith('+rack'))")


# ----------------------------------------------------------------------------- reading the page
def state(page: Any) -> dict[str, str]:
    return dict(page.evaluate("() => ({...document.querySelector('#table-live').dataset})"))


def version(page: Any) -> int:
    return int(state(page)["version"])


def wait_version(page: Any, at_least: int, timeout: float = 15_000) -> None:
    page.wait_for_function(
        "v => Number(document.querySelector('#table-live').dataset.version) >= v",
        arg=at_least,
        timeout=timeout,
    )


def wait_for_turn(page: Any, timeout: float = 30_000) -> None:
    """Wait until it is the viewer's turn, or the hand is over."""
    page.wait_for_function(
        "() => { const d = document.querySelector('#table-live').dataset;"
        " return d.phase === 'over' || d.turn === d.seat; }",
        timeout=timeout,
    )


def rack_layout(page: Any) -> list[str | None]:
    """The rack as it stands on screen: 32 slots, two rows, ``None`` for a gap."""
    return list(
        page.evaluate(
            """() => Array.from(document.querySelectorAll('#rack-area .slot')).map(
                 s => { const t = s.querySelector('.tile'); return t ? t.dataset.tile : null; })"""
        )
    )


def wait_layout(page: Any, want: list[str | None], timeout: float = 5.0) -> list[str | None]:
    """The rack as it stands once it stands as ``want`` (what a click started may take a frame
    of the browser's to show), or as it stands after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while (shown := rack_layout(page)) != want and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    return shown


def rack_tiles(page: Any) -> list[str]:
    return [t for t in rack_layout(page) if t is not None]


def frames(page: Any) -> list[str]:
    """The last frames the table socket brought (see FRAME_LOG)."""
    return list(page.evaluate("() => (window.__okeyFrames || []).slice(-12)"))


def error_text(page: Any) -> str:
    return str(page.locator("#move-error").inner_text()).strip()


# ----------------------------------------------------------------------------- arranging
def target_layout(groups: list[list[str]], rack: list[str]) -> list[str | None]:
    """The groups on the rack in order, one gap between groups (a group never straddles the two
    rows), then the rest of the rack after one more gap."""
    rest = list(rack)
    for group in groups:
        for tile in group:
            rest.remove(tile)
    lay: list[str | None] = []
    for group in [*groups, rest] if rest else groups:
        col = len(lay) % ROW
        if lay and col:
            if col + 1 + len(group) > ROW and len(lay) < ROW:
                lay.extend([None] * (ROW - col))  # to the second row
            else:
                lay.append(None)
        lay.extend(group)
    if len(lay) > SLOTS:
        raise ValueError(f"{groups} do not fit on the rack with gaps")
    return lay + [None] * (SLOTS - len(lay))


def rack_at_rest(page: Any) -> None:
    """Wait until SortableJS has finished moving the rack's tiles into place after a drop: it
    ignores a drag on a tile while that tile animates (its ``animated`` timer is set)."""
    page.wait_for_function(
        "() => ![...document.querySelectorAll('#rack-area .tile')].some(t => t.animated)"
    )


def drag_tile(page: Any, source: int, target: int) -> None:
    slots = page.locator("#rack-area .slot")
    wait_for_first_frame(page)  # it draws the rack again: a drag before it would be lost
    settled(page)
    rack_at_rest(page)
    # The rack in the middle of the window: a drop near its edge would make SortableJS scroll
    # the page under the pointer (as it should for a person), missing the slot.
    page.evaluate("document.querySelector('#rack-area').scrollIntoView({block: 'center'})")
    slots.nth(source).locator(".tile").drag_to(slots.nth(target))
    page.wait_for_function(
        """([s, t]) => { const slots = document.querySelectorAll('#rack-area .slot');
             return slots[t].querySelector('.tile') && !slots[s].querySelector('.tile'); }""",
        arg=[source, target],
        timeout=5_000,
    )


def drop_on(page: Any, source: int, target: int) -> None:
    """Drag the tile in slot ``source`` onto slot ``target`` (which may hold a tile: then the
    page inserts it there), with the rack at rest in the middle of the window (see
    :func:`drag_tile`)."""
    wait_for_first_frame(page)
    settled(page)
    rack_at_rest(page)
    page.evaluate("document.querySelector('#rack-area').scrollIntoView({block: 'center'})")
    slots = page.locator("#rack-area .slot")
    slots.nth(source).locator(".tile").drag_to(slots.nth(target))


def arrange(page: Any, want: list[str | None]) -> None:
    """Drag tiles (as a player would, with SortableJS) until the rack reads ``want``."""
    for i, code in enumerate(want):
        if code is None:
            continue
        now = rack_layout(page)
        if now[i] == code:
            continue
        if now[i] is not None:  # make room: park the tile in a slot nobody needs (on a full
            # rack, in a later slot: its turn comes after this one)
            empty = [j for j in range(SLOTS) if now[j] is None]
            spare = next((j for j in empty if want[j] is None or j < i), None)
            if spare is None:
                spare = next(j for j in empty if j > i)
            drag_tile(page, i, spare)
            now = rack_layout(page)
        # Any copy of the tile that is not already in its place (places before i are done).
        source = next(
            j for j in range(SLOTS) if now[j] == code and j != i and not (j < i and want[j] == code)
        )
        drag_tile(page, source, i)
    assert rack_layout(page) == want


def select(page: Any, indexes: list[int]) -> None:
    """Click the tiles in these slots (a click selects a tile: aria-pressed)."""
    slots = page.locator("#rack-area .slot")
    wait_for_first_frame(page)  # it draws the rack again: a selection before it would be lost
    for i in indexes:
        tile = slots.nth(i).locator(".tile")
        if tile.get_attribute("aria-pressed") != "true":
            tile.click()
        assert tile.get_attribute("aria-pressed") == "true"


def select_tile(page: Any, code: str) -> None:
    layout = rack_layout(page)
    select(page, [layout.index(code)])


def click_action(page: Any, action: str, timeout: float | None = None, **data: Any) -> None:
    extra = "".join(f'[data-{k}="{v}"]' for k, v in data.items())
    page.locator(f'#table-live [data-action="{action}"]{extra}').first.click(timeout=timeout)


# ----------------------------------------------------------------------------- playing moves
def bare(tile: str) -> str:
    """A tile as the rack shows it: a wild okey written ``K10:K9`` in a meld is ``K10``."""
    return tile.split(":")[0]


def lay_out(page: Any, groups: list[list[str]], action: str) -> None:
    """Arrange ``groups`` on the rack, select their tiles and press ``open`` or ``lay``."""
    tiles = [[bare(t) for t in g] for g in groups]
    want = target_layout(tiles, rack_tiles(page))
    arrange(page, want)
    # The groups come first on the rack: their tiles are its first filled slots.
    filled = [i for i, code in enumerate(want) if code is not None]
    select(page, filled[: sum(len(g) for g in tiles)])
    click_action(page, action)


def play_move(
    page: Any, move: dict[str, Any], finish_groups: list[list[str]] | None = None
) -> None:
    """Play one engine move through the page: buttons, clicks on tiles, drags."""
    kind = move["do"]
    if kind in ("draw", "take", "give_back", "show_indicator"):
        click_action(page, kind)
    elif kind == "discard":
        select_tile(page, move["tile"])
        click_action(page, "discard")
    elif kind in ("open", "lay"):
        lay_out(page, move.get("melds") or move.get("pairs") or [], kind)
    elif kind in ("add", "swap"):
        select_tile(page, bare(move["tile"]))
        with melds_open(page):
            click_action(page, kind, meld=move["meld"])
    elif kind == "finish":
        if finish_groups is not None:
            arrange(page, target_layout(finish_groups, rack_tiles(page)))
        finish_by_drag(page, move["tile"])
    else:
        raise ValueError(f"no way to play {kind} in the page")


@contextlib.contextmanager
def melds_open(page: Any) -> Iterator[None]:
    """The table's melds in view: on a phone they open over the felt with a tap (and close
    again after), elsewhere they are always shown."""
    toggle = page.locator(".melds-toggle")
    folded = toggle.count() > 0 and toggle.is_visible()
    if folded:
        toggle.click()
    yield
    if folded and page.locator("#table-melds.is-open").count():
        page.keyboard.press("Escape")


def finish_by_drag(page: Any, tile: str) -> None:
    """Drag the finishing tile onto the finish spot in the middle of the table."""
    index = rack_layout(page).index(tile)
    rack_at_rest(page)
    page.locator("#rack-area .slot").nth(index).locator(".tile").drag_to(
        page.locator('[data-drop="finish"]')
    )


def simple_turn(page: Any) -> bool:
    """Play the viewer's turn the plain way (draw, then discard the first tile). False when it
    is not their turn or the hand is over."""
    s = state(page)
    if s["phase"] == "over" or s["turn"] != s["seat"]:
        return False
    before = int(s["version"])
    try:
        if s["phase"] == "draw":
            click_action(page, "draw", timeout=10_000)
        else:
            select(page, [next(i for i, t in enumerate(rack_layout(page)) if t)])
            pressed = page.locator('#rack-area .tile[aria-pressed="true"]').count()
            assert pressed == 1, f"{pressed} tiles selected, frames {frames(page)}"
            click_action(page, "discard", timeout=10_000)
    except Exception:
        # The turn went by while the page was being read (the move timer ran out and the
        # clock played it): the button was disabled under the pointer. Not the viewer's turn.
        if version(page) > before:
            return False
        raise
    try:
        wait_version(page, before + 1)
    except Exception as exc:
        raise AssertionError(
            f"the {s['phase']} at version {before} did not land: {state(page)}, "
            f"error {error_text(page)!r}, console {page.okey_console[-5:]}, "
            f"frames {frames(page)}"
        ) from exc
    return True


# ----------------------------------------------------------------------------- the engine's script
def scripted_hand(
    variant: str, seed: str, options: dict[str, Any] | None = None, level: str = "strong"
) -> tuple[engine.Hand, list[tuple[int, dict[str, Any]]]]:
    """Play a hand in the engine alone, every seat a bot: the moves the browsers will make, and
    the finished hand to check the page against."""
    opts = engine.validate_options(variant, options or {})
    start = scoring.start_score(variant, opts)
    eng = engine.Hand.from_seed(variant, seed, opts, starter=0, scores=[start] * 4, number=1)
    moves: list[tuple[int, dict[str, Any]]] = []
    rng = random.Random(seed)
    while not eng.public_view()["over"]:
        seat = eng.turn
        for move in choose_moves(eng.view(seat), level, rng):
            result = eng.play(seat, move)
            if result.ok:
                moves.append((seat, dict(result.move)))
                break
        else:
            raise AssertionError("the bot found no legal move")
        assert len(moves) < 1000
    return eng, moves


# The contrast of each element's text with what lies behind it: its colour (with the opacity of
# the element and its ancestors) over the first solid background found going up the tree.
LOW_CONTRAST = """([sel, least]) => {
  const rgba = s => {
    const v = s.match(/[\\d.]+/g).map(Number);
    return v.length > 3 ? v : [...v, 1];
  };
  const lum = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  return [...document.querySelectorAll(sel)].filter(e => e.textContent.trim()).map(e => {
    let alpha = 1, back = null;
    for (let n = e; n; n = n.parentElement) {
      const style = getComputedStyle(n);
      alpha *= Number(style.opacity);
      if (!back) { const b = rgba(style.backgroundColor); if (b[3] > 0.99) back = b; }
    }
    back = back || [255, 255, 255, 1];
    const fore = rgba(getComputedStyle(e).color);
    const a = fore[3] * alpha;
    const seen = fore.slice(0, 3).map((v, i) => v * a + back[i] * (1 - a));
    const [x, y] = [lum(seen), lum(back)].sort((p, q) => q - p);
    return [e.textContent.trim().slice(0, 30), Math.round((x + 0.05) / (y + 0.05) * 100) / 100];
  }).filter(([, ratio]) => ratio < least);
}"""


def low_contrast(page: Any, selector: str, least: float = 4.5) -> list[Any]:
    """The texts matching ``selector`` whose contrast with what lies behind them is below
    ``least`` (WCAG AA: 4.5 for text of ordinary size)."""
    return list(page.evaluate(LOW_CONTRAST, [selector, least]))
