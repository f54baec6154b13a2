from django.contrib import admin
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

from accounts import views as accounts_views
from games.pages import matches as match_pages
from games.pages import profiles

urlpatterns = [
    path("", include("games.pages.urls")),
    path("accounts/", include("accounts.urls")),
    path("", include("leagues.urls")),
    path("players/<str:username>/", profiles.profile, name="profile"),
    path("players/<str:username>/history/", match_pages.player_history, name="player_history"),
    # Django's language switch (django.conf.urls.i18n), which for a signed-in player also
    # saves the choice in their profile and session.
    path("i18n/setlang/", accounts_views.set_language, name="set_language"),
    # The scripts' strings in the viewer's language (window.django.gettext; static/js/table.js):
    # locale/<lang>/LC_MESSAGES/djangojs.po. Naming one app leaves out the catalogues of the
    # other installed apps (the admin's); LOCALE_PATHS are always read.
    path(
        "jsi18n/",
        JavaScriptCatalog.as_view(domain="djangojs", packages=["games"]),
        name="javascript-catalog",
    ),
    path("admin/", admin.site.urls),
]
