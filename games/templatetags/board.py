"""The board's per-seat parts of ``#table-live`` (``templates/games/table.html``), built in
Python from ``reads.table_context``'s plain data:

    {% load board %}
    <ul class="players">{% players seats my_seat hand live %}</ul>
    <div class="discards">{% discard_spots seats my_seat take_from assist public.okey %}</div>
    <div class="melds">{% meld_groups seats my_seat legal assist public.okey %}</div>

A table socket renders ``#table-live`` for every view after every move. Drawn by the template
language, these three loops over the seats (a dozen ``if``s, badges and words per seat) take
two thirds of that render. The markup, its classes and hooks are the ones docs/ARCHITECTURE.md
("The table page") documents and the tests read; the words are the same translatable strings
(looked up outside the f-strings, where ``makemessages`` finds them); every value is escaped.
"""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, ngettext

from games.templatetags.tiles import tile_html, tiles

register = template.Library()


def _safe(parts: list[str]) -> SafeString:
    return mark_safe("".join(parts))  # noqa: S308 - built from escaped parts


# Where each seat sits around the felt, seen from the viewer's seat (a spectator sees seat 0's
# place): play passes to the right, so the next seat is on the right and the previous one,
# whose discard the viewer may take, on the left (RULES.md: "the player on your left").
SIDES = {
    2: ("bottom", "top"),
    3: ("bottom", "right", "left"),
    4: ("bottom", "right", "top", "left"),
}
# A seat discards towards the next seat: its pile lies between the two, at a corner of the
# felt (or, with three players, at the empty place across).
CORNERS = {
    ("bottom", "right"): "br",
    ("right", "top"): "tr",
    ("top", "left"): "tl",
    ("left", "bottom"): "bl",
    ("right", "left"): "top",
    ("bottom", "top"): "br",
    ("top", "bottom"): "tl",
}


def sides(seats: Any, my_seat: Any) -> dict[int, str]:
    """Each seat's side of the felt ("bottom", "right", "top", "left") as the viewer sees it."""
    positions = [seat["position"] for seat in seats or ()]
    order = SIDES.get(len(positions))
    if order is None:
        return {}
    base = my_seat if isinstance(my_seat, int) else 0
    return {p: order[(p - base) % len(order)] for p in positions}


def corner(side: dict[int, str], position: int) -> str:
    """Where seat ``position``'s discards lie (``side``: :func:`sides`): between it and the
    next seat."""
    following = side.get((position + 1) % len(side), "") if side else ""
    return CORNERS.get((side.get(position, ""), following), "")


# Avatar colours: a name always gets the same one (eight hues, as classes: the CSP allows no
# style attribute).
AVATAR_HUES = 8


def avatar(seat: dict[str, Any]) -> str:
    """A round badge with the seat's initials (a bot's number and a cog), coloured by name."""
    if seat["empty"]:
        return '<span class="avatar empty" aria-hidden="true"></span>'
    if not seat["user_id"]:
        return f'<span class="avatar bot" aria-hidden="true">{escape(seat["position"] + 1)}</span>'
    words = [w for w in str(seat["display"]).replace("-", " ").split() if w[:1].isalnum()]
    initials = "".join(w[0] for w in words[:2]).upper() or "?"
    hue = sum(map(ord, str(seat["name"] or seat["display"]))) % AVATAR_HUES
    return f'<span class="avatar h{hue}" aria-hidden="true">{escape(initials)}</span>'


