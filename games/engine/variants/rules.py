"""What a variant is, as data and a few small decisions: the :class:`Rules` every variant's
module fills in (``games/engine/variants/<key>.py``) and :class:`~games.engine.hand.Hand`,
:mod:`~games.engine.scoring` and :mod:`~games.engine.legal` ask, rather than naming the variant.

A field here is a rule of RULES.md that differs between variants; its default is the common
case of §1. A method is a rule that needs the hand to decide (a penalty, a doubling, a score).
docs/engine.md ("Adding a variant") walks through writing one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..melds import Meld
from ..tiles import FAKE, number_of

if TYPE_CHECKING:
    from ..hand import Hand

TIMERS = (0, 15, 30, 60)
_BOOL = (False, True)


@dataclass(frozen=True)
class Choice:
    """One table option: its default, and the values allowed (``allowed``, or any whole number
    from ``low`` to ``high`` when ``allowed`` is None)."""

    default: Any
    allowed: tuple[Any, ...] | None = None  # None: any int in range
    low: int = 0
    high: int = 0


# The options several variants share, as RULES.md gives them.
BOOL = _BOOL
ASSISTED = Choice(False, _BOOL)
TIMER = Choice(30, TIMERS)
PARTNERS = Choice(False, _BOOL)

# How an opening bar grows during a hand: never; always (each opening must beat the best so
# far); or when the table's ``doubling`` option is on.
NEVER, ALWAYS, WITH_DOUBLING = "never", "always", "doubling"


class Rules:
    """One variant's rules. Subclasses set the fields and override the methods that differ."""

    key: str = ""
    # Numbers of players the variant is played by.
    players: tuple[int, ...] = (4,)
    # Table options, with their defaults (RULES.md); anything else is refused.
    options: Mapping[str, Choice] = {}
    # The options regulars choose before they sit down ("Play now", "Practice with bots"):
    # each has a short list of values.
    quick_options: tuple[str, ...] = ("assisted",)
    # Tiles dealt: the starter's rack, every other rack.
    rack_sizes: tuple[int, int] = (15, 14)
    # Whether 1 may follow 13 in a run, when the variant fixes it (else the option
    # ``wrap_13_1`` says, on by default).
    wrap_13_1: bool | None = None

    # --- closed hands (classic, duz): a seat finishes by showing a whole arranged rack
    open_table: bool = False
    # A seat may show the indicator's twin for points (classic).
    indicator_show: bool = False
    # Seven pairs and the colour finishes end a closed hand (classic).
    special_finishes: bool = False
    # Pairs count at all: a seven-pairs finish or a pairs opening.
    has_pairs: bool = True
    # The losers pay what their racks leave outside melds (duz), so the bots weigh it.
    leftover_scores: bool = False

    # --- open tables: openings
    melds_bar: int = 51
    melds_raise: str = NEVER
    pairs_bar: int = 5
    pairs_raise: str = NEVER

    # --- open tables: what an opened seat may do
    # The okey swap: give the real tile a table okey stands for, take the okey.
    swap: bool = False
    # Pair rows where a swap may take the okey (a pair's wild standing for its partner).
    swap_in_pairs: bool = False
    # A pairs player may lay a pair onto another pairs player's row.
    pairs_onto_rows: bool = False
    # A seat that opened with pairs may also add tiles to runs and sets and swap okeys.
    pairs_players_add: bool = False
    # A seat that opened with melds may lay pairs once any seat has opened with pairs.
    melds_players_lay_pairs: bool = False
    # An unopened seat that took the previous discard must put it in the opening move itself.
    take_into_opening: bool = False
    # Option naming how many tiles one turn may add to one end of one run ("" : no limit).
    add_limit_option: str = ""
    # Option naming the cost of giving a taken tile back ("": free).
    give_back_penalty_option: str = ""
    # Giving a taken tile back cancels the thrower's penalty for the take (okey51).
    give_back_cancels_take: bool = False
    # An open below the bar that leaves one tile (to be thrown at once) is accepted, when the
    # table's option of that name is on ("": never).
    from_hand_option: str = ""
    # Only a seat that has opened may finish (okey101).
    finish_needs_opening: bool = False
    # The fourth pairs opening of a hand ends it as void (okey101).
    void_on_fourth_pairs: bool = False
    # The hand ends as a dry wall when a turn would start on an empty pile (okey101), instead
    # of §1's rule (a seat on an empty pile may still take the discard).
    dry_wall_at_turn_start: bool = False

    # --- the match
    # Scores are points, the highest total wins (classic); else penalty points, lowest wins.
    higher_is_better: bool = False

    # ------------------------------------------------------------------ options
    def default_options(self) -> dict[str, Any]:
        return {k: c.default for k, c in self.options.items()}

    def wrap(self, options: Mapping[str, Any]) -> bool:
        """Whether 12-13-1 is a run at a table with ``options``."""
        if self.wrap_13_1 is not None:
            return self.wrap_13_1
        return bool(options.get("wrap_13_1", True))

    # ------------------------------------------------------------------ openings
    def opening_bar(self, hand: Hand) -> int:
        """The total a melds opening needs now (before ``from_hand_option``)."""
        if self._raises(self.melds_raise, hand.options) and hand.best_melds_opening:
            return max(self.melds_bar, hand.best_melds_opening + 1)
        return self.melds_bar

    def opens_below_bar(self, options: Mapping[str, Any], rack_size: int, laid: int) -> bool:
        """Whether an opening below the bar that lays ``laid`` of a ``rack_size``-tile rack is
        accepted: it leaves one tile to throw, and the table's ``from_hand_option`` is on."""
        option = self.from_hand_option
        return bool(option and options.get(option)) and rack_size - laid == 1

    def pairs_needed(self, hand: Hand) -> int:
        """How many pairs a pairs opening needs now."""
        if self._raises(self.pairs_raise, hand.options) and hand.best_pairs_opening:
            return max(self.pairs_bar, hand.best_pairs_opening + 1)
        return self.pairs_bar

    @staticmethod
    def _raises(how: str, options: Mapping[str, Any]) -> bool:
        return how == ALWAYS or (how == WITH_DOUBLING and bool(options.get("doubling")))

    # ------------------------------------------------------------------ penalties in the hand
    def take_penalty(self, hand: Hand, t: int) -> int:
        """Points the thrower scores when the next seat takes ``t`` (0: none)."""
        return 0

    def give_back_penalty(self, hand: Hand) -> int:
        """Points a seat scores for giving a taken tile back."""
        if not self.give_back_penalty_option:
            return 0
        return int(hand.options.get(self.give_back_penalty_option) or 0)

    def discard_penalties(
        self, table: Sequence[Meld], okey: int, wrap: bool, t: int
    ) -> list[tuple[int, str, bool]]:
        """The penalties for throwing ``t`` (a discard that does not finish) onto ``table``, the
        hand's okey being ``okey``: (points, reason, whether the event names the tile). The bots
        ask it too, from their view."""
        return []

    def feed_penalty(self, hand: Hand, meld: Meld, index: int) -> int:
        """Points the meld's owner scores when another side adds the tile now at ``index``."""
        return 0

    def swap_penalty(self, hand: Hand, identity: int) -> int:
        """Points the meld's owner scores when another side swaps out its okey for ``identity``."""
        return 0

    def pairs_onto_penalty(self, hand: Hand, pairs: Sequence[Meld]) -> int:
        """Points a pairs row's owner scores when another side lays ``pairs`` onto it."""
        return 0

    # ------------------------------------------------------------------ the end of a hand
    def finish(self, hand: Hand, seat: int, t: int, kind: str) -> tuple[str, list[str]]:
        """The finish's kind and doublings, when ``seat`` ends the hand throwing ``t`` (``kind``:
        what the rack made of it: normal, pairs, colour, ... in closed variants; in open ones
        okey, pairs or normal)."""
        return kind, []

    def multiplier(self, doublings: Sequence[str]) -> int:
        """What the doublings multiply the end-of-hand table by: 2 for each."""
        return 1 << len(set(doublings))

    def base_scores(self, hand: Hand) -> list[int]:
        """Each seat's score for the end of the hand, before the penalties during it: the sum
        of its :meth:`score_parts`."""
        return [sum(int(p["points"]) for p in parts) for parts in self.score_parts(hand)]

    def score_parts(self, hand: Hand) -> list[list[dict[str, Any]]]:
        """Each seat's score for the end of the hand as its parts, so that a scoreboard can
        say where every point came from: dicts with ``item`` (``finished``, ``lost_to_finish``,
        ``last_tile``, ``never_opened``, ``tiles_left``, ``okey_held``, ``partner_finished``,
        ``sequential_colour``) and ``points``, and what the item needs to be told (``kind``,
        ``sum``, ``factor``, ``multiplier``, ``count``, ``pairs``). The points of a seat's parts
        add up to its score; a seat with none scores 0."""
        raise NotImplementedError

    # ------------------------------------------------------------------ the match
    def start_score(self, options: Mapping[str, Any]) -> int:
        """Every seat's running score before the first hand."""
        return 0

    def planned_hands(self, options: Mapping[str, Any]) -> int | None:
        """How many hands the match lasts, when its length is a number of hands."""
        return int(options.get("hands", 1))

    def idle_options(self, options: Mapping[str, Any]) -> frozenset[str]:
        """Options that make no difference under the others."""
        return frozenset()

    def finish_worth(self, options: Mapping[str, Any], kind: str) -> int:
        """What each other seat loses for a closed finish of ``kind`` before doublings (the
        bots weigh finishes by it); 1 where the loss is not a fixed price."""
        return 1

    def match_over(self, hand: Hand, scores: Sequence[int]) -> bool:
        """Whether the match ends with ``hand`` (its totals ``scores``)."""
        planned = self.planned_hands(hand.options)
        return planned is None or hand.number - hand.voided >= planned

    def decisive_winners(self, hand: Hand) -> list[int] | None:
        """Winners that the hand's ending settles whatever the totals (a sequential colour
        finish; a duz dry wall has none): None when the totals decide."""
        return None


def rack_sum(hand: Hand, seat: int, wild_value: int) -> int:
    """The numbers left on ``seat``'s rack, a wild okey counting ``wild_value`` and a fake the
    okey's number."""
    total = 0
    for t in hand.racks[seat]:
        if t == hand.okey:
            total += wild_value
        else:
            total += number_of(hand.okey if t == FAKE else t)
    return total
