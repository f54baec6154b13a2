"""A hand's recorded moves played again on its deal, and every way the record differs.

A table keeps a hand as its seed and its moves: each with its seat, the move as the engine read
it (:attr:`MoveResult.move`) and the events it produced. :func:`replay_moves` plays such a
record on the hand dealt again (:meth:`Hand.from_seed`), so that a replay page, an export and
an audit rebuild a hand one way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # hand.py replays its own log through here
    from .hand import Hand


@dataclass(frozen=True)
class Recorded:
    """One recorded move: its seat, the move, and the events kept with it (None: not kept, so
    not compared)."""

    seat: int
    move: Mapping[str, Any]
    events: Sequence[Mapping[str, Any]] | None = None


@dataclass
class Replay:
    """What replaying a record did: ``hand`` after every move accepted, how many were
    (``played``), the refusal's error code if a move was refused (move ``played + 1``), and
    the differences in words (``problems``: empty when the record replays exactly)."""

    hand: Hand
    played: int = 0
    error: str | None = None
    problems: list[str] = field(default_factory=list)


def replay_moves(hand: Hand, moves: Iterable[Recorded]) -> Replay:
    """Play ``moves`` on ``hand`` (changed in place) in order, stopping at the first refused
    one. Move k (from 1) is the hand's k-th: a move whose events or normal form
    (:func:`~games.engine.hand.normalise_move`) differ from the record is a problem too."""
    out = Replay(hand)
    for number, m in enumerate(moves, start=1):
        result = hand.play(m.seat, m.move)
        if not result.ok:
            out.error = result.error
            out.problems.append(f"move {number} is refused on replay: {result.error}")
            break
        out.played = number
        if m.events is not None and result.events != m.events:
            out.problems.append(f"move {number} produced other events on replay")
        if result.move != m.move:
            out.problems.append(f"move {number} is not stored as the engine normalises it")
    return out


__all__ = ["Recorded", "Replay", "replay_moves"]
