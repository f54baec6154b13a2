"""Hand history: replay a hand step by step, download hands and matches, check a deal.

Selectors and views of ``/hands/<id>/`` (the replay; ``/hands/<id>/step/<n>/`` is one step, so
that a step can be linked), ``/hands/<id>/verify/`` (the provably fair deal),
``/hands/<id>/scenario.json`` (a hand as a scenario of SCENARIOS.md) and ``/matches/<id>.json``.

- **Rebuilt by the engine.** The state at step n is the hand dealt again from its seed as its
  match dealt it (``audit.dealt``, which the audit uses too), with its first n ``Move``
  rows applied (``engine.replay_moves``: each row's ``action`` for its ``seat``). Nothing is
  read from the stored snapshot but what is checked against it.
- **Who sees what** is ``policy.can_replay``. While a hand is live only its players may replay
  it, each as their own seat saw it: their rack, the public board, drawn tiles of the others
  hidden (``engine.event_for``), up to the hand's current version, and no seed. Once it is over
  (finished or abandoned) whoever may see its table replays it with every rack at every step.
- **Exports** hold finished (or abandoned) hands only; a live hand is named without its seed or
  moves. Chat is never part of an export.

Templates receive plain data built here, never a ``Hand`` row or engine state.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.http import urlencode
from django.utils.translation import gettext

from games import audit, engine, messages, policy
from games.engine.export import scenario_of
from games.errors import NotAllowed
from games.models import Hand, Match, Move, Participant, Seat, Table
from games.reads import holder_name


class ReplayError(Exception):
    """A stored move is refused when the hand is replayed from its seed."""

    def __init__(self, number: int, error: str | None) -> None:
        super().__init__(f"move {number} is refused on replay: {error}")
        self.number = number
        self.error = error


# ----------------------------------------------------------------------------- access
@dataclass
class Access:
    """A hand the viewer may replay, with who played it and the viewer's own seat in it."""

    hand: Hand
    table: Table
    participants: list[Participant]
    seat: int | None  # the seat the viewer held in this hand, or None
    invite: str | None = None
    names: list[str] = field(default_factory=list)

    @property
    def live(self) -> bool:
        return self.hand.status == Hand.Status.PLAYING

    @property
    def last_move(self) -> int:
        """The last move the viewer may replay: the hand's version, or, while it is live, the
        version at which staff took the viewer off their seat (the seat's rack after that is
        someone else's to see)."""
        if self.live and self.seat is not None:
            mine = next(p for p in self.participants if p.position == self.seat)
            if mine.left_at is not None:
                return min(mine.left_at, self.hand.version)
        return self.hand.version

    @property
    def shown_seat(self) -> int | None:
        """The seat whose view the replay shows: the viewer's own while the hand is live;
        None once it is over (every rack, every drawn tile)."""
        return self.seat if self.live else None

    @property
    def query(self) -> str:
        """The invite to carry on every link of a private table's replay."""
        if self.invite and self.table.is_private:
            return "?" + urlencode({"invite": self.invite})
        return ""


def _seat_in(participants: list[Participant], user: Any) -> int | None:
    uid = policy.viewer_id(user)
    if uid is None:
        return None
    return next((p.position for p in participants if p.user_id == uid), None)


def participant_name(p: Participant | None, position: int) -> str:
    """Who held a seat in a hand, as the table names them (``reads.holder_name``); "Seat 2"
    for a seat nobody held."""
    if p is not None and ((p.user_id and p.user is not None) or p.bot_level):
        return holder_name(p)
    return gettext("Seat %(number)s") % {"number": position + 1}


def _names(table: Table, participants: list[Participant]) -> list[str]:
    by_seat = {p.position: p for p in participants}
    return [participant_name(by_seat.get(k), k) for k in range(table.players)]


def hand_access(hand_id: int, user: Any, invite: str | None = None) -> Access:
    """The hand ``user`` asks to replay. Raises ``Hand.DoesNotExist``, or ``NotAllowed`` when
    ``policy.can_replay`` says no (the views answer both with 404, like a private table)."""
    hand = Hand.objects.select_related("match__table__variant").get(pk=hand_id)
    table = hand.match.table
    seats = list(Seat.objects.filter(table=table))
    participants = list(
        Participant.objects.filter(hand=hand).select_related("user__profile").order_by("position")
    )
    seat = _seat_in(participants, user)
    if not policy.can_replay(table, seats, user, hand, seat, invite):
        raise NotAllowed("not_invited", "this hand is not yours to replay")
    return Access(hand, table, participants, seat, invite, _names(table, participants))


# ----------------------------------------------------------------------------- the engine


