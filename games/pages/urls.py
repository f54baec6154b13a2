from django.urls import path

from games.pages import history, lobby, matches, rules, seat_controls, table

urlpatterns = [
    # The lobby answers "/"; "home" is the older name of the same page (login redirects).
    path("", lobby.home, name="lobby"),
    path("", lobby.home, name="home"),
    path("tables/new/", lobby.new_table, name="new_table"),
    # "Play now" seats people together; "Practice with bots" starts at once against bots.
    path("play-now/", lobby.play_now, name="play_now"),
    path("practice/", lobby.practice, name="practice"),
    path("tables/<int:table_id>/controls/", seat_controls.table_controls, name="table_controls"),
    path("tables/<int:table_id>/sit/", seat_controls.sit, name="table_sit"),
    path("tables/<int:table_id>/stand/", seat_controls.stand, name="table_stand"),
    path("tables/<int:table_id>/bots/add/", seat_controls.add_bot, name="table_add_bot"),
    path("tables/<int:table_id>/bots/remove/", seat_controls.remove_bot, name="table_remove_bot"),
    path("tables/<int:table_id>/start/", seat_controls.start, name="table_start"),
    path(
        "tables/<int:table_id>/start-with-bots/",
        seat_controls.start_with_bots,
        name="table_start_with_bots",
    ),
    path(
        "tables/<int:table_id>/invite/rotate/",
        seat_controls.rotate_invite,
        name="table_rotate_invite",
    ),
    path("tables/<int:table_id>/", table.table_detail, name="table"),
    path("tables/<int:table_id>/move/", table.table_move, name="table_move"),
    path("tables/<int:table_id>/chat/", table.table_chat, name="table_chat"),
    path("hands/<int:hand_id>/", history.hand_replay, name="hand_replay"),
    path("hands/<int:hand_id>/step/<int:step>/", history.hand_step, name="hand_step"),
    path("hands/<int:hand_id>/verify/", history.hand_verify, name="hand_verify"),
    path("hands/<int:hand_id>/scenario.json", history.hand_scenario_view, name="hand_scenario"),
    path("matches/<int:match_id>.json", history.match_export_view, name="match_export"),
    path("matches/<int:match_id>/", matches.match_page, name="match"),
    path("rules/", rules.rules_index, name="rules_index"),
    path("rules/<slug:variant>/", rules.rules, name="rules"),
]
