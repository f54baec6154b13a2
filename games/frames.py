"""The table's two live fragments, ``#table-live`` (the board everyone sees, with the viewer's
move buttons) and ``#rack-area`` (the viewer's own rack), rendered from
``reads.table_context``: by the table socket for every viewer after every move, by the move
endpoint's answer, and inside the table page (``templates/games/table.html``).

They are Jinja2 templates (``templates/jinja2/games/table_live.jinja``, ``rack_area.jinja``;
games/jinja.py says why Jinja2) and their words are looked up here, in Python, where
``makemessages`` finds them: once per language and process (:func:`words`), not once per frame.
A frame holds about fifty words; looked up one by one through Django's ``{% translate %}`` they
were a fifth of a seat's frame (docs/PERFORMANCE.md, "The table's words once per language").

The markup, its classes and hooks are the ones docs/ARCHITECTURE.md ("The table page")
documents and the tests read.
"""

from __future__ import annotations

import json
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from django.core.signals import setting_changed
from django.dispatch import receiver
from django.template import engines
from django.template.defaultfilters import urlencode
from django.urls import get_script_prefix, reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language, pgettext_lazy
from django.utils.translation import gettext_lazy as _

from games.templatetags.board import discard_spots, meld_groups, players
from games.templatetags.tiles import rack_slots, tile_html, tiles

# Every word of the two fragments, by the name the templates use (``w.name``). A word with
# ``%(x)s`` is filled in the template (``w.hand_number % {"n": ...}``).
WORDS: dict[str, Any] = {
    # The away notice.
    "away": _("You are away: a bot is playing your turns."),
    "im_back": _("I'm back"),
    # The status line.
    "per_move": _("%(s)s s per move"),
    "hand_number": _("hand %(n)s"),
    "fair_deal": _("Fair deal"),
    "fair_deal_text": _(
        "Before the deal the site commits to the shuffle's seed; when the hand ends the seed "
        "is shown, and anyone can check that it gives this deal."
    ),
    "commitment": _("Seed commitment: %(c)s"),
    "seed": _("Seed: %(s)s"),
    "check_deal": _("Check the deal"),
    "hidden": _("Hidden from spectators"),
    "hide_title": _("This hand is hidden from spectators until it ends."),
    "hide": _("Hide from spectators"),
    "leave_rated": _(
        "Leave this match? A bot plays your seat for the rest of it, and you are placed last "
        "in the ratings."
    ),
    "leave_confirm": _("Leave this match? A bot plays your seat for the rest of it."),
    "leave": _("Leave table"),
    # The middle of the felt.
    "teams": _("Teams: %(a)s · %(b)s"),
    "veiled": _(
        "A player has hidden hand %(n)s from spectators. The board shows again when the hand ends."
    ),
    "indicator": _("Indicator"),
    "okey": _("Okey"),
    "pile": _("Pile"),
    "draw_pile": _("Draw from the pile"),
    "finish_here": _("Finish here"),
    "log": _("What happened"),
    "scores": _("Scores"),
    "practice_again": _("Practice again"),
    "melds": _("Melds on the table"),
    # The selected tiles' worth, under the rack: against the opening bar, then in points.
    "weight_bar": _("%(total)s / %(bar)s"),
    "weight_pairs": _("%(n)s / %(need)s pairs"),
    "weight_points": _("%(total)s points"),
    "melds_open": _("Melds on the table (%(n)s)"),
    "melds_close": _("Close the melds"),
    # The end of a hand or match.
    "match_end": _("End of the match"),
    "hand_end": _("End of the hand"),
    "dry_wall": _("The pile ran dry"),
    "void": _("Four players opened with pairs: the hand is void and is dealt again."),
    "finished": _("%(name)s finished"),
    "doublings": _("Scores × %(m)s: %(reasons)s"),
    "player": _("Player"),
    "this_hand": _("This hand"),
    "total": _("Total"),
    "match_over": _("The match is over. Winner: %(names)s"),
    "final_ranking": _("Final ranking"),
    "place": _("Place"),
    "rematch": _("Rematch"),
    "new_game": _("New game"),
    "lobby": _("Back to lobby"),
    "waiting": _("Waiting for the others…"),
    "is_ready": pgettext_lazy("a player between hands", "ready"),
    "ready": _("Ready for the next hand"),
    "next_deal": _("The next hand is dealt in %(seconds)s s"),
    "replay": _("Replay this hand"),
    # The move buttons, each with its key.
    "moves": _("Moves"),
    "draw": _("Draw"),
    "draw_key": pgettext_lazy("key to draw", "d"),
    "take": _("Take the discard"),
    "take_key": pgettext_lazy("key to take", "t"),
    "discard": _("Discard the selected tile"),
    "discard_key": pgettext_lazy("key to discard", "x"),
    "finish": _("Finish with the selected tile"),
    "finish_key": pgettext_lazy("key to finish", "f"),
    "lay": _("Lay the selected tiles"),
    "lay_key": pgettext_lazy("key to lay", "l"),
    "open": _("Open with the selected tiles"),
    "open_key": pgettext_lazy("key to open", "o"),
    "open_pairs": _("Open: %(n)s pairs"),
    "open_total": _("Open: %(total)s"),
    "give_back": _("Give the tile back"),
    "give_back_key": pgettext_lazy("key to give back", "g"),
    "show_indicator": _("Show the indicator"),
    "open_hint": _(
        "To open: melds worth %(bar)s or more, or %(pairs)s pairs. Select the tiles (groups "
        "are split by gaps on your rack)."
    ),
    # The rack.
    "rack": _("Your rack"),
    "rack_row": _("Row %(n)s of your rack"),
    "sort_runs": _("Sort by runs"),
    "sort_sets": _("Sort by sets"),
    "sort_pairs": _("Arrange pairs"),
    "sort_melds": _("Arrange runs and sets"),
}


