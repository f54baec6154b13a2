"""The four variants and their table options, with the defaults RULES.md gives."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

CLASSIC, DUZ, OKEY51, GOBEK17 = "classic", "duz", "okey51", "gobek17"
VARIANTS = (CLASSIC, DUZ, OKEY51, GOBEK17)
# The variants where a seat opens on the table (melds or pairs) and finishes from there; in the
# others (closed) a seat finishes by showing a whole rack.
OPEN_VARIANTS = (OKEY51, GOBEK17)
TIMERS = (0, 15, 30, 60)


class OptionsError(ValueError):
    """Table options that the variant does not accept."""


@dataclass(frozen=True)
class Choice:
    default: Any
    allowed: tuple[Any, ...] | None = None  # None: any int in range
    low: int = 0
    high: int = 0


_BOOL = (False, True)

OPTIONS: dict[str, dict[str, Choice]] = {
    CLASSIC: {
        "scoring": Choice("countdown", ("countdown", "plus_minus")),
        "start_score": Choice(20, None, 1, 1000),
        "hands": Choice(10, None, 1, 100),
        "wrap_13_1": Choice(True, _BOOL),
        "assisted": Choice(False, _BOOL),
        "timer": Choice(30, TIMERS),
    },
    DUZ: {
        "wrap_13_1": Choice(True, _BOOL),
        "assisted": Choice(False, _BOOL),
        "timer": Choice(30, TIMERS),
    },
    OKEY51: {
        "doubling": Choice(True, _BOOL),
        "hands": Choice(1, (1, 3)),
        "partners": Choice(False, _BOOL),
        "assisted": Choice(False, _BOOL),
        "wrap_13_1": Choice(True, _BOOL),
        "timer": Choice(30, TIMERS),
    },
    GOBEK17: {
        "hands": Choice(1, None, 1, 20),
        "partners": Choice(False, _BOOL),
        "give_back_penalty": Choice(0, (0, 500)),
        "assisted": Choice(False, _BOOL),
        "wrap_13_1": Choice(False, _BOOL),
        "timer": Choice(30, TIMERS),
    },
}

PLAYERS: dict[str, tuple[int, ...]] = {
    CLASSIC: (2, 3, 4),
    DUZ: (4,),
    OKEY51: (4,),
    GOBEK17: (4,),
}


def default_options(variant: str) -> dict[str, Any]:
    """The variant's table options with their defaults."""
    if variant not in OPTIONS:
        raise OptionsError(f"unknown variant {variant!r}; one of {', '.join(VARIANTS)}")
    return {k: c.default for k, c in OPTIONS[variant].items()}


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


def is_open_variant(variant: str) -> bool:
    """Whether seats open on the table in ``variant`` (okey51, gobek17), not finish closed."""
    return variant in OPEN_VARIANTS


def has_indicator_show(variant: str) -> bool:
    """Whether a seat may show the indicator for points in ``variant`` (classic only: before
    its first draw or discard, once a hand)."""
    return variant == CLASSIC


def has_pairs(variant: str) -> bool:
    """Whether pairs count in ``variant``: a seven-pairs finish (classic) or a pairs opening
    (okey51, gobek17). Düz Okey has none."""
    return variant != DUZ


def check_players(variant: str, players: int, options: Mapping[str, Any] | None = None) -> None:
    """Raise :class:`OptionsError` unless ``variant`` is played by ``players`` (with ``options``:
    partners are two against two, so they need four)."""
    if players not in PLAYERS[variant]:
        allowed = ", ".join(str(p) for p in PLAYERS[variant])
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
