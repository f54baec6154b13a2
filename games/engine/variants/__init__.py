"""The variants: each has one module here (``classic``, ``duz``, ``okey51``, ``gobek17``,
``okey101``) holding its :class:`~games.engine.variants.rules.Rules`: its table options and
their defaults, deal sizes, openings, moves, penalties, doublings and scores, as RULES.md gives
them. The engine asks :func:`rules_for` instead of naming a variant; docs/engine.md says how to
add one.

    >>> from games.engine.variants import rules_for
    >>> rules_for("okey101").melds_bar, rules_for("okey101").rack_sizes
    (101, (22, 21))
    >>> rules_for("gobek17").pairs_bar
    4
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import classic, duz, gobek17, okey51, okey101
from .rules import TIMERS, Choice, Rules

RULES: dict[str, Rules] = {}
OPTIONS: dict[str, Mapping[str, Choice]] = {}
PLAYERS: dict[str, tuple[int, ...]] = {}


def register(rules: Rules) -> Rules:
    """Make ``rules`` a variant the engine plays (its key, options and players)."""
    RULES[rules.key] = rules
    OPTIONS[rules.key] = rules.options
    PLAYERS[rules.key] = rules.players
    return rules


def forget(key: str) -> None:
    """Undo :func:`register` (a variant tried out, as in docs/engine.md)."""
    for registry in (RULES, OPTIONS, PLAYERS):
        registry.pop(key, None)


for _module in (classic, duz, okey51, gobek17, okey101):
    register(_module.RULES)

CLASSIC, DUZ, OKEY51, GOBEK17, OKEY101 = "classic", "duz", "okey51", "gobek17", "okey101"
# The variants the engine ships, in the site's order.
VARIANTS = tuple(RULES)
# The variants where a seat opens on the table (melds or pairs) and finishes from there; in the
# others (closed) a seat finishes by showing a whole rack.
OPEN_VARIANTS = tuple(k for k, r in RULES.items() if r.open_table)


class OptionsError(ValueError):
    """Table options that the variant does not accept."""


def rules_for(variant: str) -> Rules:
    """The :class:`Rules` of ``variant``; :class:`OptionsError` for an unknown one."""
    try:
        return RULES[variant]
    except KeyError:
        raise OptionsError(f"unknown variant {variant!r}; one of {', '.join(VARIANTS)}") from None


def default_options(variant: str) -> dict[str, Any]:
    """The variant's table options with their defaults."""
    return rules_for(variant).default_options()


def validate_options(variant: str, options: Mapping[str, Any] | None) -> dict[str, Any]:
    """Options merged over the defaults; raise :class:`OptionsError` on anything unknown."""
    merged = default_options(variant)
    for key, value in (options or {}).items():
        choice = OPTIONS[variant].get(key)
        if choice is None:
            raise OptionsError(f"{variant} has no option {key!r}")
        if isinstance(choice.default, bool):
            if not isinstance(value, bool):
                raise OptionsError(f"{key} is true or false")
        elif isinstance(choice.default, int):
            if isinstance(value, bool) or not isinstance(value, int):
                raise OptionsError(f"{key} is a whole number")
            if choice.allowed is None and not choice.low <= value <= choice.high:
                raise OptionsError(f"{key} is between {choice.low} and {choice.high}")
        if choice.allowed is not None and value not in choice.allowed:
            allowed = ", ".join(str(a) for a in choice.allowed)
            raise OptionsError(f"{key} is one of {allowed}")
        merged[key] = value
    return merged


def quick_options(variant: str) -> tuple[str, ...]:
    """The options a player chooses before sitting down in ``variant`` (each with a short
    list of values: ``OPTIONS[variant][name].allowed``)."""
    return rules_for(variant).quick_options


def is_open_variant(variant: str) -> bool:
    """Whether seats open on the table in ``variant`` (okey51, gobek17, okey101), not finish
    closed."""
    return rules_for(variant).open_table


def has_indicator_show(variant: str) -> bool:
    """Whether a seat may show the indicator for points in ``variant`` (classic only: before
    its first draw or discard, once a hand)."""
    return rules_for(variant).indicator_show


def has_pairs(variant: str) -> bool:
    """Whether pairs count in ``variant``: a seven-pairs finish (classic) or a pairs opening
    (the open variants). Düz Okey has none."""
    return rules_for(variant).has_pairs


def check_players(variant: str, players: int, options: Mapping[str, Any] | None = None) -> None:
    """Raise :class:`OptionsError` unless ``variant`` is played by ``players`` (with ``options``:
    partners are two against two, so they need four)."""
    rules_for(variant)
    allowed_players = PLAYERS[variant]
    if players not in allowed_players:
        allowed = ", ".join(str(p) for p in allowed_players)
        raise OptionsError(f"{variant} is played by {allowed} players")
    if options is not None and options.get("partners") and players != 4:
        raise OptionsError("partners need four players")


def check_table(variant: str, options: Mapping[str, Any] | None, players: int) -> dict[str, Any]:
    """A table's options merged over the defaults, checked with its number of players; raise
    :class:`OptionsError` on anything the rules do not allow."""
    merged = validate_options(variant, options)
    check_players(variant, players, merged)
    return merged


def team_of(seat: int, options: Mapping[str, Any]) -> int | None:
    """The side of ``seat`` with partners (0: seats 0 and 2, 1: seats 1 and 3, partners sitting
    across the table), else None."""
    return seat % 2 if options.get("partners") else None


__all__ = [
    "CLASSIC",
    "DUZ",
    "GOBEK17",
    "OKEY51",
    "OKEY101",
    "OPEN_VARIANTS",
    "OPTIONS",
    "PLAYERS",
    "RULES",
    "TIMERS",
    "VARIANTS",
    "Choice",
    "OptionsError",
    "Rules",
    "check_players",
    "check_table",
    "default_options",
    "forget",
    "has_indicator_show",
    "has_pairs",
    "is_open_variant",
    "quick_options",
    "register",
    "rules_for",
    "team_of",
    "validate_options",
]
