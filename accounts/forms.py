"""Account forms: sign-up, keeping a guest account, the profile, and the log-in forms (the site's
and the admin's) with the log-in limits."""

from __future__ import annotations

from typing import Any

from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_credentials
from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm, BaseUserCreationForm, UserCreationForm
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_lazy as _

from accounts import names
from accounts.models import Profile


class _ClaimsAName:
    """A form that saves a name chosen under the name policy. The checks ran in ``clean``; a
    look-alike name saved by someone else meanwhile is found here, after the save, by its
    unique key (``accounts.names.claim``): the save is undone and the form shows the error."""

    claimed_field = "username"
    claimed: str | None = None  # the name to claim once saved (None: nothing new chosen)

    def save_claiming(self) -> Any | None:
        """Save; the saved object, or None (the form has the error) when the name was taken
        at the same moment."""
        try:
            with transaction.atomic():
                saved = self.save()  # type: ignore[attr-defined]
                if self.claimed is not None:
                    names.claim(getattr(saved, "user", saved), self.claimed)
        except ValidationError as error:
            self.add_error(self.claimed_field, error)  # type: ignore[attr-defined]
            return None
        return saved


class _OptionalEmail:
    """The e-mail address is optional: it is only where a password reset goes. The username
    keeps to ASCII (``accounts.names``), and says so."""

    fields: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["email"].required = False
        self.fields["email"].help_text = _("Optional: where to send a password reset.")
        username = self.fields["username"]
        username.validators.append(names.USERNAME_VALIDATOR)  # the form's own copy
        username.help_text = names.USERNAME_HELP


class SignupForm(_ClaimsAName, _OptionalEmail, UserCreationForm):
    """Django's sign-up form, plus an optional e-mail address (for password resets); the
    username follows the name policy (``accounts.names``)."""

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def clean_username(self) -> str | None:
        username = super().clean_username()
        if username:
            names.check_username(username)
            self.claimed = username
        return username


class KeepAccountForm(_ClaimsAName, _OptionalEmail, BaseUserCreationForm):
    """A guest keeps their account: a name of their own, an optional e-mail address and a
    password. Bound to the guest's own user row (``instance``), so saving updates it."""

    class Meta(BaseUserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.initial["username"] = ""  # not the generated guest name

    def clean_username(self) -> str:
        username: str = self.cleaned_data["username"]
        names.check_not_guest_name(username)
        model = self._meta.model
        taken = model.objects.filter(username__iexact=username).exclude(pk=self.instance.pk)
        if taken.exists():
            raise ValidationError(
                self.instance.unique_error_message(model, ["username"]), code="unique"
            )
        names.check_username(username, self.instance)
        self.claimed = username
        return username


class ProfileForm(_ClaimsAName, forms.ModelForm):
    """What the owner edits on their profile page. The display name is cleaned and follows the
    name policy (``accounts.names``)."""

    display_name = forms.CharField(
        label=_("Display name"),
        max_length=40,
        min_length=1,
        strip=True,
        help_text=_("The name other players see (1 to 40 characters)."),
    )
    language = forms.ChoiceField(label=_("Language"), required=False)

    claimed_field = "display_name"

    class Meta:
        model = Profile
        fields = ("display_name", "language")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["language"].choices = [("", _("As my browser says")), *settings.LANGUAGES]

    def clean_display_name(self) -> str:
        name = names.clean_name(self.cleaned_data["display_name"])
        if not names.visible(name):
            raise ValidationError(names.NOTHING_VISIBLE, code="invisible")
        # NFC may lengthen a name a little: the field's limits again, on what is stored.
        self.fields["display_name"].run_validators(name)
        # A name kept as it is (the form is also where the language changes) is not judged
        # again: the policy is for names chosen, and an older one is shown cleaned anyway.
        if name != names.shown(self.instance.display_name):
            names.check_display_name(name, getattr(self.instance, "user", None))
            self.claimed = name
        return name


class LoginLimitsMixin:
    """Log-in limits (``accounts.limits``) on an ``AuthenticationForm``: over a limit the form
    refuses with a clear message and does not check the password; the failure that reaches a
    limit says so beside the usual error. Without a request (no address) there is nothing to
    count by."""

    request: Any
    cleaned_data: dict[str, Any]
    error_messages: dict[str, Any]

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is None or not password or self.request is None:
            return super().clean()  # type: ignore[misc, no-any-return]
        if not AxesProxyHandler.is_allowed(self.request, get_credentials(username)):
            raise ValidationError(
                self.error_messages["too_many_attempts"], code="too_many_attempts"
            )
        try:
            return super().clean()  # type: ignore[misc, no-any-return]
        except ValidationError as exc:
            if getattr(self.request, "axes_locked_out", False):
                raise ValidationError(
                    [
                        exc,
                        ValidationError(
                            self.error_messages["too_many_attempts"], code="too_many_attempts"
                        ),
                    ]
                ) from exc
            raise


TOO_MANY_ATTEMPTS = _("Too many failed log-ins. Try again in 15 minutes.")


class LoginForm(LoginLimitsMixin, AuthenticationForm):
    """Django's log-in form, with the log-in limits."""

    error_messages = {**AuthenticationForm.error_messages, "too_many_attempts": TOO_MANY_ATTEMPTS}


class AdminLoginForm(LoginLimitsMixin, AdminAuthenticationForm):
    """The admin's log-in form, with the same limits (the same counts)."""

    error_messages = {
        **AdminAuthenticationForm.error_messages,
        "too_many_attempts": TOO_MANY_ATTEMPTS,
    }
