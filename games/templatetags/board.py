"""The board's per-seat parts of ``#table-live``, called by its template
(``templates/jinja2/games/table_live.jinja``, rendered by games/frames.py):

    <ul class="players">{{ players(seats, my_seat, hand, live) }}</ul>
    <div class="discards">{{ discard_spots(seats, my_seat, take_from, assist, okey) }}</div>
    <div class="melds">{{ meld_groups(seats, my_seat, legal, assist, okey, variant) }}</div>

A table socket renders ``#table-live`` for every view after every move, and these three loops
over the seats are most of it; so their markup is in Jinja2 partials
(``templates/jinja2/games/players.jinja``, ``discard_spots.jinja``, ``meld_groups.jinja``;
games/jinja.py says why), and each function here prepares a seat's words (translatable
strings, looked up in Python where ``makemessages`` finds them) and where it sits around the
felt. The classes and hooks are the ones docs/ARCHITECTURE.md ("The table page") documents and
the tests read.
"""

from __future__ import annotations

from typing import Any

from django.utils.safestring import SafeString
from django.utils.translation import gettext, ngettext

from games import engine
from games.jinja import render
from games.messages import tile_words
from games.templatetags.tiles import tile_html, tiles

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


def initials(seat: dict[str, Any]) -> str:
    """A player's avatar letters: the first letters of the first two words of the name."""
    words = [w for w in str(seat["display"]).replace("-", " ").split() if w[:1].isalnum()]
    return "".join(w[0] for w in words[:2]).upper() or "?"


def hue(seat: dict[str, Any]) -> int:
    """A player's avatar colour (0 to ``AVATAR_HUES`` - 1), the same for a name every time."""
    return sum(map(ord, str(seat["name"] or seat["display"]))) % AVATAR_HUES


def players(seats: Any, my_seat: Any, hand: Any, live: Any) -> SafeString:
    """Each seat's ``<li class="player">`` (``games/players.jinja``): name, team, presence,
    turn, tiles in the rack (while the hand is ``live``), opening, score, and the move timer's
    countdown."""
    deadline = (hand or {}).get("deadline") if isinstance(hand, dict) else None
    side = sides(seats, my_seat)
    shown = []
    for seat in seats or ():
        n, score = seat["rack_count"], seat["score"]
        shown.append(
            (
                seat,
                {
                    "mine": seat["position"] == my_seat,
                    "side": side.get(seat["position"], ""),
                    "initials": initials(seat) if seat["user_id"] else "",
                    "hue": hue(seat) if seat["user_id"] else 0,
                    "team": (
                        gettext("team %(n)s") % {"n": seat["team"] + 1}
                        if seat["team"] is not None
                        else ""
                    ),
                    "opened": (
                        _opened(seat["opened"], seat["opened_with"] or {}) if seat["opened"] else ""
                    ),
                    "tiles": (
                        ngettext("%(n)s tile", "%(n)s tiles", n) % {"n": n}
                        if n is not None and live
                        else ""
                    ),
                    "points": (
                        gettext("%(score)s points") % {"score": score} if score is not None else ""
                    ),
                    "may_sit": bool(seat.get("may_sit")),
                },
            )
        )
    return render("games/players.jinja", seats=shown, deadline=deadline, words=_seat_words())


def _seat_words() -> dict[str, str]:
    """The words every seat's badges share, in the active language."""
    return {
        "away": gettext("away — a bot is playing"),
        "here": gettext("here"),
        "offline": gettext("not connected"),
        "to_play": gettext("to play"),
        "tiles_title": gettext("tiles in the rack"),
        "sit": gettext("Sit here"),
    }


def _opened(opened: str, opened_with: dict[str, Any]) -> str:
    """How a seat opened, in words (with pairs, or with melds worth a total)."""
    if opened == "pairs":
        if opened_with.get("pairs"):
            return gettext("opened with %(n)s pairs") % {"n": opened_with["pairs"]}
        return gettext("opened with pairs")
    if opened_with.get("total"):
        return gettext("opened with %(total)s") % {"total": opened_with["total"]}
    return gettext("opened")


