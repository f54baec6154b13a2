"""Profiles in the admin: their own list, and inline on each user's page; the admin's log-in
form with the site's log-in limits."""

from django.contrib import admin
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import get_user_model

from accounts.forms import AdminLoginForm
from accounts.models import Profile

User = get_user_model()


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ("user", "display_name", "language", "is_guest", "created_at")
    list_filter = ("is_guest", "language")
    search_fields = ("user__username", "display_name")
    list_select_related = ("user",)
    raw_id_fields = ("user",)
    readonly_fields = ("created_at",)


class ProfileInline(admin.StackedInline):
    model = Profile
    can_delete = False
    fields = ("display_name", "language", "is_guest", "created_at")
    readonly_fields = ("created_at",)


# django.contrib.auth's admin (imported above) has registered its UserAdmin: add the profile.
if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class UserAdmin(auth_admin.UserAdmin):
    inlines = (*auth_admin.UserAdmin.inlines, ProfileInline)


# The admin's log-in counts failures and refuses over the limits as the site's does.
admin.site.login_form = AdminLoginForm
