"""Staff edits of tournaments and entries (running an event never needs the admin)."""

from django.contrib import admin

from tournaments.models import Entry, NoShow, Tournament


class EntryInline(admin.TabularInline):
    model = Entry
    extra = 0
    fields = ("user", "address", "registered_at", "withdrawn_at")
    readonly_fields = ("registered_at",)
    raw_id_fields = ("user",)


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    list_display = ("name", "variant", "format", "places", "state", "starts_at", "created_at")
    list_filter = ("format", "state", "variant")
    search_fields = ("name",)
    inlines = [EntryInline]


@admin.register(NoShow)
class NoShowAdmin(admin.ModelAdmin):
    """Staff may delete a no-show recorded in error (the player then registers at once)."""

    list_display = ("user", "tournament", "at")
    raw_id_fields = ("user", "tournament")
