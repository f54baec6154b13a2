"""The public view is a whitelist, a seat's view is it plus that seat's private fields, and
accepted moves are logged and returned normalised (only the fields their action reads)."""

import json
import random
from pathlib import Path
from typing import Any

import pytest

from games.engine import (
    MOVE_FIELDS,
    PRIVATE_KEYS,
    PUBLIC_KEYS,
    Hand,
    deal,
    default_options,
    normalise_move,
    parse_tile,
    run_scenario,
)
from games.engine.selfplay import candidate_moves, play_random_turn
from games.engine.tiles import format_tile

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*.json"))
VARIANTS = ["classic", "duz", "okey51", "gobek17", "okey101"]
SEEDS = ["5a" * 32, "c3" * 32, "0123456789abcdef" * 4]

# Adding a key to the public view is a conscious act: add it here too.
PUBLIC = {
    "variant",
    "options",
    "players",
    "number",
    "starter",
    "turn",
    "rack_counts",
    "indicator",
    "okey",
    "pile_size",
    "discards",
    "table",
    "opened",
    "opening_bar",
    "pairs_needed",
    "penalties",
    "scores_before",
    "indicator_shown",
    "result",
    "commitment",
    "seed",
    "over",
    "phase",
    "revealed",
    "took",
}
PRIVATE = {"seat", "has_tile", "must_draw", "must_finish", "taken", "rack", "can_take", "acted"}
# The keys view(seat) returned before public_view existed: other code reads them.
VIEW_BEFORE = {
    "variant",
    "options",
    "players",
    "number",
    "seat",
    "starter",
    "turn",
    "has_tile",
    "must_draw",
    "taken",
    "rack",
    "rack_counts",
    "indicator",
    "okey",
    "pile_size",
    "discards",
    "can_take",
    "table",
    "opened",
    "opening_bar",
    "pairs_needed",
    "penalties",
    "scores_before",
    "acted",
    "indicator_shown",
    "result",
    "commitment",
    "seed",
}


def lists_in(value: Any) -> list[list[Any]]:
    """Every list anywhere inside ``value``."""
    found: list[list[Any]] = []
    if isinstance(value, list):
        found.append(value)
        for item in value:
            found += lists_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            found += lists_in(item)
    return found


def check_public(hand: Hand) -> dict[str, Any]:
    """The public view of ``hand`` holds exactly the whitelist and no secret."""
    public = hand.public_view()
    assert set(public) == PUBLIC == set(PUBLIC_KEYS)
    assert json.loads(json.dumps(public)) == public
    # A long list is a rack only by leaking (short ones may match a discard or meld by chance).
    racks = [sorted(format_tile(t) for t in rack) for rack in hand.racks if len(rack) >= 5]
    pile = [format_tile(t) for t in hand.pile]
    # Once the hand is over every rack is revealed on purpose; before, none may show.
    assert (public["revealed"] is not None) is hand.over
    for found in lists_in({} if hand.over else public):
        if found and all(isinstance(x, str) for x in found):
            assert sorted(found) not in racks, f"a rack leaks: {found}"
            assert len(pile) < 2 or found != pile, "the pile leaks"
    assert public["rack_counts"] == [len(r) for r in hand.racks]
    assert public["pile_size"] == len(hand.pile)
    assert public["over"] is hand.over
    assert public["commitment"] == hand.commitment
    if hand.over:
        assert public["seed"] == hand.seed
    else:
        assert public["seed"] is None
        assert hand.seed is None or hand.seed not in json.dumps(public)
    return public


def test_the_public_and_private_keys_are_the_whitelists() -> None:
    assert set(PUBLIC_KEYS) == PUBLIC and len(PUBLIC_KEYS) == len(PUBLIC)
    assert set(PRIVATE_KEYS) == PRIVATE and not PUBLIC & PRIVATE


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_public_view_shows_no_rack_pile_taken_tile_or_early_seed(
    variant: str, seed: str
) -> None:
    players = 3 if variant == "classic" and seed == SEEDS[2] else 4
    teams = "partners" in default_options(variant) and seed == SEEDS[1]
    options = {"partners": True} if teams else {}
    hand = Hand.from_seed(variant, seed, options, players=players)
    assert hand.commitment
    check_public(hand)
    rng = random.Random(seed)
    while not hand.over:
        play_random_turn(hand, rng)
        public = check_public(hand)
        for seat in range(hand.players):
            view = hand.view(seat)
            assert set(view) == PUBLIC | PRIVATE
            assert VIEW_BEFORE <= set(view)
            assert {k: v for k, v in view.items() if k not in PRIVATE} == public
    public = check_public(hand)
    assert public["seed"] == seed
    assert public["result"]["over"] is True