def discard_spots(seats: Any, my_seat: Any, take_from: Any, assist: Any, okey: Any) -> SafeString:
    """Each seat's discard spot (``games/discard_spots.jinja``): its top discard, and the
    earlier ones folded away; the one the viewer may take from is ``takeable`` (and
    ``workable`` when the assist says its tile fits a meld); the viewer's own is where a
    dragged tile is discarded."""
    workable = ((assist or {}).get("workable_discard") or {}) if isinstance(assist, dict) else {}
    side = sides(seats, my_seat)
    shown = []
    for seat in seats or ():
        position, n = seat["position"], len(seat["discards"])
        takeable = position == take_from
        shown.append(
            (
                seat,
                {
                    "mine": position == my_seat,
                    "takeable": takeable,
                    "take": (
                        gettext("Take %(tile)s") % {"tile": tile_words(seat["top_discard"])}
                        if takeable and seat["top_discard"]
                        else ""
                    ),
                    "fits": bool(workable.get("workable")) and takeable,
                    "corner": corner(side, position),
                    "count": ngettext("%(n)s tile", "%(n)s tiles", n) % {"n": n} if n > 1 else "",
                    # The tiles drawn here (from their cache): a call from the partial per
                    # tile costs ten times as much.
                    "top": tile_html(seat["top_discard"], okey) if seat["top_discard"] else "",
                    "earlier": tiles(seat["discards"][:-1], okey, css="tile-sm") if n > 1 else "",
                },
            )
        )
    return render(
        "games/discard_spots.jinja",
        seats=shown,
        workable_tile=workable.get("tile") or "",
        words={"workable": gettext("This discard works for you: it fits a meld")},
    )


def meld_groups(
    seats: Any,
    my_seat: Any,
    legal: Any,
    assist: Any,
    okey: Any,
    variant: Any = "",
    targets: Any = None,
) -> SafeString:
    """Each seat's melds on the table (open variants; ``games/meld_groups.jinja``), on the
    owner's side of the felt as the viewer sees it, with the buttons to add the selected tile
    to a meld or swap it for a meld's okey (``targets``: ``engine.meld_targets``, which rack
    tiles may go where; the page shows a button when the one selected tile is among them),
    to lay the selected pairs onto another pairs player's row, and the assist's one-tap
    feeds."""
    legal = set(legal or ())
    feedable = ((assist or {}).get("feedable") or ()) if isinstance(assist, dict) else ()
    add, swap = "add" in legal, "swap" in legal
    rules = engine.variants.rules_for(str(variant)) if variant else None
    targets = targets or {}
    adds, swaps = targets.get("add") or {}, targets.get("swap") or {}
    side = sides(seats, my_seat)
    opened = {seat["position"]: seat["opened"] for seat in seats or ()}
    mine = opened.get(my_seat)
    lays_pairs = (
        "lay" in legal
        and rules is not None
        and rules.pairs_onto_rows
        and (mine == "pairs" or (mine == "melds" and rules.melds_players_lay_pairs))
    )
    groups = []
    for seat in seats or ():
        if not seat["melds"]:
            continue
        onto = lays_pairs and seat["opened"] == "pairs" and seat["position"] != my_seat
        melds = []
        for meld in seat["melds"]:
            feeds = []
            for f in feedable:
                if add and meld["id"] in f["add"]:
                    label = gettext("Add your %(tile)s to this meld") % {"tile": f["tile"]}
                    feeds.append({"do": "add", "tile": f["tile"], "label": label})
                if swap and meld["id"] in f["swap"]:
                    label = gettext("Give your %(tile)s for the okey in this meld") % {
                        "tile": f["tile"]
                    }
                    feeds.append({"do": "swap", "tile": f["tile"], "label": label})
            drawn = tiles(meld["tiles"], okey, css="tile-sm")
            fits = {"add": adds.get(meld["id"], ()), "swap": swaps.get(meld["id"], ())}
            melds.append((meld, drawn, feeds, fits))
        groups.append((seat, melds, onto, side.get(seat["position"], "")))
    words = {
        "pairs": gettext("pairs"),
        "add": gettext("Add the selected tile to this meld"),
        "swap": gettext("Swap the selected tile for the okey in this meld"),
        "onto": gettext("Lay the selected pairs on this row"),
    }
    return render(
        "games/meld_groups.jinja",
        groups=groups,
        my_seat=my_seat,
        words=words,
    )
