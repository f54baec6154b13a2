"""Games in the database: variants, tables and seats, matches, hands and their move log.

The rules live in ``games.engine``; a hand row keeps the engine's state as a JSON snapshot with a
version number, and the move log beside it. Only ``games.actions`` writes these rows.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from games import engine, messages


def _invite_token() -> str:
    return secrets.token_urlsafe(16)


class Variant(models.Model):
    """One of the four rule sets, with the table options a new table starts from."""

    key = models.CharField(max_length=16, unique=True, choices=[(k, k) for k in engine.VARIANTS])
    name = models.CharField(max_length=80)
    description = models.TextField(blank=True)
    default_options = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        try:
            self.default_options = engine.validate_options(self.key, self.default_options)
        except engine.OptionsError as exc:
            raise ValidationError({"default_options": str(exc)}) from exc


class Table(models.Model):
    """A table where seats sit down and matches are played."""

    class Status(models.TextChoices):
        OPEN = "open", _("open")
        PLAYING = "playing", _("playing")
        FINISHED = "finished", _("finished")

    variant = models.ForeignKey(Variant, on_delete=models.PROTECT, related_name="tables")
    options = models.JSONField(default=dict, blank=True)
    # Empty: the table is called after its variant in the reader's language (shown_name).
    name = models.CharField(max_length=80, blank=True)
    is_private = models.BooleanField(default=False)
    invite_token = models.CharField(max_length=32, unique=True, default=_invite_token)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="created_tables",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    move_timer = models.PositiveSmallIntegerField(
        default=30, choices=[(0, _("off")), (15, "15 s"), (30, "30 s"), (60, "60 s")]
    )
    players = models.PositiveSmallIntegerField(default=4)
    # The creator asked for the match to start by itself once every seat is filled.
    auto_start = models.BooleanField(default=False)
    # A player holds a seat at one live table at a time, unless the table says otherwise:
    # seats at such a table neither block nor are blocked by seats elsewhere.
    other_tables = models.BooleanField(
        default=False, help_text=_("Players here may also sit at other tables")
    )
    # Seated players and spectators may talk in the table's chat panel (the host may turn it off).
    chat_enabled = models.BooleanField(
        default=True, help_text=_("Players and spectators may chat at this table")
    )
    # Formed by "Play now": people who want the same game sit here until it is full, or until
    # ``fill_at``, when bots of ``fill_level`` take the seats still empty and the match starts.
    quick = models.BooleanField(default=False)
    fill_at = models.DateTimeField(null=True, blank=True, db_index=True)
    fill_level = models.CharField(max_length=10, blank=True)
    season = models.ForeignKey(
        "leagues.Season",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="tables",
        help_text=_("the league season this table's matches count for, if any"),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # The address "New table" was sent from: guests (a new account a click) are limited in
    # open tables per address, not only per account (games.limits).
    created_from = models.GenericIPAddressField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(players__gte=2) & Q(players__lte=4), name="table_players_2_to_4"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.shown_name} ({self.variant.key})"

    @property
    def shown_name(self) -> str:
        """The table's name as players read it: its own, else its variant's table in the
        active language ("Düz Okey masası")."""
        return self.name or messages.default_table_name(self.variant.name)

    def clean(self) -> None:
        try:
            self.options = engine.check_table(self.variant.key, self.options, self.players)
        except engine.OptionsError as exc:
            raise ValidationError({"options": str(exc)}) from exc
        if self.season_id and self.season and self.season.league.variant_id != self.variant_id:
            raise ValidationError({"season": "the season's league plays another variant"})

    @property
    def partners(self) -> bool:
        return bool(self.options.get("partners"))


class Seat(models.Model):
    """A place at a table, in turn order: a person, a bot, or nobody yet."""

    class Bot(models.TextChoices):
        NONE = "", _("no bot")
        RANDOM = "random", _("random")
        GREEDY = "greedy", _("easy")
        STRONG = "strong", _("strong")
        EXPERT = "expert", _("expert")

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seats")
    position = models.PositiveSmallIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="seats",
    )
    bot_level = models.CharField(max_length=10, choices=Bot.choices, default="", blank=True)
    team = models.PositiveSmallIntegerField(null=True, blank=True)
    away = models.BooleanField(default=False)
    # When the holder was last known to be here: they sat down, or a socket of theirs closed.
    # While a socket is open, its Presence row says so; the away rule counts from this time.
    last_seen = models.DateTimeField(null=True, blank=True)
    timeouts_in_a_row = models.PositiveSmallIntegerField(default=0)
    # The bot here plays for a player who left the match: a person may take the seat
    # between hands.
    stand_in = models.BooleanField(default=False)
    # The last player who left this seat during a match, for the table's log: their name as
    # it was shown, the hand they left (its id) and how many moves of it had been played.
    left_name = models.CharField(max_length=150, blank=True, default="")
    left_hand = models.PositiveIntegerField(null=True, blank=True)
    left_at = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["table", "position"]
        constraints = [
            models.UniqueConstraint(fields=["table", "position"], name="unique_seat_position"),
            models.UniqueConstraint(
                fields=["table", "user"],
                condition=Q(user__isnull=False),
                name="one_seat_per_user_per_table",
            ),
            models.CheckConstraint(condition=Q(position__lte=3), name="seat_position_0_to_3"),
            models.CheckConstraint(
                condition=Q(user__isnull=True) | Q(bot_level=""), name="seat_user_or_bot"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.table_id}#{self.position} {self.occupant}"

    @property
    def occupant(self) -> str:
        if self.user_id:
            return self.user.get_username() if self.user else str(self.user_id)
        if self.bot_level:
            return f"bot ({self.bot_level})"
        return "empty"

    @property
    def is_empty(self) -> bool:
        return not self.user_id and not self.bot_level


class Presence(models.Model):
    """One open table socket of a seated player, refreshed by the socket's heartbeat.

    A seat's holder is here while one of their rows for that seat is fresh. A socket that
    closes deletes its row; one whose server died stops refreshing it, so it goes stale.
    Rows name the user as well as the seat, so a new occupant never inherits "here".
    """

    # Seconds between heartbeats, and the age after which a row no longer counts: a process
    # killed without closing its sockets stops counting within FRESH seconds (two missed
    # beats are tolerated), and the clock then tells the pages (actions.announce_stale_sockets).
    HEARTBEAT = 5
    FRESH = 15

    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="presences")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    channel_name = models.CharField(max_length=200, unique=True)
    seen_at = models.DateTimeField(db_index=True)
    # The client's address, for the limit on sockets per address (games.limits).
    address = models.GenericIPAddressField(null=True, blank=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.user_id} at seat {self.seat_id} ({self.channel_name})"

    @classmethod
    def fresh_since(cls, now: Any) -> Any:
        return now - timedelta(seconds=cls.FRESH)

    @classmethod
    def here(cls, now: Any = None) -> Exists:
        """For a Seat queryset: its holder has a fresh socket open (``.annotate(here=...)``)."""
        now = now or timezone.now()
        return Exists(
            cls.objects.filter(
                seat=OuterRef("pk"), user=OuterRef("user"), seen_at__gte=cls.fresh_since(now)
            )
        )


class LobbyPresence(models.Model):
    """One open lobby socket of a signed-in user, refreshed by the socket's heartbeat.

    With :class:`Presence` (seated players' table sockets) it gives the lobby's "players
    online" count: the distinct users with a fresh row in either table. Rows live in the
    database, not in one process, so every daphne process counts every socket; a process that
    dies stops refreshing its rows and they go stale after ``Presence.FRESH`` seconds.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    channel_name = models.CharField(max_length=200, unique=True)
    seen_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.user_id} in the lobby ({self.channel_name})"


