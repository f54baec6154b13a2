"""A player's match history and a match's page: its reads and views.

- ``/players/<username>/history/`` (``player_history``): every match the player held a seat in
  (a ``Participant`` of one of its hands), newest first, 20 a page, filtered by variant, by the
  date the match started (from, to) and by result (won: their seat is among the winners of a
  finished match; lost: finished without them; unfinished: playing or abandoned). A row names
  its table (and links it) only when the viewer may see the table (``policy.can_see``), and
  links the match page when the viewer may open it. The queries do not grow with the rows.
- ``/matches/<id>/`` (``match``): the hand-by-hand scoreboard, who held each seat (from the
  ``Participant`` rows, never today's ``Seat``), the status and winners, links to each hand's
  replay and the match export, and the running totals drawn as inline SVG on the server.
  Whoever may see the table may see it (a private table's invite carried as ``?invite=``), and
  so may everyone who played in it. A live hand is "being played": no scores; the totals so
  far come from finished hands only.

Templates receive plain data built here, never a ``Hand`` row (no seed, no state).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.core.paginator import Paginator
from django.db.models import Count, OuterRef, Prefetch, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.http import urlencode
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.models import display_name
from games import engine, messages, policy
from games.models import Hand, Match, Participant, Seat, Table, Variant
from games.reads import holder_name

PER_PAGE = 20

WON, LOST, UNFINISHED = "won", "lost", "unfinished"
RESULT_LABELS: dict[str, Any] = {
    WON: _("won"),
    LOST: _("lost"),
    UNFINISHED: _("unfinished"),
}


# ----------------------------------------------------------------------------- names


def match_result(status: str, winners: list[int] | None, seat: int | None) -> str:
    """``won``, ``lost`` or ``unfinished`` for the player of ``seat`` in a match."""
    if status != Match.Status.FINISHED:
        return UNFINISHED
    return WON if seat is not None and seat in (winners or []) else LOST


# ----------------------------------------------------------------------------- the history
class HistoryFilters(forms.Form):
    """The history's filters (GET). An invalid value is ignored, as if not given."""

    variant = forms.ChoiceField(label=_("Variant"), required=False)
    date_from = forms.DateField(
        label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    date_to = forms.DateField(
        label=_("To"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    result = forms.ChoiceField(
        label=_("Result"),
        required=False,
        choices=[("", _("any result")), *RESULT_LABELS.items()],
    )

    def __init__(self, *args: Any, variants: list[tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["variant"].choices = [("", _("all variants")), *variants]  # type: ignore[attr-defined]

    def values(self) -> dict[str, Any]:
        """The valid filters given (empty ones left out)."""
        self.is_valid()
        cleaned = getattr(self, "cleaned_data", {})
        return {k: v for k, v in cleaned.items() if k not in self.errors and v not in ("", None)}


def variant_choices() -> list[tuple[str, str]]:
    """The four variants, in the engine's order, named in the active language."""
    names = {v.key: v.name for v in Variant.objects.all()}
    return [(k, messages.variant_name(names.get(k, k))) for k in engine.VARIANTS]


def _own_seat(person: Any) -> Subquery:
    """For a Match queryset: the seat ``person`` held in its last hand they played."""
    return Subquery(
        Participant.objects.filter(hand__match=OuterRef("pk"), user=person)
        .order_by("-hand__number")
        .values("position")[:1]
    )


def history_ids(person: Any, filters: dict[str, Any]) -> list[int]:
    """The ids of ``person``'s matches that pass ``filters``, newest first (one query)."""
    qs = Match.objects.filter(pk__in=Participant.objects.filter(user=person).values("hand__match"))
    if filters.get("variant"):
        qs = qs.filter(table__variant__key=filters["variant"])
    if filters.get("date_from"):
        qs = qs.filter(started_at__date__gte=filters["date_from"])
    if filters.get("date_to"):
        qs = qs.filter(started_at__date__lte=filters["date_to"])
    rows = (
        qs.annotate(own_seat=_own_seat(person))
        .order_by("-started_at", "-pk")
        .values_list("pk", "status", "winners", "own_seat")
    )
    wanted = filters.get("result")
    return [
        pk
        for pk, status, winners, seat in rows
        if not wanted or match_result(status, winners, seat) == wanted
    ]


def history_rows(person: Any, viewer: Any, ids: list[int]) -> list[dict[str, Any]]:
    """The rows of one page of the history, in the order of ``ids``: three queries (the
    matches, their tables' seats, and the matches among them the viewer played in)."""
    if not ids:
        return []
    matches = {
        m.pk: m
        for m in Match.objects.filter(pk__in=ids)
        .select_related("table__variant")
        .prefetch_related(Prefetch("table__seats", queryset=Seat.objects.order_by("position")))
        .annotate(own_seat=_own_seat(person), hand_count=Count("hands"))
    }
    vid = policy.viewer_id(viewer)
    if vid is not None and vid == person.pk:
        played: set[int] = set(ids)
    elif vid is not None:
        played = set(
            Participant.objects.filter(user_id=vid, hand__match_id__in=ids).values_list(
                "hand__match_id", flat=True
            )
        )
    else:
        played = set()
    rows = []
    for pk in ids:
        m = matches[pk]
        table = m.table
        visible = policy.can_see(table, list(table.seats.all()), viewer)
        seat = m.own_seat
        result = match_result(m.status, m.winners, seat)
        total = m.totals[seat] if seat is not None and seat < len(m.totals) else None
        rows.append(
            {
                "id": m.pk,
                "date": m.started_at,
                "variant": table.variant.key,
                "variant_name": messages.variant_name(table.variant.name),
                "visible": visible,
                "table_name": table.shown_name if visible else "",
                "table_url": reverse("table", args=[table.pk]) if visible else "",
                "seat": seat,
                "total": total,
                "result": result,
                "result_display": str(RESULT_LABELS[result]),
                "status_display": m.get_status_display(),
                "hands": m.hand_count,
                "url": reverse("match", args=[m.pk]) if visible or pk in played else "",
            }
        )
    return rows


def player_history(request: HttpRequest, username: str) -> HttpResponse:
    """A player's matches, newest first, filtered and paginated (``page`` keeps the filters)."""
    person = get_object_or_404(
        get_user_model().objects.select_related("profile"), username=username
    )
    form = HistoryFilters(request.GET or None, variants=variant_choices())
    filters = form.values() if request.GET else {}
    ids = history_ids(person, filters)
    page = Paginator(ids, PER_PAGE).get_page(request.GET.get("page"))
    params = {k: v.isoformat() if isinstance(v, date) else v for k, v in filters.items()}

    def page_url(n: int) -> str:
        return "?" + urlencode({**params, "page": n})

    context = {
        "person": person,
        "name": display_name(person),
        "username": person.get_username(),
        "form": form,
        "filtered": bool(filters),
        "rows": history_rows(person, request.user, list(page.object_list)),
        "page": page,
        "count": len(ids),
        "prev_url": page_url(page.previous_page_number()) if page.has_previous() else "",
        "next_url": page_url(page.next_page_number()) if page.has_next() else "",
        "first_url": page_url(1) if page.number > 1 else "",
        "last_url": (
            page_url(page.paginator.num_pages) if page.number < page.paginator.num_pages else ""
        ),
    }
    return render(request, "games/player_history.html", context)


# ----------------------------------------------------------------------------- the match page
@dataclass
class MatchAccess:
    """A match the viewer may see, with its table, hands and who held each seat."""

    match: Match
    table: Table
    hands: list[Hand]
    participants: list[Participant]
    played: bool
    sees_table: bool
    viewer: int | None = None
    invite: str | None = None

    @property
    def query(self) -> str:
        if self.invite and self.table.is_private:
            return "?" + urlencode({"invite": self.invite})
        return ""


def match_access(match_id: int, user: Any, invite: str | None = None) -> MatchAccess:
    """The match ``user`` asks to see. Raises ``Match.DoesNotExist``, or ``Http404`` when the
    viewer may neither see its table (``policy.can_see``) nor played in it."""
    match = Match.objects.select_related("table__variant").get(pk=match_id)
    table = match.table
    seats = list(Seat.objects.filter(table=table))
    # Never the seed or the state: the page shows results only.
    hands = list(
        match.hands.only(
            "id",
            "match",
            "number",
            "status",
            "ending",
            "finisher",
            "kind",
            "multiplier",
            "hand_scores",
        ).order_by("number")
    )
    participants = list(
        Participant.objects.filter(hand__match=match)
        .select_related("user__profile")
        .order_by("position")
    )
    uid = policy.viewer_id(user)
    played = uid is not None and any(p.user_id == uid for p in participants)
    sees_table = policy.can_see(table, seats, user, invite)
    if not played and not sees_table:
        raise Http404("this match is not yours to see")
    return MatchAccess(match, table, hands, participants, played, sees_table, uid, invite)


def running_totals(acc: MatchAccess) -> tuple[list[int], list[tuple[int, list[int]]]]:
    """The start scores and, after each finished hand (by number), every seat's running total
    (``engine.Match.totals_after``). Live and abandoned hands add nothing."""
    rules = engine.Match(acc.table.variant.key, acc.table.options, acc.table.players)
    scored = [h for h in acc.hands if h.status == Hand.Status.FINISHED and h.hand_scores]
    totals = rules.totals_after(h.hand_scores for h in scored)
    return rules.start_scores, [(h.number, t) for h, t in zip(scored, totals, strict=True)]


def seat_names(acc: MatchAccess) -> list[str]:
    """Who held each seat over the match, in hand order ("Ada / Bot (greedy)" when it changed
    hands)."""
    by_seat: list[list[str]] = [[] for _ in range(acc.table.players)]
    number = {h.pk: h.number for h in acc.hands}
    for p in sorted(acc.participants, key=lambda p: (number.get(p.hand_id, 0), p.position)):
        if p.position < len(by_seat):
            name = holder_name(p)
            if name not in by_seat[p.position]:
                by_seat[p.position].append(name)
    return [
        " / ".join(names) or gettext("Seat %(number)s") % {"number": k + 1}
        for k, names in enumerate(by_seat)
    ]


# The chart: one colour and one dash pattern per seat (told apart without colour too).
COLOURS = ["#1f6fb5", "#c4302b", "#2e8b3a", "#8a4fb0"]
DASHES = ["", "7 4", "2 3", "9 3 2 3"]
CHART_W, CHART_H = 640, 280
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 16, 44


def _nice_step(span: float, ticks: int = 5) -> int:
    raw = max(span / ticks, 1)
    magnitude = 10 ** (len(str(int(raw))) - 1)
    for m in (1, 2, 5, 10):
        if m * magnitude >= raw:
            return m * magnitude
    return 10 * magnitude


def chart(
    names: list[str], start: list[int], points: list[tuple[int, list[int]]]
) -> dict[str, Any]:
    """The running totals as SVG data: the polylines are drawn in data units (hand number,
    total) inside a group whose transform maps them onto the plot, so each ``points``
    attribute holds the totals themselves; axis ticks and labels are in pixels."""
    seats = len(names)
    xs = [0] + [n for n, _ in points]
    values = start + [v for _, row in points for v in row]
    xmin, xmax = 0, max(xs) if max(xs) > 0 else 1
    step = _nice_step(max(values) - min(values))
    ymin = (min(values) // step) * step
    ymax = -(-max(values) // step) * step
    if ymax == ymin:
        ymax = ymin + step
    plot_w = CHART_W - LEFT - RIGHT
    plot_h = CHART_H - TOP - BOTTOM
    sx = plot_w / (xmax - xmin)
    sy = plot_h / (ymax - ymin)

    def px(x: float) -> float:
        return round(LEFT + (x - xmin) * sx, 2)

    def py(y: float) -> float:
        return round(TOP + plot_h - (y - ymin) * sy, 2)

    every = max(1, -(-xmax // 12))
    lines = []
    for k in range(seats):
        pts = [(0, start[k])] + [(n, row[k]) for n, row in points]
        lines.append(
            {
                "seat": k,
                "name": names[k],
                "colour": COLOURS[k % len(COLOURS)],
                "dash": DASHES[k % len(DASHES)],
                "points": " ".join(f"{x},{y}" for x, y in pts),
                "last_x": px(pts[-1][0]),
                "last_y": py(pts[-1][1]),
            }
        )
    return {
        "width": CHART_W,
        "height": CHART_H,
        "transform": (
            f"translate({round(LEFT - xmin * sx, 4)} {round(TOP + plot_h + ymin * sy, 4)}) "
            f"scale({round(sx, 6)} {round(-sy, 6)})"
        ),
        "plot": {"x0": LEFT, "x1": LEFT + plot_w, "y0": TOP, "y1": TOP + plot_h},
        "x_ticks": [{"x": px(n), "label": n} for n in range(0, xmax + 1, every)],
        "y_ticks": [{"y": py(v), "label": v} for v in range(int(ymin), int(ymax) + 1, int(step))],
        "x_label_y": TOP + plot_h + 36,
        "tick_label_y": TOP + plot_h + 16,
        "lines": lines,
    }


def match_context(acc: MatchAccess) -> dict[str, Any]:
    m, table = acc.match, acc.table
    names = seat_names(acc)
    by_hand: dict[int, dict[int, Participant]] = {}
    for p in acc.participants:
        by_hand.setdefault(p.hand_id, {})[p.position] = p
    start, points = running_totals(acc)
    # The hands the viewer played: their replays are theirs (a live one as their seat saw it).
    own = {p.hand_id for p in acc.participants if acc.viewer and p.user_id == acc.viewer}
    hands = []
    for h in acc.hands:
        finished = h.status == Hand.Status.FINISHED
        finisher = by_hand.get(h.pk, {}).get(h.finisher) if h.finisher is not None else None
        hands.append(
            {
                "id": h.pk,
                "number": h.number,
                "status": h.status,
                "live": h.status == Hand.Status.PLAYING,
                "abandoned": h.status == Hand.Status.ABANDONED,
                "finished": finished,
                "dry": finished and h.ending == "dry_wall",
                "finisher": holder_name(finisher) if finisher is not None else "",
                "kind": messages.finish_kind(h.kind) if finished and h.kind else "",
                "multiplier": h.multiplier if finished else None,
                "scores": list(h.hand_scores) if finished and h.hand_scores else None,
                # policy.can_replay: a live hand to its players only; one that is over to
                # its players and whoever may see the table.
                "url": (
                    reverse("hand_replay", args=[h.pk]) + acc.query
                    if h.pk in own or (acc.sees_table and h.status != Hand.Status.PLAYING)
                    else ""
                ),
            }
        )
    totals = points[-1][1] if points else start
    finished = m.status == Match.Status.FINISHED
    winners = [w for w in (m.winners or []) if 0 <= w < table.players] if finished else []
    return {
        "match": {
            "id": m.pk,
            "status": m.status,
            "status_display": m.get_status_display(),
            "finished": finished,
            "started_at": m.started_at,
            "finished_at": m.finished_at,
            "hands_planned": m.hands_planned,
            "winners": [names[w] for w in winners],
            "winner_seats": winners,
            "export_url": reverse("match_export", args=[m.pk]) + acc.query,
        },
        "table": {
            "id": table.pk,
            "name": table.shown_name,
            "url": reverse("table", args=[table.pk]) + acc.query,
            "variant": table.variant.key,
            "variant_name": messages.variant_name(table.variant.name),
            "is_private": table.is_private,
        },
        "seats": [
            {"position": k, "name": names[k], "winner": k in winners, "total": totals[k]}
            for k in range(table.players)
        ],
        "start_scores": start,
        "hands": hands,
        "chart": chart(names, start, points) if points else None,
        "played": acc.played,
    }


def match_page(request: HttpRequest, match_id: int) -> HttpResponse:
    try:
        acc = match_access(match_id, request.user, request.GET.get("invite"))
    except Match.DoesNotExist as exc:
        raise Http404 from exc
    # The table's "Scores" asks for the scoreboard alone (htmx), to show it over the felt.
    part = "#scoreboard" if request.headers.get("HX-Request") else ""
    response = render(request, "games/match.html" + part, match_context(acc))
    if acc.table.is_private or acc.match.status == Match.Status.PLAYING:
        patch_cache_control(response, private=True)
    return response