@register.simple_tag
def players(seats: Any, my_seat: Any, hand: Any, live: Any) -> SafeString:
    """Each seat's ``<li class="player">``: name, team, presence, turn, tiles in the rack
    (while the hand is ``live``), opening, score, and the move timer's countdown."""
    deadline = (hand or {}).get("deadline") if isinstance(hand, dict) else None
    side = sides(seats, my_seat)
    parts = []
    for seat in seats or ():
        mine = seat["position"] == my_seat
        css = "player" + (" is-me" if mine else "") + (" on-turn" if seat["on_turn"] else "")
        css += (" away" if seat["away"] else "") + (" empty" if seat["empty"] else "")
        where = escape(side.get(seat["position"], ""))
        parts.append(
            f'<li class="{css}" data-seat="{escape(seat["position"])}" data-side="{where}">'
        )
        parts.append(avatar(seat))
        parts.append(f'<span class="player-name">{escape(seat["display"])}</span>')
        if seat["team"] is not None:
            team = gettext("team %(n)s") % {"n": seat["team"] + 1}
            parts.append(f'<span class="badge team">{escape(team)}</span>')
        # Each word looked up outside its f-string, where makemessages finds it.
        if seat["away"]:
            away = escape(gettext("away — a bot is playing"))
            parts.append(f'<span class="badge away">{away}</span>')
        elif seat["user_id"] and seat["here"]:
            here = escape(gettext("here"))
            parts.append(f'<span class="badge here">{here}</span>')
        elif seat["user_id"]:
            offline = escape(gettext("not connected"))
            parts.append(f'<span class="badge offline">{offline}</span>')
        if seat["on_turn"]:
            to_play = escape(gettext("to play"))
            parts.append(f'<span class="badge turn">{to_play}</span>')
        if seat["opened"]:
            opened = escape(_opened(seat["opened"], seat["opened_with"] or {}))
            parts.append(
                f'<span class="badge" data-opened="{escape(seat["opened"])}">{opened}</span>'
            )
        stats = []
        if seat["rack_count"] is not None and live:
            n = seat["rack_count"]
            count = escape(ngettext("%(n)s tile", "%(n)s tiles", n) % {"n": n})
            title = escape(gettext("tiles in the rack"))
            stats.append(
                f'<span class="player-tiles" title="{title}" data-tiles="{escape(n)}">'
                f"{count}</span>"
            )
        if seat["score"] is not None:
            score = escape(seat["score"])
            label = escape(gettext("%(score)s points") % {"score": seat["score"]})
            stats.append(f'<span class="player-score" data-score="{score}">{label}</span>')
        if stats:
            parts.append(f'<span class="player-stats">{" · ".join(stats)}</span>')
        if seat.get("may_sit"):
            sit = escape(gettext("Sit here"))
            position = escape(seat["position"])
            parts.append(
                f'<button type="button" class="sit" data-action="sit" data-seat="{position}">'
                f"{sit}</button>"
            )
        if seat["on_turn"] and deadline:
            css = "countdown is-mine" if mine else "countdown"
            parts.append(
                f'<div class="{css}" data-deadline="{escape(deadline)}">'
                '<div class="countdown-bar"></div><span class="countdown-label"></span></div>'
            )
        parts.append("</li>")
    return _safe(parts)


def _opened(opened: str, opened_with: dict[str, Any]) -> str:
    """How a seat opened, in words (with pairs, or with melds worth a total)."""
    if opened == "pairs":
        if opened_with.get("pairs"):
            return gettext("opened with %(n)s pairs") % {"n": opened_with["pairs"]}
        return gettext("opened with pairs")
    if opened_with.get("total"):
        return gettext("opened with %(total)s") % {"total": opened_with["total"]}
    return gettext("opened")


