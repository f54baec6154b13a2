"""A player's statistics per variant (the profile page): matches and hands played, wins,
finish kinds, average hand score, how often and how early they open, penalties taken.

Read from who held each seat (``Participant``), never from today's seats, and from finished
hands only (a live hand's numbers are not public yet). A handful of queries however many hands
a player has played.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from django.db.models import Count, Exists, OuterRef, Subquery

from games import engine, messages
from games.models import Hand, Match, Move, Participant


def player_stats(person: Any) -> list[dict[str, Any]]:
    """One dict per variant the person has finished a hand in, in the site's variant order."""
    rows = list(
        Participant.objects.filter(user=person, hand__status=Hand.Status.FINISHED)
        .order_by()
        .values(
            "position",
            "hand_id",
            "hand__match_id",
            "hand__ending",
            "hand__kind",
            "hand__finisher",
            "hand__hand_scores",
            "hand__state__penalties",
            "hand__match__table__variant__key",
            "hand__match__table__variant__name",
            "hand__match__table__variant_id",
        )
    )
    if not rows:
        return []
    mine = Participant.objects.filter(
        user=person, hand_id=OuterRef("hand_id"), position=OuterRef("seat")
    )
    earlier_turns = (
        Move.objects.filter(
            hand_id=OuterRef("hand_id"),
            seat=OuterRef("seat"),
            number__lt=OuterRef("number"),
            action__do="discard",
        )
        .order_by()
        .values("hand_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    # The turn (1 = their first) on which they opened, per hand they opened.
    opened = dict(
        Move.objects.filter(Exists(mine), action__do="open", hand__status=Hand.Status.FINISHED)
        .annotate(before=Subquery(earlier_turns))
        .values_list("hand_id", "before")
    )
    # The seat they held in each match (the last hand's, as seats may change hands).
    seat_in_match: dict[int, int] = {}
    for r in sorted(rows, key=lambda r: r["hand_id"]):
        seat_in_match[r["hand__match_id"]] = r["position"]
    # The finished matches among them, and those the player's seat won: one query.
    finished_matches: set[int] = set()
    won: set[int] = set()
    for pk, winners in Match.objects.filter(
        pk__in=list(seat_in_match), status=Match.Status.FINISHED
    ).values_list("pk", "winners"):
        finished_matches.add(pk)
        if seat_in_match[pk] in (winners or []):
            won.add(pk)

    by_variant: dict[str, dict[str, Any]] = {}
    finishes: dict[str, Counter[str]] = defaultdict(Counter)
    scores: dict[str, list[int]] = defaultdict(list)
    opens: dict[str, list[int]] = defaultdict(list)
    for r in rows:
        key = r["hand__match__table__variant__key"]
        s = by_variant.setdefault(
            key,
            {
                "variant": key,
                "variant_name": messages.variant_name(r["hand__match__table__variant__name"]),
                "order": r["hand__match__table__variant_id"],
                "matches": set(),
                "hands": 0,
                "penalties": 0,
                "penalty_points": 0,
            },
        )
        seat = r["position"]
        s["matches"].add(r["hand__match_id"])
        s["hands"] += 1
        hand_scores = r["hand__hand_scores"] or []
        if seat < len(hand_scores):
            scores[key].append(hand_scores[seat])
        if r["hand__ending"] == "finish" and r["hand__finisher"] == seat:
            finishes[key][r["hand__kind"] or "normal"] += 1
        if r["hand_id"] in opened:
            opens[key].append((opened[r["hand_id"]] or 0) + 1)
        for penalty in r["hand__state__penalties"] or []:
            if penalty.get("seat") == seat:
                s["penalties"] += 1
                s["penalty_points"] += int(penalty.get("points") or 0)

    result = []
    for key, s in sorted(by_variant.items(), key=lambda kv: kv[1]["order"]):
        matches = s.pop("matches")
        s.pop("order")
        played = len(matches & finished_matches)
        wins = len(matches & won)
        hand_scores = scores[key]
        opened_at = opens[key]
        s.update(
            {
                "matches": played,
                "wins": wins,
                "win_share": round(100 * wins / played) if played else None,
                "finishes": [
                    {"kind": kind, "name": messages.finish_kind(kind), "count": n}
                    for kind, n in sorted(finishes[key].items(), key=lambda kv: -kv[1])
                ],
                "finished": sum(finishes[key].values()),
                "average_score": (
                    round(sum(hand_scores) / len(hand_scores), 1) if hand_scores else None
                ),
                "open_variant": engine.is_open_variant(key),
                "opened": len(opened_at),
                "open_share": (
                    round(100 * len(opened_at) / s["hands"])
                    if engine.is_open_variant(key) and s["hands"]
                    else None
                ),
                "open_turn": round(sum(opened_at) / len(opened_at), 1) if opened_at else None,
            }
        )
        result.append(s)
    return result
