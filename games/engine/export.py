"""A played hand written back as a scenario of SCENARIOS.md, so that anyone can replay it.

A scenario is dealt from its seed with seat 0 as the starter and knows no hand number, while a
hand of a match may have any seat as its starter. :func:`scenario_of` therefore numbers the
seats in turn order from the starter (scenario seat ``k`` is the hand's seat
``(starter + k) % players``, listed under ``"seats"``), which deals every seat the same tiles;
the moves, the starting scores and every expectation are renumbered the same way.

>>> from games.engine import Hand, deal
>>> seed = "00" * 32
>>> hand = Hand.from_deal("duz", deal(seed), starter=1, seed=seed)
>>> hand.play(1, {"do": "discard", "tile": hand.view(1)["rack"][0]}).ok
True
>>> s = scenario_of(hand, "example")
>>> s["seats"], s["moves"][0]["seat"], s["expect"]["hand"]
([1, 2, 3, 0], 0, {'over': False, 'ending': None})
>>> from games.engine.scenario import check
>>> check(s)[1]
[]
"""

from __future__ import annotations

import copy
from typing import Any

from .hand import Hand
from .tiles import format_tile


def scenario_of(hand: Hand, name: str = "") -> dict[str, Any]:
    """The scenario (SCENARIOS.md, with ``seed``) that replays ``hand``'s accepted moves
    (``hand.log``) from its deal, with ``expect`` holding what the hand recorded: the deal
    (from its initial racks and pile), every move accepted, and once it is over the result,
    penalties, scores, racks and table melds. ``match`` is expected only for hand 1 (a scenario
    is always hand 1, and whether a match is over may depend on the hand's number)."""
    if not hand.seed:
        raise ValueError("a hand without a seed cannot be written as a seeded scenario")
    n, start = hand.players, hand.starter

    def seat(s: int) -> int:
        return (s - start) % n

    def by_seat(values: list[Any]) -> list[Any]:
        return [copy.deepcopy(values[(start + k) % n]) for k in range(n)]

    moves = []
    for entry in hand.log:
        move = {"seat": seat(int(entry["seat"]))}
        move.update({k: copy.deepcopy(v) for k, v in entry.items() if k != "seat"})
        if isinstance(move.get("onto"), int) and not isinstance(move["onto"], bool):
            move["onto"] = seat(move["onto"])
        moves.append(move)
    r = hand.result
    expect: dict[str, Any] = {
        "moves": {str(i): {"ok": True} for i in range(len(moves))},
        "deal": {
            "indicator": format_tile(hand.indicator),
            "racks": [[format_tile(t) for t in rack] for rack in by_seat(hand.initial["racks"])],
            "pile": [format_tile(t) for t in hand.initial["pile"]],
        },
        "hand": {"over": bool(r["over"]), "ending": r["ending"]},
        "penalties": [{**p, "seat": seat(p["seat"])} for p in hand.penalty_list()],
    }
    if r["over"]:
        finisher = r.get("finisher")
        expect["hand"].update(
            {
                "finisher": None if finisher is None else seat(finisher),
                "kind": r.get("kind"),
                "doublings": list(r.get("doublings", [])),
                "multiplier": r.get("multiplier", 1),
            }
        )
        expect["hand_scores"] = by_seat(r["hand_scores"])
        expect["scores"] = by_seat(r["scores"])
        if hand.number == 1:
            winners = sorted(seat(w) for w in r.get("winners", []))
            expect["match"] = {"over": bool(r.get("match_over", False)), "winners": winners}
    else:
        expect["hand_scores"] = None
        expect["scores"] = by_seat(hand.scores_before)
    expect["racks"] = [[format_tile(t) for t in sorted(rack)] for rack in by_seat(hand.racks)]
    expect["table"] = [{**m.to_json(), "owner": seat(m.owner)} for m in hand.table]
    return {
        "name": name,
        "variant": hand.variant,
        "options": dict(hand.options),
        "players": n,
        "seed": hand.seed,
        "commitment": hand.commitment,
        "seats": [(start + k) % n for k in range(n)],
        "start_scores": by_seat(hand.scores_before),
        "moves": moves,
        "expect": expect,
    }


__all__ = ["scenario_of"]
