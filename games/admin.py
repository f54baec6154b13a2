"""The admin: variants and their options, tables with seats, matches with hands and scoreboards,
each hand's read-only move log, and actions to end a stuck match or verify hands."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _

from games import actions, audit, engine
from games.models import ChatMessage, Hand, Match, Move, Participant, Seat, Table, Variant


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
            "move_timer",
            "players",
            "season",
            "chat_enabled",
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.instance.pk is None and data.get("variant") and not self.errors:
            try:
                actions.check_table_settings(
                    data["variant"],
                    data.get("options"),
                    data.get("move_timer"),
                    data.get("players") or 4,
                    data.get("season"),
                )
            except actions.GameError as exc:
                raise ValidationError(exc.message) from exc
        return data


@admin.register(Variant)
class VariantAdmin(admin.ModelAdmin):
    form = VariantForm
    list_display = ["key", "name", "default_options"]
    readonly_fields: list[str] = []


class SeatInline(admin.TabularInline):
    """Seats are changed by the seat actions (sit, stand, remove a player), never here."""

    model = Seat
    extra = 0
    can_delete = False
    fields = ["position", "user", "bot_level", "team", "away", "last_seen", "timeouts_in_a_row"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# A table's game settings are fixed once it exists; these may change through the service.
TABLE_EDITABLE = ["name", "is_private", "season", "chat_enabled"]


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):
    """Tables are created through ``actions.create_table`` and edited through
    ``actions.update_table``: the admin writes no game-state field directly."""

    form = TableForm
    inlines = [SeatInline]
    list_display = ["shown_name", "variant", "status", "is_private", "move_timer", "created_at"]
    list_filter = ["variant", "status", "is_private", "season", "created_at"]
    search_fields = ["name", "variant__name", "seats__user__username", "created_by__username"]

    def get_fields(self, request: HttpRequest, obj: Table | None = None) -> list[str]:
        if obj is None:
            return [
                "variant",
                "name",
                "options",
                "is_private",
                "move_timer",
                "players",
                "season",
                "chat_enabled",
            ]
        return [
            "name",
            "is_private",
            "season",
            "chat_enabled",
            "variant",
            "options",
            "players",
            "move_timer",
            "status",
            "created_by",
            "invite_token",
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Table | None = None) -> list[str]:
        if obj is None:
            return []
        return [f for f in self.get_fields(request, obj) if f not in TABLE_EDITABLE]

    def has_delete_permission(self, request: HttpRequest, obj: Table | None = None) -> bool:
        # A table with matches holds their history: it is never deleted.
        if obj is not None and obj.matches.exists():
            return False
        return super().has_delete_permission(request, obj)

    def save_model(self, request: HttpRequest, obj: Table, form: Any, change: bool) -> None:
        data = form.cleaned_data
        try:
            if change:
                changes = {f: data[f] for f in TABLE_EDITABLE if f in form.changed_data}
                if changes:
                    actions.update_table(obj.pk, by=request.user, **changes)
                return
            table = actions.create_table(
                variant=data["variant"],
                created_by=request.user,  # type: ignore[arg-type]
                name=data["name"],
                options=data["options"],
                is_private=data["is_private"],
                move_timer=data["move_timer"],
                players=data["players"],
                season=data["season"],
                chat_enabled=data.get("chat_enabled", True),
            )
        except actions.GameError as exc:  # the form checked these; a race is all that is left
            self.message_user(request, exc.message, messages.ERROR)
            raise
        obj.pk = table.pk
        obj.refresh_from_db()


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written only by the game actions: listed and shown, never added, changed or
    deleted here (their actions call the actions)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Seat)
class SeatAdmin(ReadOnlyAdmin):
    """Seats, read-only, with the staff action that takes a player off a seat."""

    list_display = ["table", "position", "user", "bot_level", "away", "last_seen"]
    list_filter = ["away", "bot_level", "table__status"]
    search_fields = ["table__name", "user__username"]
    fields = ["table", "position", "user", "bot_level", "team", "away", "last_seen"]
    readonly_fields = fields
    actions = ["remove_players"]

    @admin.action(description=_("Remove the player from the selected seats (a bot takes over)"))
    def remove_players(self, request: HttpRequest, queryset: QuerySet[Seat]) -> None:
        done = _each(
            self, request, queryset, lambda seat: actions.remove_player(seat, by=request.user)
        )
        if done:
            self.message_user(request, f"{done} player(s) removed", messages.SUCCESS)


def _each(admin_: admin.ModelAdmin, request: HttpRequest, rows: Any, act: Any) -> int:
    """Run a staff action through the actions on each selected row; a refusal is shown for
    its row and the others go on. How many were done."""
    done = 0
    for row in rows:
        try:
            act(row)
            done += 1
        except actions.GameError as exc:
            admin_.message_user(request, f"{row}: {exc.message}", messages.ERROR)
    return done


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
class MatchAdmin(ReadOnlyAdmin):
    inlines = [HandInline]
    list_display = ["id", "table", "status", "totals", "winners", "started_at"]
    list_filter = ["status", "table__variant", "started_at"]
    search_fields = ["table__name", "table__variant__name", "table__seats__user__username"]
    fields = ["table", "status", "hands_planned", "totals", "ranking", "winners", "scoreboard"]
    readonly_fields = fields
    actions = ["end_stuck_matches"]

    @admin.display(description=_("scoreboard"))
    def scoreboard(self, obj: Match) -> str:
        return _scoreboard(list(obj.totals), list(obj.hands.order_by("number")))

    @admin.action(description=_("End the selected matches (abandon their open hand)"))
    def end_stuck_matches(self, request: HttpRequest, queryset: QuerySet[Match]) -> None:
        ended = _each(
            self, request, queryset, lambda match: actions.end_match(match, by=request.user)
        )
        self.message_user(request, f"{ended} match(es) ended", messages.SUCCESS)


class MoveInline(ReadOnlyInline):
    """The move log. While the hand is live, staff see each move's public events only: the
    tile a seat drew stays hidden until the hand is over."""

    model = Move
    fields = ["number", "seat", "action", "shown_events", "by", "user", "bot_level", "created_at"]
    readonly_fields = fields

    @admin.display(description=_("events"))
    def shown_events(self, obj: Move) -> str:
        events = obj.events
        if obj.hand.status == Hand.Status.PLAYING:
            events = [engine.event_for(e, -1) for e in events]
        return json.dumps(events)


class ParticipantInline(ReadOnlyInline):
    model = Participant
    fields = ["position", "user", "bot_level", "team"]
    readonly_fields = fields


@admin.register(Hand)
class HandAdmin(ReadOnlyAdmin):
    """Hands are read-only here: their rows change only under the move service's lock."""

    inlines = [ParticipantInline, MoveInline]
    list_display = ["id", "match", "number", "status", "ending", "kind", "hand_scores"]
    list_filter = ["status", "match__table__variant", "started_at"]
    search_fields = [
        "match__table__name",
        "match__table__variant__name",
        "match__table__seats__user__username",
    ]
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
            problems = audit.verify_hand(hand)
            if problems:
                bad += 1
                self.message_user(request, f"{hand}: {'; '.join(problems)}", messages.ERROR)
        if not bad:
            self.message_user(request, f"{queryset.count()} hand(s) verified", messages.SUCCESS)


@admin.register(ChatMessage)
class ChatMessageAdmin(admin.ModelAdmin):
    """Table chat, read-only: staff read it and delete lines. A deletion goes through
    ``actions.delete_chat_message``, so the line also drops from every open page."""

    list_display = ["created_at", "table", "match", "author", "said"]
    list_filter = ["created_at", "canned", "table__variant"]
    search_fields = ["text", "author", "table__name", "user__username"]
    list_select_related = ["table__variant", "match__table__variant"]
    fields = ["table", "match", "user", "author", "text", "canned", "created_at"]
    readonly_fields = fields
    date_hierarchy = "created_at"

    @admin.display(description=_("message"))
    def said(self, obj: ChatMessage) -> str:
        return f"[{obj.canned}]" if obj.canned else obj.text

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: ChatMessage) -> None:
        actions.delete_chat_message(obj.pk, by=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[ChatMessage]) -> None:
        for pk in list(queryset.values_list("pk", flat=True)):
            actions.delete_chat_message(pk, by=request.user)
