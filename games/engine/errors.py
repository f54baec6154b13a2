"""Every error code the engine returns, in one place.

A refused move returns one of these codes (stable, snake_case) and a sentence for people; the
state is unchanged. Meld problems come back as ``invalid_meld`` (or ``invalid_pair``) with the
precise meld code as ``detail`` and the group at fault as ``tiles``.
"""

from __future__ import annotations

MOVE_ERRORS: dict[str, str] = {
    "bad_move": "the move is malformed (unknown action or missing/invalid fields)",
    "bad_tile": "a tile is not written in RULES.md notation",
    "bad_seat": "no such seat at this table",
    "hand_over": "the hand has ended; no more moves",
    "not_your_turn": "it is another seat's turn",
    "not_in_variant": "this action does not exist in this variant",
    "tile_not_in_rack": "the tile is not in the seat's rack",
    "must_draw_first": "take a tile (draw or take) before this",
    "already_drew": "the seat has already taken a tile this turn",
    "no_discard_to_take": "there is no discard of the previous seat to take",
    "must_draw_after_give_back": "after giving a tile back the seat must draw",
    "nothing_to_give_back": "no tile taken this turn is waiting to be given back",
    "taken_tile_not_used": "the taken discard must go on the table this turn (or be given back)",
    "not_a_finish": "the rack cannot be arranged into a finish",
    "wrong_tile_count": "the seat does not hold the number of tiles this action needs",
    "must_keep_a_tile": "a seat must always keep one tile to discard",
    "not_opened": "the seat has not opened yet",
    "already_opened": "the seat has already opened; use lay",
    "below_opening_bar": "the melds do not reach the opening bar",
    "too_few_pairs": "not enough pairs to open with pairs",
    "pairs_only": "a seat that opened with pairs may only lay pairs (no runs or sets)",
    "melds_only": "a seat that opened with melds may not lay pairs (okey101: until a seat opens "
    "with pairs)",
    "invalid_meld": "a meld is not a valid run or set (see detail)",
    "invalid_pair": "two tiles that are not a pair",
    "no_such_meld": "no meld with that id on the table",
    "tile_does_not_fit": "the tile cannot be added to that meld",
    "swap_mismatch": "the given tile is not what a wild okey in that meld stands for",
    "indicator_not_held": "the seat does not hold the indicator's twin",
    "indicator_too_late": "the indicator can be shown only before the seat's first action",
    "indicator_already_shown": "the indicator has already been shown this hand",
    "bad_target": "pairs can be laid onto another seat's row only if it opened with pairs",
    "add_limit": "no more tiles this turn on that end of that meld (the table's add_limit)",
    "must_finish": "after an opening below the bar the seat's next move is its finishing discard",
}

MELD_ERRORS: dict[str, str] = {
    "meld_too_short": "a run or set has at least 3 tiles",
    "meld_too_long": "a set has at most 4 tiles and a run at most 13",
    "all_wild": "a meld needs at least one tile that is not a wild okey",
    "suffix_on_real_tile": "only a wild okey may say what it stands for",
    "mixed_colours": "a run is of one colour",
    "not_consecutive": "a run's numbers are consecutive, each once",
    "thirteen_one_two": "13-1-2 is never a run",
    "wrap_not_allowed": "1 after 13 is not allowed at this table (wrap_13_1 off)",
    "mixed_numbers": "a set is of one number",
    "repeated_colour": "a set's tiles are all of different colours",
    "not_a_meld": "neither a run nor a set",
    "suffix_mismatch": "a wild okey's stated tile does not fit the meld",
    "not_a_pair": "a pair is two tiles of the same identity (a wild okey pairs with any)",
    "bad_groups": "a finish's groups do not hold exactly the 14 kept tiles",
}

ALL_ERRORS: dict[str, str] = {**MOVE_ERRORS, **MELD_ERRORS}


class MeldError(ValueError):
    """A meld that is not valid; ``code`` is one of :data:`MELD_ERRORS`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class MoveError(ValueError):
    """A refused move; ``code`` is one of :data:`MOVE_ERRORS`. ``tiles``: the group of tiles
    at fault, as the move wrote it (a meld or pair that is not one)."""

    def __init__(
        self,
        code: str,
        message: str,
        detail: str | None = None,
        tiles: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail
        self.tiles = tiles