@register.simple_tag
def discard_spots(seats: Any, my_seat: Any, take_from: Any, assist: Any, okey: Any) -> SafeString:
    """Each seat's discard spot: its top discard, and the earlier ones folded away; the one
    the viewer may take from is ``takeable`` (and ``workable`` when the assist says its tile
    fits a meld); the viewer's own is where a dragged tile is discarded."""
    workable = ((assist or {}).get("workable_discard") or {}) if isinstance(assist, dict) else {}
    side = sides(seats, my_seat)
    parts = []
    for seat in seats or ():
        position, discards = seat["position"], seat["discards"]
        mine, takeable = position == my_seat, position == take_from
        fits = bool(workable.get("workable")) and takeable
        css = "discard-spot" + (" is-me" if mine else "") + ("" if discards else " empty")
        css += (" takeable" if takeable else "") + (" workable" if fits else "")
        where = corner(side, position)
        attrs = f' data-seat="{escape(position)}" data-corner="{where}"'
        if fits:
            title = escape(gettext("This discard works for you: it fits a meld"))
            attrs += f' data-workable="{escape(workable.get("tile"))}" title="{title}"'
        if mine:
            attrs += ' data-drop="discard"'
        parts.append(f'<div class="{css}"{attrs}>')
        parts.append(f'<span class="discard-label">{escape(seat["display"])}</span>')
        if seat["top_discard"]:
            parts.append(tile_html(seat["top_discard"], okey))
        if len(discards) > 1:
            n = len(discards)
            count = ngettext("%(n)s tile", "%(n)s tiles", n) % {"n": n}
            parts.append(
                f'<details class="discard-pile"><summary>{escape(count)}</summary>'
                f"{tiles(discards[:-1], okey, css='tile-sm')}</details>"
            )
        parts.append("</div>")
    return _safe(parts)


@register.simple_tag
def meld_groups(seats: Any, my_seat: Any, legal: Any, assist: Any, okey: Any) -> SafeString:
    """Each seat's melds on the table (open variants), with the buttons to add the selected
    tile to a meld or swap it for a meld's okey, and the assist's one-tap feeds."""
    legal = set(legal or ())
    feedable = ((assist or {}).get("feedable") or ()) if isinstance(assist, dict) else ()
    add, swap = "add" in legal, "swap" in legal
    parts = []
    for seat in seats or ():
        if not seat["melds"]:
            continue
        css = "meld-group is-me" if seat["position"] == my_seat else "meld-group"
        owner = escape(seat["display"])
        if seat["opened"] == "pairs":
            pairs = escape(gettext("pairs"))
            owner += f" · {pairs}"
        parts.append(f'<div class="{css}" data-owner="{escape(seat["position"])}">')
        parts.append(f'<p class="meld-owner">{owner}</p><ul class="meld-list">')
        for meld in seat["melds"]:
            meld_id = escape(meld["id"])
            pairs = meld["kind"] == "pair"
            css = "meld pairs" if pairs else "meld"
            parts.append(f'<li class="{css}" data-meld="{meld_id}">')
            parts.append(tiles(meld["tiles"], okey, css="tile-sm"))
            if add and not pairs:
                label = escape(gettext("Add the selected tile to this meld"))
                parts.append(
                    f'<button type="button" data-action="add" data-meld="{meld_id}"'
                    f' aria-label="{label}">+</button>'
                )
            if swap and not pairs:
                label = escape(gettext("Swap the selected tile for the okey in this meld"))
                parts.append(
                    f'<button type="button" data-action="swap" data-meld="{meld_id}"'
                    f' aria-label="{label}">⇄</button>'
                )
            for f in feedable:
                if add and meld["id"] in f["add"]:
                    label = gettext("Add your %(tile)s to this meld") % {"tile": f["tile"]}
                    parts.append(_feed("add", "+", f["tile"], meld_id, label))
                if swap and meld["id"] in f["swap"]:
                    label = gettext("Give your %(tile)s for the okey in this meld") % {
                        "tile": f["tile"]
                    }
                    parts.append(_feed("swap", "⇄", f["tile"], meld_id, label))
            parts.append("</li>")
        parts.append("</ul></div>")
    return _safe(parts)


def _feed(do: str, sign: str, tile: str, meld_id: str, label: str) -> str:
    """A one-tap feed button: the tile's colour and number ("★" for the fake okey)."""
    colour, number = escape(tile[:1]), escape(tile[1:] or "★")
    return (
        f'<button type="button" class="feed" data-action="feed" data-do="{do}"'
        f' data-feed="{escape(tile)}" data-meld="{meld_id}" aria-label="{escape(label)}">'
        f'{sign}<span class="feed-tile tile-{colour}">{number}</span></button>'
    )
