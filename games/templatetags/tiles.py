"""``{% tile %}``: one tile's HTML. Every tile the site draws comes from one Jinja2 partial,
``templates/jinja2/games/tile.jinja``, through ``_html`` here, which renders it once per tile,
okey, state and language and keeps it (a page draws dozens of tiles, a socket frame as many).

    {% load tiles %}
    {% tile code okey %}                          {# a board tile #}
    {% tile code okey selectable=True %}          {# a rack tile (a toggle button) #}
    {% tile code okey css="tile-sm" %}            {# extra classes on the root element #}
    {% tiles codes okey css="tile-sm" %}          {# a row of tiles (sep: between them) #}
    {% rack_slots row okey feedable %}            {# a rack row: a .slot per place #}

The arguments:

- ``code``: the tile in RULES.md notation: "R5", "K13", "F" (a fake okey), or a meld token
  "B7:R2" (a wild okey B7 standing for R2);
- ``okey``: the hand's okey, e.g. "B7" (optional). A tile equal to it is the wild okey; a fake
  shows the okey's identity as a small "= 7" hint. Without it only a token with a ":X" suffix
  is known to be wild;
- ``selectable``: the tile is a toggle button (``role="button"``, ``tabindex="0"``,
  ``aria-pressed``), for the rack; ``pressed``: a selectable tile that is selected;
- ``css``: extra classes on the root element ("tile-sm", "feedable").

The root element is ``<span class="tile ..." data-tile="...">``: ``data-tile`` is the notation
as given ("F" for a fake, the wild okey its own code, a meld token with its suffix). Classes:
``tile-R`` / ``tile-Y`` / ``tile-B`` / ``tile-K`` (colour; none for a fake), ``tile-fake``,
``tile-wild``, ``tile-has-as`` (shows a "= X" hint). The aria-label and the title say the tile
in words ("red 5", "fake okey", "okey, black 7"), in translatable strings. Styles:
``static/css/site.css``, "Tiles". ``tests/pages/test_tiles.py`` checks this contract."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django import template
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, gettext, pgettext

from games.jinja import render
from games.messages import tile_colour

register = template.Library()


def _label(kind: str, colour: str, number: str, as_tile: str) -> str:
    """The tile in words, for screen readers and the tooltip."""
    as_colour, as_number = tile_colour(as_tile[:1]), as_tile[1:]
    if kind == "fake":
        if as_tile:
            return gettext("fake okey, plays as %(colour)s %(number)s") % {
                "colour": as_colour,
                "number": as_number,
            }
        return gettext("fake okey")
    if kind == "wild":
        if as_tile:
            text = gettext("okey, %(colour)s %(number)s, standing for %(as_colour)s %(as_number)s")
            return text % {
                "colour": colour,
                "number": number,
                "as_colour": as_colour,
                "as_number": as_number,
            }
        return gettext("okey, %(colour)s %(number)s") % {"colour": colour, "number": number}
    return gettext("%(colour)s %(number)s") % {"colour": colour, "number": number}


@lru_cache(maxsize=8192)
def _html(code: str, okey: str, selectable: bool, pressed: bool, css: str, language: Any) -> str:
    """The tile's HTML (``language``: the active one, part of the cache key only)."""
    c = code[:1]
    n = code[1:3].replace(":", "")
    if c == "F":
        kind, as_tile = "fake", okey
    elif code[2:3] == ":":
        kind, as_tile = "wild", code[3:]
    elif code[3:4] == ":":
        kind, as_tile = "wild", code[4:]
    elif okey and c + n == okey:
        kind, as_tile = "wild", ""
    else:
        kind, as_tile = "plain", ""
    return render(
        "games/tile.jinja",
        code=code,
        kind=kind,
        colour=c,
        number=n,
        as_tile=as_tile,
        label=_label(kind, tile_colour(c), n, as_tile),
        okey_mark=pgettext("mark on the wild tile", "okey"),
        selectable=selectable,
        pressed=pressed,
        css=css,
    )


@receiver(setting_changed, dispatch_uid="games.tiles.forget")
def _forget(*, setting: str, **kwargs: Any) -> None:
    """Other catalogues (tests compile theirs into another ``LOCALE_PATHS``): build again."""
    if setting in ("LOCALE_PATHS", "LANGUAGES", "LANGUAGE_CODE", "INSTALLED_APPS"):
        _html.cache_clear()
        _slot.cache_clear()


def tile_html(
    code: Any, okey: Any = "", *, selectable: Any = False, pressed: Any = False, css: Any = ""
) -> SafeString:
    """One tile (the arguments are the module's), as safe HTML."""
    code = "" if code is None else str(code)
    okey = str(okey) if okey else ""
    css = str(css) if css else ""
    html = _html(code, okey, bool(selectable), bool(pressed), css, get_language())
    return mark_safe(html)  # noqa: S308 - every value in it is escaped above


@register.simple_tag
def tile(
    code: Any, okey: Any = "", selectable: Any = False, pressed: Any = False, css: Any = ""
) -> SafeString:
    """``{% tile code okey selectable=... pressed=... css=... %}``: see the module."""
    return tile_html(code, okey, selectable=selectable, pressed=pressed, css=css)


@register.simple_tag
def tiles(codes: Any, okey: Any = "", css: Any = "", sep: str = "") -> SafeString:
    """``{% tiles codes okey css=... sep=... %}``: each tile of ``codes``, in order, with
    ``sep`` (plain text, escaped) between them."""
    if not codes:
        return mark_safe("")  # noqa: S308 - empty
    language = get_language()
    okey = str(okey) if okey else ""
    css = str(css) if css else ""
    joined = escape(sep).join(
        _html("" if c is None else str(c), okey, False, False, css, language) for c in codes
    )
    return mark_safe(joined)  # noqa: S308 - built from escaped parts


@register.simple_tag
def rack_slots(row: Any, okey: Any = "", feedable: Any = ()) -> SafeString:
    """``{% rack_slots row okey feedable %}``: a rack row, one ``<div class="slot">`` per
    place, holding its tile (selectable; with the class ``feedable`` when its code is in
    ``feedable``) or nothing (a gap)."""
    language = get_language()
    okey = str(okey) if okey else ""
    marked = set(feedable or ())
    slots = (
        _slot(str(code), okey, "feedable" if code in marked else "", language)
        if code
        else _slot("", "", "", language)
        for code in row or ()
    )
    return mark_safe("".join(slots))  # noqa: S308 - slots drawn by the partial


@lru_cache(maxsize=4096)
def _slot(code: str, okey: str, css: str, language: Any) -> str:
    """A rack slot holding a tile (or nothing when ``code`` is empty), drawn once and kept: a
    rack row joins sixteen of them, so each is drawn by the partial once per process."""
    drawn = _html(code, okey, True, False, css, language) if code else ""
    return render("games/rack_slot.jinja", tile=drawn)
