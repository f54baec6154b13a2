"""The ``{% tile %}`` tag (games/templatetags/tiles.py), which draws every tile of the site: its
data-tile contract, colour classes, words for screen readers, the fake and wild okeys drawn
apart from ordinary tiles, in a row and in the rack's slots."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.template import engines
from django.utils import translation

from games.engine.tiles import NAMES
from games.templatetags import tiles as tags


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    """The words are checked in English unless a test says otherwise (a request of an earlier
    test may have left another language active in this thread)."""
    with translation.override("en"):
        yield


ONE_TILE = engines["django"].from_string(
    "{% load tiles %}{% tile code okey selectable=selectable pressed=pressed css=css %}"
)


def tile(code: str, okey: str | None = None, **extra: Any) -> str:
    """The tile as a template draws it."""
    context = {"selectable": False, "pressed": False, "css": "", **extra}
    return ONE_TILE.render({"code": code, "okey": okey, **context})


def classes(html: str) -> set[str]:
    match = re.match(r'<span class="([^"]*)"', html)
    assert match, html
    return set(match.group(1).split())


def attr(html: str, name: str) -> str:
    match = re.search(rf'\b{name}="([^"]*)"', html)
    assert match, (name, html)
    return match.group(1)


@pytest.mark.parametrize(
    ("code", "colour", "label"),
    [
        ("R5", "tile-R", "red 5"),
        ("Y1", "tile-Y", "yellow 1"),
        ("B12", "tile-B", "blue 12"),
        ("K13", "tile-K", "black 13"),
    ],
)
def test_an_ordinary_tile_says_its_colour_and_number(code: str, colour: str, label: str) -> None:
    html = tile(code, "B7")
    assert html.startswith('<span class="tile ')
    assert attr(html, "data-tile") == code
    assert colour in classes(html)
    assert not classes(html) & {"tile-fake", "tile-wild"}
    assert attr(html, "aria-label") == label
    assert attr(html, "role") == "img"
    assert f'<span class="tile-num" aria-hidden="true">{code[1:]}</span>' in html
    assert 'class="tile-mark"' in html  # the shape beside the number, for colour-blind players


def test_every_tile_renders_with_one_colour_class_or_as_the_fake() -> None:
    for code in NAMES:
        html = tile(code)
        assert attr(html, "data-tile") == code
        colour = {c for c in classes(html) if re.fullmatch(r"tile-[RYBK]", c)}
        if code == "F":
            assert colour == set() and "tile-fake" in classes(html)
        else:
            assert colour == {f"tile-{code[0]}"}


def test_the_fake_okey_is_drawn_apart_and_names_what_it_plays_as() -> None:
    html = tile("F", "B7")
    assert attr(html, "data-tile") == "F"
    assert "tile-fake" in classes(html) and "tile-wild" not in classes(html)
    assert attr(html, "aria-label") == "fake okey, plays as blue 7"
    assert "tile-num" not in html  # a star, no number
    assert 'class="tile-as tile-as-B"' in html and "=7" in html
    bare = tile("F")
    assert attr(bare, "aria-label") == "fake okey"
    assert "tile-as" not in bare


def test_the_wild_okey_carries_its_own_code_and_a_gold_okey_mark() -> None:
    html = tile("B7", "B7")
    assert attr(html, "data-tile") == "B7"
    assert {"tile-wild", "tile-B"} <= classes(html)
    assert "tile-fake" not in classes(html)
    assert attr(html, "aria-label") == "okey, blue 7"
    # The mark is drawn from data-mark: the visible text of the tile is its number alone.
    assert 'class="tile-okey" data-mark="okey"' in html
    # The same tile under another okey is ordinary, and the other copy colour is not wild.
    assert "tile-wild" not in classes(tile("B7", "R7"))
    assert "tile-wild" not in classes(tile("B7"))


def test_fake_and_wild_look_different_from_each_other() -> None:
    assert classes(tile("F", "K7")) ^ classes(tile("K7", "K7")) >= {"tile-fake", "tile-wild"}


@pytest.mark.parametrize(
    ("token", "own", "stands", "label"),
    [
        ("B7:R2", "tile-B", "R", "okey, blue 7, standing for red 2"),
        ("K13:Y12", "tile-K", "Y", "okey, black 13, standing for yellow 12"),
        ("R1:B13", "tile-R", "B", "okey, red 1, standing for blue 13"),
    ],
)
def test_a_meld_token_shows_what_the_wild_okey_stands_for(
    token: str, own: str, stands: str, label: str
) -> None:
    okey = token.split(":")[0]
    for given in (okey, None):  # the suffix alone says it is wild
        html = tile(token, given)
        assert attr(html, "data-tile") == token
        assert {"tile-wild", "tile-has-as", own} <= classes(html)
        assert attr(html, "aria-label") == label
        assert f'class="tile-as tile-as-{stands}"' in html
        assert f"={token.split(':')[1][1:]}<" in html


def test_a_selectable_tile_is_a_toggle_button() -> None:
    html = tile("R5", "B7", selectable=True)
    assert attr(html, "role") == "button"
    assert attr(html, "tabindex") == "0"
    assert attr(html, "aria-pressed") == "false"
    pressed = tile("R5", "B7", selectable=True, pressed=True, css="tile-sm")
    assert attr(pressed, "aria-pressed") == "true"
    assert "tile-sm" in classes(pressed)


def test_the_label_is_one_line_of_words_in_any_language() -> None:
    with translation.override("tr"):
        html = tile("F", "B7")
    # Turkish words where the catalogue is compiled, English ones where it is not: either way
    # the label is one line of words and never the notation.
    assert "\n" not in attr(html, "aria-label")
    assert attr(html, "aria-label") != "F"


# Every state a tile is drawn in: each tile, and each okey token for a few meanings, under no
# okey, under an okey it is not, and as the okey (a fake then plays as it).
TOKENS = [f"{okey}:{stands}" for okey in NAMES[:-1] for stands in ("R1", "B12", "K13")]
OKEYS = ["", "B7", "K13", "R1"]
STATES = [
    {"code": code, "okey": okey, "selectable": selectable, "pressed": pressed, "css": css}
    for code in (*NAMES, *TOKENS)
    for okey in (*OKEYS, code.split(":")[0] if code != "F" else "Y5")
    for selectable, pressed in ((False, False), (True, False), (True, True))
    for css in ("", "tile-sm", "feedable")
]


def test_every_state_of_every_tile_is_one_element_carrying_its_notation() -> None:
    """The partial (templates/jinja2/games/tile.jinja) draws each state as one balanced
    ``<span>`` whose data-tile is the notation given, a toggle button exactly when selectable."""
    for s in STATES:
        html = tile(**s)
        assert attr(html, "data-tile") == s["code"], s
        assert html.count("<span") == html.count("</span>") and html.endswith("</span>"), s
        assert not re.search(r">\s+<", html), s
        assert (attr(html, "role") == "button") == s["selectable"], s
        if s["selectable"]:
            assert attr(html, "aria-pressed") == ("true" if s["pressed"] else "false"), s
        assert set(s["css"].split()) <= classes(html), s


def test_a_row_of_tiles_keeps_its_order_and_escapes_what_goes_between() -> None:
    row = tags.tiles(["R5", "F", "B7:K2"], "B7", css="tile-sm", sep=" <&> ")
    expected = [tile(code, "B7", css="tile-sm") for code in ("R5", "F", "B7:K2")]
    assert row == " &lt;&amp;&gt; ".join(expected)
    assert tags.tiles([], "B7") == "" and tags.tiles(None) == ""


def test_a_rack_row_has_a_slot_per_place_with_its_gaps() -> None:
    row = tags.rack_slots(["R5", None, "K7", ""], "B7", {"K7"})
    slots = re.findall(r'<div class="slot">(.*?)</div>', row)
    assert slots == [
        tile("R5", "B7", selectable=True),
        "",
        tile("K7", "B7", selectable=True, css="feedable"),
        "",
    ]
