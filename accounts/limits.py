"""Limits on what a client may try: failed log-ins (django-axes) and actions that cost the site
or others something each time (django-ratelimit). docs/SECURITY.md says why these libraries.

Failed log-ins (``settings.AXES_*``, ``LoginLimits``), each in a window of 15 minutes after the
last counted failure:

- 5 for one account name at one address (``AXES_FAILURE_LIMIT``);
- 20 from one address, whatever the names;
- 20 for one account name across addresses, except at an address that logged into that
  account in the last 30 days: a stranger guessing from elsewhere never locks the owner out at
  their usual address, and one guessing from a single address is stopped by the first limit
  long before the account's.

Both libraries key on ``client_address``: the peer's address as the ASGI server reports it
(daphne takes it from X-Forwarded-For only when started with ``--proxy-headers``, which
``manage.py serve`` and the Procfile pass when ``PROXY_HEADERS`` is on).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.conf import settings
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt, AccessLog
from django.db.models import Q, Sum
from django.http import HttpRequest
from django.utils import timezone
from django_ratelimit.core import is_ratelimited

LOGIN_FAILURES_PER_ADDRESS = 20
LOGIN_FAILURES_PER_ACCOUNT = 20
# How long a successful log-in exempts its address from the account's own limit.
LOGGED_IN_LATELY = timedelta(days=30)
# One host of IPv6 holds a whole /64: count it as one address.
IPV6_PREFIX = 64


def client_address(request: HttpRequest) -> str | None:
    """The client's address as the limits count it: REMOTE_ADDR (never a header the client
    sends), an IPv6 address reduced to its /64; ``None`` when missing or not an address."""
    return address_of(str(request.META.get("REMOTE_ADDR") or ""))


def address_of(raw: str) -> str | None:
    """An address as every limit counts it (HTTP and sockets): an IPv6 one reduced to its
    /64; ``None`` when it is not an address."""
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        return None
    if address.version == 6:
        return str(ipaddress.ip_network(f"{address}/{IPV6_PREFIX}", strict=False).network_address)
    return str(address)


def account_key(username: str | None) -> str | None:
    """One count for every spelling of a name (case and surrounding spaces)."""
    return None if username is None else username.strip().casefold()


def attempted_account(request: HttpRequest, credentials: dict[str, Any] | None) -> str | None:
    """``AXES_USERNAME_CALLABLE``: the account name a log-in tried, folded."""
    field = settings.AXES_USERNAME_FORM_FIELD
    if credentials:
        return account_key(credentials.get(field))
    data = getattr(request, "POST", None) or {}
    return account_key(data.get(field))


class LoginLimits(AxesDatabaseHandler):
    """Axes's database handler with one limit per kind of count (axes compares one number with
    ``AXES_FAILURE_LIMIT``): the failures it reports are that limit minus the attempts left
    before the nearest lock, so it locks exactly when one of the counts reaches its own limit.
    On success axes forgets the failures of that account at that address only
    (``AXES_LOCKOUT_PARAMETERS``)."""

    def get_failures(self, request: Any, credentials: dict[str, Any] | None = None) -> int:
        username = get_client_username(request, credentials)
        address = request.axes_ip_address
        limits = {
            "pair": (settings.AXES_FAILURE_LIMIT, Q(username=username, ip_address=address)),
            "address": (LOGIN_FAILURES_PER_ADDRESS, Q(ip_address=address)),
        }
        if not logged_in_lately(username, address):
            limits["account"] = (LOGIN_FAILURES_PER_ACCOUNT, Q(username=username))
        counts = AccessAttempt.objects.filter(
            attempt_time__gte=get_cool_off_threshold(request)
        ).aggregate(
            **{name: Sum("failures_since_start", filter=q) for name, (_, q) in limits.items()}
        )
        left = min(limit - (counts[name] or 0) for name, (limit, _) in limits.items())
        return int(settings.AXES_FAILURE_LIMIT) - left


def logged_in_lately(username: str | None, address: str | None) -> bool:
    if not username or address is None:
        return False
    return AccessLog.objects.filter(
        username__iexact=username,
        ip_address=address,
        attempt_time__gte=timezone.now() - LOGGED_IN_LATELY,
    ).exists()


# ----------------------------------------------------------------------------- request rates
def _address_key(group: str, request: HttpRequest) -> str:
    # Requests whose address cannot be read share one count.
    return client_address(request) or "unknown"


def _email_key(group: str, request: HttpRequest) -> str:
    return str(request.POST.get("email", "")).strip().casefold()


@dataclass(frozen=True)
class Rate:
    """At most ``rate`` (django-ratelimit's "count/period", e.g. "5/h") per key, in fixed
    windows counted in Django's cache (``CACHE_URL`` shares them across processes)."""

    group: str
    rate: str
    key: Any = _address_key

    def exceeded(self, request: HttpRequest) -> bool:
        """Count this request; whether it is over the rate. Counting and comparing are one
        atomic step (the cache's ``incr``), so concurrent requests cannot all slip through."""
        return bool(
            is_ratelimited(request, group=self.group, key=self.key, rate=self.rate, increment=True)
        )


# Counted when one is made or sent, not for a form sent back with mistakes.
# Twenty: the players of one café's or school's Wi-Fi share its address.
GUESTS = Rate("accounts.guests", "20/h")
SIGNUPS = Rate("accounts.signups", "5/h")
RESET_MAILS_PER_ADDRESS = Rate("accounts.reset-mails", "5/h")
RESET_MAILS_PER_MAILBOX = Rate("accounts.reset-mails-mailbox", "3/h", key=_email_key)
