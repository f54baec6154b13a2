"""Candidate moves from a seat's view, and random legal self-play.

:func:`candidate_moves` lists the moves worth trying for the seat on turn, built only from
that seat's view (never the full state), so bots can use it too. The engine stays the judge:
a candidate may still be refused. :func:`random_hand` plays one whole hand with random legal
moves (the ``random`` bot level, the property tests and the benchmark use it).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

from . import solver
from .hand import Hand
from .melds import Meld
from .tiles import FAKE, format_tile, parse_tile
from .variants import Rules, rules_for

Move = dict[str, Any]


def table_melds(view: Mapping[str, Any]) -> list[Meld]:
    """The table's melds as :class:`Meld` objects, from a seat's view."""
    return [Meld.from_state(m["state"]) for m in view["table"]]


def pairs_in(rack: list[int], okey: int) -> list[list[str]]:
    """Disjoint pairs from the rack, in notation: doubles, then wilds with singles, then wilds."""
    counts = Counter(t for t in rack if t != okey)
    wilds = sum(1 for t in rack if t == okey)
    pairs: list[list[str]] = []
    singles = []
    for t, k in sorted(counts.items()):
        for _ in range(k // 2):
            pairs.append([format_tile(t), format_tile(t)])
        if k % 2:
            singles.append(t)
    w = format_tile(okey)
    for t in singles:
        if not wilds:
            break
        pairs.append([format_tile(t), w])
        wilds -= 1
    if wilds >= 2:
        pairs.append([w, w])
    return pairs


def candidate_moves(view: Mapping[str, Any]) -> list[Move]:
    """Moves worth trying for the seat on turn in ``view`` (empty when it is not its turn)."""
    seat = view["seat"]
    if view["result"]["over"] or view["turn"] != seat:
        return []
    if not view["has_tile"]:
        moves: list[Move] = [{"do": "draw"}]
        if view["can_take"]:
            moves.append({"do": "take"})
        return moves
    rack = [parse_tile(t) for t in view["rack"]]
    okey = parse_tile(view["okey"])
    rules = rules_for(view["variant"])
    wrap = rules.wrap(view["options"])
    distinct = sorted(set(rack))
    moves = []
    if not rules.open_table:
        pairs_finish = rules.special_finishes
        if len(rack) == 15 and (
            solver.can_finish(rack, okey, wrap)
            or (pairs_finish and solver.pair_count(rack, okey) >= 7)
        ):
            best = solver.best_finish(rack, okey, wrap, pairs_finish)
            if best:
                moves.append({"do": "finish", "tile": format_tile(best[0])})
        moves += [{"do": "discard", "tile": format_tile(t)} for t in distinct]
        return moves
    opened = view["opened"][seat]
    table = table_melds(view)
    pairs_rows = [other for other, how in enumerate(view["opened"]) if how == "pairs"]
    if opened is None:
        opening = solver.best_opening(rack, okey, wrap)
        below_bar = rules.opens_below_bar(view["options"], len(rack), opening.tiles_used)
        if opening.melds and (opening.reaches(view["opening_bar"]) or below_bar):
            moves.append({"do": "open", "melds": [list(m) for m in opening.melds]})
        pairs = pairs_in(rack, okey)
        keep = min(len(pairs), (len(rack) - 1) // 2)
        if keep >= view["pairs_needed"]:
            moves.append({"do": "open", "pairs": pairs[:keep]})
    else:
        lays_pairs = opened == "pairs" or (rules.melds_players_lay_pairs and bool(pairs_rows))
        if opened == "melds":
            lay = solver.best_opening(rack, okey, wrap)
            for tokens in lay.melds:
                moves.append({"do": "lay", "melds": [list(tokens)]})
        if lays_pairs:
            pairs = pairs_in(rack, okey)
            keep = min(len(pairs), (len(rack) - 1) // 2)
            if keep:
                moves.append({"do": "lay", "pairs": pairs[:keep]})
                if rules.pairs_onto_rows:
                    for other in pairs_rows:
                        if other != seat:
                            moves.append({"do": "lay", "pairs": pairs[:1], "onto": other})
        if opened == "melds" or rules.pairs_players_add:
            moves += _adds_and_swaps(distinct, okey, wrap, table, rules)
    if view["taken"] is not None:
        # The taken discard must reach the table before any discard, or go back.
        moves.append({"do": "give_back"})
    else:
        moves += [{"do": "discard", "tile": format_tile(t)} for t in distinct]
    return moves


def _adds_and_swaps(
    distinct: list[int], okey: int, wrap: bool, table: list[Meld], rules: Rules
) -> list[Move]:
    """Every tile of the rack that fits a table meld's end, and every okey it could swap out."""
    moves: list[Move] = []
    for t in distinct:
        ident = None if t == okey else (okey if t == FAKE else t)
        for m in table:
            if m.kind != "pair" and m.ends_for(ident, wrap):
                moves.append({"do": "add", "meld": m.id, "tile": format_tile(t)})
            if not rules.swap or ident is None:
                continue
            if m.could_swap(ident) or (
                rules.swap_in_pairs and m.kind == "pair" and m.swap_index(ident) >= 0
            ):
                moves.append({"do": "swap", "meld": m.id, "tile": format_tile(t)})
    return moves


def play_random_turn(hand: Hand, rng: random.Random) -> list[Move]:
    """Play the seat on turn's whole turn with random accepted moves; return them."""
    seat = hand.turn
    played: list[Move] = []
    while not hand.over and hand.turn == seat:
        tried: set[str] = set()
        while True:
            moves = [m for m in candidate_moves(hand.view(seat)) if repr(m) not in tried]
            if not moves:
                raise RuntimeError(f"no legal move for seat {seat}: {hand.view(seat)}")
            # Discards end the turn; table plays are tried more often so hands open and finish.
            table_plays = [m for m in moves if m["do"] not in ("discard", "give_back")]
            pick = (
                rng.choice(table_plays) if table_plays and rng.random() < 0.7 else rng.choice(moves)
            )
            result = hand.play(seat, pick)
            if result.ok:
                played.append(pick)
                break
            tried.add(repr(pick))
    return played


def random_hand(
    variant: str, seed: str | int, options: Mapping[str, Any] | None = None, players: int = 4
) -> Hand:
    """One complete hand from a seeded deal, every seat playing random legal moves."""
    rng = random.Random(seed)
    hex_seed = seed if isinstance(seed, str) and len(seed) == 64 else f"{rng.getrandbits(256):064x}"
    hand = Hand.from_seed(variant, hex_seed, options, players=players)
    while not hand.over:
        play_random_turn(hand, rng)
    return hand
