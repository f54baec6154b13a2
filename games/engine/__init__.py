"""The Okey rules engine: pure Python, no Django, deterministic given a seed.

The public API, in the spirit of python-chess:

- tiles: :func:`parse_tile`, :func:`format_tile`, :func:`okey_of`, :func:`deal`,
  :func:`new_seed`, :func:`commitment`, :data:`FAKE`;
- melds: :func:`read_meld`, :func:`read_pair`, :class:`Meld`;
- the solver: :mod:`games.engine.solver` (finishes, leftover, openings, pairs, workable tiles);
- a hand: :class:`Hand` (``play``, ``public_view``, ``view``, ``to_state``/``from_state``,
  ``replay``); ``public_view()`` is what everyone may see (exactly :data:`PUBLIC_KEYS`) and
  ``view(seat)`` adds that seat's :data:`PRIVATE_KEYS`; :class:`MoveResult` (``ok``, ``events``,
  ``move``: the move as the engine read it, see :func:`normalise_move`);
- what a seat may try now: :func:`legal_actions` (move kinds, from the seat's view) and
  :func:`meld_targets` (which rack tile may be added to or swapped on which table meld),
  :func:`weigh` (what groups of the rack are worth put on the table: the opening total);
- help for assisted tables: :func:`assist` (from the seat's view: the rack sorted into melds,
  feedable tiles, the workable discard, the best opening as a ready move);
- a hand's record played again: :func:`replay_moves` (:class:`Recorded` moves, a :class:`Replay`);
- a match over several hands: :class:`Match` (start scores, planned hands, dealing the next hand,
  recording one, ranking, running totals), and its rules one by one: :func:`start_scores`,
  :func:`planned_hands`, :func:`idle_options`, :func:`higher_is_better`, :func:`leaders`,
  :func:`ranking`, :func:`team_scores`, :func:`running_scores` (totals during a hand);
- variants and options: :data:`VARIANTS`, :data:`OPEN_VARIANTS`, :func:`is_open_variant`,
  :func:`has_indicator_show`, :func:`has_pairs`, :func:`default_options`, :func:`validate_options`,
  :func:`check_table`, :func:`team_of`;
- errors: :data:`MOVE_ERRORS`, :data:`MELD_ERRORS`;
- scenarios: :func:`run_scenario` (``python -m games.engine.scenario``).
"""

from .assist import assist
from .errors import ALL_ERRORS, MELD_ERRORS, MOVE_ERRORS, MeldError, MoveError
from .hand import (
    ACTIONS,
    MOVE_FIELDS,
    PRIVATE_KEYS,
    PUBLIC_KEYS,
    Hand,
    MoveResult,
    event_for,
    normalise_move,
)
from .legal import legal_actions, meld_targets, weigh
from .match import Match
from .melds import Meld, read_meld, read_pair
from .replay import Recorded, Replay, replay_moves
from .scoring import (
    finish_worth,
    higher_is_better,
    idle_options,
    leaders,
    planned_hands,
    ranking,
    running_scores,
    score_parts,
    start_scores,
    team_scores,
)
from .tiles import (
    FAKE,
    Deal,
    TileError,
    commitment,
    deal,
    format_tile,
    new_seed,
    okey_of,
    parse_tile,
)
from .variants import (
    OPEN_VARIANTS,
    VARIANTS,
    OptionsError,
    check_table,
    default_options,
    has_indicator_show,
    has_pairs,
    is_open_variant,
    quick_options,
    team_of,
    validate_options,
)


def run_scenario(scenario: dict[str, object]) -> dict[str, object]:
    """Run one scenario of SCENARIOS.md (see :mod:`games.engine.scenario`)."""
    from .scenario import run_scenario as run

    return run(scenario)


__all__ = [
    "ACTIONS",
    "ALL_ERRORS",
    "FAKE",
    "MELD_ERRORS",
    "MOVE_ERRORS",
    "MOVE_FIELDS",
    "OPEN_VARIANTS",
    "PRIVATE_KEYS",
    "PUBLIC_KEYS",
    "VARIANTS",
    "Deal",
    "Hand",
    "Match",
    "Meld",
    "MeldError",
    "MoveError",
    "MoveResult",
    "OptionsError",
    "Recorded",
    "Replay",
    "TileError",
    "assist",
    "check_table",
    "commitment",
    "deal",
    "default_options",
    "event_for",
    "finish_worth",
    "format_tile",
    "higher_is_better",
    "idle_options",
    "is_open_variant",
    "quick_options",
    "has_indicator_show",
    "has_pairs",
    "leaders",
    "legal_actions",
    "meld_targets",
    "weigh",
    "new_seed",
    "normalise_move",
    "okey_of",
    "parse_tile",
    "planned_hands",
    "ranking",
    "read_meld",
    "read_pair",
    "replay_moves",
    "run_scenario",
    "running_scores",
    "score_parts",
    "start_scores",
    "team_of",
    "team_scores",
    "validate_options",
]
