"""Accounts: sign-up, guests (play at once, keep the account later), the
language switch that remembers a signed-in player's choice, and the password reset; new guests,
sign-ups and reset mails are limited per address (accounts.limits)."""

from __future__ import annotations

import secrets
import string
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model, login, update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import Resolver404, resolve, reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST
from django.views.i18n import set_language as django_set_language

from accounts import backends, context_processors, language, limits
from accounts.forms import KeepAccountForm, SignupForm
from accounts.models import Profile
from accounts.names import GUEST_PREFIX

GUEST_NAME_CHARACTERS = string.ascii_lowercase + string.digits
GUEST_NAME_LENGTH = 6
# Where a new guest is never sent back to: the account pages they came from.
ACCOUNT_PAGES = {"login", "signup", "guest", "keep_account"}


def signup(request: HttpRequest) -> HttpResponse:
    """Create an account and sign the new player in."""
    if request.user.is_authenticated:
        return redirect("home")
    if request.method == "POST":
        form = SignupForm(request.POST)
        if form.is_valid():
            if limits.SIGNUPS.exceeded(request):
                form.add_error(
                    None, _("Too many new accounts from your address. Try again in an hour.")
                )
                return render(
                    request,
                    "accounts/signup.html",
                    {"form": form, "next": _next_url(request, default="")},
                    status=429,
                )
            user = form.save_claiming()
            if user is None:  # a look-alike name was taken meanwhile
                return render(
                    request,
                    "accounts/signup.html",
                    {"form": form, "next": _next_url(request, default="")},
                )
            login(request, user, backend=backends.PATH)
            return redirect(_next_url(request, default=reverse("home")))
    else:
        form = SignupForm()
    return render(
        request, "accounts/signup.html", {"form": form, "next": _next_url(request, default="")}
    )


# ----------------------------------------------------------------------------- guests
def _guest_name() -> str:
    return GUEST_PREFIX + "".join(
        secrets.choice(GUEST_NAME_CHARACTERS) for _ in range(GUEST_NAME_LENGTH)
    )


def create_guest() -> Any:
    """A new guest: a generated unique name, no usable password, a guest profile."""
    User = get_user_model()
    for _attempt in range(20):
        name = _guest_name()
        if User.objects.filter(username=name).exists():
            continue
        try:
            with transaction.atomic():
                user = User.objects.create_user(name)  # no password: unusable
                Profile.objects.create(user=user, is_guest=True)
        except IntegrityError:  # taken in the meantime
            continue
        return user
    raise RuntimeError("no free guest name found")


def _next_url(request: HttpRequest, default: str) -> str:
    """The ``next`` of the request when it is safe (this site) and not an account page."""
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    if not wanted or not url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return default
    try:
        if resolve(wanted.split("?")[0]).url_name in ACCOUNT_PAGES:
            return default
    except Resolver404:
        return default
    return wanted


def become_guest(request: HttpRequest) -> HttpResponse | None:
    """Sign an anonymous visitor in as a new guest (a signed-in player stays who they are).
    The refusal to show instead when their address has made too many guests lately."""
    if request.user.is_authenticated:
        return None
    if limits.GUESTS.exceeded(request):
        # Not a dead end: the sign-up form is on the page, and goes back where they were.
        return render(
            request,
            "accounts/too_many_requests.html",
            {
                "message": _(
                    "Too many new guests from your address. Try again in an hour, or log in "
                    "or sign up to play at once."
                ),
                "signup_form": SignupForm(),
                "next": _next_url(request, default=reverse("lobby")),
            },
            status=429,
        )
    login(request, create_guest(), backend=backends.PATH)
    return None


@require_POST
def guest(request: HttpRequest) -> HttpResponse:
    """Play as a guest: a new account with a generated name, signed in at once; then ``next``
    (when safe) or the lobby. (The lobby's Play-now buttons make a guest too: ``play_now``.)"""
    refused = become_guest(request)
    if refused is not None:
        return refused
    return redirect(_next_url(request, default=reverse("lobby")))


def too_many_requests(request: HttpRequest, message: str) -> HttpResponse:
    """The refusal of a request over one of the rates of ``accounts.limits``: HTTP 429."""
    return render(request, "accounts/too_many_requests.html", {"message": message}, status=429)


class PasswordResetView(auth_views.PasswordResetView):
    """Django's password reset, sending at most a few mails an hour per address and per
    mailbox (``accounts.limits``). The refusal does not say whether the address has an
    account, as the page after a sent mail does not."""

    def form_valid(self, form: Any) -> HttpResponse:
        request = self.request
        over = limits.RESET_MAILS_PER_ADDRESS.exceeded(request)
        over = limits.RESET_MAILS_PER_MAILBOX.exceeded(request) or over
        if over:
            form.add_error(
                None, _("Too many password-reset mails asked for. Try again in an hour.")
            )
            response = self.form_invalid(form)
            response.status_code = 429
            return response
        return super().form_valid(form)


@login_required
@require_http_methods(["GET", "POST"])
def keep_account(request: HttpRequest) -> HttpResponse:
    """A guest keeps their account: the same user row (seats, matches and hands stay theirs)
    gets a name, a password and maybe an e-mail address, and is no longer a guest."""
    profile = Profile.objects.filter(user_id=request.user.pk).first()
    if profile is None or not profile.is_guest:
        return redirect("profile", request.user.get_username())
    user = get_user_model().objects.get(pk=request.user.pk)
    if request.method == "POST":
        form = KeepAccountForm(request.POST, instance=user)
        kept = None
        if form.is_valid():
            with transaction.atomic():
                kept = form.save_claiming()  # None: a look-alike name was taken meanwhile
                if kept is not None:
                    profile.is_guest = False
                    profile.save(update_fields=["is_guest"])
        if kept is not None:
            user = kept
            update_session_auth_hash(request, user)
            context_processors.remember(request.session, user.pk, profile.display_name, False)
            messages.success(
                request,
                _("The account is yours: from now on, log in as %(name)s.")
                % {"name": user.get_username()},
            )
            return redirect("profile", user.get_username())
    else:
        form = KeepAccountForm(instance=user)
    return render(request, "accounts/keep_account.html", {"form": form})


# ----------------------------------------------------------------------------- language
def set_language(request: HttpRequest) -> HttpResponse:
    """Django's language switch (cookie, redirect to ``next``); for a signed-in player it also
    becomes their profile's language and the session's (accounts.language), which pages and
    sockets follow."""
    response = django_set_language(request)
    code = request.POST.get("language") if request.method == "POST" else None
    if request.user.is_authenticated and language.supported(code):
        profile = Profile.of(request.user)
        profile.language = str(code)
        profile.save(update_fields=["language"])
        language.remember(request.session, str(code))
    return response
