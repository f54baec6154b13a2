"""The match-level rules: start scores, planned hands, ranking and winners, running totals
(with a hand's penalties as they are scored), dealing a match's hands and replaying a record."""

from __future__ import annotations

import random
from typing import Any

import pytest

from games import engine
from games.engine import Hand, Match, Recorded, deal, replay_moves, variants
from games.engine.selfplay import play_random_turn, random_hand

SEED = "5a" * 32


def test_the_open_variants_are_okey51_gobek17_and_okey101() -> None:
    assert engine.OPEN_VARIANTS == ("okey51", "gobek17", "okey101")
    open_ones = [v for v in engine.VARIANTS if engine.is_open_variant(v)]
    assert open_ones == ["okey51", "gobek17", "okey101"]


def test_start_scores_count_down_from_the_option_in_classic_only() -> None:
    assert engine.start_scores("classic", {"start_score": 7}, 3) == [7, 7, 7]
    assert engine.start_scores("classic", engine.default_options("classic"), 2) == [20, 20]
    plus_minus = {"scoring": "plus_minus", "start_score": 7}
    assert engine.start_scores("classic", plus_minus, 4) == [0] * 4
    for variant in ("duz", "okey51", "gobek17", "okey101"):
        assert engine.start_scores(variant, engine.default_options(variant), 4) == [0] * 4


def test_planned_hands_are_the_hands_option_where_it_ends_the_match() -> None:
    assert engine.planned_hands("classic", {"scoring": "countdown", "hands": 5}) is None
    assert engine.planned_hands("classic", {"scoring": "plus_minus", "hands": 5}) == 5
    assert engine.planned_hands("duz", engine.default_options("duz")) is None
    assert engine.planned_hands("okey51", {"hands": 3}) == 3
    assert engine.planned_hands("gobek17", {"hands": 7}) == 7
    assert engine.planned_hands("okey101", {"hands": 11}) == 11
    assert engine.idle_options("classic", {"scoring": "countdown"}) == {"hands"}
    assert engine.idle_options("classic", {"scoring": "plus_minus"}) == {"start_score"}
    assert engine.idle_options("okey51", {"hands": 3}) == set()


def test_a_finish_is_worth_what_the_others_lose_by_its_kind() -> None:
    kinds = ("normal", "pairs", "colour")
    countdown = engine.default_options("classic")
    assert [engine.finish_worth("classic", countdown, k) for k in kinds] == [2, 4, 8]
    plus_minus = {**countdown, "scoring": "plus_minus"}
    assert [engine.finish_worth("classic", plus_minus, k) for k in kinds] == [1, 2, 1]
    assert engine.finish_worth("duz", engine.default_options("duz"), "normal") == 1


def test_classic_ranks_the_highest_total_first_the_others_the_lowest() -> None:
    totals = [3, -1, 8, 3]
    assert engine.higher_is_better("classic")
    assert engine.ranking("classic", totals) == [2, 0, 3, 1]
    assert engine.leaders("classic", totals) == [2]
    for variant in ("duz", "okey51", "gobek17", "okey101"):
        assert not engine.higher_is_better(variant)
        assert engine.ranking(variant, totals) == [1, 0, 3, 2]
        assert engine.leaders(variant, totals) == [1]
    assert engine.leaders("okey51", [5, 2, 2, 9]) == [1, 2]


def test_partners_are_seats_across_the_table() -> None:
    assert engine.team_scores([1, 10, 100, 1000]) == [101, 1010]
    assert [engine.team_of(s, {"partners": True}) for s in range(4)] == [0, 1, 0, 1]
    assert engine.team_of(2, {"partners": False}) is None


