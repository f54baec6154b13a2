"""Tables and play for the tests: tables of new users or of bots, random legal moves played
through the actions (a few, a whole hand, a whole match), a hand stored as the actions store
it, and a starter's rack made to order. Not a test module."""

from __future__ import annotations

import json
import random
from typing import Any

from django.urls import reverse

from games import actions, engine
from games.catalog import ensure_variants
from games.engine import layout as rack_layout
from games.engine.selfplay import candidate_moves
from games.models import Hand, Match, Move, Participant, Table
from tests.users import SignedIn, make_user


def seed_of(n: int) -> str:
    return f"{random.Random(n).getrandbits(256):064x}"


def bot_table(variant: str, options: dict[str, Any] | None = None, level: str = "random") -> Table:
    ensure_variants()  # a transactional test before this one may have flushed them
    table = actions.create_table(variant=variant, created_by=None, options=options)
    for p in range(table.players):
        actions.add_bot(table, p, level, by=actions.SYSTEM)
    return table


def user_table(
    variant: str, options: dict[str, Any] | None = None, players: int = 4
) -> tuple[Table, list[Any]]:
    """A table of ``players`` seats, each held by a new user."""
    ensure_variants()
    table = actions.create_table(variant=variant, created_by=None, options=options, players=players)
    users = []
    for p in range(table.players):
        user = make_user(f"{variant}-p{p}-{table.pk}")
        actions.sit(table, user, p)
        users.append(user)
    return table, users


def connect(table: Table, users: list[Any]) -> None:
    """Each player opens a table socket now (a Presence row, as the consumer makes)."""
    for p, user in enumerate(users):
        seat = table.seats.get(position=p)
        actions.socket_opened(seat, user, f"test-socket-{seat.pk}")


def random_move(hand: Hand, rng: random.Random) -> tuple[int, dict[str, Any]]:
    """A random move the engine accepts for the seat on turn (tried on a copy)."""
    eng = hand.engine_hand()
    seat = eng.turn
    moves = candidate_moves(eng.view(seat))
    rng.shuffle(moves)
    table_plays = [m for m in moves if m["do"] not in ("discard", "give_back")]
    ordered = table_plays + [m for m in moves if m not in table_plays]
    if rng.random() < 0.3:
        ordered = moves
    for move in ordered:
        trial = engine.Hand.from_state(hand.state)
        if trial.play(seat, move).ok:
            return seat, move
    raise AssertionError("no legal move")


def play_random_moves(match: Match, users: list[Any], moves: int, rng: random.Random) -> None:
    """Up to ``moves`` random legal moves in the match's hand, by its seated users, stopping
    when the hand ends."""
    for _ in range(moves):
        hand = match.hands.get()
        if hand.status != Hand.Status.PLAYING:
            break
        seat, move = random_move(hand, rng)
        actions.play(hand, seat, move, by=users[seat])


def play_match_with_bots(match: Match, rng: random.Random, max_moves: int = 5000) -> None:
    """Play the match to its end through the service, every seat as a bot."""
    for _ in range(max_moves):
        match.refresh_from_db()
        if match.status != Match.Status.PLAYING:
            return
        hand = match.hands.filter(status=Hand.Status.PLAYING).first()
        if hand is None:  # between hands: skip the pause
            actions.deal_next_hand(match, force=True)
            continue
        seat, move = random_move(hand, rng)
        actions.play(hand, seat, move, by=actions.BOT, expected_version=hand.version)
    raise AssertionError("the match did not end")


def store_random_hand(table: Table, seed: str, rng_seed: int) -> Hand:
    """A randomly played hand written as the service writes it (fast, for bulk audits)."""
    from games.engine.selfplay import play_random_turn

    eng = engine.Hand.from_seed(table.variant.key, seed, table.options, players=table.players)
    rng = random.Random(rng_seed)
    while not eng.over:
        play_random_turn(eng, rng)
    start = engine.scoring.start_score(table.variant.key, table.options)
    match = Match.objects.create(table=table, totals=[start] * table.players)
    replay = engine.Hand.from_seed(table.variant.key, seed, table.options, players=table.players)
    rows = []
    for n, entry in enumerate(eng.log, start=1):
        move = {k: v for k, v in entry.items() if k != "seat"}
        result = replay.play(entry["seat"], move)
        rows.append(Move(number=n, seat=entry["seat"], action=move, events=result.events, by="bot"))
    r = eng.result
    hand = Hand.objects.create(
        match=match,
        number=1,
        starter=0,
        commitment=engine.commitment(seed),
        seed=seed,
        state=actions.matches.snapshot(eng),
        version=len(rows),
        status=Hand.Status.FINISHED,
        ending=r["ending"],
        finisher=r.get("finisher"),
        kind=r.get("kind") or "",
        multiplier=r.get("multiplier", 1),
        hand_scores=r["hand_scores"],
    )
    for row in rows:
        row.hand = hand
    Move.objects.bulk_create(rows)
    match.status = Match.Status.FINISHED
    match.totals = r["scores"]
    match.save()
    return hand


def playing_table(variant: str = "duz", n: int = 1) -> tuple[Table, list[Any], Hand]:
    table, users = user_table(variant)
    connect(table, users)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(900 + n))
    return table, users, match.hands.get()


