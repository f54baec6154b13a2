"""Tables: open one, change its settings, give a private table a new invite, hide the hand
from spectators, and tell the tables of a player who changed their name.

Who may see what at a table is counted like a move (``Hand.visibility``, bumped by
:func:`visibility_changed`), so that a lost message never leaves a hidden thing shown."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F

from accounts import names
from games import engine, policy
from games.actions import events
from games.errors import GameError
from games.models import (
    Hand,
    Seat,
    Table,
    Variant,
)


def create_table(
    *,
    variant: str | Variant,
    created_by: AbstractBaseUser | None,
    name: str = "",
    options: dict[str, Any] | None = None,
    is_private: bool = False,
    move_timer: int | None = None,
    players: int = 4,
    season: Any = None,
    auto_start: bool = False,
    other_tables: bool = False,
    chat_enabled: bool = True,
    created_from: str | None = None,
    quick: bool = False,
    fill_at: Any = None,
    fill_level: str = "",
) -> Table:
    """A new open table with empty seats; options are validated by the engine. With
    ``auto_start`` the match starts by itself when the last seat is filled. The name is
    cleaned (``table_name``). ``created_from``: the address "New table" came from; ``quick``,
    ``fill_at``, ``fill_level``: a table "Play now" forms (``Table``)."""
    v = variant if isinstance(variant, Variant) else Variant.objects.get(key=variant)
    checked = check_table_settings(v, options, move_timer, players, season)
    with transaction.atomic():
        table = Table.objects.create(
            variant=v,
            options=checked,
            name=table_name(name),
            is_private=is_private,
            created_by=created_by,
            move_timer=int(checked["timer"]),
            players=players,
            season=season,
            auto_start=auto_start,
            other_tables=other_tables,
            chat_enabled=chat_enabled,
            created_from=created_from,
            quick=quick,
            fill_at=fill_at,
            fill_level=fill_level,
        )
        Seat.objects.bulk_create(
            [Seat(table=table, position=p, team=engine.team_of(p, checked)) for p in range(players)]
        )
    events.to_table(events.table_changed(table.id))
    return table


def table_name(name: str) -> str:
    """A table's name as it is stored, cleaned as every name is (``accounts.names``: no
    direction overrides or invisible characters); empty when nothing visible is left (the
    table is then called after its variant in each reader's language: ``Table.shown_name``).
    Every writer of a table's name comes here, so no caller can skip the cleaning."""
    cleaned = names.clean_name(str(name or ""))
    limit = Table._meta.get_field("name").max_length
    if limit is not None and len(cleaned) > limit:  # NFC may lengthen a name a little
        raise GameError("bad_name", f"a table's name has at most {limit} characters")
    return cleaned


def check_table_settings(
    variant: Variant,
    options: dict[str, Any] | None,
    move_timer: int | None,
    players: int,
    season: Any,
) -> dict[str, Any]:
    """The table options a new table of ``variant`` gets, checked by the engine. A season's
    table options win over the table's own choices (every table of a season plays alike)."""
    season_options = season.table_options if season is not None else {}
    merged = {**variant.default_options, **(options or {}), **(season_options or {})}
    if move_timer is not None:
        merged["timer"] = move_timer
    try:
        checked = engine.check_table(variant.key, merged, players)
    except engine.OptionsError as exc:
        raise GameError("bad_options", str(exc)) from exc
    if season is not None and season.league.variant_id != variant.pk:
        raise GameError("bad_season", "the season's league plays another variant")
    return checked


def locked_table(table: Table | int) -> tuple[Table, list[Seat]]:
    """Lock a table row and its seats: seat changes at one table happen one at a time."""
    pk = table.pk if isinstance(table, Table) else table
    t = Table.objects.select_for_update(of=("self",)).select_related("variant").get(pk=pk)
    seats = list(Seat.objects.select_for_update().filter(table=t).order_by("position"))
    return t, seats


def visibility_changed(table_id: int) -> None:
    """Who may see what at the table changes (in the caller's transaction): the hand being
    played counts it (``Hand.visibility``), and every move's message carries the count, so a
    server process that misses this change's message reads the table again at the next move
    instead of bringing a stale state forward (``games.live.table_socket``). Called before the
    table's row is locked: a move locks its hand first too."""
    Hand.objects.filter(match__table_id=table_id, status=Hand.Status.PLAYING).update(
        visibility=F("visibility") + 1
    )


def update_table(table: Table | int, *, by: Any, **changes: Any) -> Table:
    """Staff change a table's name, privacy, league season or whether its chat is on. Game
    settings (variant, options, players, timer) are fixed once the table exists; only these
    fields are written."""
    policy.check_staff(by, "edit a table")
    allowed = {"name", "is_private", "season", "chat_enabled"}
    unknown = set(changes) - allowed
    if unknown:
        raise GameError("read_only", f"{', '.join(sorted(unknown))} cannot be changed")
    with transaction.atomic():
        if "is_private" in changes:
            visibility_changed(table.pk if isinstance(table, Table) else table)
        t, _ = locked_table(table)
        season = changes.get("season", t.season)
        if season is not None and season.league.variant_id != t.variant_id:
            raise GameError("bad_season", "the season's league plays another variant")
        if season is not None and any(
            t.options.get(k) != v for k, v in (season.table_options or {}).items()
        ):
            raise GameError(
                "season_options", "this table's options are not the season's table options"
            )
        if "name" in changes:
            changes["name"] = table_name(changes["name"])
        for key, value in changes.items():
            setattr(t, key, value)
        t.save(update_fields=sorted(changes))
    events.to_table(events.table_changed(t.id))
    if "chat_enabled" in changes:  # open chat panels show (or drop) the notice and the input
        events.to_table(events.chat_changed(t.id, t.chat_enabled))
    return t


def rotate_invite(table: Table | int, *, by: Any, invite: str | None = None) -> Table:
    """The host gives a private table a new invite token. The old link then opens nothing:
    to whoever is not seated there, its creator or staff it is no table at all, and the
    spectators who came in with it lose the table at their socket's next frame (the change
    is counted as one of who may see what, so a lost message does not keep them watching).
    Seated players keep their seats. ``invite``: the one the request came with (the policy
    asks, as for any request, whether ``by`` may see the table)."""
    with transaction.atomic():
        visibility_changed(table.pk if isinstance(table, Table) else table)
        t, seats = locked_table(table)
        policy.check_rotate_invite(t, seats, by, invite)
        t.invite_token = Table._meta.get_field("invite_token").get_default()
        t.save(update_fields=["invite_token"])
    events.to_table(events.table_changed(t.id))
    return t


def hide_from_spectators(table_id: int, by: Any) -> Hand:
    """A seated player hides the hand being played from spectators until it ends: they see
    the seats and the match's totals, not the board (``reads.table_context``)."""
    with transaction.atomic():
        hand = (
            Hand.objects.select_for_update(of=("self",))
            .filter(match__table_id=table_id, status=Hand.Status.PLAYING)
            .first()
        )
        seats = list(Seat.objects.filter(table_id=table_id))
        policy.check_hide(seats, by, hand)
        assert hand is not None  # checked by the policy
        if not hand.hidden:
            hand.hidden = True
            hand.visibility += 1
            hand.save(update_fields=["hidden", "visibility", "updated_at"])
            events.to_table(events.table_changed(table_id))
    return hand


def name_changed(user_id: int) -> None:
    """A player's name (display name or username) changed: the tables where they sit, and the
    lobby, show it (after commit; a server that holds a table's state reads it again)."""
    tables = Seat.objects.filter(user_id=user_id).values_list("table_id", flat=True)
    for table_id in sorted(set(tables)):
        events.to_table(events.table_changed(table_id))
