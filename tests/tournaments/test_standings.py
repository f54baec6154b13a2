"""Standings (tournaments/standings.py): placement points with shared places, the Swiss
tie-breaks in order, and a 12-player Swiss of three rounds and a 16-player knockout worked out
by hand."""

from __future__ import annotations

from tournaments.standings import BYE_POINTS, MatchResult, knockout, swiss


def test_tied_players_share_the_points_of_the_places_they_cover() -> None:
    result = MatchResult(1, (1, 2, 3, 4), (100.0, 50.0, 50.0, 0.0))
    assert result.points() == {1: 3.0, 2: 1.5, 3: 1.5, 4: 0.0}
    assert result.places() == {1: 1, 2: 2, 3: 2, 4: 4}
    assert result.margins() == {1: 50.0, 2: 0.0, 3: 0.0, 4: -50.0}
    everyone = MatchResult(1, (1, 2, 3, 4), (7.0, 7.0, 7.0, 7.0))
    assert everyone.points() == dict.fromkeys((1, 2, 3, 4), 1.5)
    # A bot's seat takes its place and scores nothing.
    with_bot = MatchResult(1, (1, None, 3, 4), (5.0, 9.0, 1.0, 0.0))
    assert with_bot.points() == {1: 2.0, 3: 1.0, 4: 0.0}
    assert BYE_POINTS == 1.5


ROUNDS = [
    MatchResult(1, (1, 2, 3, 4), (100, 50, 50, 0)),
    MatchResult(1, (5, 6, 7, 8), (10, 20, 30, 40)),
    MatchResult(1, (9, 10, 11, 12), (0, 0, 0, 0)),
    MatchResult(2, (1, 8, 9, 5), (40, 40, 10, 10)),
    MatchResult(2, (2, 7, 10, 3), (60, 30, 30, 0)),
    MatchResult(2, (4, 6, 11, 12), (5, 15, 25, 35)),
    MatchResult(3, (1, 2, 8, 12), (0, 100, 50, 50)),
    MatchResult(3, (7, 3, 10, 11), (20, 20, 20, 20)),
    MatchResult(3, (5, 6, 9, 4), (30, 10, 10, 30)),
]


def test_a_twelve_player_swiss_of_three_rounds_worked_out_by_hand() -> None:
    table = swiss(list(range(1, 13)), ROUNDS)
    by_player = {line.player: line for line in table}
    # Points: 2 = 1.5 + 3 + 3; 8 = 3 + 2.5 + 1.5; 12 = 1.5 + 3 + 1.5; 1 = 3 + 2.5 + 0; ...
    assert {p: by_player[p].points for p in by_player} == {
        1: 5.5, 2: 7.5, 3: 3.0, 4: 2.5, 5: 3.0, 6: 2.5,
        7: 5.0, 8: 7.0, 9: 2.5, 10: 4.5, 11: 5.0, 12: 6.0,
    }  # fmt: skip
    assert {p: by_player[p].margin for p in by_player} == {
        1: 15, 2: 80, 3: -30, 4: -55, 5: -20, 6: -20,
        7: 5, 8: 30, 9: -25, 10: 0, 11: 5, 12: 15,
    }  # fmt: skip
    assert by_player[1].firsts == 2 and by_player[10].firsts == 2 and by_player[6].firsts == 0
    # 7 and 11: 5 points and +5 each; 7's opponents averaged 40 / 9, 11's 36.5 / 9.
    assert round(by_player[7].opponents_average, 3) == round(40 / 9, 3)
    assert round(by_player[11].opponents_average, 3) == round(36.5 / 9, 3)
    # 5 and 3 on margin (-20, -30); 6, 9 and 4 on margin (-20, -25, -55).
    assert [line.player for line in table] == [2, 8, 12, 1, 7, 11, 10, 5, 3, 6, 9, 4]
    assert [line.rank for line in table] == list(range(1, 13))


def test_a_bye_counts_a_tables_mean_and_no_opponents() -> None:
    table = swiss([1, 2, 3, 4, 5], [MatchResult(1, (1, 2, 3, 4), (4, 3, 2, 1))], {5: 1})
    five = next(line for line in table if line.player == 5)
    assert (five.points, five.byes, five.opponents_average) == (1.5, 1, 0.0)
    assert [line.player for line in table] == [1, 2, 5, 3, 4]


def test_level_on_everything_else_the_shared_tables_then_a_seeded_draw_decide() -> None:
    # 1 and 2 level on points, margin, opponents and firsts; 1 finished ahead of 2 at the one
    # table they shared: 1 stands above 2, whatever the draw.
    shared = [
        MatchResult(1, (1, 2, 3, 4), (10, 6, 5, 0)),
        MatchResult(2, (1, 5, 6, 7), (5, 6, 0, -3)),
        MatchResult(2, (2, 8, 9, 10), (10, 3, 1, -2)),
        MatchResult(3, (5, 6, 7, 11), (5, 3, 0, 10)),
        MatchResult(3, (8, 9, 10, 12), (10, 3, 0, 5)),
    ]
    for seed in range(10):
        table = swiss(list(range(1, 13)), shared, seed=seed)
        one, two = (next(line for line in table if line.player == p) for p in (1, 2))
        assert (one.points, one.margin, one.firsts) == (two.points, two.margin, two.firsts)
        assert one.opponents_average == two.opponents_average == 13 / 6
        assert two.rank == one.rank + 1
    # Exactly level: the seeded draw decides, the same way for the same seed.
    level = [MatchResult(1, (1, 2, 3, 4), (5, 5, 5, 5))]
    draws = {tuple(line.player for line in swiss([1, 2, 3, 4], level, seed=s)) for s in range(20)}
    assert len(draws) > 1  # the draw changes with the seed ...
    assert swiss([1, 2, 3, 4], level, seed=7) == swiss([1, 2, 3, 4], level, seed=7)  # ... only


def test_a_sixteen_player_knockout_ranked_by_hand() -> None:
    first = [
        MatchResult(1, (1, 2, 3, 4), (40, 30, 20, 10)),
        MatchResult(1, (5, 6, 7, 8), (10, 40, 30, 20)),
        MatchResult(1, (9, 10, 11, 12), (25, 25, 0, -50)),
        MatchResult(1, (13, 14, 15, 16), (5, 3, 1, 100)),
    ]
    semis = [
        MatchResult(2, (1, 7, 10, 13), (50, 60, 0, 10)),
        MatchResult(2, (6, 2, 9, 16), (20, 30, 40, 10)),
    ]
    final = [MatchResult(3, (7, 1, 9, 2), (10, 20, 30, 40))]
    ranked = [line.player for line in knockout([first, semis, final])]
    # The final's places; the semi-finals' thirds (6: -5, 13: -20) and fourths (16: -15,
    # 10: -30); round 1's thirds by margin (11: 0; 3 and 8: -5, drawn; 14: -24.25) and
    # fourths (4 and 5: -15, drawn; 15: -26.25; 12: -50).
    assert ranked[:9] == [2, 9, 1, 7, 6, 13, 16, 10, 11]
    assert set(ranked[9:11]) == {3, 8} and ranked[11] == 14
    assert set(ranked[12:14]) == {4, 5} and ranked[14:] == [15, 12]
