"""Account forms: sign-up, keeping a guest account, the profile, and log-in with limits."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm, BaseUserCreationForm, UserCreationForm
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from accounts import limits
from accounts.models import Profile

# Names made for guests start with this; nobody may choose one.
GUEST_PREFIX = "guest-"


def check_not_guest_name(username: str) -> None:
    if username.lower().startswith(GUEST_PREFIX):
        raise ValidationError(
            _("Names starting with “%(prefix)s” are kept for guests: choose another."),
            code="reserved",
            params={"prefix": GUEST_PREFIX},
        )


class SignupForm(UserCreationForm):
    """Django's sign-up form, plus an optional e-mail address (for password resets)."""

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["email"].required = False
        self.fields["email"].help_text = _("Optional: where to send a password reset.")

    def clean_username(self) -> str | None:
        username = super().clean_username()
        if username:
            check_not_guest_name(username)
        return username


class KeepAccountForm(BaseUserCreationForm):
    """A guest keeps their account: a name of their own, an optional e-mail address and a
    password. Bound to the guest's own user row (``instance``), so saving updates it."""

    class Meta(BaseUserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["email"].required = False
        self.fields["email"].help_text = _("Optional: where to send a password reset.")
        if not self.is_bound:
            self.initial["username"] = ""  # not the generated guest name

    def clean_username(self) -> str:
        username: str = self.cleaned_data["username"]
        check_not_guest_name(username)
        model = self._meta.model
        taken = model.objects.filter(username__iexact=username).exclude(pk=self.instance.pk)
        if taken.exists():
            raise ValidationError(
                self.instance.unique_error_message(model, ["username"]), code="unique"
            )
        return username


class ProfileForm(forms.ModelForm):
    """What the owner edits on their profile page."""

    display_name = forms.CharField(
        label=_("Display name"),
        max_length=40,
        min_length=1,
        strip=True,
        help_text=_("The name other players see (1 to 40 characters)."),
    )
    language = forms.ChoiceField(label=_("Language"), required=False)

    class Meta:
        model = Profile
        fields = ("display_name", "language")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["language"].choices = [("", _("As my browser says")), *settings.LANGUAGES]


class LoginForm(AuthenticationForm):
    """Django's log-in form, with limits on failed attempts (``accounts.limits``): at most 5
    per account name and 20 per client address in 15 minutes. Over either, the form refuses
    without checking the password; a successful log-in clears the account's count."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "too_many_attempts": _("Too many failed log-ins. Try again in 15 minutes."),
    }

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is None or not password:
            return super().clean()
        address = self._address()
        if limits.login_blocked(username, address):
            raise ValidationError(
                self.error_messages["too_many_attempts"], code="too_many_attempts"
            )
        try:
            cleaned = super().clean()
        except ValidationError as exc:
            if getattr(exc, "code", None) == "invalid_login":
                limits.login_failed(username, address)
            raise
        limits.login_succeeded(username)
        return cleaned

    def _address(self) -> str:
        meta = getattr(self.request, "META", None) or {}
        return str(meta.get("REMOTE_ADDR") or "")