def test_the_public_view_hides_a_taken_tile() -> None:
    # okey51: seat 1 takes seat 0's discard; only seat 1's view names it.
    path = ROOT / "tests" / "scenarios" / "okey51-take-and-feed.json"
    scenario = json.loads(path.read_text(encoding="utf-8"))
    hand = Hand.new(
        "okey51",
        [[parse_tile(t) for t in rack] for rack in scenario["racks"]],
        [parse_tile(t) for t in scenario["pile"]],
        parse_tile(scenario["indicator"]),
        scenario.get("options"),
    )
    discard = next(m for m in scenario["moves"] if m["do"] == "discard")
    assert hand.play(0, {"do": "discard", "tile": discard["tile"]}).ok
    assert hand.play(1, {"do": "take"}).ok
    assert hand.view(1)["taken"] == discard["tile"]
    assert hand.view(2)["taken"] is None
    public = check_public(hand)
    assert "taken" not in public and "rack" not in public


# ---------------------------------------------------------------- normalised moves
def test_it_logs_and_returns_a_move_without_junk_keys() -> None:
    hand = Hand.from_deal("duz", deal("33" * 32))
    tile = format_tile(hand.racks[0][0])
    result = hand.play(0, {"do": "discard", "tile": tile, "junk": 1, "groups": [["R1"]]})
    assert result.ok and result.move == {"do": "discard", "tile": tile}
    result = hand.play(1, {"do": "draw", "junk": 1})
    assert result.ok and result.move == {"do": "draw"}
    assert hand.log == [
        {"seat": 0, "do": "discard", "tile": tile},
        {"seat": 1, "do": "draw"},
    ]
    # The result's move is a copy: changing it leaves the log alone.
    result.move["junk"] = 2
    assert hand.log[-1] == {"seat": 1, "do": "draw"}
    refused = hand.play(1, {"do": "draw", "junk": 1})
    assert not refused.ok and refused.move is None
    assert "move" not in refused.to_json() and "move" not in result.to_json()


def test_it_keeps_only_the_fields_each_action_reads() -> None:
    melds = [["R1", "R2", "R3"]]
    cases = [
        ({"do": "take", "tile": "R1"}, {"do": "take"}),
        ({"do": "give_back", "tile": "R1", "seat": 3}, {"do": "give_back"}),
        ({"do": "show_indicator", "x": None}, {"do": "show_indicator"}),
        ({"do": "finish", "tile": "R1", "groups": None}, {"do": "finish", "tile": "R1"}),
        (
            {"do": "finish", "tile": "R1", "groups": melds, "melds": melds},
            {"do": "finish", "tile": "R1", "groups": melds},
        ),
        ({"do": "open", "melds": melds, "onto": 2}, {"do": "open", "melds": melds}),
        (
            {"do": "open", "pairs": [["R1", "R1"]], "tile": "B2"},
            {"do": "open", "pairs": [["R1", "R1"]]},
        ),
        ({"do": "lay", "melds": melds, "onto": 2}, {"do": "lay", "melds": melds}),
        (
            {"do": "lay", "pairs": [["R1", "R1"]], "onto": None},
            {"do": "lay", "pairs": [["R1", "R1"]]},
        ),
        (
            {"do": "lay", "pairs": [["R1", "R1"]], "onto": 2},
            {"do": "lay", "pairs": [["R1", "R1"]], "onto": 2},
        ),
        (
            {"do": "add", "meld": 0, "tile": "R4", "end": None},
            {"do": "add", "meld": 0, "tile": "R4"},
        ),
        (
            {"do": "add", "meld": 0, "tile": "B7:R4", "end": "low", "by": 1},
            {"do": "add", "meld": 0, "tile": "B7:R4", "end": "low"},
        ),
        (
            {"do": "swap", "meld": 1, "tile": "R4", "end": "low"},
            {"do": "swap", "meld": 1, "tile": "R4"},
        ),
    ]
    for move, normal in cases:
        assert normalise_move(move) == normal, move
        assert set(normal) <= {"do", *MOVE_FIELDS[move["do"]]}
    move = {"do": "lay", "melds": melds}
    normal = normalise_move(move)
    normal["melds"][0].append("R4")
    assert move["melds"] == [["R1", "R2", "R3"]]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_junk_keys_change_no_scenario(path: Path) -> None:
    scenario = json.loads(path.read_text(encoding="utf-8"))
    noisy = dict(scenario)
    noisy["moves"] = [{**m, "junk": 1, "note": {"why": [1, 2]}} for m in scenario["moves"]]
    assert run_scenario(noisy) == run_scenario(scenario)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_hand_played_with_junk_keys_logs_normalised_moves_and_replays(variant: str) -> None:
    rng = random.Random(variant)
    seed = f"{rng.getrandbits(256):064x}"
    hand = Hand.from_seed(variant, seed)
    while not hand.over:
        seat = hand.turn
        moves = candidate_moves(hand.view(seat))
        rng.shuffle(moves)
        for move in moves:
            result = hand.play(seat, {**move, "junk": rng.random()})
            if result.ok:
                assert result.move == normalise_move(move)
                assert hand.log[-1] == {"seat": seat, **result.move}
                break
    for entry in hand.log:
        assert set(entry) <= {"seat", "do", *MOVE_FIELDS[entry["do"]]}
    state = hand.to_state()
    assert hand.replay().to_state() == state
