"""Read-only queries for pages and sockets (the HackSoftware split: the actions write, the reads
read). What a template receives is built here from plain data: the engine's per-seat view for
the viewer's own seat, its public view for everything else; never a Hand row, its seed or its
state."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.db.models import Count, Exists, OuterRef, Prefetch
from django.utils.translation import gettext

from accounts.models import display_name
from games import chat, engine, messages, policy, reads
from games.engine import layout as rack_layout
from games.engine import solver
from games.engine.assist import arranged
from games.engine.variants import rules_for
from games.models import (
    ChatMute,
    Hand,
    Match,
    Participant,
    Presence,
    Seat,
    Table,
    Watcher,
)


def table_with_seats(table_id: int) -> Table:
    """A table with its seats, each annotated ``here`` (its holder has a fresh socket)."""
    seats = (
        Seat.objects.select_related("user__profile")
        .annotate(here=Presence.here())
        .order_by("position")
    )
    return (
        Table.objects.select_related("variant")
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


def shown_hand(table: Table) -> Hand | None:
    """The hand the table shows: the one being played, else the last one played (its
    scoreboard stays up between hands and after the match)."""
    playing = current_hand(table)
    if playing is not None:
        return playing
    return (
        Hand.objects.filter(match__table=table)
        .select_related("match")
        .order_by("-match__started_at", "-number")
        .first()
    )


def watching(table_ids: list[int], now: Any = None) -> dict[int, int]:
    """How many watch each table: its fresh spectator sockets (``Watcher``), leaving out
    any of a user who holds a seat there (a player who sat down with a spectator's tab open).
    One query for any number of tables."""
    seated = Seat.objects.filter(table_id=OuterRef("table_id"), user_id=OuterRef("user_id"))
    rows = (
        Watcher.objects.filter(Watcher.fresh(now), table_id__in=table_ids)
        .exclude(Exists(seated))
        .values("table_id")
        .annotate(n=Count("id"))
        .values_list("table_id", "n")
    )
    return dict(rows)


# ----------------------------------------------------------------------------- the table
LOG_MOVES = 10  # the event log shows the events of the hand's last moves


@dataclass(frozen=True)
class TableState:
    """What a table shows, whoever looks at it: read once by :func:`table_state` and shared by
    the contexts of every viewer (``table_context(..., state=state)``), so that a socket that
    renders four seats after a move reads the table once.

    Read-only: building a context never changes it (the engine hand is never played on, and
    what a context changes it copies). It holds every seat's rack layout and the engine's whole
    hand, so it never goes to a template: :func:`table_context` takes from it what the viewer
    may see. Who is looking (their seat, the invite, their chat mutes) and their language are
    not in it."""

    table: Table
    seats: tuple[Seat, ...]  # by position, each annotated ``here``
    hand: Hand | None  # the hand shown (:func:`shown_hand`), its match loaded
    match: Match | None  # the hand's match, else the table's latest
    engine_hand: engine.Hand | None  # the shown hand, rebuilt once from its snapshot
    public: dict[str, Any] | None  # its public view
    layouts: dict[int, list[str | None]]  # each seat's stored rack layout for the hand
    log_moves: tuple[list[dict[str, Any]], ...]  # the events of the last LOG_MOVES moves
    openings: dict[int, dict[str, Any]]  # how each seat opened the hand (:func:`_openings`)
    finish: dict[str, Any] | None  # the hand's finishing move (its ``groups``), if any
    # When the seats (and who is ``here``) were read (``time.monotonic()``): a state brought
    # forward by :func:`state_after_move` keeps its read's time.
    read_at: float = field(default_factory=time.monotonic)
    # Seats whose stored layout may have changed since it was read (a layout is saved without
    # telling anyone): a state brought forward knows only the mover's.
    stale_layouts: frozenset[int] = frozenset()


def table_state(table_id: int, table: Table | None = None) -> TableState:
    """The viewer-independent part of the table page (:class:`TableState`), in two
    queries: the table with its seats (``table``: as :func:`table_with_seats` read it, if the
    caller has it); the shown hand (:func:`shown_hand`: the table's latest hand) with its
    match, every seat's stored layout for it, and its last moves and opening moves. A table
    with no hand yet reads its latest match instead. Both are written out in SQL
    (``games.reads``). Raises ``Table.DoesNotExist``."""
    if table is not None:
        seats = tuple(table.seats.all())
    else:
        table, seats = reads.table_and_seats(table_id)
    return _state_of(table, seats)


def _state_of(table: Table, seats: tuple[Seat, ...]) -> TableState:
    """:func:`table_state` for a table and seats already read."""
    hand, layouts, moves = reads.latest_hand(table.pk, table.players, LOG_MOVES, "open")
    if hand is None:
        return TableState(table, seats, None, latest_match(table), None, None, {}, (), {}, None)
    return state_of_hand(table, seats, hand, layouts, moves)


def state_of_hand(
    table: Table,
    seats: tuple[Seat, ...],
    hand: Hand,
    layouts: dict[int, Any],
    moves: list[tuple[int, Any, Any]],
) -> TableState:
    """The :class:`TableState` of a table whose latest hand is read (``reads.latest_hand``,
    ``LOG_MOVES`` last moves and the opening ones): it reads nothing, so it also runs on the
    event loop (``games.live.loop_reads``)."""
    eng = engine.Hand.from_state(hand.state, copy_data=False)  # only read: no copy
    # The last moves, and the earlier "open" moves (how each seat opened). Moves played since
    # the hand was read (past its version) are left out.
    version = hand.version
    rows = [(action if isinstance(action, dict) else {}, events) for _n, action, events in moves]
    last = rows[-min(LOG_MOVES, version) :] if version > 0 else []
    return TableState(
        table=table,
        seats=seats,
        hand=hand,
        match=hand.match,
        engine_hand=eng,
        public=eng.public_view(),
        layouts={p: list(layout or []) for p, layout in layouts.items()},
        log_moves=tuple(events for _action, events in last),
        openings=_openings(events for action, events in rows if action.get("do") == "open"),
        # A hand ends with its finishing move: it is the last one.
        finish=next((action for action, _e in last if action.get("do") == "finish"), None),
    )


def state_after_move(
    state: TableState,
    hand_id: int,
    version: int,
    seat: int,
    apply: dict[str, Any],
) -> TableState | None:
    """``state`` brought forward by one move, without reading: what :func:`table_state` would
    read once the move (of ``seat``, the hand's ``version``-th, with the ``apply`` part of its
    ``hand.moved`` message: the engine's action, the hand row's new deadline and
    ``updated_at``, and the mover's stored layout) has committed, and nothing else has
    changed. The engine is deterministic: the action on a copy of the hand gives the hand and
    the events the service stored.

    None where it cannot be brought forward: ``state`` is not the hand at the version before,
    who may see what changed since it was read (``Hand.visibility``), the move ended the
    hand, or it changed another seat's rack (whose layout is not known).
    ``state`` itself is not changed (frames may be rendering it)."""
    hand, before = state.hand, state.engine_hand
    if hand is None or before is None or hand.pk != hand_id or hand.version != version - 1:
        return None
    if hand.status != Hand.Status.PLAYING:
        return None
    if apply.get("visibility") != hand.visibility:
        return None  # who may see what changed since the read (its message may be lost)
    action = apply.get("action")
    if not isinstance(action, dict) or action.get("do") == "finish":
        return None
    eng = before.copy()
    result = eng.play(seat, action)
    if not result.ok or eng.over:
        return None
    if any(eng.racks[p] != before.racks[p] for p in range(eng.players) if p != seat):
        return None
    # The events as the move's row stores them, and as a read gives them back: JSON.
    events = json.loads(json.dumps(result.events))
    after = copy.copy(hand)
    after.version, after.turn, after.turn_index = version, eng.turn, eng.turn_index
    deadline, updated_at = apply.get("deadline"), apply.get("updated_at")
    after.deadline = datetime.fromisoformat(deadline) if deadline else None
    if updated_at:
        after.updated_at = datetime.fromisoformat(updated_at)
    # The row's snapshot is not brought forward (the engine hand is): drop it, so that no one
    # reads an old one by mistake (on the event loop, a deferred field refuses to load).
    after.__dict__.pop("state", None)
    layouts = dict(state.layouts)
    layout = apply.get("layout")
    if layout is None:
        layouts.pop(seat, None)
    else:
        layouts[seat] = list(layout)
    openings = state.openings
    if action.get("do") == "open":
        openings = {**openings, **_openings([events])}
    return replace(
        state,
        hand=after,
        engine_hand=eng,
        public=eng.public_view(),
        layouts=layouts,
        log_moves=(*state.log_moves, events)[-LOG_MOVES:],
        openings=openings,
        stale_layouts=frozenset(range(eng.players)) - {seat},
    )


def table_context(
    table_id: int,
    user: Any,
    invite: str | None = None,
    table: Table | None = None,
    state: TableState | None = None,
) -> dict[str, Any]:
    """Everything the table page (and its live fragments) shows ``user``, as plain data.

    Raises ``Table.DoesNotExist`` for a missing table and ``NotAllowed`` for one the user may
    not see. The rack in it is the viewer's own, from the engine's view of their seat; the
    rest comes from the engine's public view. Templates get this and nothing else: no Hand
    row, no seed before the end, no engine state. ``state``: the table as :func:`table_state`
    read it, to build several viewers' contexts from one read (it is not changed); else
    ``table``: the table as :func:`table_with_seats` read it, when the caller has it already.
    Nothing is read from the database when ``state`` is given.
    """
    if state is None:
        if table is None:
            table, seats = reads.table_and_seats(table_id)
        else:
            seats = tuple(table.seats.all())
        policy.check_see(table, seats, user, invite)
        state = _state_of(table, seats)
    else:
        policy.check_see(state.table, state.seats, user, invite)
    table = state.table
    seat_rows = state.seats
    uid = viewer_id(user)
    my_seat = next((s for s in seat_rows if uid is not None and s.user_id == uid), None)
    me = my_seat.position if my_seat is not None else None
    hand = state.hand
    match = state.match
    view = public = None
    legal: list[str] = []
    rack_rows = None
    rack_sorts = None
    assist = None
    # A seated player hid the hand being played from spectators: they see no board until the
    # hand ends (seats, who is here and the match's totals stay).
    veiled = hand is not None and me is None and hand.hidden and hand.status == Hand.Status.PLAYING
    if hand is not None and not veiled and state.engine_hand is not None:
        public = state.public
        if me is not None and hand.status == Hand.Status.PLAYING:
            view = state.engine_hand.view(me)
            legal = engine.legal_actions(view)
            stored = state.layouts.get(me) or []
            rack_rows = rack_layout.rows(rack_layout.reconcile(stored, view["rack"]))
            wrap = rules_for(view["variant"]).wrap(view["options"])
            rack_sorts = RackSorts(tuple(view["rack"]), view["okey"], wrap)
            if table.options.get("assisted"):
                assist = _assist(view)
    names = [_name(s) for s in seat_rows]
    live = hand is not None and hand.status == Hand.Status.PLAYING
    turn = public["turn"] if public is not None and live else None
    scores = engine.running_scores(public) if public is not None else None
    openings = state.openings if public is not None and any(public["opened"]) else {}
    seats = [_seat(s, turn, public, scores, openings) for s in seat_rows]
    if me is None and match is not None and match.status == Match.Status.PLAYING:
        # Between hands a spectator may take a seat its player left (a bot plays it now).
        between = match.next_hand_at is not None
        for seat, row in zip(seats, seat_rows, strict=True):
            seat["may_sit"] = between and row.stand_in and not row.user_id
    return {
        "table": {
            "id": table.pk,
            "name": table.shown_name,
            "variant": table.variant.key,
            "variant_name": messages.variant_name(table.variant.name),
            "status": table.status,
            "status_display": table.get_status_display(),
            "is_private": table.is_private,
            "move_timer": table.move_timer,
            "players": table.players,
            "options": dict(table.options),
            "partners": bool(table.options.get("partners")),
            "open_variant": engine.is_open_variant(table.variant.key),
            "indicator_show": engine.has_indicator_show(table.variant.key),
        },
        "seats": seats,
        "my_seat": me,
        "hand": _hand(hand, public) if hand is not None and public is not None else None,
        "live": live,
        "turn": turn,
        "phase": public["phase"] if public is not None and live else "",
        "version": hand.version if hand is not None else 0,
        "view": view,
        "legal": legal,
        "targets": engine.meld_targets(view, legal) if view is not None else None,
        "rack_rows": rack_rows,
        "rack_sorts": rack_sorts,
        "assist": assist,
        "take_from": (me - 1) % table.players if view is not None and view["can_take"] else None,
        "public": public,
        "scores": scores,
        "team_scores": (
            engine.team_scores(scores) if scores and table.options.get("partners") else None
        ),
        "log": (
            _log(state.log_moves, names, me, hand.version, _leaves(seat_rows, hand))
            if hand is not None and not veiled
            else []
        ),
        "veiled": {"number": hand.number} if veiled and hand is not None else None,
        # Shown to the players: the hand being played is hidden from spectators.
        "hidden": bool(hand is not None and hand.hidden and live),
        "result": (
            _result(public, names, state.finish, engine.score_parts(state.engine_hand))
            if public is not None and public["over"] and state.engine_hand is not None
            else None
        ),
        "match": _match(match, me) if match is not None else None,
        "invite": invite if invite and table.is_private else None,
        # A bot plays the viewer's seat (they timed out twice, or lost the connection).
        "away": bool(my_seat is not None and my_seat.away and live),
        # Leaving a match with another person in it costs last place in the ratings.
        "rated": sum(1 for s in seat_rows if s.user_id) >= 2,
        # Practice: the viewer alone with bots at a table nobody else was called to (its
        # end offers the same again, not a wait for strangers), and the bots' level.
        "practice": _practice_level(table, seat_rows, my_seat),
    }


def rack_weight(
    table_id: int, hand_id: Any, seat: int, layout: Any, slots: Any
) -> dict[str, Any] | None:
    """For a seat's page: what the groups standing on its stand are (``stand``: each group of
    two tiles or more, its slots and whether it is a run, a set or a pair) and what the tiles
    in ``slots`` are worth grouped as they stand (``selected``: ``engine.weigh``), from the
    seat's own view of the hand being played at ``table_id``. None when there is no such hand,
    or ``layout`` is not the seat's rack, or a slot holds no tile (the page asks again)."""
    if isinstance(hand_id, bool) or not isinstance(hand_id, int) or not 0 < hand_id < 2**63:
        return None
    hand = Hand.objects.filter(
        pk=hand_id, match__table_id=table_id, status=Hand.Status.PLAYING
    ).first()
    if hand is None:
        return None
    view = hand.view_for(seat)
    try:
        stand = rack_layout.check(layout, view["rack"])
        chosen = rack_layout.groups_at(stand, slots) if slots else []
    except ValueError:
        return None
    groups = [g for g in rack_layout.slot_groups(stand) if len(g) >= 2]
    weighed = engine.weigh(view, [[stand[i] or "" for i in g] for g in groups])
    return {
        "stand": [
            {"slots": g, "valid": w["valid"]}
            for g, w in zip(groups, weighed["groups"], strict=True)
        ],
        "selected": engine.weigh(view, chosen),
        "open_variant": engine.is_open_variant(view["variant"]),
    }


@dataclass(frozen=True)
class RackSorts:
    """The layouts of the rack's sort buttons, as JSON by way of sorting
    (``rack_sorts['runs']``: ``engine.layout.sorted_layout``; ``rack_sorts['melds']``: the
    best runs and sets at once, ``engine.assist.arranged``). Each is worked out when the rack
    fragment is rendered, which most frames skip (a move changes the mover's rack only)."""

    rack: tuple[str, ...]
    okey: str
    wrap: bool

    def __getitem__(self, by: str) -> str:
        if by == "melds":
            return json.dumps(arranged(self.rack, self.okey, self.wrap))
        if by not in rack_layout.SORTS:
            raise KeyError(by)
        return json.dumps(rack_layout.sorted_layout(self.rack, self.okey, by))


def _assist(view: dict[str, Any]) -> dict[str, Any]:
    """The engine's help for an assisted table (from the seat's own view only), plus what the
    page's script reads: the suggested open move as JSON, and the feedable tiles as a list
    (the rack fragment is not re-sent when only the table changes, so the board carries the
    marks too)."""
    help_ = engine.assist(view)
    opening = help_["opening"]
    return {
        **help_,
        "feedable_tiles": [f["tile"] for f in help_["feedable"]],
        "open_json": json.dumps(opening["move"]) if opening else "",
    }


_BOT_LEVELS = dict(Seat.Bot.choices)  # level -> its name, translated when shown


def bot_level_name(level: str) -> str:
    """A bot level's name in the active language. (``get_bot_level_display()`` hashes every
    choice's lazy name, translating each, on every call: ten times a table frame.)"""
    return str(_BOT_LEVELS.get(level, level))


def holder_name(p: Participant | None) -> str:
    """Who held a seat in a hand: the player's name, or "Bot 2 (level)", numbered by seat as
    the table numbers its bots (three bots at one table are told apart)."""
    if p is None:
        return "?"
    if p.user_id and p.user is not None:
        return display_name(p.user)
    if p.bot_level:
        return gettext("Bot %(number)s (%(level)s)") % {
            "number": p.position + 1,
            "level": bot_level_name(p.bot_level),
        }
    return gettext("a former player")


def _name(s: Seat) -> str:
    if s.user_id and s.user is not None:
        return display_name(s.user)
    if s.bot_level:
        # Numbered by seat, so that three bots at one table can be told apart.
        return gettext("Bot %(number)s (%(level)s)") % {
            "number": s.position + 1,
            "level": bot_level_name(s.bot_level),
        }
    return gettext("empty")


def _openings(events_of_opens: Iterable[list[dict[str, Any]]]) -> dict[int, dict[str, Any]]:
    """How each seat opened this hand: ``{"total": 57}`` or ``{"pairs": 5}``, from the public
    "open" events of the hand's "open" moves (in order: a later one counts)."""
    found: dict[int, dict[str, Any]] = {}
    for events in events_of_opens:
        for e in events:
            if e.get("type") == "open":
                if e.get("with") == "pairs":
                    found[e["seat"]] = {"pairs": e.get("pairs") or len(e.get("melds") or [])}
                else:
                    found[e["seat"]] = {"total": e.get("total")}
    return found


def _seat(
    s: Seat,
    turn: int | None,
    public: dict[str, Any] | None,
    scores: list[int] | None,
    openings: dict[int, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    p = s.position
    discards = public["discards"][p] if public is not None else []
    return {
        "position": p,
        "name": s.user.get_username() if s.user else "",
        "display": _name(s),
        "user_id": s.user_id,
        "bot_level": s.bot_level,
        "bot_display": bot_level_name(s.bot_level) if s.bot_level else "",
        "team": s.team,
        "away": s.away,
        "here": bool(getattr(s, "here", False)),
        "on_turn": turn is not None and p == turn,
        "empty": s.is_empty,
        "score": scores[p] if scores else None,
        "rack_count": public["rack_counts"][p] if public is not None else None,
        "opened": public["opened"][p] if public is not None else None,
        "opened_with": (openings or {}).get(p),
        "discards": discards,
        "top_discard": discards[-1] if discards else None,
        "melds": [m for m in public["table"] if m["owner"] == p] if public is not None else [],
        "revealed": public["revealed"][p] if public is not None and public["revealed"] else None,
    }


def _hand(hand: Hand, public: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": hand.pk,
        "number": public["number"],
        "commitment": public["commitment"],
        "version": hand.version,
        "over": public["over"],
        "seed": public["seed"],
        "deadline": hand.deadline.isoformat() if hand.deadline else "",
    }


def _practice_level(table: Table, seats: Iterable[Seat], mine: Seat | None) -> str:
    """The bots' level when the viewer practises here (alone with bots at a table they did
    not fill through "Play now"), else ""."""
    if mine is None or table.quick:
        return ""
    others = [s for s in seats if s.pk != mine.pk]
    if not others or any(s.user_id or not s.bot_level for s in others):
        return ""
    return others[0].bot_level


class LogLine(str):
    """A line of the log; ``mine``: it tells the viewer's own move."""

    mine: bool = False


def _leaves(seats: Iterable[Seat], hand: Hand) -> dict[int, tuple[int, str]]:
    """The seats whose player left during ``hand``: position -> (the moves of the hand played
    when they left, their name)."""
    return {
        s.position: (s.left_at, s.left_name)
        for s in seats
        if s.left_hand == hand.pk and s.left_at is not None and s.left_name
    }


def _log(
    moves: Iterable[list[dict[str, Any]]],
    names: list[str],
    viewer: int | None,
    version: int = 0,
    leaves: dict[int, tuple[int, str]] | None = None,
    last: int = LOG_MOVES,
) -> list[str]:
    """The hand's latest events in words (``moves``: the events of its last moves, oldest
    first, the last of them the hand's ``version``-th), as ``viewer`` may see them (a drawn
    tile only to the seat that drew it). A player who left (``leaves``: see :func:`_leaves`)
    is named where they left, and their moves before it under their own name, not the bot's."""
    moves = list(moves)
    leaves = leaves or {}
    lines: list[str] = []

    def left_after(number: int) -> None:
        for _position, (at, name) in sorted(leaves.items()):
            if at == number:
                lines.append(LogLine(messages.left_text(name)))

    first = version - len(moves) + 1
    left_after(first - 1)
    for number, events in enumerate(moves, start=first):
        shown_names = names
        if leaves:
            shown_names = [
                leaves[p][1] if p in leaves and number <= leaves[p][0] else name
                for p, name in enumerate(names)
            ]
        for event in events:
            shown = engine.event_for(event, viewer if viewer is not None else -1)
            text = messages.event_text(shown, shown_names, viewer)
            if text:
                line = LogLine(text)
                line.mine = viewer is not None and event.get("seat") == viewer
                lines.append(line)
        left_after(number)
    return lines[-last:]


def _finishing_groups(finish: dict[str, Any] | None, public: dict[str, Any]) -> list[list[str]]:
    """A closed-variant finisher's rack laid out in its groups: the groups their finish named
    (``finish``: the finishing move; the rack as arranged), else the solver's grouping of the
    revealed rack."""
    r = public["result"]
    seat = r.get("finisher")
    if r["ending"] != "finish" or seat is None or not public["revealed"]:
        return []
    if engine.is_open_variant(public["variant"]):
        return []  # open variants finish with their melds on the table
    if finish and isinstance(finish.get("groups"), list):
        return [list(g) for g in finish["groups"]]
    tiles = [engine.parse_tile(t) for t in public["revealed"][seat]]
    okey = engine.parse_tile(public["okey"])
    wrap = engine.variants.rules_for(public["variant"]).wrap(public["options"])
    melds = solver.arrange(tiles, okey, wrap)
    if melds is None:
        return []  # seven pairs, or a colour finish: shown as the plain rack
    return [[engine.format_tile(t) for t in m.tiles] for m in melds]


def _result(
    public: dict[str, Any],
    names: list[str],
    finish: dict[str, Any] | None,
    parts: list[list[dict[str, Any]]],
) -> dict[str, Any]:
    r = public["result"]
    return {
        "finishing_groups": _finishing_groups(finish, public),
        "ending": r["ending"],
        "finisher": r.get("finisher"),
        "finisher_name": messages.seat_name(names, r.get("finisher")),
        "kind": r.get("kind"),
        "kind_display": messages.finish_kind(r.get("kind")),
        "tile": r.get("tile"),
        "multiplier": r.get("multiplier", 1),
        "doublings_display": ", ".join(messages.doubling(d) for d in r.get("doublings") or []),
        "hand_scores": r["hand_scores"],
        "scores": r["scores"],
        "match_over": r.get("match_over", False),
        "winners": [messages.seat_name(names, w) for w in r.get("winners") or []],
        "rows": [
            {
                "name": names[i],
                "hand": r["hand_scores"][i],
                "total": r["scores"][i],
                # Where the hand's points came from (engine.score_parts), in words.
                "parts": [
                    {"words": messages.score_part(p), "points": p["points"]} for p in parts[i]
                ],
            }
            for i in range(len(names))
        ],
        "final": _final_ranking(public["variant"], r, names) if r.get("match_over") else [],
    }


def _final_ranking(variant: str, r: dict[str, Any], names: list[str]) -> list[dict[str, Any]]:
    """The match's places, best first, as the engine ranks the totals; equal totals share a
    place."""
    rows: list[dict[str, Any]] = []
    winners = set(r.get("winners") or [])
    for i, seat in enumerate(engine.ranking(variant, r["scores"])):
        total = r["scores"][seat]
        place = rows[-1]["place"] if rows and rows[-1]["total"] == total else i + 1
        rows.append(
            {
                "place": place,
                "name": names[seat],
                "total": total,
                "winner": seat in winners,
            }
        )
    return rows


def _match(match: Match, me: int | None) -> dict[str, Any]:
    between = match.status == Match.Status.PLAYING and match.next_hand_at is not None
    return {
        "id": match.pk,
        "status": match.status,
        "totals": list(match.totals),
        "winners": list(match.winners),
        "hands_planned": match.hands_planned,
        "between_hands": between,
        "next_hand_at": match.next_hand_at.isoformat() if between and match.next_hand_at else "",
        "ready": list(match.ready),
        "i_am_ready": me is not None and me in match.ready,
    }


# ----------------------------------------------------------------------------- chat
def _mutes(table_id: int, user_id: int, at: Any = None) -> Any:
    """``user_id``'s mutes at the table that hold now (or at the time ``at``): a mute ends
    when a match at the table ends after it was made."""
    ended_since = Match.objects.filter(
        table_id=OuterRef("table_id"), finished_at__gt=OuterRef("created_at")
    )
    if at is not None:
        ended_since = ended_since.filter(finished_at__lte=at)
        mutes = ChatMute.objects.filter(created_at__lte=at)
    else:
        mutes = ChatMute.objects.all()
    return mutes.filter(table_id=table_id, user_id=user_id).exclude(Exists(ended_since))


def muted_ids(table_id: int, user: Any, at: Any = None) -> set[int]:
    """The users whose lines ``user`` has muted at the table, now (or at the time ``at``);
    empty for anonymous users."""
    uid = viewer_id(user)
    if uid is None:
        return set()
    return set(_mutes(table_id, uid, at).values_list("muted_id", flat=True))


def latest_matches(table_id: int) -> list[int]:
    """The ids of the table's two latest matches, newest first (what the chat panel's window
    depends on: ``reads.chat_lines``)."""
    return list(
        Match.objects.filter(table_id=table_id)
        .order_by("-started_at", "-id")
        .values_list("id", flat=True)[:2]
    )


def chat_context(
    table_id: int,
    user: Any,
    invite: str | None = None,
    table: Table | None = None,
    seats: Iterable[Seat] | None = None,
    counts: reads.PageCounts | None = None,
) -> dict[str, Any]:
    """The chat panel for ``user``, as plain data: its last ``chat.HISTORY`` lines
    (``reads.chat_lines``), oldest first, without those of people the viewer muted; who is
    muted; whether the viewer may send; the canned phrases in the active language.
    ``table``: the table with its seats (or with ``seats``), when the caller has read it;
    ``counts``: the page's ``reads.page_counts`` for this viewer, when read (then only the
    lines are read, and the mutes if the viewer has any)."""
    if table is None:
        table = Table.objects.prefetch_related("seats").get(pk=table_id)
    seat_rows = list(seats if seats is not None else table.seats.all())
    policy.check_see(table, seat_rows, user, invite)
    uid = viewer_id(user)
    mutes: list[ChatMute] = []
    if uid is not None and (counts is None or counts.has_mutes):
        mutes = list(_mutes(table_id, uid).select_related("muted__profile"))
    muted = {m.muted_id for m in mutes}
    latest = counts.latest_matches if counts is not None else latest_matches(table_id)
    recent = reads.chat_lines(table_id, latest, muted, chat.HISTORY)
    return {
        "table_id": table_id,
        "enabled": table.chat_enabled,
        "signed_in": uid is not None,
        "can_send": policy.can_chat(table, seat_rows, user, invite),
        "me": uid,
        "lines": [chat.line(m) for m in recent],
        "muted": [{"id": m.muted_id, "name": display_name(m.muted)} for m in mutes],
        "canned": chat.canned_buttons(),
        "max_length": chat.MAX_LENGTH,
        "invite": invite if invite and table.is_private else None,
    }