def recorded_moves(hand: Hand, last: int | None = None) -> list[Move]:
    """The hand's move log up to its current version (or up to move ``last``), in order."""
    upto = hand.version if last is None else min(last, hand.version)
    return list(hand.moves.filter(number__lte=upto).order_by("number"))


def rebuild(hand: Hand, moves: list[Move]) -> engine.Hand:
    """The engine's hand after ``moves`` (the first n Move rows), replayed from the deal."""
    replay = engine.replay_moves(audit.dealt(hand), audit.record(moves))
    if replay.error is not None:
        raise ReplayError(moves[replay.played].number, replay.error)
    return replay.hand


# ----------------------------------------------------------------------------- words
def move_words(events: list[dict[str, Any]], names: list[str], seat: int | None) -> list[str]:
    """A move's events in words, by the path of the table's log (``reads.tables._log``):
    ``engine.event_for`` as ``seat`` may see them, then ``messages.event_text``. With ``seat``
    None the hand is over and nothing is hidden: a drawn tile is named."""
    lines: list[str] = []
    for event in events:
        shown = event if seat is None else engine.event_for(event, seat)
        text = messages.event_text(shown, names, seat, all_shown=seat is None)
        if text:
            lines.append(text)
    return lines


def _rack(tiles: list[int]) -> list[str]:
    return [engine.format_tile(t) for t in sorted(tiles)]


def _board(acc: Access, eng: engine.Hand) -> dict[str, Any]:
    """The board at a step: the engine's public view, plus the racks the viewer may see."""
    seat = acc.shown_seat
    public = eng.public_view()
    own = eng.view(seat)["rack"] if seat is not None else None
    scores = engine.running_scores(public)
    live = not public["over"]
    seats = []
    for k in range(public["players"]):
        if seat is None:
            rack: list[str] | None = _rack(eng.racks[k])
        elif k == seat:
            rack = sorted(own or [], key=engine.parse_tile)
        else:
            rack = None
        discards = public["discards"][k]
        seats.append(
            {
                "position": k,
                "name": acc.names[k],
                "me": k == acc.seat,
                "on_turn": live and public["turn"] == k,
                "rack": rack,
                "rack_count": public["rack_counts"][k],
                "discards": discards,
                "top_discard": discards[-1] if discards else None,
                "melds": [m for m in public["table"] if m["owner"] == k],
                "opened": public["opened"][k],
                "score": scores[k],
            }
        )
    return {
        "indicator": public["indicator"],
        "okey": public["okey"],
        "pile_size": public["pile_size"],
        "turn": public["turn"] if live else None,
        "turn_name": acc.names[public["turn"]] if live else "",
        "phase": public["phase"],
        "over": public["over"],
        "seats": seats,
        "has_melds": bool(public["table"]),
        "team_scores": (engine.team_scores(scores) if public["options"].get("partners") else None),
    }


def _hand_data(acc: Access) -> dict[str, Any]:
    h = acc.hand
    return {
        "id": h.pk,
        "number": h.number,
        "match_id": h.match_id,
        "status": h.status,
        "status_display": h.get_status_display(),
        "live": acc.live,
        "version": acc.last_move,
        "commitment": h.commitment,
        # The seed only once the hand is over (Hand.revealed_seed).
        "seed": h.revealed_seed,
    }


def _table_data(acc: Access) -> dict[str, Any]:
    t = acc.table
    return {
        "id": t.pk,
        "name": t.shown_name,
        "variant": t.variant.key,
        "variant_name": messages.variant_name(t.variant.name),
        "players": t.players,
        "is_private": t.is_private,
    }


def step_context(acc: Access, moves: list[Move], n: int) -> dict[str, Any]:
    """Everything the replay shows at step ``n`` (0: the deal; k: after the k-th move)."""
    last = len(moves)
    eng = rebuild(acc.hand, moves[:n])
    seat = acc.shown_seat

    def url(k: int) -> str:
        return reverse("hand_step", args=[acc.hand.pk, k]) + acc.query

    steps = [
        {
            "n": 0,
            "url": url(0),
            "text": gettext("The deal: %(who)s starts.") % {"who": acc.names[acc.hand.starter]},
            "current": n == 0,
        }
    ]
    for m in moves:
        words = move_words(m.events, acc.names, seat)
        steps.append(
            {
                "n": m.number,
                "url": url(m.number),
                "text": " ".join(words),
                "current": m.number == n,
            }
        )
    move = moves[n - 1] if n else None
    return {
        "hand": _hand_data(acc),
        "table": _table_data(acc),
        "query": acc.query,
        "viewer_seat": seat,
        "everything": seat is None,
        "step": n,
        "last": last,
        "nav": {
            "first": url(0) if n > 0 else None,
            "prev": url(n - 1) if n > 0 else None,
            "next": url(n + 1) if n < last else None,
            "last": url(last) if n < last else None,
        },
        "move": (
            {
                "number": move.number,
                "seat": move.seat,
                "name": acc.names[move.seat],
                "do": move.action.get("do", ""),
                "by_clock": move.by == Move.By.CLOCK,
            }
            if move is not None
            else None
        ),
        "words": [steps[0]["text"]] if move is None else move_words(move.events, acc.names, seat),
        "steps": steps,
        "board": _board(acc, eng),
    }


