"""Bots for every variant, at three levels, that see only their seat's view.

- ``random``: a random legal move.
- ``greedy``: keeps melds together, discards the least useful tile, opens as soon as it can,
  never makes a punished or workable discard or throws an okey when another choice exists, and
  takes a discard only when it can use it.
- ``strong``: scores each discard by how far it leaves the rack from a finish (closed variants:
  the least leftover) or from an opening / an empty rack (open variants), averaged over the
  tiles it has not seen, the way mahjong engines count shanten and useful draws; in open variants
  it feeds and steals only to hurt rivals, never its partner, and avoids handing the next seat
  a tile it just showed it wants.
- ``expert``: determinized search over the tiles it cannot see (:mod:`.expert`): it samples the
  other racks and the pile consistently with its view and weighs each move in those worlds with
  the solver, within a time budget per decision (``budget_ms``).

:func:`choose_moves` returns moves in order of preference; the caller tries them in turn (the
engine is the judge) — the last ones (a discard, or giving a taken tile back) are always legal.
:func:`moves_in_order` yields the same moves lazily, for a caller that stops at the first
accepted one.
:func:`play_turn` plays a whole turn that way.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .expert import DEFAULT_BUDGET_MS, expert_moves
from .heuristics import Ranker
from .selfplay import candidate_moves, pairs_in

LEVELS = ("random", "greedy", "strong", "expert")
Move = dict[str, Any]
View = Mapping[str, Any]


def choose_moves(
    view: View,
    level: str,
    rng: random.Random | None = None,
    budget_ms: float | None = DEFAULT_BUDGET_MS,
) -> list[Move]:
    """Moves for the seat on turn in ``view``, best first. ``budget_ms`` is the expert's
    thinking time per decision (the other levels do not search)."""
    rng = rng or random.Random()
    if level not in LEVELS:
        raise ValueError(f"unknown bot level {level!r}")
    if level == "expert":
        return expert_moves(view, rng, budget_ms)
    moves = candidate_moves(view)
    if not moves:
        return []
    if level == "random":
        rng.shuffle(moves)
        return moves
    bot = Ranker(view, level == "strong")
    return bot.ranked(moves)


def play_turn(
    get_view: Callable[[], View],
    play: Callable[[Move], bool],
    level: str,
    rng: random.Random | None = None,
    limit: int = 60,
    budget_ms: float | None = DEFAULT_BUDGET_MS,
) -> list[Move]:
    """Play the seat's whole turn: ask for its view, try moves best first, until the turn ends."""
    rng = rng or random.Random()
    played: list[Move] = []
    view = get_view()
    seat = view["seat"]
    for _ in range(limit):
        if view["result"]["over"] or view["turn"] != seat:
            return played
        for move in moves_in_order(view, level, rng, budget_ms):
            if play(move):
                played.append(move)
                break
        else:
            raise RuntimeError("the bot found no legal move")
        view = get_view()
    raise RuntimeError("the bot's turn did not end")


def moves_in_order(
    view: View, level: str, rng: random.Random, budget_ms: float | None
) -> Iterator[Move]:
    """:func:`choose_moves`'s moves in its order; greedy and strong rank an open variant's
    discards only when no table play before them was accepted (the same moves, sooner)."""
    if level in ("greedy", "strong"):
        moves = candidate_moves(view)
        yield from Ranker(view, level == "strong").lazily(moves)
        return
    yield from choose_moves(view, level, rng, budget_ms)


# ---------------------------------------------------------------------------------------------


__all__ = ["LEVELS", "choose_moves", "moves_in_order", "play_turn", "pairs_in"]
