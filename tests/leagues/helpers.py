"""Matches written directly as rows (as the services leave them when a match ends)."""

from __future__ import annotations

import datetime
from typing import Any

from django.utils import timezone

from games import actions
from games.catalog import ensure_variants
from games.models import Abandonment, Hand, Match, Move, Participant, Table, Variant
from leagues import ratings
from leagues.models import League, Season, SeasonMember
from tests.users import make_user

BOT = "bot"


def season(
    variant: str = "okey51", name: str = "Winter", members: list[Any] = (), **settings: Any
) -> Season:
    ensure_variants()
    league, _ = League.objects.get_or_create(
        name=f"League {variant}", defaults={"variant": Variant.objects.get(key=variant)}
    )
    today = timezone.localdate()
    s = Season.objects.create(
        league=league,
        name=name,
        starts_on=today - datetime.timedelta(days=30),
        ends_on=today + datetime.timedelta(days=30),
        **settings,
    )
    for user in members:
        SeasonMember.objects.create(season=s, user=user)
    return s


def users(*names: str) -> list[Any]:
    """Established accounts (``leagues.ratings.established``): each has played
    ``MIN_FINISHED`` matches to their end, against bots, before the test's."""
    made = newcomers(*names)
    establish(*made)
    return made


def establish(*people: Any) -> None:
    """Make each an established account: ``MIN_FINISHED`` matches against bots played to their
    end (not rated themselves: one person)."""
    history = table("duz")
    for user in people:
        for _ in range(ratings.MIN_FINISHED):
            finished_match(history, [user, BOT, BOT, BOT], [0, 0, 0, 0], [0])


def newcomers(*names: str) -> list[Any]:
    """Accounts that have played no match yet: not rated until established."""
    return [make_user(name) for name in names]


def table(variant: str = "okey51", season: Season | None = None, partners: bool = False) -> Table:
    ensure_variants()
    options = {"partners": True} if partners else None
    return actions.create_table(variant=variant, created_by=None, season=season, options=options)


def finished_match(
    table: Table,
    players: list[Any],
    totals: list[int],
    winners: list[int],
    *,
    status: str = Match.Status.FINISHED,
    teams: list[int] | None = None,
    when: datetime.datetime | None = None,
    hands: int = 1,
) -> Match:
    """A match that has ended, with ``hands`` hands, each held by ``players`` (a user, or
    ``BOT``) seat by seat; ``teams`` gives each seat's team in 2v2."""
    reverse = table.variant.key == "classic"
    match = Match.objects.create(
        table=table,
        status=status,
        totals=totals,
        winners=winners if status == Match.Status.FINISHED else [],
        ranking=(
            sorted(range(len(totals)), key=lambda s: totals[s], reverse=reverse)
            if status == Match.Status.FINISHED
            else []
        ),
        finished_at=when or timezone.now(),
    )
    for number in range(1, hands + 1):
        hand = Hand.objects.create(
            match=match,
            number=number,
            starter=0,
            commitment="c",
            seed="s",
            state={},
            status=Hand.Status.FINISHED,
        )
        Participant.objects.bulk_create(
            [
                Participant(
                    hand=hand,
                    position=p,
                    user=None if who == BOT else who,
                    bot_level="greedy" if who == BOT else "",
                    team=teams[p] if teams else None,
                )
                for p, who in enumerate(players)
            ]
        )
    return match


def leave(
    match: Match, user: Any, from_hand: int, moves: int = ratings.EARLY_LEAVE_MOVES
) -> Abandonment:
    """``user`` left ``match`` during hand ``from_hand - 1``, after their seat played ``moves``
    moves in the first hand (by default enough for the match to have really begun): a bot
    holds their seat in the hands from ``from_hand`` on (as the services leave it), and an
    ``Abandonment`` says so."""
    position = Participant.objects.filter(hand__match=match, user=user).values_list(
        "position", flat=True
    )[0]
    first = match.hands.get(number=1)
    Move.objects.bulk_create(
        Move(hand=first, number=1000 * position + n, seat=position, action={}, by="user", user=user)
        for n in range(1, moves + 1)
    )
    Participant.objects.filter(
        hand__match=match, hand__number__gte=from_hand, position=position
    ).update(user=None, bot_level="greedy")
    return Abandonment.objects.create(user=user, match=match, position=position, at=timezone.now())
