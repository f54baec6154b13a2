"""Read-only queries for pages and sockets (the HackSoftware split: services write, selectors
read). What a template receives is built here from plain data: the engine's per-seat view for
the viewer's own seat, its public view for everything else; never a Hand row, its seed or its
state."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet

from games import policy
from games.models import Hand, Match, Presence, Seat, Table


def public_tables() -> QuerySet[Table]:
    """Tables anyone may see in the lobby, newest first, with their seats."""
    return (
        Table.objects.filter(is_private=False)
        .exclude(status=Table.Status.FINISHED)
        .select_related("variant")
        .prefetch_related(Prefetch("seats", queryset=Seat.objects.select_related("user")))
    )


def table_with_seats(table_id: int) -> Table:
    """A table with its seats, each annotated ``here`` (its holder has a fresh socket)."""
    seats = Seat.objects.select_related("user").annotate(here=Presence.here()).order_by("position")
    return (
        Table.objects.select_related("variant", "created_by")
        .prefetch_related(Prefetch("seats", queryset=seats))
        .get(pk=table_id)
    )


def current_hand(table: Table | int) -> Hand | None:
    """The hand being played at the table, if any."""
    table_id = table.pk if isinstance(table, Table) else table
    return (
        Hand.objects.filter(match__table_id=table_id, status=Hand.Status.PLAYING)
        .select_related("match")
        .first()
    )


def latest_match(table: Table) -> Match | None:
    return Match.objects.filter(table=table).order_by("-started_at").first()


def viewer_id(user: Any) -> int | None:
    return getattr(user, "pk", None) if getattr(user, "is_authenticated", False) else None


def table_context(table_id: int, user: Any, invite: str | None = None) -> dict[str, Any]:
    """Everything the table page (and its live fragment) shows ``user``, as plain data.

    Raises ``Table.DoesNotExist`` for a missing table and ``NotAllowed`` for one the user may
    not see. The rack in it is the viewer's own, from the engine's view of their seat; the
    rest comes from the engine's public view.
    """
    table = table_with_seats(table_id)
    seat_rows = list(table.seats.all())
    policy.check_see(table, seat_rows, user, invite)
    uid = viewer_id(user)
    my_seat = next((s for s in seat_rows if uid is not None and s.user_id == uid), None)
    hand = current_hand(table)
    view = public = None
    if hand is not None:
        eng = hand.engine_hand()
        public = eng.public_view()
        if my_seat is not None:
            view = eng.view(my_seat.position)
    turn = public["turn"] if public is not None else None
    match = latest_match(table)
    return {
        "table": {
            "id": table.pk,
            "name": table.name,
            "variant": table.variant.key,
            "variant_name": table.variant.name,
            "status": table.status,
            "status_display": table.get_status_display(),
            "is_private": table.is_private,
            "move_timer": table.move_timer,
            "players": table.players,
            "options": dict(table.options),
        },
        "seats": [_seat(s, turn) for s in seat_rows],
        "my_seat": my_seat.position if my_seat is not None else None,
        "hand": _hand(hand, public) if hand is not None and public is not None else None,
        "turn": turn,
        "version": hand.version if hand is not None else 0,
        "deadline": hand.deadline if hand is not None else None,
        "view": view,
        "public": public,
        "scores": public["scores_before"] if public is not None else None,
        "match": _match(match) if match is not None else None,
        "invite": invite if invite and table.is_private else None,
    }


def _seat(s: Seat, turn: int | None) -> dict[str, Any]:
    return {
        "position": s.position,
        "name": s.user.get_username() if s.user else "",
        "user_id": s.user_id,
        "bot_level": s.bot_level,
        "bot_display": s.get_bot_level_display() if s.bot_level else "",
        "team": s.team,
        "away": s.away,
        "here": bool(getattr(s, "here", False)),
        "on_turn": turn is not None and s.position == turn,
        "empty": s.is_empty,
    }


def _hand(hand: Hand, public: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": hand.pk,
        "number": public["number"],
        "commitment": public["commitment"],
        "version": hand.version,
    }


def _match(match: Match) -> dict[str, Any]:
    return {
        "id": match.pk,
        "status": match.status,
        "totals": list(match.totals),
        "winners": list(match.winners),
        "hands_planned": match.hands_planned,
    }