# ----------------------------------------------------------------------------- exports
def hand_scenario(hand: Hand) -> dict[str, Any]:
    """A hand that is over, as a scenario of SCENARIOS.md with its seed: the engine's scenario
    runner (``python -m games.engine.scenario --check``) replays it to the same scores."""
    if hand.status == Hand.Status.PLAYING:
        raise ValueError("a live hand is not exported")
    eng = rebuild(hand, recorded_moves(hand))
    table = hand.match.table
    name = f"{table.shown_name}: match {hand.match_id}, hand {hand.number} (hand id {hand.pk})"
    return scenario_of(eng, name)


def _player(p: Participant | None, position: int) -> dict[str, Any]:
    if p is None:
        return {"seat": position}
    if p.user_id and p.user is not None:
        return {"seat": position, "user": p.user.get_username(), "team": p.team}
    if p.bot_level:
        return {"seat": position, "bot": p.bot_level, "team": p.team}
    return {"seat": position, "user": None, "team": p.team}


def match_export(match_id: int, user: Any, invite: str | None = None) -> dict[str, Any]:
    """A match as JSON: its table, variant, options, who played each seat (``Participant``
    rows: usernames or bot levels), each hand's number, commitment, seed, moves and scores, the
    totals and the ranking. A live hand is named without its seed or moves. No chat.

    Visible to whoever may see the table and to the match's players; each hand's seed and moves
    only where ``policy.can_replay`` allows and the hand is over."""
    match = Match.objects.select_related("table__variant").get(pk=match_id)
    table = match.table
    seats = list(Seat.objects.filter(table=table))
    hands = list(match.hands.order_by("number"))
    participants = list(
        Participant.objects.filter(hand__match=match).select_related("user").order_by("position")
    )
    uid = policy.viewer_id(user)
    played = {p.hand_id: p.position for p in participants if uid is not None and p.user_id == uid}
    if not played and not policy.can_see(table, seats, user, invite):
        raise NotAllowed("not_invited", "this match is not yours to see")
    by_hand: dict[int, dict[int, Participant]] = {}
    for p in participants:
        by_hand.setdefault(p.hand_id, {})[p.position] = p
    out_hands = []
    for h in hands:
        players = [_player(by_hand.get(h.pk, {}).get(k), k) for k in range(table.players)]
        entry: dict[str, Any] = {
            "id": h.pk,
            "number": h.number,
            "status": h.status,
            "starter": h.starter,
            "players": players,
            "commitment": h.commitment,
        }
        if h.status == Hand.Status.PLAYING:
            entry["live"] = True
        elif policy.can_replay(table, seats, user, h, played.get(h.pk), invite):
            result = h.state.get("result") or {}
            entry.update(
                {
                    "live": False,
                    "seed": h.seed,
                    "ending": h.ending or None,
                    "finisher": h.finisher,
                    "kind": h.kind or None,
                    "multiplier": h.multiplier,
                    "hand_scores": h.hand_scores,
                    "scores": result.get("scores"),
                    "moves": [
                        {"number": m.number, "seat": m.seat, "by": m.by, **m.action}
                        for m in h.moves.filter(number__lte=h.version).order_by("number")
                    ],
                }
            )
        else:
            entry.update({"live": False, "withheld": True})
        out_hands.append(entry)
    first = by_hand.get(hands[0].pk, {}) if hands else {}
    live = next((h.number for h in hands if h.status == Hand.Status.PLAYING), None)
    return {
        "format": "okey-match-1",
        "match": match.pk,
        "table": {"id": table.pk, "name": table.shown_name},
        "variant": table.variant.key,
        "options": dict(table.options),
        "players": [_player(first.get(k), k) for k in range(table.players)],
        "status": match.status,
        "hands_planned": match.hands_planned,
        "started_at": match.started_at.isoformat(),
        "finished_at": match.finished_at.isoformat() if match.finished_at else None,
        "live_hand": live,
        "hands": out_hands,
        "totals": list(match.totals),
        "ranking": list(match.ranking),
        "winners": list(match.winners),
    }