def test_partners_need_four_players(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every variant with partners is played by four only; were one played by two, partners
    # would still be refused.
    monkeypatch.setitem(variants.PLAYERS, "okey51", (2, 4))
    with pytest.raises(engine.OptionsError, match="partners need four players"):
        engine.check_table("okey51", {"partners": True}, 2)
    assert engine.check_table("okey51", {"partners": False}, 2)["partners"] is False
    assert engine.check_table("okey51", {"partners": True}, 4)["partners"] is True
    with pytest.raises(engine.OptionsError, match="played by 4"):
        engine.check_table("gobek17", {}, 3)
    with pytest.raises(engine.OptionsError):
        Hand.from_seed("okey51", SEED, {"partners": True}, players=2)


def test_running_scores_add_the_penalties_as_they_are_scored_in_the_open_variants() -> None:
    view: dict[str, Any] = {
        "over": False,
        "variant": "okey51",
        "scores_before": [100, 0, -500, 0],
        "penalties": [{"seat": 2, "points": 40}, {"seat": 2, "points": 10}],
        "result": {},
    }
    assert engine.running_scores(view) == [100, 0, -450, 0]
    # In the closed variants a penalty counts when the hand ends.
    assert engine.running_scores({**view, "variant": "classic"}) == [100, 0, -500, 0]
    over = {**view, "over": True, "result": {"scores": [1, 2, 3, 4]}}
    assert engine.running_scores(over) == [1, 2, 3, 4]


def test_running_scores_follow_a_played_hand_to_its_result() -> None:
    rng = random.Random(3)
    hand = Hand.from_seed("gobek17", SEED, {"give_back_penalty": 500}, scores=[1, 2, 3, 4])
    while not hand.over:
        view = hand.public_view()
        charged = [0] * 4
        for p in hand.penalties:
            charged[p["seat"]] += p["points"]
        before = [1, 2, 3, 4]
        assert engine.running_scores(view) == [b + c for b, c in zip(before, charged, strict=True)]
        play_random_turn(hand, rng)
    assert engine.running_scores(hand.public_view()) == hand.result["scores"]


def test_a_match_deals_from_the_seed_with_the_starter_moving_on_and_totals_carried() -> None:
    match = Match("gobek17", {"hands": 3})
    assert match.planned_hands == 3 and match.scores == [0] * 4
    rng = random.Random(8)
    for number in (1, 2, 3):
        seed = f"{rng.getrandbits(256):064x}"
        hand = match.deal_hand(seed)
        assert (hand.number, hand.starter, hand.seed) == (number, number - 1, seed)
        assert hand.scores_before == match.scores
        again = Hand.from_deal("gobek17", deal(seed), match.options, starter=number - 1)
        assert hand.racks == again.racks and hand.pile == again.pile
        while not hand.over:
            play_random_turn(hand, rng)
        match.record()
        assert match.scores == hand.result["scores"]
        assert match.over == (number == 3)
    assert match.winners == engine.leaders("gobek17", match.scores)
    assert match.ranking()[0] in match.winners
    with pytest.raises(ValueError, match="over"):
        match.deal_hand()


def test_a_match_taken_up_where_it_stands_deals_its_next_hand() -> None:
    match = Match("classic", {"start_score": 9}, 3, scores=[9, 7, 5], dealt=4)
    assert match.start_scores == [9, 9, 9]
    hand = match.deal_hand(SEED)
    assert (hand.number, hand.starter, hand.scores_before) == (5, 1, [9, 7, 5])
    # A recorded hand is dealt again with the starter its record names.
    again = Match("classic", {"start_score": 9}, 3, scores=[9, 7, 5], dealt=4)
    assert again.deal_hand(SEED, starter=2).starter == 2
    assert match.totals_after([[0, -2, -2], [-4, 0, -4]]) == [[9, 7, 7], [5, 7, 3]]


def test_a_hand_is_not_dealt_while_one_is_played() -> None:
    match = Match("duz")
    match.deal_hand(SEED)
    with pytest.raises(ValueError, match="still being played"):
        match.deal_hand()
    with pytest.raises(ValueError, match="no finished hand"):
        match.record()


def record_of(hand: Hand) -> list[Recorded]:
    return [Recorded(e["seat"], {k: v for k, v in e.items() if k != "seat"}) for e in hand.log]


def test_a_record_replays_on_the_hand_dealt_again_from_its_seed() -> None:
    played = random_hand("okey51", SEED)
    again = Hand.from_seed("okey51", SEED)
    replay = replay_moves(again, record_of(played))
    assert replay.problems == [] and replay.error is None
    assert replay.played == len(played.log)
    assert replay.hand is again and again.to_state() == played.to_state()


def test_a_replay_says_where_the_record_differs() -> None:
    played = random_hand("duz", SEED)
    events = []
    copy = Hand.from_seed("duz", SEED)
    for m in record_of(played):
        events.append(copy.play(m.seat, m.move).events)
    moves = [Recorded(m.seat, m.move, e) for m, e in zip(record_of(played), events, strict=True)]
    assert replay_moves(Hand.from_seed("duz", SEED), moves).problems == []

    changed = list(moves)
    changed[1] = Recorded(moves[1].seat, {**moves[1].move, "junk": 1}, moves[1].events)
    changed[2] = Recorded(moves[2].seat, moves[2].move, [{"type": "other"}])
    replay = replay_moves(Hand.from_seed("duz", SEED), changed)
    assert replay.problems == [
        "move 2 is not stored as the engine normalises it",
        "move 3 produced other events on replay",
    ]
    assert replay.played == len(moves)

    refused = [moves[0], moves[0], *moves[1:]]
    replay = replay_moves(Hand.from_seed("duz", SEED), refused)
    assert replay.played == 1 and replay.error == "not_your_turn"
    assert replay.problems == ["move 2 is refused on replay: not_your_turn"]


@pytest.mark.parametrize("variant", ["classic", "duz", "okey51", "gobek17", "okey101"])
def test_a_hands_score_parts_add_up_to_its_scores(variant: str) -> None:
    """Through whole hands played by bots, with and without doublings and penalties: each
    seat's parts add up to its hand score, and every part names what it is."""
    from games.engine.bots import choose_moves

    items = {"finished", "lost_to_finish", "last_tile", "never_opened", "tiles_left"}
    items |= {"okey_held", "partner_finished", "sequential_colour", "penalty"}
    seen: set[str] = set()
    for n in range(6):
        options = {"partners": True} if variant == "okey101" and n % 2 else {}
        hand = engine.Hand.from_seed(variant, f"{n:064x}", options)
        rng = random.Random(n)
        while not hand.over:
            view = hand.view(hand.turn)
            for move in choose_moves(view, "greedy" if n % 3 else "random", rng):
                if hand.play(hand.turn, move).ok:
                    break
        parts = engine.score_parts(hand)
        for seat, mine in enumerate(parts):
            assert sum(p["points"] for p in mine) == hand.result["hand_scores"][seat]
            assert all(p["item"] in items for p in mine), mine
            seen |= {p["item"] for p in mine}
    assert seen, variant
