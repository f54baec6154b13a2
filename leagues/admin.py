from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from games import actions
from games.errors import GameError
from leagues import standings
from leagues.models import (
    EarlyLeavePair,
    League,
    RatedMatch,
    Rating,
    RatingChange,
    Season,
    SeasonMember,
    Standing,
)


class SeasonInline(admin.TabularInline):
    model = Season
    extra = 0
    fields = ["name", "starts_on", "ends_on", "counting", "allow_bots", "count_abandoned"]
    show_change_link = True


@admin.register(League)
class LeagueAdmin(admin.ModelAdmin):
    inlines = [SeasonInline]
    list_display = ["name", "variant"]
    list_filter = ["variant"]
    search_fields = ["name"]


class SeasonMemberInline(admin.TabularInline):
    model = SeasonMember
    extra = 0
    autocomplete_fields = ["user"]
    readonly_fields = ["joined_at"]


class StandingInline(admin.TabularInline):
    """The stored standings, read-only: they change when matches end, or by the action."""

    model = Standing
    extra = 0
    can_delete = False
    fields = ["rank", "user", "played", "won", "drawn", "points", "rating", "form"]
    readonly_fields = fields
    ordering = ["rank", "user_id"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Season)
class SeasonAdmin(admin.ModelAdmin):
    inlines = [SeasonMemberInline, StandingInline]
    list_display = ["name", "league", "starts_on", "ends_on", "counting", "open_to_join"]
    list_filter = ["league", "starts_on", "counting"]
    search_fields = ["name", "league__name"]
    actions = ["recompute_standings", "open_table"]

    @admin.action(description=_("Open a table for this season"))
    def open_table(self, request: HttpRequest, queryset: QuerySet[Season]) -> None:
        """A new open table of the league's variant with the season's table options, through
        the game actions (the admin never writes tables itself)."""

        for season in queryset.select_related("league__variant"):
            try:
                table = actions.create_table(
                    variant=season.league.variant,
                    created_by=None,
                    name=f"{season.league.name} · {season.name}",
                    season=season,
                )
            except GameError as exc:
                self.message_user(request, f"{season}: {exc.message}", messages.ERROR)
                continue
            self.message_user(
                request,
                format_html(
                    '{}: <a href="{}">{}</a>',
                    season,
                    reverse("table", args=[table.pk]),
                    _("table %(id)s opened") % {"id": table.pk},
                ),
                messages.SUCCESS,
            )

    @admin.action(description=_("Recompute standings"))
    def recompute_standings(self, request: HttpRequest, queryset: QuerySet[Season]) -> None:
        seasons = list(queryset)
        for season in seasons:
            standings.recompute(season)
        self.message_user(
            request,
            ngettext(
                "Standings recomputed for %(count)d season.",
                "Standings recomputed for %(count)d seasons.",
                len(seasons),
            )
            % {"count": len(seasons)},
            messages.SUCCESS,
        )

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        # Members or the counting rule may have changed: the stored standings follow.
        standings.recompute(form.instance)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Rating)
class RatingAdmin(ReadOnlyAdmin):
    list_display = ["user", "variant", "ordinal", "mu", "sigma", "matches", "updated_at"]
    list_filter = ["variant"]
    search_fields = ["user__username"]


@admin.register(RatingChange)
class RatingChangeAdmin(ReadOnlyAdmin):
    list_display = ["match", "user", "variant", "ordinal_before", "ordinal", "created_at"]
    list_filter = ["variant"]
    search_fields = ["user__username"]


@admin.register(RatedMatch)
class RatedMatchAdmin(ReadOnlyAdmin):
    list_display = ["match", "rated", "reason", "created_at"]
    list_filter = ["rated", "reason"]


class FlaggedFilter(admin.SimpleListFilter):
    title = _("flagged")
    parameter_name = "flagged"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", _("Yes"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() == "yes":
            return queryset.filter(times__gte=EarlyLeavePair.FLAG_AFTER)
        return queryset


@admin.register(EarlyLeavePair)
class EarlyLeavePairAdmin(ReadOnlyAdmin):
    """Two accounts that keep meeting with one leaving at once: a second account farming or
    voiding ratings, for staff to look at (the matches were rated for nobody)."""

    list_display = ["leaver", "other", "times", "is_flagged", "last_match", "updated_at"]
    list_filter = [FlaggedFilter]
    search_fields = ["leaver__username", "other__username"]

    @admin.display(boolean=True, description=_("flagged"))
    def is_flagged(self, pair: EarlyLeavePair) -> bool:
        return pair.flagged