class Watcher(models.Model):
    """One open table socket of a spectator (anyone who is not seated there, signed in or
    not), refreshed by its server process's heartbeat like :class:`Presence`. The fresh rows
    give the "N watching" count on the lobby and the table, across every daphne process."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="watchers")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE
    )
    channel_name = models.CharField(max_length=200, unique=True)
    seen_at = models.DateTimeField(db_index=True)
    # The client's address, for the limit on sockets per address (games.limits).
    address = models.GenericIPAddressField(null=True, blank=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.user_id or 'anonymous'} watching table {self.table_id}"

    @classmethod
    def fresh(cls, now: Any = None) -> Q:
        """The rows that still count (``.filter(Watcher.fresh())``)."""
        return Q(seen_at__gte=Presence.fresh_since(now or timezone.now()))


class Match(models.Model):
    """One game at a table: its hands, running totals and final ranking."""

    class Status(models.TextChoices):
        PLAYING = "playing", _("playing")
        FINISHED = "finished", _("finished")
        ABANDONED = "abandoned", _("abandoned")

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="matches")
    hands_planned = models.PositiveSmallIntegerField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PLAYING)
    totals = models.JSONField(default=list)
    ranking = models.JSONField(default=list, blank=True)
    winners = models.JSONField(default=list, blank=True)
    # Between hands: when the next hand is dealt (the scoreboard shows until then), and the
    # seats whose players pressed "ready" (all humans ready deals it at once).
    next_hand_at = models.DateTimeField(null=True, blank=True, db_index=True)
    ready = models.JSONField(default=list, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at"]
        verbose_name_plural = "matches"

    def __str__(self) -> str:
        return f"match {self.pk} at {self.table}"


class Hand(models.Model):
    """One hand: the seed's commitment (public), the seed (shown once over), the engine
    snapshot with its version, the move deadline and the result."""

    class Status(models.TextChoices):
        PLAYING = "playing", _("playing")
        FINISHED = "finished", _("finished")
        ABANDONED = "abandoned", _("abandoned")

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="hands")
    number = models.PositiveSmallIntegerField()
    starter = models.PositiveSmallIntegerField()
    commitment = models.CharField(max_length=64)
    seed = models.CharField(max_length=64)
    state = models.JSONField()
    version = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PLAYING)
    deadline = models.DateTimeField(null=True, blank=True, db_index=True)
    # The seat on turn and the engine's turn counter, kept beside the snapshot for the clock.
    turn = models.PositiveSmallIntegerField(default=0)
    turn_index = models.PositiveIntegerField(default=0)
    # The turn (turn_index) whose timeout the clock has claimed: it may play that turn.
    clock_turn = models.PositiveIntegerField(null=True, blank=True)
    # A clock worker's lease on this hand: while it runs, no other worker plays its bots.
    lease_until = models.DateTimeField(null=True, blank=True)
    lease_owner = models.CharField(max_length=64, blank=True)
    # A seated player hid this hand from spectators: they see the seats and scores, not the
    # board, until the hand is over.
    hidden = models.BooleanField(default=False)
    # Counts the changes to who may see what of this hand while it is played (hidden from
    # spectators, a seat changing hands, the table's privacy or invite). Every move's message
    # carries it: a server process that missed such a change's own message sees the count
    # differ at the next move and reads the table instead of bringing its kept state forward.
    visibility = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    ending = models.CharField(max_length=10, blank=True)
    finisher = models.PositiveSmallIntegerField(null=True, blank=True)
    kind = models.CharField(max_length=20, blank=True)
    multiplier = models.PositiveSmallIntegerField(default=1)
    hand_scores = models.JSONField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["match", "number"]
        constraints = [
            models.UniqueConstraint(fields=["match", "number"], name="unique_hand_number"),
            models.UniqueConstraint(
                fields=["match"],
                condition=Q(status="playing"),
                name="one_open_hand_per_match",
            ),
        ]

    def __str__(self) -> str:
        return f"hand {self.number} of match {self.match_id}"

    def engine_hand(self) -> engine.Hand:
        """The engine's hand rebuilt from the snapshot (its move log is the Move rows)."""
        return engine.Hand.from_state(self.state)

    @property
    def revealed_seed(self) -> str | None:
        """The seed, only once the hand is over."""
        return self.seed if self.status != self.Status.PLAYING else None

    def view_for(self, seat: int) -> dict[str, Any]:
        """What ``seat`` may see: the engine's per-seat view."""
        return self.engine_hand().view(seat)

    def public_view(self) -> dict[str, Any]:
        """What everyone may see: the engine's public view."""
        return self.engine_hand().public_view()