def play_hand(hand: Hand, users: list[Any], rng: random.Random, moves: int | None = None) -> Hand:
    """Random legal moves through the move service: to the end of the hand, or ``moves`` of
    them (stopping before one that would end it)."""
    done = 0
    while moves is None or done < moves:
        hand.refresh_from_db()
        if hand.status != Hand.Status.PLAYING:
            break
        seat, move = random_move(hand, rng)
        if moves is not None:
            trial = hand.engine_hand()
            trial.play(seat, move)
            if trial.over:
                break
        actions.play(hand, seat, move, by=users[seat], expected_version=hand.version)
        done += 1
    hand.refresh_from_db()
    return hand


def played_out(variant: str, options: dict[str, Any], n: int) -> tuple[Table, list[Any], Match]:
    """A match at a table of four signed-up players, played at random to its end."""
    table, users = user_table(variant, options)
    match = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(900 + n))
    rng = random.Random(n)
    for _ in range(20):
        match.refresh_from_db()
        if match.status != Match.Status.PLAYING:
            break
        hand = match.hands.order_by("-number").first()
        assert hand is not None
        if hand.status != Hand.Status.PLAYING:
            actions.deal_next_hand(match, force=True)
            continue
        play_hand(hand, users, rng)
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    table.refresh_from_db()
    return table, users, match


def rack_of_rows(
    variant: str, seed: int, *rows: list[list[str]], options: dict[str, Any] | None = None
) -> tuple[Hand, list[Any], list[str | None]]:
    """A hand of ``variant`` whose starter (seat 0) holds exactly the tiles of ``rows``, laid
    out on the stand and stored so, row by row, each row's groups side by side with a gap after
    each."""
    table, users = user_table(variant, options)
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(seed)).hands.get()
    lay: list[str | None] = []
    for row in rows:
        line = [slot for group in row for slot in [*group, None]]
        lay += line + [None] * (rack_layout.ROW_SLOTS - len(line))
    lay += [None] * (rack_layout.SLOTS - len(lay))
    state = dict(hand.state)
    racks = [list(r) for r in state["racks"]]
    racks[0] = [engine.parse_tile(t) for t in lay if t is not None]
    state["racks"] = racks
    Hand.objects.filter(pk=hand.pk).update(state=state)
    Participant.objects.filter(hand=hand, position=0).update(layout=lay)
    hand.refresh_from_db()
    return hand, users, lay


def refused_opening(signed_in: SignedIn, language: str = "en") -> str:
    """An okey101 starter opens R5-R6-R8 beside a good set, over HTTP: the refusal's words."""
    hand, users, lay = rack_of_rows(
        "okey101", 112, [["R5", "R6", "R8"], ["Y13", "K13", "B13"]], [["K1", "K3"]]
    )
    url = reverse("table_move", args=[hand.match.table_id])
    move = {"do": "open", "slots": [0, 1, 2, 4, 5, 6]}
    payload = {"type": "move", "hand": hand.pk, "move": move, "expected_version": 0}
    client = signed_in(users[0], language=language)
    answer = client.post(url, {"payload": json.dumps(payload)}).content.decode()
    assert 'data-error="invalid_meld"' in answer
    assert Hand.objects.get(pk=hand.pk).version == 0
    return answer


# Four 101 openings from tiles that exist twice each, and tiles that fit none of them to throw.
FOUR_OPENINGS = [
    [
        ["R10", "R11", "R12", "R13"],
        ["B10", "B11", "B12", "B13"],
        ["Y1", "Y2", "Y3"],
        ["K11", "K12", "K13"],
    ],
    [
        ["Y10", "Y11", "Y12", "Y13"],
        ["R10", "R11", "R12", "R13"],
        ["B10", "B11", "B12", "B13"],
        ["Y11", "Y12", "Y13"],
    ],
    [
        ["K1", "K2", "K3", "K4", "K5"],
        ["R9", "B9", "Y9", "K9"],
        ["R8", "B8", "Y8", "K8"],
        ["R7", "B7", "Y7"],
    ],
    [
        ["R9", "B9", "Y9", "K9"],
        ["R8", "B8", "Y8", "K8"],
        ["R7", "B7", "Y7", "K7"],
        ["R6", "B6", "Y6", "K6"],
    ],
]
FOUR_THROWS = [["R3", "K10"], ["Y5", "B5"], ["R5", "R3"], ["B2", "Y5"]]


def four_opened(seed: int = 60) -> tuple[Table, list[Any], Hand]:
    """An okey101 hand (no move timer) where each of the four players has opened with melds
    (FOUR_OPENINGS) and thrown a tile; seat 0 is to draw. The racks are made to order: each
    seat holds its opening and two tiles; the first, thrown, fits nothing on the table, and
    seat 0 keeps K10, which fits its own K11-K13 and nothing else."""
    table, users = user_table("okey101", {"timer": 0})
    hand = actions.start_match(table, by=actions.SYSTEM, seed=seed_of(seed)).hands.get()
    state = dict(hand.state)
    racks = [list(r) for r in state["racks"]]
    for seat, melds in enumerate(FOUR_OPENINGS):
        tiles = [t for m in melds for t in m] + FOUR_THROWS[seat]
        racks[seat] = [engine.parse_tile(t) for t in tiles]
    state["racks"] = racks
    Hand.objects.filter(pk=hand.pk).update(state=state)
    hand.refresh_from_db()
    assert hand.starter == 0
    for seat, melds in enumerate(FOUR_OPENINGS):
        if seat:
            actions.play(hand, seat, {"do": "draw"}, by=users[seat])
        actions.play(hand, seat, {"do": "open", "melds": melds}, by=users[seat])
        actions.play(hand, seat, {"do": "discard", "tile": FOUR_THROWS[seat][0]}, by=users[seat])
    hand.refresh_from_db()
    return table, users, hand
