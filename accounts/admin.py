"""Profiles in the admin: their own list, and inline on each user's page; the admin's log-in
form with the site's log-in limits. Staff may set any name, reserved ones included (a support
account), but names are cleaned as everywhere (``accounts.names``) and new usernames keep to
ASCII."""

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm

from accounts import names
from accounts.forms import AdminLoginForm
from accounts.models import Profile

User = get_user_model()


class ProfileAdminForm(forms.ModelForm):
    """A profile as staff edit it: the display name cleaned (blank when nothing visible is
    left: the username is shown)."""

    class Meta:
        model = Profile
        fields = ("user", "display_name", "language", "is_guest", "play_now_level")

    def clean_display_name(self) -> str:
        return names.clean_name(self.cleaned_data.get("display_name") or "")


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    form = ProfileAdminForm
    list_display = ("user", "display_name", "language", "is_guest", "created_at")
    list_filter = ("is_guest", "language")
    search_fields = ("user__username", "display_name")
    list_select_related = ("user",)
    raw_id_fields = ("user",)
    readonly_fields = ("created_at",)


class ProfileInline(admin.StackedInline):
    model = Profile
    form = ProfileAdminForm
    can_delete = False
    fields = ("display_name", "language", "is_guest", "created_at")
    readonly_fields = ("created_at",)


class _AsciiUsername:
    """A username staff type keeps to ASCII, as the site's forms do; one left unchanged is not
    checked (an account made before the rule can still be edited)."""

    cleaned_data: dict[str, Any]
    changed_data: list[str]

    def clean_username(self) -> Any:
        parent = getattr(super(), "clean_username", None)
        username = parent() if parent is not None else self.cleaned_data.get("username")
        if username and "username" in self.changed_data:
            names.USERNAME_VALIDATOR(username)
        return username


class UserAddForm(_AsciiUsername, AdminUserCreationForm):
    pass


class UserEditForm(_AsciiUsername, UserChangeForm):
    pass


# django.contrib.auth's admin (imported above) has registered its UserAdmin: add the profile.
if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class UserAdmin(auth_admin.UserAdmin):
    form = UserEditForm
    add_form = UserAddForm
    inlines = (*auth_admin.UserAdmin.inlines, ProfileInline)


# The admin's log-in counts failures and refuses over the limits as the site's does.
admin.site.login_form = AdminLoginForm
