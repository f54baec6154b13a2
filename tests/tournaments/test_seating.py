"""Who sits where (tournaments/seating.py): properties over random fields of 4 to 200 players
(nobody twice, no two accounts of one address at a table, byes spread fairly, nobody with
someone of the previous round where any seating avoids it), and rounds worked out by hand."""

from __future__ import annotations

import itertools
import os
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournaments import seating, standings
from tournaments.seating import History, Player, Round, SeatingImpossible

FUZZ = bool(os.environ.get("OKEY_FUZZ"))  # a fixed sequence of examples unless asked


def field_of(size: int, rng: random.Random, households: int = 0) -> list[Player]:
    """``size`` players with random ratings; ``households`` addresses with two accounts."""
    players = [Player(n, rating=rng.uniform(800, 2200), address=f"10.0.{n}.1") for n in range(size)]
    for h in range(min(households, size // 2)):
        a, b = rng.sample(range(size), 2)
        players[a] = Player(a, players[a].rating, f"198.51.100.{h}")
        players[b] = Player(b, players[b].rating, f"198.51.100.{h}")
    return players


def results_of(played: Round, rng: random.Random, number: int) -> list[standings.MatchResult]:
    return [
        standings.MatchResult(number, table, tuple(float(rng.randint(-200, 200)) for _ in table))
        for table in played.tables
    ]


def check_round(played: Round, players: list[Player], shared: bool = False) -> None:
    seated = [p for table in played.tables for p in table]
    assert sorted(seated + list(played.byes)) == sorted(p.id for p in players)  # each once
    assert all(len(table) == seating.TABLE for table in played.tables)
    assert len(played.byes) == len(players) % seating.TABLE
    address = {p.id: p.address for p in players}
    if not shared:
        for table in played.tables:
            assert len({address[p] for p in table}) == len(table), table


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=not FUZZ)
@given(st.integers(4, 200), st.integers(0, 2**32), st.integers(2, 6))
def test_a_swiss_event_seats_everyone_once_keeps_households_apart_and_spreads_byes(
    size: int, seed: int, rounds: int
) -> None:
    rng = random.Random(seed)
    players = field_of(size, rng, households=size // 10)
    by_id = {p.id: p for p in players}
    played = [seating.first_round(players)]
    results = results_of(played[0], rng, 1)
    for number in range(2, rounds + 1):
        check_round(played[-1], players)
        byes = Counter(p for r in played for p in r.byes)
        order = [line.player for line in standings.swiss([p.id for p in players], results, byes)]
        new = seating.swiss_round(order, by_id, played)
        # Nobody sits with someone of the previous round: from four tables on a seating that
        # avoids it always exists (the previous tables' players spread over four tables).
        if len(new.tables) >= 4:
            previous = History.of(played).previous
            for table in new.tables:
                for a, b in itertools.combinations(table, 2):
                    assert frozenset((a, b)) not in previous, (number, table)
        played.append(new)
        results += results_of(new, rng, number)
    check_round(played[-1], players)
    # Byes spread: nobody has a second bye while someone has none.
    byes = Counter(p for r in played for p in r.byes)
    if byes:
        assert max(byes.values()) - min(byes.get(p.id, 0) for p in players) <= 1


def test_round_one_seats_one_player_from_each_quarter_at_each_table() -> None:
    players = [Player(n, rating=2000 - n) for n in range(16)]  # 0 is the best
    first = seating.first_round(players)
    assert first.byes == ()
    assert sorted(sorted(t) for t in first.tables) == [
        [0, 4, 8, 12],
        [1, 5, 9, 13],
        [2, 6, 10, 14],
        [3, 7, 11, 15],
    ]


def test_round_one_gives_the_byes_to_the_lowest_rated_and_the_next_round_to_others() -> None:
    players = [Player(n, rating=2000 - n) for n in range(10)]
    first = seating.first_round(players)
    assert first.byes == (8, 9)
    order = list(range(10))  # the standings, 9 last: but 8 and 9 had their byes
    second = seating.swiss_round(order, {p.id: p for p in players}, [first])
    assert second.byes == (6, 7)


def test_a_swiss_round_fills_tables_top_down_when_nobody_met() -> None:
    players = {n: Player(n) for n in range(12)}
    order = [11, 3, 7, 0, 5, 9, 1, 2, 8, 4, 10, 6]
    played = seating.swiss_round(order, players, [])
    assert [list(t) for t in played.tables] == [order[0:4], order[4:8], order[8:12]]


def test_a_swiss_round_of_sixteen_keeps_last_rounds_tables_apart() -> None:
    players = {n: Player(n) for n in range(16)}
    last = Round(((0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11), (12, 13, 14, 15)))
    played = seating.swiss_round(list(range(16)), players, [last])
    for table in played.tables:
        assert len({p // 4 for p in table}) == 4, played.tables  # one from each old table
    # and nobody strays far from their place: the top four tables hold the top, in order
    assert [sum(t) / 4 for t in played.tables] == sorted(sum(t) / 4 for t in played.tables)


def test_two_accounts_of_one_address_never_share_a_table_unless_allowed() -> None:
    players = [
        Player(n, rating=2000 - n, address="10.0.0.1" if n in (0, 4) else f"10.1.{n}.1")
        for n in range(8)
    ]
    first = seating.first_round(players)
    assert not any({0, 4} <= set(t) for t in first.tables)
    shared = seating.first_round(players, shared_addresses=True)
    assert any({0, 4} <= set(t) for t in shared.tables)  # quarters put them together
    crowded = [Player(n, address="10.0.0.1" if n < 3 else f"10.1.{n}.1") for n in range(4)]
    with pytest.raises(SeatingImpossible):
        seating.first_round(crowded)


def test_seat_order_avoids_taking_the_same_upstream_neighbours_discards_again() -> None:
    players = {n: Player(n) for n in range(4)}
    last = Round(((0, 1, 2, 3),))  # 1 took 0's discards, 2 took 1's, 3 took 2's, 0 took 3's
    again = seating.swiss_round([0, 1, 2, 3], players, [last])
    (table,) = again.tables
    taken = History.of([last]).upstream
    assert sum(taken[(table[s - 1], table[s])] for s in range(4)) == 0, table


def test_a_knockout_round_seats_by_quarters_and_keeps_table_mates_apart() -> None:
    players = {n: Player(n) for n in range(8)}
    last = Round(((0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10, 11), (12, 13, 14, 15)))
    # Those who go on, best first: the four table winners, then the four runners-up.
    order = [0, 4, 8, 12, 1, 5, 9, 13]
    played = seating.knockout_round(order, players, [last])
    for table in played.tables:
        assert len({p // 4 for p in table}) == 4, played.tables
    assert sorted(p for t in played.tables for p in t) == sorted(order)
    with pytest.raises(ValueError):
        seating.knockout_round(order[:6], players, [last])