class Abandonment(models.Model):
    """A player left a match being played (a bot took their seat for the rest of it). In a
    rated match they are placed last; several in a day make "Play now" wait
    (``policy.check_quick_play``)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="abandonments"
    )
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="abandonments")
    position = models.PositiveSmallIntegerField()
    at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-at"]
        constraints = [
            models.UniqueConstraint(fields=["user", "match"], name="one_abandonment_per_match"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} left match {self.match_id}"


class Participant(models.Model):
    """Who held a seat when a hand was dealt: a player or a bot of a level.

    Seats change hands (a player stands up, a bot takes over, a seat is reused), so results,
    ratings and histories read who played from here, not from today's seat.
    """

    hand = models.ForeignKey(Hand, on_delete=models.CASCADE, related_name="participants")
    position = models.PositiveSmallIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="hands_played",
    )
    bot_level = models.CharField(max_length=10, blank=True)
    team = models.PositiveSmallIntegerField(null=True, blank=True)
    # How the holder arranged their rack on the stand (``games.engine.layout``): kept so that
    # a reload or a reconnect shows it unchanged. Private to the seat, like the rack.
    layout = models.JSONField(default=list, blank=True)
    # The hand's version when staff took the player off the seat while the hand was played
    # (None: they held it throughout): until the hand is over they replay it up to there.
    left_at = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["hand", "position"]
        constraints = [
            models.UniqueConstraint(fields=["hand", "position"], name="unique_participant_seat"),
        ]

    def __str__(self) -> str:
        who = self.user_id or f"bot ({self.bot_level})"
        return f"seat {self.position} of {self.hand}: {who}"


class Move(models.Model):
    """One accepted move, in order: the engine's normalised move, what it did, and who played
    it (the player, or the bot and its level). These rows are the hand's only move log."""

    class By(models.TextChoices):
        USER = "user", _("player")
        BOT = "bot", _("bot")
        CLOCK = "clock", _("clock")

    hand = models.ForeignKey(Hand, on_delete=models.CASCADE, related_name="moves")
    number = models.PositiveIntegerField()
    seat = models.PositiveSmallIntegerField()
    action = models.JSONField()
    events = models.JSONField(default=list)
    by = models.CharField(max_length=5, choices=By.choices)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    # The bot level that chose a bot's or the clock's move.
    bot_level = models.CharField(max_length=10, blank=True)
    # NULL, not "", for moves without an id: the unique constraint then ignores them.
    client_move_id = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["hand", "number"]
        constraints = [
            models.UniqueConstraint(fields=["hand", "number"], name="unique_move_number"),
            models.UniqueConstraint(
                fields=["hand", "client_move_id"],
                condition=Q(client_move_id__isnull=False),
                name="unique_client_move_id",
            ),
        ]

    def __str__(self) -> str:
        return f"move {self.number} of {self.hand}"


class ChatMessage(models.Model):
    """A line of a table's chat: free text (plain, at most ``MAX_LENGTH`` characters) or a
    canned phrase (``canned``: a key of ``games.chat.CANNED``, shown in each reader's
    language). Kept with the match it was said in (none before the table's first match); never
    part of a hand's log or an export."""

    MAX_LENGTH = 200

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="chat_messages")
    match = models.ForeignKey(
        Match, null=True, blank=True, on_delete=models.CASCADE, related_name="chat_messages"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The author's name when they wrote it (a message keeps the name it was sent under).
    author = models.CharField(max_length=150)
    text = models.CharField(max_length=MAX_LENGTH, blank=True)
    canned = models.CharField(max_length=32, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["table", "created_at", "id"]
        indexes = [models.Index(fields=["table", "-id"], name="chat_table_recent")]

    def __str__(self) -> str:
        return f"{self.author}: {self.text or self.canned}"


class ChatMute(models.Model):
    """``user`` does not want to read ``muted`` at ``table`` for the rest of the match: the
    mute ends when a match at the table ends after it was made (one made before a match
    starts lasts to the end of that match)."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="chat_mutes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    muted = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "user", "muted"], name="one_mute_per_pair"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} mutes {self.muted_id} at table {self.table_id}"
