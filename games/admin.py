"""The admin: variants and their options, tables with seats, matches with hands and scoreboards,
each hand's read-only move log, and actions to end a stuck match or verify hands."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _

from games import engine, services
from games.models import Hand, Match, Move, Seat, Table, Variant


class OptionsForm(forms.ModelForm):
    """Validates a JSON options field through the engine."""

    options_field = "options"

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        variant = data.get("variant") or getattr(self.instance, "variant", None)
        key = data.get("key") or (variant.key if variant else None)
        if key and self.options_field in data:
            try:
                data[self.options_field] = engine.validate_options(key, data[self.options_field])
            except engine.OptionsError as exc:
                self.add_error(self.options_field, str(exc))
        return data


class VariantForm(OptionsForm):
    options_field = "default_options"

    class Meta:
        model = Variant
        fields = ["key", "name", "description", "default_options"]


class TableForm(OptionsForm):
    class Meta:
        model = Table
        fields = [
            "variant",
            "name",
            "options",
            "is_private",
            "invite_token",
            "created_by",
            "status",
            "move_timer",
            "players",
            "season",
        ]


@admin.register(Variant)
class VariantAdmin(admin.ModelAdmin):
    form = VariantForm
    list_display = ["key", "name", "default_options"]
    readonly_fields: list[str] = []


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0
    fields = ["position", "user", "bot_level", "team", "connected", "away", "last_seen"]
    raw_id_fields = ["user"]


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    form = TableForm
    inlines = [SeatInline]
    list_display = ["name", "variant", "status", "is_private", "move_timer", "created_at"]
    list_filter = ["variant", "status", "is_private", "season", "created_at"]
    search_fields = ["name", "seats__user__username", "created_by__username"]
    raw_id_fields = ["created_by"]


def _scoreboard(totals: list[int], hand_rows: list[Hand]) -> str:
    head = format_html_join("", "<th>{}</th>", ((f"seat {i}",) for i in range(len(totals))))
    rows = format_html_join(
        "",
        "<tr><td>hand {}</td>{}</tr>",
        (
            (
                h.number,
                format_html_join("", "<td>{}</td>", ((x,) for x in (h.hand_scores or []))),
            )
            for h in hand_rows
        ),
    )
    total = format_html_join("", "<td><b>{}</b></td>", ((x,) for x in totals))
    return format_html(
        "<table><tr><th></th>{}</tr>{}<tr><td><b>total</b></td>{}</tr></table>", head, rows, total
    )


class ReadOnlyInline(admin.TabularInline):
    """Rows written only by the move service: shown, never added, changed or deleted here."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class HandInline(ReadOnlyInline):
    model = Hand
    fields = ["number", "starter", "status", "ending", "finisher", "kind", "hand_scores"]
    readonly_fields = fields
    show_change_link = True


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    inlines = [HandInline]
    list_display = ["id", "table", "status", "totals", "winners", "started_at"]
    list_filter = ["status", "table__variant", "started_at"]
    search_fields = ["table__name", "table__seats__user__username"]
    readonly_fields = ["table", "hands_planned", "totals", "ranking", "winners", "scoreboard"]
    fields = ["table", "status", "hands_planned", "totals", "ranking", "winners", "scoreboard"]
    actions = ["end_stuck_matches"]

    @admin.display(description=_("scoreboard"))
    def scoreboard(self, obj: Match) -> str:
        return _scoreboard(list(obj.totals), list(obj.hands.order_by("number")))

    @admin.action(description=_("End the selected matches (abandon their open hand)"))
    def end_stuck_matches(self, request: HttpRequest, queryset: QuerySet[Match]) -> None:
        for match in queryset:
            services.end_match(match)
        self.message_user(request, f"{queryset.count()} match(es) ended", messages.SUCCESS)


class MoveInline(ReadOnlyInline):
    model = Move
    fields = ["number", "seat", "action", "events", "by", "user", "created_at"]
    readonly_fields = fields


@admin.register(Hand)
class HandAdmin(admin.ModelAdmin):
    inlines = [MoveInline]
    list_display = ["id", "match", "number", "status", "ending", "kind", "hand_scores"]
    list_filter = ["status", "match__table__variant", "started_at"]
    search_fields = ["match__table__name", "match__table__seats__user__username"]
    actions = ["verify"]
    exclude = ["state", "seed"]
    readonly_fields = [
        "match",
        "number",
        "starter",
        "commitment",
        "shown_seed",
        "version",
        "status",
        "deadline",
        "ending",
        "finisher",
        "kind",
        "multiplier",
        "hand_scores",
        "scoreboard",
        "started_at",
        "finished_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description=_("seed"))
    def shown_seed(self, obj: Hand) -> str:
        return obj.revealed_seed or _("(revealed when the hand ends)")

    @admin.display(description=_("scoreboard"))
    def scoreboard(self, obj: Hand) -> str:
        result = obj.state.get("result", {})
        penalties = obj.state.get("penalties", [])
        rows = format_html_join(
            "",
            "<li>seat {}: {} ({})</li>",
            ((p["seat"], p["points"], p["reason"]) for p in penalties),
        )
        return format_html(
            "<p>before: {} · this hand: {} · after: {}</p><ul>{}</ul>",
            obj.state.get("scores_before"),
            result.get("hand_scores"),
            result.get("scores"),
            rows,
        )

    @admin.action(description=_("Verify the selected hands (replay from seed and move log)"))
    def verify(self, request: HttpRequest, queryset: QuerySet[Hand]) -> None:
        bad = 0
        for hand in queryset.select_related("match__table__variant"):
            problems = services.verify_hand(hand)
            if problems:
                bad += 1
                self.message_user(request, f"{hand}: {'; '.join(problems)}", messages.ERROR)
        if not bad:
            self.message_user(request, f"{queryset.count()} hand(s) verified", messages.SUCCESS)
