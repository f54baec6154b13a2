from django.contrib import admin

from leagues.models import League, Season


class SeasonInline(admin.TabularInline):
    model = Season
    extra = 0


@admin.register(League)
class LeagueAdmin(admin.ModelAdmin):
    inlines = [SeasonInline]
    list_display = ["name", "variant"]
    list_filter = ["variant"]
    search_fields = ["name"]


@admin.register(Season)
class SeasonAdmin(admin.ModelAdmin):
    list_display = ["name", "league", "starts_on", "ends_on"]
    list_filter = ["league", "starts_on"]
    search_fields = ["name", "league__name"]
