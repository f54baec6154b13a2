"""One hand of Okey as a state machine: every move of RULES.md, checked, with its events.

>>> from games.engine import Hand, deal
>>> hand = Hand.from_deal("okey51", deal("00" * 32))
>>> result = hand.play(0, {"do": "discard", "tile": hand.view(0)["rack"][0]})
>>> result.ok
True

A refused move returns ``ok=False`` with a stable error code and changes nothing; an accepted one
returns (and logs) the move as the engine read it (:func:`normalise_move`). What players may see
is :meth:`Hand.public_view` (everyone) and :meth:`Hand.view` (one seat: public plus private).
The hand's whole state is plain data (:meth:`Hand.to_state` / :meth:`Hand.from_state`), and
replaying its accepted moves (:attr:`Hand.log`) from the deal reproduces it exactly.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import scoring
from .errors import MeldError, MoveError
from .melds import PAIR, RUN, SET, Meld, face_value, read_meld, read_pair
from .replay import Recorded, replay_moves
from .solver import (
    all_numbers,
    finish_kind,
    one_colour,
)
from .tiles import (
    FAKE,
    Deal,
    TileError,
    commitment,
    deal,
    format_tile,
    okey_of,
    parse_tile,
    parse_token,
)
from .variants import Rules, check_table, rules_for, team_of

ACTIONS = (
    "draw",
    "take",
    "discard",
    "finish",
    "open",
    "lay",
    "add",
    "swap",
    "give_back",
    "show_indicator",
)

Event = dict[str, Any]

# The fields each action reads besides ``do``: its normalised move keeps only these (see
# :func:`normalise_move`). ``groups``, ``onto`` and ``end`` are optional; ``open`` and ``lay`` take
# ``melds`` or ``pairs``.
MOVE_FIELDS: dict[str, tuple[str, ...]] = {
    "draw": (),
    "take": (),
    "give_back": (),
    "show_indicator": (),
    "discard": ("tile",),
    "finish": ("tile", "groups"),
    "open": ("melds", "pairs"),
    "lay": ("melds", "pairs", "onto"),
    "add": ("meld", "tile", "end"),
    "swap": ("meld", "tile"),
}

# What everyone at the table (other seats, spectators) may see: the keys of Hand.public_view().
PUBLIC_KEYS = (
    "variant",
    "options",
    "players",
    "number",
    "starter",
    "turn",
    "rack_counts",
    "indicator",
    "okey",
    "pile_size",
    "discards",
    "table",
    "opened",
    "opening_bar",
    "pairs_needed",
    "penalties",
    "scores_before",
    "indicator_shown",
    "result",
    "commitment",
    "seed",
    "over",
    "phase",
    "revealed",
    "took",
)

# What Hand.view(seat) adds for its own seat on top of the public view.
PRIVATE_KEYS = (
    "seat",
    "has_tile",
    "must_draw",
    "must_finish",
    "taken",
    "rack",
    "can_take",
    "acted",
)


def normalise_move(move: Mapping[str, Any]) -> dict[str, Any]:
    """An accepted move as the engine read it: ``do`` and only the fields its action reads.

    Extra keys are dropped; an optional field (``groups``, ``onto``, ``end``) is kept only when
    given and not null, and ``onto`` only with ``pairs`` (melds are always laid on one's own row).
    Values are deep copies of the given ones. Playing the normalised move gives the same result.
    """
    action = str(move["do"])
    out: dict[str, Any] = {"do": action}
    for key in MOVE_FIELDS[action]:
        if move.get(key) is None:
            continue
        if key == "onto" and "pairs" not in move:
            continue
        out[key] = copy.deepcopy(move[key])
    return out


@dataclass
class MoveResult:
    """What one move did: ``ok``, its events and the normalised ``move`` (see
    :func:`normalise_move`), or the error code and a message (``move`` is then None)."""

    ok: bool
    events: list[Event] = field(default_factory=list)
    error: str | None = None
    message: str | None = None
    detail: str | None = None
    move: dict[str, Any] | None = None
    tiles: list[str] | None = None  # the group at fault (see MoveError)

    def to_json(self) -> dict[str, Any]:
        if self.ok:
            return {"ok": True, "events": self.events}
        out: dict[str, Any] = {"ok": False, "error": self.error, "message": self.message}
        if self.detail:
            out["detail"] = self.detail
        if self.tiles:
            out["tiles"] = self.tiles
        return out


def event_for(event: Event, seat: int) -> Event:
    """An event as one seat may see it: a drawn tile is shown only to the seat that drew it."""
    if event.get("private_to") is not None and event["private_to"] != seat:
        return {k: v for k, v in event.items() if k not in ("tile", "private_to")}
    return {k: v for k, v in event.items() if k != "private_to"}


class Hand:
    """The state of one hand and the moves that change it."""

    def __init__(self) -> None:
        # Set by new(); listed here so the shape of the state is in one place.
        self.variant = "classic"
        self.options: dict[str, Any] = {}
        self.players = 4
        self.starter = 0
        self.number = 1
        # Void hands (okey101) dealt before this one in its match: they do not count toward
        # the match's hands.
        self.voided = 0
        self.indicator = 0
        self.okey = 0
        self.seed: str | None = None
        self.commitment: str | None = None
        self.racks: list[list[int]] = []
        self.pile: list[int] = []
        self.discards: list[list[int]] = []
        # Per seat, the discards it took from the side this hand, in order (everyone at the table
        # sees a take). A stored state from before this field has none: it starts empty.
        self.took: list[list[int]] = []
        self.last_discard: int | None = None  # seat whose latest discard may be taken now
        self.turn = 0
        self.turn_index = 0
        self.has_tile = True  # the seat on turn has taken its tile (the starter starts so)
        self.pile_empty_at_start = False
        self.drew_last_tile = False
        self.taken: dict[str, Any] | None = None
        self.must_draw = False
        # The seat whose opening below the bar (``from_hand_option``) must be followed at once by
        # its finishing discard.
        self.must_finish: int | None = None
        # Tiles added this turn per meld end ("<meld id>:<end>"), for ``add_limit``.
        self.added: dict[str, int] = {}
        self.acted: list[bool] = []
        self.indicator_shown = False
        self.opened: list[str | None] = []
        self.opened_turn: list[int | None] = []
        self.table: list[Meld] = []
        self.best_melds_opening = 0
        self.best_pairs_opening = 0
        self.penalties: list[dict[str, Any]] = []
        self.scores_before: list[int] = []
        self.result: dict[str, Any] = {"over": False, "ending": None}
        self.log: list[dict[str, Any]] = []
        self.initial: dict[str, Any] = {}

    # ------------------------------------------------------------------ creation
    @classmethod
    def new(
        cls,
        variant: str,
        racks: Sequence[Sequence[int]],
        pile: Sequence[int],
        indicator: int,
        options: Mapping[str, Any] | None = None,
        *,
        starter: int = 0,
        scores: Sequence[int] | None = None,
        number: int = 1,
        seed: str | None = None,
        voided: int = 0,
    ) -> Hand:
        """A hand from explicit racks (``racks[0]`` is the starter's), pile (top first) and
        indicator. Seats are numbered in turn order; ``starter`` is the seat that holds
        ``racks[0]`` and the others follow it."""
        h = cls()
        h.variant = variant
        h.players = len(racks)
        h.options = check_table(variant, options, h.players)
        if indicator == FAKE:
            raise TileError("a fake okey cannot be the indicator")
        counts = Counter(t for r in racks for t in r) + Counter(pile) + Counter([indicator])
        for t, k in counts.items():
            if k > 2:
                raise TileError(f"more than two copies of {format_tile(t)}")
        h.starter = starter
        h.number = number
        h.voided = voided
        h.indicator = indicator
        h.okey = okey_of(indicator)
        h.seed = seed
        h.commitment = commitment(seed) if seed else None
        h.racks = [[] for _ in racks]
        for k, r in enumerate(racks):
            h.racks[(starter + k) % h.players] = list(r)
        h.pile = list(pile)
        h.discards = [[] for _ in racks]
        h.took = [[] for _ in racks]
        h.turn = starter
        h.acted = [False] * h.players
        h.opened = [None] * h.players
        h.opened_turn = [None] * h.players
        if scores is None:
            scores = scoring.start_scores(variant, h.options, h.players)
        h.scores_before = list(scores)
        h.initial = {
            "racks": [list(r) for r in h.racks],
            "pile": list(h.pile),
        }
        return h

    @classmethod
    def from_deal(
        cls,
        variant: str,
        dealt: Deal,
        options: Mapping[str, Any] | None = None,
        *,
        starter: int = 0,
        scores: Sequence[int] | None = None,
        number: int = 1,
        seed: str | None = None,
        voided: int = 0,
    ) -> Hand:
        """A hand from :func:`~games.engine.tiles.deal` (racks in turn order from the starter),
        dealt with the variant's rack sizes."""
        first, other = rules_for(variant).rack_sizes
        sizes = [len(r) for r in dealt.racks]
        if sizes != [first] + [other] * (len(sizes) - 1):
            raise TileError(f"{variant} deals {first} and {other} tiles, not {sizes}")
        return cls.new(
            variant,
            dealt.racks,
            dealt.pile,
            dealt.indicator,
            options,
            starter=starter,
            scores=scores,
            number=number,
            seed=seed,
            voided=voided,
        )

    @classmethod
    def from_seed(
        cls,
        variant: str,
        seed: str,
        options: Mapping[str, Any] | None = None,
        *,
        players: int = 4,
        starter: int = 0,
        scores: Sequence[int] | None = None,
        number: int = 1,
        voided: int = 0,
    ) -> Hand:
        """The hand a table deals from ``seed`` (:func:`~games.engine.tiles.deal` for
        ``players``), keeping the seed: dealing again from it gives the same hand."""
        return cls.from_deal(
            variant,
            deal(seed, players, rules_for(variant).rack_sizes),
            options,
            starter=starter,
            scores=scores,
            number=number,
            seed=seed,
            voided=voided,
        )

    # ------------------------------------------------------------------ facts
    @property
    def over(self) -> bool:
        return bool(self.result["over"])

    @property
    def rules(self) -> Rules:
        """The variant's rules (games/engine/variants/): the hand asks them, never the name."""
        return rules_for(self.variant)

    @property
    def open_variant(self) -> bool:
        return self.rules.open_table

    @property
    def wrap(self) -> bool:
        return self.rules.wrap(self.options)

    def partners(self, a: int, b: int) -> bool:
        """Seats on one side: the same seat, or partners across the table in 2v2."""
        if a == b:
            return True
        team = team_of(a, self.options)
        return team is not None and team == team_of(b, self.options)

    def previous(self, seat: int) -> int:
        return (seat - 1) % self.players

    def opening_bar(self) -> int:
        """The total a melds opening needs now."""
        return self.rules.opening_bar(self)

    def pairs_needed(self) -> int:
        """How many pairs a pairs opening needs now."""
        return self.rules.pairs_needed(self)

    def is_wild(self, t: int) -> bool:
        return t == self.okey

    def value(self, t: int) -> int:
        """Face value: a number; a fake its identity's number; a wild okey the okey's number."""
        return face_value(t, self.okey)

    def meld(self, meld_id: Any) -> Meld:
        if isinstance(meld_id, bool) or not isinstance(meld_id, int):
            raise MoveError("bad_move", "meld is a meld id (a number)")
        for m in self.table:
            if m.id == meld_id:
                return m
        raise MoveError("no_such_meld", f"no meld {meld_id} on the table")

    # ------------------------------------------------------------------ playing
    def play(self, seat: int, move: Mapping[str, Any]) -> MoveResult:
        """Apply one move for ``seat``; on a refused move nothing changes."""
        try:
            if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.players:
                raise MoveError("bad_seat", f"no seat {seat!r} at this table")
            if not isinstance(move, Mapping):
                raise MoveError("bad_move", "a move is an object with a 'do' field")
            action = move.get("do")
            if action not in ACTIONS:
                raise MoveError("bad_move", f"unknown action {action!r}")
            if self.over:
                raise MoveError("hand_over", "the hand has ended")
            if seat == self.must_finish and action != "discard":
                raise MoveError("must_finish", "an opening below the bar is followed by the finish")
            before = self._checkpoint()
            try:
                events = getattr(self, "_" + str(action))(seat, move)
            except MoveError:
                self._restore(before)
                raise
        except MoveError as exc:
            return MoveResult(
                False, error=exc.code, message=exc.message, detail=exc.detail, tiles=exc.tiles
            )
        normal = normalise_move(move)
        self.log.append({"seat": seat, **copy.deepcopy(normal)})
        return MoveResult(True, events, move=normal)

    def _checkpoint(self) -> dict[str, Any]:
        # The log and the deal never change inside a move: leave them out of the copy.
        log, initial = self.log, self.initial
        self.log, self.initial = [], {}
        try:
            return self.to_state()
        finally:
            self.log, self.initial = log, initial

    def _restore(self, state: dict[str, Any]) -> None:
        log, initial = self.log, self.initial
        fresh = Hand.from_state(state, copy_data=False)
        self.__dict__.update(fresh.__dict__)
        self.log, self.initial = log, initial

    # --- helpers
    def _need_turn(self, seat: int) -> None:
        if seat != self.turn:
            raise MoveError("not_your_turn", f"it is seat {self.turn}'s turn")

    def _need_tile_taken(self) -> None:
        if self.must_draw:
            raise MoveError("must_draw_after_give_back", "after giving the tile back, draw")
        if not self.has_tile:
            raise MoveError("must_draw_first", "draw from the pile or take the discard first")

    def _tile(self, move: Mapping[str, Any], key: str = "tile") -> int:
        raw = move.get(key)
        if not isinstance(raw, str):
            raise MoveError("bad_move", f"'{key}' is a tile such as R5")
        try:
            return parse_tile(raw)
        except TileError as exc:
            raise MoveError("bad_tile", str(exc)) from exc

    def _remove(self, seat: int, tiles: Sequence[int]) -> None:
        self._check_in_rack(seat, tiles)
        for t in tiles:
            self.racks[seat].remove(t)

    def _keep_one(self, seat: int, using: int) -> None:
        if len(self.racks[seat]) - using < 1:
            raise MoveError("must_keep_a_tile", "keep one tile to discard")

    def _penalty(self, seat: int, points: int, reason: str, **extra: Any) -> Event:
        entry = {"seat": seat, "points": points, "reason": reason, **extra}
        self.penalties.append(entry)
        return {"type": "penalty", **entry}

    def _mark_taken_used(self, seat: int, tiles: Sequence[int]) -> None:
        if self.taken and not self.taken["used"] and self.taken["tile"] in tiles:
            self.taken["used"] = True

    def _next_turn(self) -> None:
        self.turn = (self.turn + 1) % self.players
        self.turn_index += 1
        self.has_tile = False
        self.taken = None
        self.must_draw = False
        self.drew_last_tile = False
        self.added = {}
        self.pile_empty_at_start = not self.pile

    # --- draw, take, give back
    def _draw(self, seat: int, move: Mapping[str, Any]) -> list[Event]:
        self._need_turn(seat)
        if self.has_tile:
            raise MoveError("already_drew", "this turn's tile has been taken")
        self.acted[seat] = True
        self.must_draw = False
        if not self.pile:
            return self._end_dry_wall(seat)
        t = self.pile.pop(0)
        self.racks[seat].append(t)
        self.has_tile = True
        self.last_discard = None
        self.drew_last_tile = not self.pile
        return [{"type": "draw", "seat": seat, "tile": format_tile(t), "private_to": seat}]

    def _take(self, seat: int, move: Mapping[str, Any]) -> list[Event]:
        self._need_turn(seat)
        if self.must_draw:
            raise MoveError("must_draw_after_give_back", "after giving the tile back, draw")
        if self.has_tile:
            raise MoveError("already_drew", "this turn's tile has been taken")
        thrower = self.previous(seat)
        if self.last_discard != thrower or not self.discards[thrower]:
            raise MoveError("no_discard_to_take", "the previous seat has no discard to take")
        t = self.discards[thrower].pop()
        self.racks[seat].append(t)
        if len(self.took) != self.players:
            self.took = [[] for _ in range(self.players)]
        self.took[seat].append(t)
        self.acted[seat] = True
        self.has_tile = True
        self.last_discard = None
        events: list[Event] = [
            {"type": "take", "seat": seat, "tile": format_tile(t), "from": thrower}
        ]
        penalty_at = None
        points = self.rules.take_penalty(self, t) if self.open_variant else 0
        if points and not self.partners(seat, thrower):
            penalty_at = len(self.penalties)
            events.append(self._penalty(thrower, points, "taken", tile=format_tile(t)))
        if self.open_variant:
            self.taken = {
                "tile": t,
                "from": thrower,
                "penalty": penalty_at,
                "used": False,
            }
        return events

    def _give_back(self, seat: int, move: Mapping[str, Any]) -> list[Event]:
        if not self.open_variant:
            raise MoveError("not_in_variant", "give_back exists in open variants only")
        self._need_turn(seat)
        if not self.taken or self.taken["used"]:
            raise MoveError("nothing_to_give_back", "no taken tile waits to be given back")
        t, thrower = self.taken["tile"], self.taken["from"]
        self.racks[seat].remove(t)
        self.discards[thrower].append(t)
        # As if the take never happened: it leaves the seat's takes too.
        if len(self.took) == self.players and t in self.took[seat]:
            took = self.took[seat]
            del took[len(took) - 1 - took[::-1].index(t)]
        events: list[Event] = [
            {"type": "give_back", "seat": seat, "tile": format_tile(t), "to": thrower}
        ]
        if self.rules.give_back_cancels_take and self.taken["penalty"] is not None:
            # As if the take never happened: its x10 is cancelled.
            del self.penalties[self.taken["penalty"]]
            events.append({"type": "penalty_cancelled", "seat": thrower, "reason": "taken"})
        cost = self.rules.give_back_penalty(self)
        if cost:
            events.append(self._penalty(seat, cost, "give_back"))
        self.taken = None
        self.has_tile = False
        self.must_draw = True
        self.last_discard = None
        return events

    # --- discard and finish
    def _discard(self, seat: int, move: Mapping[str, Any]) -> list[Event]:
        self._need_turn(seat)
        self._need_tile_taken()
        t = self._tile(move)
        if t not in self.racks[seat]:
            raise MoveError("tile_not_in_rack", f"{format_tile(t)} is not in the rack")
        if self.taken and not self.taken["used"]:
            raise MoveError(
                "taken_tile_not_used",
                f"the taken {format_tile(self.taken['tile'])} must go on the table or back",
            )
        finishing = self.open_variant and len(self.racks[seat]) == 1
        if finishing and self.rules.finish_needs_opening and not self.opened[seat]:
            raise MoveError("not_opened", "open before you finish")
        events: list[Event] = []
        if self.open_variant and not finishing:
            events += self._discard_penalties(seat, t)
        self.racks[seat].remove(t)
        self.discards[seat].append(t)
        self.acted[seat] = True
        events.insert(0, {"type": "discard", "seat": seat, "tile": format_tile(t)})
        if finishing:
            return events + self._end_finish(seat, t, self._open_kind(seat, t))
        if self.pile_empty_at_start or (self.rules.dry_wall_at_turn_start and not self.pile):
            return events + self._end_dry_wall(seat)
        self.last_discard = seat
        self._next_turn()
        events.append({"type": "turn", "seat": self.turn})
        return events

    def _discard_penalties(self, seat: int, t: int) -> list[Event]:
        events = []
        for points, reason, names_tile in self.rules.discard_penalties(
            self.table, self.okey, self.wrap, t
        ):
            extra = {"tile": format_tile(t)} if names_tile else {}
            events.append(self._penalty(seat, points, reason, **extra))
        return events

    def _finish(self, seat: int, move: Mapping[str, Any]) -> list[Event]:
        if self.open_variant:
            raise MoveError("not_in_variant", "in open variants you finish by discarding")
        self._need_turn(seat)
        self._need_tile_taken()
        t = self._tile(move)
        rack = self.racks[seat]
        if t not in rack:
            raise MoveError("tile_not_in_rack", f"{format_tile(t)} is not in the rack")
        if len(rack) != 15:
            raise MoveError("wrong_tile_count", f"a finish needs 15 tiles, not {len(rack)}")
        rest = list(rack)
        rest.remove(t)
        pairs_allowed = self.rules.special_finishes
        groups = move.get("groups")
        if groups is not None:
            kind = self._declared_kind(rest, groups, pairs_allowed)
        else:
            found = finish_kind(rest, self.okey, self.wrap, pairs_allowed)
            if found is None:
                raise MoveError("not_a_finish", "the other 14 tiles are not runs and sets")
            kind = found
        rack.remove(t)
        self.discards[seat].append(t)
        self.acted[seat] = True
        events: list[Event] = [{"type": "discard", "seat": seat, "tile": format_tile(t)}]
        return events + self._end_finish(seat, t, kind)

    def _declared_kind(self, rest: list[int], groups: Any, pairs_allowed: bool) -> str:
        if not isinstance(groups, list) or not all(isinstance(g, list) for g in groups):
            raise MoveError("bad_move", "groups is a list of tile lists")
        melds: list[Meld] = []
        try:
            for g in groups:
                melds.append(
                    read_pair(g, self.okey) if len(g) == 2 else read_meld(g, self.okey, self.wrap)
                )
        except MeldError as exc:
            if exc.code == "bad_tile":
                raise MoveError("bad_tile", exc.message) from exc
            # The declared arrangement is not runs and sets (or pairs): no finish.
            raise MoveError("not_a_finish", exc.message, exc.code) from exc
        declared = Counter(t for m in melds for t in m.tiles)
        if declared != Counter(rest):
            held = Counter(self.racks[self.turn])
            if any(held[t] < k for t, k in declared.items()):
                raise MoveError("tile_not_in_rack", "a grouped tile is not in the rack")
            raise MoveError(
                "not_a_finish", "the groups must hold exactly the 14 kept tiles", "bad_groups"
            )
        kinds = {m.kind for m in melds}
        if kinds == {PAIR}:
            if not pairs_allowed or len(melds) != 7:
                raise MoveError("not_a_finish", "a pairs finish is seven pairs (classic only)")
            base = "pairs"
        elif PAIR in kinds:
            raise MoveError("not_a_finish", "runs and sets, or seven pairs, not both")
        else:
            base = "normal"
        if pairs_allowed and one_colour(rest, self.okey):
            return "sequential_colour" if all_numbers(rest, self.okey) else "colour"
        return base

    def _open_kind(self, seat: int, t: int) -> str:
        if self.is_wild(t):
            return "okey"
        if self.opened[seat] == "pairs":
            return "pairs"
        return "normal"

    # --- table plays (open variants)
    def _need_table_turn(self, seat: int) -> None:
        if not self.open_variant:
            raise MoveError("not_in_variant", "nothing goes on the table in this variant")
        self._need_turn(seat)
        self._need_tile_taken()

    def _read_melds(self, raw: Any) -> list[Meld]:
        if not isinstance(raw, list) or not raw or not all(isinstance(m, list) for m in raw):
            raise MoveError("bad_move", "melds is a list of tile lists")
        out = []
        for tokens in raw:
            try:
                out.append(read_meld(tokens, self.okey, self.wrap))
            except MeldError as exc:
                group = [str(t) for t in tokens]
                message = f"{' '.join(group)}: {exc.message}"
                raise MoveError("invalid_meld", message, exc.code, group) from exc
        return out

    def _read_pairs(self, raw: Any) -> list[Meld]:
        if not isinstance(raw, list) or not raw or not all(isinstance(m, list) for m in raw):
            raise MoveError("bad_move", "pairs is a list of two-tile lists")
        out = []
        for tokens in raw:
            try:
                out.append(read_pair(tokens, self.okey))
            except MeldError as exc:
                group = [str(t) for t in tokens]
                message = f"{' '.join(group)}: {exc.message}"
                raise MoveError("invalid_pair", message, exc.code, group) from exc
        return out

    def _put_on_table(self, seat: int, owner: int, melds: list[Meld]) -> list[int]:
        tiles = [t for m in melds for t in m.tiles]
        self._remove(seat, tiles)
        ids = []
        for m in melds:
            m.id = len(self.table)
            m.owner = owner
            m.extra["laid_by"] = seat
            self.table.append(m)
            ids.append(m.id)
        self._mark_taken_used(seat, tiles)
        return ids

    def _check_in_rack(self, seat: int, tiles: Sequence[int]) -> None:
        have = Counter(self.racks[seat])
        for t, k in Counter(tiles).items():
            if have[t] < k:
                raise MoveError("tile_not_in_rack", f"{format_tile(t)} is not in the rack")

    def _open(self, seat: int, move: Mapping[str, Any]) -> list[Event]:
        self._need_table_turn(seat)
        if self.opened[seat]:
            raise MoveError("already_opened", "already opened; lay further melds with 'lay'")
        if ("melds" in move) == ("pairs" in move):
            raise MoveError("bad_move", "open with either melds or pairs")
        if "melds" in move:
            melds = self._read_melds(move["melds"])
            tiles = [t for m in melds for t in m.tiles]
            self._check_in_rack(seat, tiles)
            self._keep_one(seat, len(tiles))
            self._need_taken_in_opening(tiles)
            total = sum(m.value(self.okey) for m in melds)
            bar = self.opening_bar()
            if total < bar:
                if not self.rules.opens_below_bar(self.options, len(self.racks[seat]), len(tiles)):
                    raise MoveError("below_opening_bar", f"melds total {total}; {bar} needed")
                self.must_finish = seat
            ids = self._put_on_table(seat, seat, melds)
            self.opened[seat] = "melds"
            self.best_melds_opening = max(self.best_melds_opening, total)
            kind, extra = "melds", {"total": total}
        else:
            melds = self._read_pairs(move["pairs"])
            needed = self.pairs_needed()
            if len(melds) < needed:
                raise MoveError("too_few_pairs", f"{len(melds)} pairs; {needed} needed")
            tiles = [t for m in melds for t in m.tiles]
            self._check_in_rack(seat, tiles)
            self._keep_one(seat, len(tiles))
            self._need_taken_in_opening(tiles)
            ids = self._put_on_table(seat, seat, melds)
            self.opened[seat] = "pairs"
            self.best_pairs_opening = max(self.best_pairs_opening, len(melds))
            kind, extra = "pairs", {"pairs": len(melds)}
        self.opened_turn[seat] = self.turn_index
        events: list[Event] = [
            {
                "type": "open",
                "seat": seat,
                "with": kind,
                "melds": [self.table[i].to_json() for i in ids],
                **extra,
            }
        ]
        if self.rules.void_on_fourth_pairs and self.opened.count("pairs") == 4:
            return events + self._end_void()
        return events

    def _need_taken_in_opening(self, tiles: Sequence[int]) -> None:
        """Where the rules say so, a seat that took the discard before opening (``open`` is
        only ever an unopened seat's move) opens with it."""
        taken = self.taken
        if not self.rules.take_into_opening or not taken or taken["used"]:
            return
        if taken["tile"] not in tiles:
            raise MoveError(
                "taken_tile_not_used",
                f"the taken {format_tile(taken['tile'])} must be in the opening",
            )

    def _lay(self, seat: int, move: Mapping[str, Any]) -> list[Event]:
        self._need_table_turn(seat)
        if not self.opened[seat]:
            raise MoveError("not_opened", "open first")
        if ("melds" in move) == ("pairs" in move):
            raise MoveError("bad_move", "lay either melds or pairs")
        events: list[Event] = []
        if "melds" in move:
            if self.opened[seat] == "pairs":
                raise MoveError("pairs_only", "a seat that opened with pairs lays only pairs")
            melds = self._read_melds(move["melds"])
            owner = seat
        else:
            if self.opened[seat] == "melds" and not (
                self.rules.melds_players_lay_pairs and "pairs" in self.opened
            ):
                raise MoveError("melds_only", "a seat that opened with melds cannot lay pairs")
            melds = self._read_pairs(move["pairs"])
            owner = move.get("onto", seat)
            if owner is None:
                owner = seat
            if isinstance(owner, bool) or not isinstance(owner, int):
                raise MoveError("bad_move", "onto is a seat number")
            if not 0 <= owner < self.players:
                raise MoveError("bad_seat", f"no seat {owner}")
            if owner != seat:
                if not self.rules.pairs_onto_rows:
                    raise MoveError("not_in_variant", "pairs go onto other rows in gobek17 only")
                if self.opened[owner] != "pairs":
                    raise MoveError("bad_target", f"seat {owner} has no pairs row")
        tiles = [t for m in melds for t in m.tiles]
        self._check_in_rack(seat, tiles)
        self._keep_one(seat, len(tiles))
        ids = self._put_on_table(seat, owner, melds)
        events.append(
            {
                "type": "lay",
                "seat": seat,
                "owner": owner,
                "melds": [self.table[i].to_json() for i in ids],
            }
        )
        if owner != seat and not self.partners(seat, owner):
            points = self.rules.pairs_onto_penalty(self, melds)
            if points:
                events.append(self._penalty(owner, points, "pair_added", by=seat))
        return events

    def _add(self, seat: int, move: Mapping[str, Any]) -> list[Event]:
        self._need_table_turn(seat)
        if not self.opened[seat]:
            raise MoveError("not_opened", "open first")
        if self.opened[seat] == "pairs" and not self.rules.pairs_players_add:
            raise MoveError("pairs_only", "a seat that opened with pairs cannot add tiles")
        m = self.meld(move.get("meld"))
        raw = move.get("tile")
        if not isinstance(raw, str):
            raise MoveError("bad_move", "'tile' is a tile such as R5")
        try:
            t, stated = parse_token(raw)
        except TileError as exc:
            raise MoveError("bad_tile", str(exc)) from exc
        if t not in self.racks[seat]:
            raise MoveError("tile_not_in_rack", f"{format_tile(t)} is not in the rack")
        wild = self.is_wild(t)
        if stated is not None and not wild:
            raise MoveError(
                "invalid_meld",
                f"{raw}: only a wild okey may say what it stands for",
                "suffix_on_real_tile",
            )
        ident = None if wild else (self.okey if t == FAKE else t)
        # A wild okey with ":X" goes where the real X would; without it, anywhere it fits.
        fit = stated if wild and stated is not None else ident
        ends = m.ends_for(fit, self.wrap) if m.kind != PAIR else []
        if not ends:
            raise MoveError("tile_does_not_fit", f"{format_tile(t)} does not fit meld {m.id}")
        end = move.get("end")
        if end is not None:
            if end not in ("low", "high"):
                raise MoveError("bad_move", "end is low or high")
            if m.kind == RUN and end not in ends:
                raise MoveError("tile_does_not_fit", f"{format_tile(t)} does not fit at {end}")
        if m.kind == SET:
            end = "set"
        elif end is None:
            end = ("high" if "high" in ends else ends[0]) if fit is None else ends[0]
        self._keep_one(seat, 1)
        at = f"{m.id}:{end}"
        limit = int(self.options.get(self.rules.add_limit_option) or 0)
        if limit and self.added.get(at, 0) >= limit:
            raise MoveError("add_limit", f"at most {limit} tiles a turn on one end of a meld")
        self.racks[seat].remove(t)
        index = m.add(t, wild, fit if m.kind == SET else ident, str(end))
        self.added[at] = self.added.get(at, 0) + 1
        self._mark_taken_used(seat, [t])
        events: list[Event] = [
            {"type": "add", "seat": seat, "meld": m.id, "tile": format_tile(t), "end": end}
        ]
        points = self.rules.feed_penalty(self, m, index)
        if points and not self.partners(seat, m.owner):
            events.append(self._penalty(m.owner, points, "fed", by=seat, tile=format_tile(t)))
        return events

    def _swap(self, seat: int, move: Mapping[str, Any]) -> list[Event]:
        if not self.rules.swap:
            raise MoveError("not_in_variant", "the okey swap exists in okey51 and okey101 only")
        self._need_table_turn(seat)
        if not self.opened[seat]:
            raise MoveError("not_opened", "open first")
        if self.opened[seat] == "pairs" and not self.rules.pairs_players_add:
            raise MoveError("pairs_only", "a seat that opened with pairs cannot swap")
        m = self.meld(move.get("meld"))
        t = self._tile(move)
        if t not in self.racks[seat]:
            raise MoveError("tile_not_in_rack", f"{format_tile(t)} is not in the rack")
        if self.is_wild(t) or (m.kind == PAIR and not self.rules.swap_in_pairs):
            raise MoveError("swap_mismatch", "give the real tile a wild okey stands for")
        ident = self.okey if t == FAKE else t
        index = m.swap_index(ident)
        if index < 0:
            raise MoveError("swap_mismatch", f"no wild okey in meld {m.id} stands for that tile")
        self.racks[seat].remove(t)
        okey_tile = m.swap(index, t, ident)
        self.racks[seat].append(okey_tile)
        self._mark_taken_used(seat, [t])
        events: list[Event] = [{"type": "swap", "seat": seat, "meld": m.id, "tile": format_tile(t)}]
        points = self.rules.swap_penalty(self, ident)
        if points and not self.partners(seat, m.owner):
            events.append(self._penalty(m.owner, points, "swap", by=seat, tile=format_tile(t)))
        return events

    # --- classic: showing the indicator
    def _show_indicator(self, seat: int, move: Mapping[str, Any]) -> list[Event]:
        if not self.rules.indicator_show:
            raise MoveError("not_in_variant", "the indicator show exists in classic only")
        if self.indicator_shown:
            raise MoveError("indicator_already_shown", "the indicator was shown this hand")
        if self.acted[seat]:
            raise MoveError("indicator_too_late", "show it before your first draw or discard")
        if self.indicator not in self.racks[seat]:
            raise MoveError("indicator_not_held", "you do not hold the indicator's twin")
        self.indicator_shown = True
        events: list[Event] = [{"type": "indicator_shown", "seat": seat}]
        for other in range(self.players):
            if other != seat:
                events.append(self._penalty(other, -1, "indicator", by=seat))
        return events

    # ------------------------------------------------------------------ ending
    def _end_finish(self, seat: int, t: int, kind: str) -> list[Event]:
        kind, doublings = self.rules.finish(self, seat, t, kind)
        self.result = {
            "over": True,
            "ending": "finish",
            "finisher": seat,
            "kind": kind,
            "tile": format_tile(t),
            "doublings": doublings,
            "multiplier": self.rules.multiplier(doublings),
            "drew_last_tile": self.drew_last_tile,
        }
        return self._close()

    def _end_dry_wall(self, seat: int) -> list[Event]:
        self.result = {
            "over": True,
            "ending": "dry_wall",
            "finisher": None,
            "kind": None,
            "doublings": [],
            "multiplier": 1,
        }
        return self._close()

    def _end_void(self) -> list[Event]:
        """The hand ends void (okey101's fourth pairs opening): nobody scores, its penalties
        are dropped, and the match plays it again."""
        self.penalties = []
        self.must_finish = None
        self.result = {
            "over": True,
            "ending": "void",
            "finisher": None,
            "kind": None,
            "doublings": [],
            "multiplier": 1,
        }
        return self._close()

    def _close(self) -> list[Event]:
        self.taken = None
        self.has_tile = False
        self.must_finish = None
        hand_scores = scoring.hand_scores(self)
        scores = [b + h for b, h in zip(self.scores_before, hand_scores, strict=True)]
        self.result["hand_scores"] = hand_scores
        self.result["scores"] = scores
        if self.options.get("partners"):
            self.result["team_scores"] = scoring.team_scores(scores)
        over, winners = scoring.match_outcome(self, scores)
        self.result["match_over"] = over
        self.result["winners"] = winners
        return [
            {
                "type": "hand_over",
                "ending": self.result["ending"],
                "finisher": self.result["finisher"],
                "kind": self.result["kind"],
                "hand_scores": hand_scores,
                "scores": scores,
                "seed": self.seed,
            }
        ]

    # ------------------------------------------------------------------ views and data
    def penalty_sums(self) -> list[int]:
        """Each seat's penalty points of the hand so far."""
        sums = [0] * self.players
        for p in self.penalties:
            sums[p["seat"]] += int(p["points"])
        return sums

    def penalty_list(self) -> list[dict[str, Any]]:
        return [
            {"seat": p["seat"], "points": p["points"], "reason": p["reason"]}
            for p in self.penalties
        ]

    def every_tile(self) -> Counter[int]:
        """Every tile of the hand wherever it lies (racks, pile, discards, the table's melds,
        the indicator): a hand always holds the whole set, ``Counter(physical_tiles())``."""
        tiles: Counter[int] = Counter(self.pile)
        for rack in self.racks:
            tiles.update(rack)
        for discards in self.discards:
            tiles.update(discards)
        for meld in self.table:
            tiles.update(meld.tiles)
        tiles[self.indicator] += 1
        return tiles

    def public_view(self) -> dict[str, Any]:
        """What everyone may see (other seats, spectators): exactly :data:`PUBLIC_KEYS`.

        Rack sizes but never a rack's tiles, the pile's size but never its order, never the taken
        tile, and the seed only once the hand is over (its commitment always)."""
        return {
            "variant": self.variant,
            "options": dict(self.options),
            "players": self.players,
            "number": self.number,
            "starter": self.starter,
            "turn": self.turn,
            "rack_counts": [len(r) for r in self.racks],
            "indicator": format_tile(self.indicator),
            "okey": format_tile(self.okey),
            "pile_size": len(self.pile),
            "discards": [[format_tile(t) for t in d] for d in self.discards],
            "table": [{**m.to_json(), "state": m.to_state()} for m in self.table],
            "opened": list(self.opened),
            "opening_bar": self.opening_bar() if self.open_variant else None,
            "pairs_needed": self.pairs_needed() if self.open_variant else None,
            "penalties": self.penalty_list(),
            "scores_before": list(self.scores_before),
            "indicator_shown": self.indicator_shown,
            "result": copy.deepcopy(self.result),
            "commitment": self.commitment,
            "seed": self.seed if self.over else None,
            "over": self.over,
            # Whether the seat on turn is to draw or to discard is seen by everyone at the table.
            "phase": "over" if self.over else ("discard" if self.has_tile else "draw"),
            # Every rack is shown once the hand is over, never before.
            "revealed": [[format_tile(t) for t in r] for r in self.racks] if self.over else None,
            # What each seat took from the side, as everyone saw it; a taken tile still waiting
            # to reach the table is left out, as the public view never names it.
            "took": self.public_took(),
        }

    def public_took(self) -> list[list[str]]:
        """Per seat, the discards it took from the side this hand, oldest first, without a
        taken tile that still waits to go on the table or back."""
        out = []
        for seat in range(self.players):
            took = list(self.took[seat]) if len(self.took) == self.players else []
            if self.taken and not self.taken["used"] and seat == self.turn and took:
                took.pop()
            out.append([format_tile(t) for t in took])
        return out

    def rack(self, seat: int) -> list[str]:
        """``seat``'s rack in notation (private to the seat, as :meth:`view` is)."""
        return [format_tile(t) for t in self.racks[seat]]

    def view(self, seat: int) -> dict[str, Any]:
        """Exactly what ``seat`` may know: :meth:`public_view` plus :data:`PRIVATE_KEYS`, its own
        rack and turn state; never another rack or the pile order."""
        if not 0 <= seat < self.players:
            raise MoveError("bad_seat", f"no seat {seat}")
        on_turn = seat == self.turn
        return {
            **self.public_view(),
            "seat": seat,
            "has_tile": self.has_tile if on_turn else None,
            "must_draw": self.must_draw if on_turn else False,
            # An opening below the bar: the seat's next move is its finishing discard.
            "must_finish": self.must_finish == seat,
            "taken": (
                format_tile(self.taken["tile"])
                if self.taken and not self.taken["used"] and on_turn
                else None
            ),
            "rack": self.rack(seat),
            "can_take": self.last_discard is not None
            and on_turn
            and self.last_discard == self.previous(seat)
            and not self.has_tile
            and not self.must_draw,
            "acted": self.acted[seat],
        }

    def to_state(self) -> dict[str, Any]:
        """The whole state as JSON-ready data (the server's snapshot; never sent to players)."""
        return {
            "variant": self.variant,
            "options": dict(self.options),
            "players": self.players,
            "starter": self.starter,
            "number": self.number,
            "voided": self.voided,
            "indicator": self.indicator,
            "okey": self.okey,
            "seed": self.seed,
            "commitment": self.commitment,
            "racks": [list(r) for r in self.racks],
            "pile": list(self.pile),
            "discards": [list(d) for d in self.discards],
            "took": [list(t) for t in self.took],
            "last_discard": self.last_discard,
            "turn": self.turn,
            "turn_index": self.turn_index,
            "has_tile": self.has_tile,
            "pile_empty_at_start": self.pile_empty_at_start,
            "drew_last_tile": self.drew_last_tile,
            "taken": dict(self.taken) if self.taken else None,
            "must_draw": self.must_draw,
            "must_finish": self.must_finish,
            "added": dict(self.added),
            "acted": list(self.acted),
            "indicator_shown": self.indicator_shown,
            "opened": list(self.opened),
            "opened_turn": list(self.opened_turn),
            "table": [m.to_state() for m in self.table],
            "best_melds_opening": self.best_melds_opening,
            "best_pairs_opening": self.best_pairs_opening,
            "penalties": [dict(p) for p in self.penalties],
            "scores_before": list(self.scores_before),
            "result": copy.deepcopy(self.result),
            "log": copy.deepcopy(self.log),
            "initial": copy.deepcopy(self.initial),
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any], *, copy_data: bool = True) -> Hand:
        """A hand from :meth:`to_state` data (copied unless ``copy_data`` is False)."""
        h = cls()
        data = copy.deepcopy(dict(state)) if copy_data else dict(state)
        table = data.pop("table")
        for key, value in data.items():
            setattr(h, key, value)
        h.table = [Meld.from_state(m) for m in table]
        return h

    def copy(self) -> Hand:
        """An independent copy: moves played on it leave this hand as it is."""
        h = Hand.from_state(self._checkpoint(), copy_data=False)
        h.log = list(self.log)  # entries are never changed, only appended
        h.initial = self.initial  # the deal never changes
        return h

    def replay(self) -> Hand:
        """A fresh hand from this hand's deal with every accepted move applied again."""
        fresh = Hand.new(
            self.variant,
            [self.initial["racks"][(self.starter + k) % self.players] for k in range(self.players)],
            self.initial["pile"],
            self.indicator,
            self.options,
            starter=self.starter,
            scores=self.scores_before,
            number=self.number,
            seed=self.seed,
            voided=self.voided,
        )
        logged = [
            Recorded(entry["seat"], {k: v for k, v in entry.items() if k != "seat"})
            for entry in self.log
        ]
        done = replay_moves(fresh, logged)
        if done.error is not None:
            entry = self.log[done.played]
            raise ValueError(f"replay refused a logged move: {entry} ({done.error})")
        return done.hand


__all__ = [
    "ACTIONS",
    "MOVE_FIELDS",
    "PRIVATE_KEYS",
    "PUBLIC_KEYS",
    "Hand",
    "MoveResult",
    "event_for",
    "normalise_move",
]
