"""Matches and their hands: start a match (and a rematch), deal a hand the engine dealt, close a
hand and its match when the engine says they are over, deal the next hand after the
scoreboard's pause, and end a stuck match (staff).

A match's rules (start scores, planned hands, totals, the winners) are the engine's
(``engine.Match``, taken up from the ``Match`` row: :func:`rules_of`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from games import engine, policy
from games.actions import events
from games.actions.tables import locked_table
from games.errors import GameError
from games.models import (
    Abandonment,
    Hand,
    Match,
    Participant,
    Seat,
    Table,
)


def start_match(table: Table | int, *, by: Any, seed: str | None = None) -> Match:
    """Start a match once every seat is filled; hand 1 is dealt from ``seed`` (or a fresh one)."""
    with transaction.atomic():
        t, seats = locked_table(table)
        running = Match.objects.filter(table=t, status=Match.Status.PLAYING).exists()
        policy.check_start(t, seats, by, running)
        rules = rules_of(t)
        match = Match.objects.create(
            table=t, hands_planned=rules.planned_hands, totals=rules.scores
        )
        hand = _deal(match, t, seats, rules.deal_hand(seed))
        t.status = Table.Status.PLAYING
        t.save(update_fields=["status"])
    # "match": a new match began (its chat window starts empty: the sockets re-send the panel).
    events.to_table(events.hand_dealt(t.id, hand.id, new_match=True))
    return match


def rematch(table: Table | int, *, by: Any, seed: str | None = None) -> Match:
    """After a match, a seated player starts another at the same table with the same seats.
    Two players pressing "rematch" at once start one match: the table row is locked, and the
    second finds it playing."""
    with transaction.atomic():
        t, seats = locked_table(table)
        # The seats' players may have sat down elsewhere since the match ended: lock their
        # rows (as sit does) so the one-live-table check holds against a concurrent sit.
        players = [s.user_id for s in seats if s.user_id]
        users = get_user_model().objects.select_for_update().filter(pk__in=players)
        list(users.order_by("pk").values_list("pk"))  # in one order: two rematches never deadlock
        elsewhere = (
            Seat.objects.filter(user_id__in=players, table__status__in=policy.LIVE_STATUSES)
            .exclude(table=t)
            .values_list("table_id", flat=True)
            .first()
        )
        policy.check_rematch(t, seats, by, elsewhere)
        t.status = Table.Status.OPEN  # for start_match's checks, inside this transaction
        t.save(update_fields=["status"])
        return start_match(t, by=policy.SYSTEM, seed=seed)


def rules_of(t: Table, m: Match | None = None, dealt: int = 0) -> engine.Match:
    """The engine's rules of a match at ``t``: where ``m`` stands after its first ``dealt``
    hands (its totals, and the void ones among them), else before its first hand."""
    scores = list(m.totals) if m is not None else None
    voided = m.hands.filter(ending="void").count() if m is not None and dealt else 0
    return engine.Match(
        t.variant.key, t.options, t.players, scores=scores, dealt=dealt, voided=voided
    )


def _deal(match: Match, t: Table, seats: list[Seat], eng: engine.Hand) -> Hand:
    """Store the hand the engine dealt (``engine.Match.deal_hand``) and who holds each seat."""
    hand = Hand.objects.create(
        match=match,
        number=eng.number,
        starter=eng.starter,
        commitment=eng.commitment,
        seed=eng.seed,
        state=snapshot(eng),
        turn=eng.turn,
        turn_index=eng.turn_index,
        deadline=_deadline(t),
    )
    # Who holds each seat as the hand is dealt: results and ratings read who played from here.
    Participant.objects.bulk_create(
        [
            Participant(
                hand=hand,
                position=s.position,
                user_id=s.user_id,
                bot_level=s.bot_level,
                team=s.team,
            )
            for s in seats
        ]
    )
    return hand


def snapshot(eng: engine.Hand) -> dict[str, Any]:
    """The engine state to store. Its move log is left out: the Move rows are the one log."""
    state = eng.to_state()
    state.pop("log", None)
    return state


def _deadline(t: Table) -> Any:
    return timezone.now() + timedelta(seconds=t.move_timer) if t.move_timer else None


def end_match(match: Match | int, *, by: Any, reason: str = "ended by an administrator") -> Match:
    """Stop a stuck match: its open hand and the match become abandoned (staff only)."""
    policy.check_staff(by, "end a match")
    pk = match.pk if isinstance(match, Match) else match
    with transaction.atomic():
        # Lock in the order a move does (hand, then match), so the two never deadlock.
        list(
            Hand.objects.select_for_update(of=("self",)).filter(
                match_id=pk, status=Hand.Status.PLAYING
            )
        )
        m = Match.objects.select_for_update(of=("self",)).get(pk=pk)
        if m.status != Match.Status.PLAYING:
            return m
        Hand.objects.filter(match=m, status=Hand.Status.PLAYING).update(
            status=Hand.Status.ABANDONED, deadline=None, finished_at=timezone.now()
        )
        m.status = Match.Status.ABANDONED
        m.finished_at = timezone.now()
        m.save(update_fields=["status", "finished_at"])
        _match_over(m.pk)
        Table.objects.filter(pk=m.table_id).update(status=Table.Status.OPEN)
    events.to_table(events.table_changed(m.table_id, reason))
    return m


def close_hand(h: Hand, eng: engine.Hand, table: Table) -> None:
    r = eng.result
    h.status = Hand.Status.FINISHED
    h.ending = r["ending"]
    h.finisher = r.get("finisher")
    h.kind = r.get("kind") or ""
    h.multiplier = int(r.get("multiplier", 1))
    h.hand_scores = r["hand_scores"]
    h.finished_at = timezone.now()
    h.deadline = None
    match = Match.objects.select_for_update(of=("self",)).get(pk=h.match_id)
    rules = rules_of(table, match, dealt=eng.number)
    rules.record(eng)
    match.totals = rules.scores
    if rules.over:
        match.status = Match.Status.FINISHED
        match.winners = rules.winners
        match.ranking = rules.ranking()
        match.finished_at = timezone.now()
        match.save(update_fields=["totals", "status", "winners", "ranking", "finished_at"])
        _guests_gone(match, table)
        _match_over(match.pk)
        Table.objects.filter(pk=table.pk).update(status=Table.Status.FINISHED)
        # The move's own message is for the table; the lobby must drop the finished table.
        events.to_lobby()
        return
    # The scoreboard stays on screen for a pause; then the clock (or every player pressing
    # "ready") deals the next hand.
    match.next_hand_at = timezone.now() + timedelta(seconds=settings.NEXT_HAND_PAUSE_SECONDS)
    match.ready = []
    match.save(update_fields=["totals", "next_hand_at", "ready"])
    return None


def _guests_gone(match: Match, table: Table) -> None:
    """A guest whose seat a bot played to the end of the match (away, never back) left it:
    a guest has no name to come back under, and a rated result must not wait on them."""
    now = timezone.now()
    for seat in Seat.objects.filter(table=table, away=True, user__profile__is_guest=True):
        Abandonment.objects.get_or_create(
            user_id=seat.user_id, match=match, defaults={"position": seat.position, "at": now}
        )


def _match_over(match_id: int) -> None:
    """After the transaction that ends a match commits, whoever follows the games hears of it
    (the leagues rate it and count it in its season)."""
    events.announce_match_ended(match_id)


def deal_next_hand(match: Match | int, *, now: Any = None, force: bool = False) -> Hand | None:
    """Deal a match's next hand once its pause is over (or at once with ``force``, or when
    every human seat is ready). Safe to call twice: the second call finds nothing to do."""
    now = now or timezone.now()
    pk = match.pk if isinstance(match, Match) else match
    with transaction.atomic():
        m = (
            Match.objects.select_for_update(of=("self",))
            .select_related("table__variant")
            .get(pk=pk)
        )
        if m.status != Match.Status.PLAYING or m.next_hand_at is None:
            return None
        t = m.table
        seats = list(Seat.objects.filter(table=t).order_by("position"))
        humans = {s.position for s in seats if s.user_id and not s.away}
        everyone_ready = bool(humans) and humans <= set(m.ready)
        if not force and not everyone_ready and m.next_hand_at > now:
            return None
        last = m.hands.order_by("-number").first()
        assert last is not None and last.status != Hand.Status.PLAYING
        hand = _deal(m, t, seats, rules_of(t, m, dealt=last.number).deal_hand())
        m.next_hand_at = None
        m.ready = []
        m.save(update_fields=["next_hand_at", "ready"])
    events.to_table(events.hand_dealt(t.id, hand.id))
    return hand


def ready(table: Table | int, user: AbstractBaseUser) -> Hand | None:
    """A player is ready for the next hand; when every human at the table is, it is dealt."""
    table_id = table.pk if isinstance(table, Table) else table
    if policy.viewer_id(user) is None:  # an anonymous visitor has no seat to be ready at
        raise GameError("not_seated", "you have no seat at this table")
    with transaction.atomic():
        m = (
            Match.objects.select_for_update(of=("self",))
            .filter(table_id=table_id, status=Match.Status.PLAYING)
            .first()
        )
        if m is None or m.next_hand_at is None:
            raise GameError("no_pause", "there is no hand to get ready for")
        seat = Seat.objects.filter(table_id=table_id, user=user).first()
        if seat is None:
            raise GameError("not_seated", "you have no seat at this table")
        if seat.position not in m.ready:
            m.ready = sorted([*m.ready, seat.position])
            m.save(update_fields=["ready"])
    dealt = deal_next_hand(m.pk)
    if dealt is None:
        events.to_table(events.table_changed(table_id))
    return dealt
