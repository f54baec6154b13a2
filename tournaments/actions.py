"""What changes a tournament before it runs: an organiser creates it, players register and
withdraw. Each change locks the tournament's row, so that entries racing for the last places
take turns (twenty players for sixteen places: sixteen get in)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Exists, Max, OuterRef
from django.utils import timezone

from accounts.models import Profile
from accounts.names import clean_name
from games import engine, policy
from games.errors import GameError
from games.models import Abandonment, Match, Participant, Variant
from leagues.models import Rating
from tournaments.models import KNOCKOUT_SIZES, SWISS_MOST, SWISS_ROUNDS, Entry, NoShow, Tournament

TABLE = 4
# A player who did not take their seat may not register for a while: a day after the first
# no-show since their last match played to its end, twice that after the next, up to a month.
NO_SHOW_WAIT = timedelta(hours=24)
NO_SHOW_WAIT_MOST = timedelta(days=30)


def create(
    *,
    by: Any,
    name: str,
    variant: str,
    format: str,
    options: dict[str, Any] | None = None,
    size: int | None = None,
    rounds: int | None = None,
    places: int | None = None,
    starts_at: datetime | None = None,
    rated: bool = True,
    public: bool = True,
    min_rated_matches: int = 0,
    min_account_days: int = 0,
    shared_addresses: bool = False,
) -> Tournament:
    """A new tournament, registering. A knockout takes ``size`` players (4 to 64); a Swiss
    plays ``rounds`` rounds (2 to 9) for up to ``places`` players. The tables' options are
    the variant's, checked by the engine as a New table's are. Raises ``GameError``."""
    policy.check_organiser(by, "create a tournament")
    shown = clean_name(name)
    if not shown:
        raise GameError("bad_name", "a tournament needs a name")
    found = Variant.objects.filter(key=variant).first()
    if found is None:
        raise GameError("bad_variant", f"no such variant: {variant}")
    try:
        checked = engine.check_table(found.key, {**found.default_options, **(options or {})}, TABLE)
    except engine.OptionsError as exc:
        raise GameError("bad_options", str(exc)) from exc
    if format == Tournament.Format.KNOCKOUT:
        if size not in KNOCKOUT_SIZES:
            sizes = ", ".join(map(str, KNOCKOUT_SIZES))
            raise GameError("bad_size", f"a knockout takes {sizes} players")
        places, rounds = size, None
    elif format == Tournament.Format.SWISS:
        if rounds not in SWISS_ROUNDS:
            raise GameError(
                "bad_rounds", f"a Swiss plays {SWISS_ROUNDS[0]} to {SWISS_ROUNDS[-1]} rounds"
            )
        places = SWISS_MOST if places is None else places
        if not TABLE <= places <= SWISS_MOST:
            raise GameError("bad_places", f"a Swiss takes {TABLE} to {SWISS_MOST} players")
    else:
        raise GameError("bad_format", "the format is knockout or swiss")
    if starts_at is not None and starts_at <= timezone.now():
        raise GameError("bad_start", "the start is in the past")
    if min_rated_matches < 0 or min_account_days < 0:
        raise GameError("bad_conditions", "an entry condition is not negative")
    return Tournament.objects.create(
        name=shown,
        variant=found,
        options=checked,
        format=format,
        places=places,
        rounds=rounds,
        starts_at=starts_at,
        rated=rated,
        public=public,
        min_rated_matches=min_rated_matches,
        min_account_days=min_account_days,
        shared_addresses=shared_addresses,
        created_by=by,
    )


def register(tournament_id: int, user: Any, address: str = "", invite: str | None = None) -> Entry:
    """``user`` enters the tournament, if it is registering, has a place left and they meet
    its conditions (an invite-only event: its invitation; a rated event: an account of their
    own; its rated matches played in the variant; its account age; no recent no-show). Raises
    ``GameError``."""
    if not policy.viewer_id(user):
        raise GameError("sign_in", "sign in to register")
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        if tournament.state != Tournament.State.REGISTERING:
            raise GameError("not_registering", "the tournament is not taking entries")
        if not tournament.public and invite != tournament.invite_token:
            raise GameError("invite_only", "this tournament is by invitation")
        entry = Entry.objects.filter(tournament=tournament, user_id=user.pk).first()
        if entry is not None and entry.withdrawn_at is None:
            raise GameError("registered", "you are registered already")
        check_conditions(tournament, user)
        taken = Entry.objects.filter(tournament=tournament, withdrawn_at__isnull=True).count()
        if taken >= tournament.places:
            raise GameError("full", "the tournament is full")
        if entry is None:
            return Entry.objects.create(tournament=tournament, user=user, address=address)
        entry.withdrawn_at, entry.address = None, address
        entry.save(update_fields=["withdrawn_at", "address"])
        return entry


def check_conditions(tournament: Tournament, user: Any) -> None:
    """Whether ``user`` may enter ``tournament`` (``GameError`` when not)."""
    if tournament.rated and Profile.objects.filter(user_id=user.pk, is_guest=True).exists():
        raise GameError("guest", "a rated tournament needs an account of your own")
    if tournament.min_account_days:
        old_enough = user.date_joined + timedelta(days=tournament.min_account_days)
        if old_enough > timezone.now():
            raise GameError(
                "too_new", f"entry needs an account {tournament.min_account_days} days old"
            )
    until = barred_until(user.pk)
    if until is not None:
        hours = max(1, round((until - timezone.now()).total_seconds() / 3600))
        raise GameError(
            "no_show_wait",
            f"you missed your seat in a tournament: you may register again in {hours} h",
            until.isoformat(),
        )
    if tournament.min_rated_matches:
        rating = Rating.objects.filter(user_id=user.pk, variant_id=tournament.variant_id).first()
        if (rating.matches if rating else 0) < tournament.min_rated_matches:
            raise GameError(
                "too_few_matches",
                f"entry needs {tournament.min_rated_matches} rated matches of this variant",
            )


def barred_until(user_id: int, now: datetime | None = None) -> datetime | None:
    """Until when a player who missed seats may not register (None: they may): each no-show
    since their last match played to its end doubles the wait (``NO_SHOW_WAIT`` for the
    first, ``NO_SHOW_WAIT_MOST`` at the most), counted from the last no-show."""
    now = now or timezone.now()
    left = Abandonment.objects.filter(user_id=user_id, match_id=OuterRef("hand__match_id"))
    played = (
        Participant.objects.filter(user_id=user_id, hand__match__status=Match.Status.FINISHED)
        .filter(~Exists(left))
        .aggregate(last=Max("hand__match__finished_at"))["last"]
    )
    missed = NoShow.objects.filter(user_id=user_id)
    if played is not None:
        missed = missed.filter(at__gt=played)
    times = list(missed.order_by("-at").values_list("at", flat=True)[:8])
    if not times:
        return None
    wait = min(NO_SHOW_WAIT * 2 ** (len(times) - 1), NO_SHOW_WAIT_MOST)
    until: datetime = times[0] + wait
    return until if until > now else None


def withdraw(tournament_id: int, user: Any) -> None:
    """``user`` leaves a tournament before it starts. Raises ``GameError``."""
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        if tournament.state != Tournament.State.REGISTERING:
            raise GameError("not_registering", "the tournament has started")
        done = Entry.objects.filter(
            tournament=tournament, user_id=policy.viewer_id(user), withdrawn_at__isnull=True
        ).update(withdrawn_at=timezone.now())
        if not done:
            raise GameError("not_registered", "you are not registered")