@lru_cache(maxsize=16)
def _words(language: str | None) -> SimpleNamespace:
    return SimpleNamespace(**{name: str(word) for name, word in WORDS.items()})


def words() -> SimpleNamespace:
    """:data:`WORDS` in the active language (``words().pile``), looked up once per language
    and kept. (Attributes rather than a dict: Jinja2 reads ``w.pile`` as an attribute first.)"""
    return _words(get_language())


@receiver(setting_changed, dispatch_uid="games.frames.forget")
def _forget(*, setting: str, **kwargs: Any) -> None:
    """Other catalogues (tests compile theirs into another ``LOCALE_PATHS``) or other URLs:
    look up again."""
    if setting in ("LOCALE_PATHS", "LANGUAGES", "LANGUAGE_CODE", "INSTALLED_APPS"):
        _words.cache_clear()
    if setting in ("ROOT_URLCONF", "FORCE_SCRIPT_NAME", "INSTALLED_APPS"):
        _reverse.cache_clear()


@lru_cache(maxsize=4096)
def _reverse(prefix: str, name: str, args: tuple[Any, ...]) -> str:
    return reverse(name, args=args)


def url(name: str, *args: Any) -> str:
    """``{% url name args %}`` (a frame names a few pages: each reversed once and kept)."""
    return _reverse(get_script_prefix(), name, args)


def with_invite(invite: Any) -> str:
    """The query that carries a private table's invite on to a link (``""`` for none)."""
    return "?invite=" + urlencode(invite) if invite else ""


# What the templates call: the board's per-seat parts and the tiles (their own modules say
# what each draws), and the links.
_PARTS = {
    "players": players,
    "discard_spots": discard_spots,
    "meld_groups": meld_groups,
    "tile": tile_html,
    "tiles": tiles,
    "rack_slots": rack_slots,
    "url": url,
    "with_invite": with_invite,
}


def _render(name: str, context: dict[str, Any], extra: dict[str, Any]) -> SafeString:
    template = engines["jinja2"].env.get_template(name)  # type: ignore[attr-defined]
    html = template.render({**context, **_PARTS, **extra, "w": words()})
    return mark_safe(html)  # noqa: S308 - autoescaped by Jinja2


def live(context: dict[str, Any], csrf_token: Any = None) -> SafeString:
    """``#table-live`` for the viewer of ``context`` (``reads.table_context``), in the active
    language. ``csrf_token``: the page's, for the end-of-match "New game" form (a socket's
    frame has none: the page's script adds the page's own when the form is sent)."""
    return _render("games/table_live.jinja", context, {"csrf_token": csrf_token or ""})


def rack(context: dict[str, Any]) -> SafeString:
    """``#rack-area``, the viewer's own rack (empty for a spectator), in the active language."""
    return _render("games/rack_area.jinja", context, {})


def rack_weight(weight: dict[str, Any] | None) -> SafeString:
    """``#rack-weight`` for a seat's page (``reads.rack_weight``), in the active language: what
    the selected tiles are worth as an opening ("87 / 101", "3 / 5 pairs") or, once opened, in
    points; and the stand's groups, valid or not, for the page to mark (``data-stand``)."""
    text, reached, stand = "", False, []
    if weight is not None:
        stand = weight["stand"]
        chosen = weight["selected"]
        groups = chosen["groups"]
        if groups and weight["open_variant"]:
            pairs = all(g["kind"] == "pair" for g in groups)
            w = words()
            if chosen["bar"] is not None and pairs:
                need = chosen["pairs_needed"]
                text = w.weight_pairs % {"n": chosen["pairs"], "need": need}
                reached = chosen["pairs"] >= need
            elif chosen["bar"] is not None:
                text = w.weight_bar % {"total": chosen["total"], "bar": chosen["bar"]}
                reached = chosen["total"] >= chosen["bar"]
            elif chosen["total"]:
                text = w.weight_points % {"total": chosen["total"]}
    return _render(
        "games/rack_weight.jinja",
        {"text": text, "reached": reached, "stand_json": json.dumps(stand)},
        {},
    )