# ----------------------------------------------------------------------------- views
def _access_or_404(request: HttpRequest, hand_id: int) -> Access:
    try:
        return hand_access(hand_id, request.user, request.GET.get("invite"))
    except (Hand.DoesNotExist, NotAllowed) as exc:
        # A hand one may not replay looks like no hand at all (as a private table does).
        raise Http404 from exc


def _private(response: HttpResponse, acc: Access) -> HttpResponse:
    if acc.live:  # one seat's view of a live hand: never kept by a shared cache
        patch_cache_control(response, private=True, no_store=True)
    return response


def hand_replay(request: HttpRequest, hand_id: int, step: int = 0) -> HttpResponse:
    """The replay at a step (``/hands/<id>/`` is step 0, the deal). htmx asks for the
    ``step`` fragment alone (Previous/Next and the move list swap it and push its URL)."""
    acc = _access_or_404(request, hand_id)
    moves = recorded_moves(acc.hand, acc.last_move)
    if not 0 <= step <= len(moves):
        raise Http404("no such step")
    try:
        context = step_context(acc, moves, step)
    except (ReplayError, engine.TileError, engine.OptionsError, ValueError):
        # The stored log no longer replays from the seed: its deal check says what differs.
        text = gettext("This hand does not replay from its seed. Its deal check: %(url)s") % {
            "url": reverse("hand_verify", args=[hand_id]) + acc.query
        }
        return _private(HttpResponse(text, status=409, content_type="text/plain"), acc)
    htmx = getattr(request, "htmx", None)
    fragment = bool(htmx) and not htmx.history_restore_request
    template = "games/hand_replay.html#step" if fragment else "games/hand_replay.html"
    response = render(request, template, context)
    patch_vary_headers(response, ["HX-Request"])
    return _private(response, acc)


def hand_step(request: HttpRequest, hand_id: int, step: int) -> HttpResponse:
    return hand_replay(request, hand_id, step)


def hand_verify(request: HttpRequest, hand_id: int) -> HttpResponse:
    """The fair-deal check of a hand: while it is live only its commitment; once it is over
    the seed, the deal made again from it, and each check passed or failed."""
    acc = _access_or_404(request, hand_id)
    context: dict[str, Any] = {
        "hand": _hand_data(acc),
        "table": _table_data(acc),
        "query": acc.query,
        "names": acc.names,
        "checks": None,
        "deal": None,
    }
    if not acc.live:
        checks = audit.deal_checks(acc.hand)
        context["checks"] = checks
        context["passed"] = all(c.ok for c in checks)
        try:
            eng = audit.dealt(acc.hand)
        except (engine.TileError, engine.OptionsError, ValueError):
            eng = None  # the checks above say why
        if eng is not None:
            tiles = engine.format_tile
            context["deal"] = {
                "indicator": tiles(eng.indicator),
                "okey": tiles(eng.okey),
                "racks": [
                    {
                        "seat": seat,
                        "name": acc.names[seat],
                        "starts": seat == eng.starter,
                        "tiles": [tiles(t) for t in rack],
                    }
                    for seat, rack in enumerate(eng.initial["racks"])
                ],
                "pile": [tiles(t) for t in eng.initial["pile"]],
            }
    return _private(render(request, "games/hand_verify.html", context), acc)


def _download(data: dict[str, Any], filename: str) -> HttpResponse:
    response = HttpResponse(
        json.dumps(data, ensure_ascii=False, indent=1) + "\n",
        content_type="application/json; charset=utf-8",
    )
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def hand_scenario_view(request: HttpRequest, hand_id: int) -> HttpResponse:
    """A hand that is over as a scenario file; a live hand is not exported (404)."""
    acc = _access_or_404(request, hand_id)
    if acc.live:
        raise Http404("a live hand is not exported")
    try:
        data = hand_scenario(acc.hand)
    except (ReplayError, engine.TileError, engine.OptionsError, ValueError) as exc:
        return JsonResponse({"error": str(exc)}, status=409)
    return _download(data, f"okey-hand-{acc.hand.pk}.json")


def match_export_view(request: HttpRequest, match_id: int) -> HttpResponse:
    try:
        data = match_export(match_id, request.user, request.GET.get("invite"))
    except (Match.DoesNotExist, NotAllowed) as exc:
        raise Http404 from exc
    response = _download(data, f"okey-match-{match_id}.json")
    if data["live_hand"] is not None:
        patch_cache_control(response, private=True, no_store=True)
    return response
