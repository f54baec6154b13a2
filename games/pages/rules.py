"""The rules pages: /rules/ (an index) and /rules/<variant>/ (one variant's rules, options and
decisions). The rule texts live in templates/games/rules/<variant>.html; the options table is
read from games.engine.variants, so its names, allowed values and defaults are the engine's."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from games.engine.variants import (
    OPTIONS,
    PLAYERS,
    VARIANTS,
    Choice,
    has_pairs,
    is_open_variant,
    rules_for,
)

NAMES = {
    "classic": pgettext_lazy("variant name", "Classic Okey"),
    "duz": pgettext_lazy("variant name", "Düz Okey"),
    "okey51": pgettext_lazy("variant name", "Okey 51"),
    "gobek17": pgettext_lazy("variant name", "Göbek 17"),
    "okey101": pgettext_lazy("variant name", "101 Okey"),
}

SUMMARIES = {
    "classic": _(
        "Closed hand: arrange 14 tiles into runs and sets (or seven pairs) and throw the 15th. "
        "Everyone starts at 20 and loses points when someone else finishes."
    ),
    "duz": _(
        "Closed hand without pairs or colour finishes: the others score the face value left "
        "outside their best grouping. Lowest wins."
    ),
    "okey51": _(
        "Open table: open with melds totalling 51 or with five pairs, feed tiles onto any meld, "
        "swap out the okey. Penalty points; lowest total wins."
    ),
    "gobek17": _(
        "A fast 101 with 14 tiles: openings of 51 that always raise, pairs openings that raise "
        "too, 500-point penalties and doubling finishes. Lowest total wins."
    ),
    "okey101": _(
        "Open table with 21 tiles: open with melds worth 101 or with five pairs, add to any meld, "
        "swap okeys; a workable or okey throw costs 101. Lowest total wins."
    ),
}

LABELS = {
    "scoring": _("Scoring"),
    "start_score": _("Starting score"),
    "hands": _("Hands"),
    "wrap_13_1": _("1 after 13"),
    "assisted": _("Assisted play"),
    "timer": _("Move timer"),
    "doubling": _("Doubling"),
    "partners": _("Partners"),
    "give_back_penalty": _("Give-back penalty"),
    "add_limit": _("Adds per meld end"),
    "from_hand_below_bar": _("Finish from the hand below the bar"),
}

HELP = {
    "scoring": _(
        "countdown: everyone starts at the starting score and loses points when another player "
        "finishes; plus/minus: the winner gets +1 and everyone else −1 each hand."
    ),
    "start_score": _("Countdown scoring: the score every player starts the game with."),
    "hands": _("How many hands the game lasts; the totals add up over the hands."),
    "wrap_13_1": _(
        "Whether 1 may also follow 13 in a run (12-13-1, 11-12-13-1). 13-1-2 is never a run."
    ),
    "assisted": _(
        "The table marks workable discards, sorts your rack into melds and offers one-tap "
        "feeding. The rules stay the same; only the help differs."
    ),
    "timer": _(
        "Seconds for each move. When your time runs out the server's bot plays your turn. "
        "0 means no timer."
    ),
    "doubling": _(
        "After someone has opened with melds, a later melds opening must beat the highest melds "
        "opening so far (68 → 69 or more)."
    ),
    "partners": _(
        "Two against two: partners sit across the table (seats 1 and 3 against seats 2 and 4), "
        "never pay each other penalties, and a team's total is its two players' sum."
    ),
    "give_back_penalty": _("What giving back a tile taken from the side costs you."),
    "add_limit": _(
        "How many tiles one player may add to the same end of the same meld in one turn "
        "(0: no limit)."
    ),
    "from_hand_below_bar": _(
        "An opening below the bar is accepted when it leaves one tile, which you then throw to "
        "finish."
    ),
}

VARIANT_HELP = {
    ("classic", "hands"): _(
        "Plus/minus scoring: how many hands the game lasts; the highest total wins."
    ),
    ("okey101", "doubling"): _(
        "Openings raise: a melds opening must beat the best melds opening so far (116 → 117), "
        "and a pairs opening the most pairs so far (5 → 6)."
    ),
}

ON, OFF = pgettext_lazy("option value", "on"), pgettext_lazy("option value", "off")
# Options whose values are words: each value as players read it.
VALUE_WORDS = {
    ("scoring", "countdown"): pgettext_lazy("option value", "countdown"),
    ("scoring", "plus_minus"): pgettext_lazy("option value", "plus/minus"),
}


def _value(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return str(ON if value else OFF)
    if key == "timer":
        return str(OFF) if value == 0 else str(_("%(n)s s") % {"n": value})
    return str(VALUE_WORDS.get((key, value), value))


def _allowed(key: str, choice: Choice) -> str:
    if choice.allowed is None:
        return f"{choice.low}–{choice.high}"
    return ", ".join(_value(key, v) for v in choice.allowed)


def option_rows(variant: str) -> list[dict[str, Any]]:
    """One row per option of the variant: key, label, help, allowed values and default."""
    return [
        {
            "key": key,
            "label": LABELS.get(key, key),
            "help": VARIANT_HELP.get((variant, key), HELP.get(key, "")),
            "allowed": _allowed(key, choice),
            "default": _value(key, choice.default),
        }
        for key, choice in OPTIONS[variant].items()
    ]


def _variants() -> list[dict[str, Any]]:
    return [
        {"key": v, "name": NAMES[v], "summary": SUMMARIES[v], "players": PLAYERS[v]}
        for v in VARIANTS
    ]


def rules_index(request: HttpRequest) -> HttpResponse:
    return render(request, "games/rules.html", {"variants": _variants(), "variant": None})


def rules(request: HttpRequest, variant: str) -> HttpResponse:
    if variant not in VARIANTS:
        raise Http404("no such variant")
    players = PLAYERS[variant]
    rules = rules_for(variant)
    context = {
        "variants": _variants(),
        "variant": variant,
        "name": NAMES[variant],
        "summary": SUMMARIES[variant],
        "players_min": min(players),
        "players_max": max(players),
        "options": option_rows(variant),
        "open_variant": is_open_variant(variant),
        "rack_sizes": rules.rack_sizes,
        "wrap_fixed": rules.wrap_13_1 is not None,
        "dry_wall_at_turn_start": rules.dry_wall_at_turn_start,
        "has_pairs": has_pairs(variant),
        "rules_template": f"games/rules/{variant}.html",
    }
    return render(request, "games/rules.html", context)
