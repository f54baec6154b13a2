from django.urls import path

from . import views

urlpatterns = [
    path("leagues/", views.leagues_index, name="leagues"),
    path(
        "leagues/<int:league_id>/seasons/<int:season_id>/",
        views.season_standings,
        name="season_standings",
    ),
    path(
        "leagues/<int:league_id>/seasons/<int:season_id>/join/",
        views.season_join,
        name="season_join",
    ),
    path("ratings/<slug:variant>/", views.leaderboard, name="leaderboard"),
]
