"""What players read: refused moves and hand events in words, in the viewer's language.

The engine speaks in stable codes (``games.engine.errors``) and event dicts; these are the
translatable sentences the table shows for them. A code without a sentence here falls back to
the engine's English message.
"""

from __future__ import annotations

import math
from typing import Any

from django.utils.translation import get_language, gettext_lazy, ngettext, pgettext, pgettext_lazy
from django.utils.translation import gettext as _

from games.engine.errors import ALL_ERRORS

REFUSALS: dict[str, Any] = {
    "bad_move": gettext_lazy("That move is not understood."),
    "bad_tile": gettext_lazy("That is not a tile."),
    "bad_seat": gettext_lazy("There is no such seat at this table."),
    "hand_over": gettext_lazy("The hand is over."),
    "not_your_turn": gettext_lazy("It is not your turn."),
    "not_in_variant": gettext_lazy("This game has no such move."),
    "tile_not_in_rack": gettext_lazy("That tile is not on your rack."),
    "must_draw_first": gettext_lazy("Draw a tile (or take the discard) first."),
    "already_drew": gettext_lazy("You have already taken a tile this turn."),
    "no_discard_to_take": gettext_lazy("There is no discard to take."),
    "must_draw_after_give_back": gettext_lazy("You gave the tile back: now draw."),
    "nothing_to_give_back": gettext_lazy("There is no taken tile to give back."),
    "taken_tile_not_used": gettext_lazy(
        "Put the tile you took on the table first, or give it back."
    ),
    "not_a_finish": gettext_lazy("Your other tiles are not all in runs and sets yet."),
    "wrong_tile_count": gettext_lazy("You do not hold the right number of tiles for that."),
    "must_keep_a_tile": gettext_lazy("Keep one tile to throw."),
    "not_opened": gettext_lazy("Open first."),
    "already_opened": gettext_lazy("You have opened already: lay more melds instead."),
    "below_opening_bar": gettext_lazy("Those melds do not reach the opening total."),
    "too_few_pairs": gettext_lazy("Not enough pairs to open."),
    "pairs_only": gettext_lazy("You opened with pairs: you may lay only pairs."),
    "melds_only": gettext_lazy(
        "You opened with melds: you may lay pairs only once someone has opened with pairs."
    ),
    "invalid_meld": gettext_lazy("That is not a run or a set."),
    "invalid_pair": gettext_lazy("Those two tiles are not a pair."),
    "no_such_meld": gettext_lazy("That meld is not on the table."),
    "tile_does_not_fit": gettext_lazy("That tile does not fit that meld."),
    "swap_mismatch": gettext_lazy("No okey in that meld stands for that tile."),
    "indicator_not_held": gettext_lazy("You do not hold the indicator's twin."),
    "indicator_too_late": gettext_lazy("Show the indicator before your first move."),
    "indicator_already_shown": gettext_lazy("The indicator has been shown already."),
    "bad_target": gettext_lazy("That seat has no row of pairs."),
    "add_limit": gettext_lazy("No more tiles on that end of that meld this turn."),
    "must_finish": gettext_lazy("You opened below the bar: now throw your last tile to finish."),
    "stale_version": gettext_lazy("The table changed before your move arrived: try again."),
    "not_your_seat": gettext_lazy("That is not your seat."),
    "no_hand": gettext_lazy("No hand is being played."),
    "bad_layout": gettext_lazy("Your rack could not be saved: it was refreshed."),
    "offline": gettext_lazy("You are offline: the move was not sent."),
    "refused": gettext_lazy("That move was refused."),
    "not_seated": gettext_lazy("You have no seat at this table."),
    "no_pause": gettext_lazy("There is no hand to get ready for."),
    "no_match_over": gettext_lazy("There is no finished match to play again."),
    "match_in_progress": gettext_lazy("A match is being played at this table."),
    "played_this_match": gettext_lazy(
        "You played in this match already: its free seats go to someone new."
    ),
    "table_finished": gettext_lazy("This table has finished."),
    "seats_not_filled": gettext_lazy("Every seat needs a player or a bot before the match starts."),
    "sign_in": gettext_lazy("Sign in first."),
    "already_seated": gettext_lazy(
        "You already have a seat at another table. Leave it (or finish its match) first."
    ),
    "seat_taken": gettext_lazy("That seat is not free."),
    "not_host": gettext_lazy("Only the table's host may do that."),
    "no_bot": gettext_lazy("There is no bot on that seat."),
    "bad_bot": gettext_lazy("There is no bot of that level."),
    "player_elsewhere": gettext_lazy(
        "A player of this table now sits at another table: one of the two seats must be left first."
    ),
    "no_table": gettext_lazy("There is no such table."),
    "not_private": gettext_lazy("This table is public: it has no invite link."),
    # The table's chat (games.chat, actions.send_chat / mute_chat).
    "chat_off": gettext_lazy("Chat is off at this table."),
    "chat_empty": gettext_lazy("Write something first."),
    "chat_too_long": gettext_lazy("A message has at most 200 characters."),
    "chat_too_fast": gettext_lazy("You are sending messages too fast: wait a few seconds."),
    "chat_bad_canned": gettext_lazy("There is no such phrase."),
    "chat_mute_self": gettext_lazy("You cannot mute yourself."),
    "bad_chat": gettext_lazy("That message is not understood."),
    "season_options": gettext_lazy("This table's options are not the season's table options."),
    # "Play now" (games.actions.quick_play); the cooldown's time left: refusal_words.
    "leave_cooldown": gettext_lazy(
        "You left too many matches lately: tables with other players are closed to you for a "
        "while. Practice with bots stays open."
    ),
    "not_forming": gettext_lazy("This table is no longer waiting for players."),
    "bad_options": gettext_lazy("Those options are not this game's."),
    # Any socket (games.live.socket_guard).
    "too_big": gettext_lazy("That message is too long to be read."),
    "too_many_sockets": gettext_lazy(
        "Too many connections are open from your account or address: close another tab."
    ),
    "too_fast": gettext_lazy("Too many messages or refused moves: wait a few seconds."),
    "too_many_tables": gettext_lazy(
        "You have as many open tables as one may have: finish or leave one first."
    ),
    "new_tables_too_fast": gettext_lazy(
        "Many tables were opened from your address lately: try again in a while."
    ),
    "unavailable": gettext_lazy(
        "The server could not reach its database just now. Try again in a moment."
    ),
    "server_error": gettext_lazy(
        "Something went wrong on the server. Refresh the page and try again."
    ),
}


def refusal(code: str, fallback: str = "") -> str:
    """The sentence for a refused move's code, in the active language."""
    if code in REFUSALS:
        return str(REFUSALS[code])
    return fallback or ALL_ERRORS.get(code, code)


def seat_name(names: list[str], seat: Any) -> str:
    if isinstance(seat, int) and 0 <= seat < len(names):
        return names[seat]
    return "?"


def tile_colour(letter: str) -> str:
    """A colour letter in words; "" for anything else (the fake's ``F``)."""
    if letter == "R":
        return pgettext("tile colour", "red")
    if letter == "Y":
        return pgettext("tile colour", "yellow")
    if letter == "B":
        return pgettext("tile colour", "blue")
    if letter == "K":
        return pgettext("tile colour", "black")
    return ""


def tile_words(code: Any) -> str:
    """A tile in notation ("R12", "F") in the reader's words: "red 12", "fake okey"."""
    code = str(code or "")
    if code[:1] == "F":
        return _("fake okey")
    number = code[1:3].replace(":", "")
    return _("%(colour)s %(number)s") % {"colour": tile_colour(code[:1]), "number": number}


def sentence(text: str, language: str | None = None) -> str:
    """``text`` with its first letter a capital, in ``language`` (the active one if None):
    Turkish writes a capital i as İ."""
    if not text:
        return text
    language = language or get_language() or ""
    first = "İ" if text[0] == "i" and language.startswith(("tr", "az")) else text[0].upper()
    return first + text[1:]


def left_text(name: str) -> str:
    """The log's line for a player who left the match: a bot plays their seat now."""
    return _("%(who)s left; a bot plays the seat.") % {"who": name}


def event_text(
    event: dict[str, Any], names: list[str], viewer: int | None, all_shown: bool = False
) -> str | None:
    """One hand event in words, as ``viewer`` (a seat, or None for a spectator) may read it:
    the viewer's own moves as "you", tiles in colour words. ``all_shown``: the hand is over
    and its replay names every drawn tile. A line begins with a capital unless it begins
    with a player's name, which stays as its owner wrote it."""
    text = _event_words(event, names, viewer, all_shown)
    if text is None or any(name and text.startswith(name) for name in names):
        return text
    return sentence(text)


def _event_words(
    event: dict[str, Any], names: list[str], viewer: int | None, all_shown: bool
) -> str | None:
    who = seat_name(names, event.get("seat"))
    kind = event.get("type")
    tile = tile_words(event.get("tile"))
    you = viewer is not None and event.get("seat") == viewer
    if kind == "draw":
        if you and event.get("tile"):
            return _("You drew %(tile)s.") % {"tile": tile}
        if all_shown and event.get("tile"):
            return _("%(who)s drew %(tile)s.") % {"who": who, "tile": tile}
        return _("%(who)s drew from the pile.") % {"who": who}
    if kind == "take":
        if you:
            thrower = seat_name(names, event.get("from"))
            return _("You took %(thrower)s's %(tile)s.") % {"thrower": thrower, "tile": tile}
        if viewer is not None and event.get("from") == viewer:
            return _("%(who)s took your %(tile)s.") % {"who": who, "tile": tile}
        return _("%(who)s took %(thrower)s's %(tile)s.") % {
            "who": who,
            "thrower": seat_name(names, event.get("from")),
            "tile": tile,
        }
    if kind == "discard":
        if you:
            return _("You threw %(tile)s.") % {"tile": tile}
        return _("%(who)s threw %(tile)s.") % {"who": who, "tile": tile}
    if kind == "give_back":
        if you:
            return _("You gave %(tile)s back.") % {"tile": tile}
        return _("%(who)s gave %(tile)s back.") % {"who": who, "tile": tile}
    if kind == "open":
        if event.get("with") == "pairs":
            n = len(event.get("melds") or [])
            if you:
                return _("You opened with %(n)s pairs.") % {"n": n}
            return _("%(who)s opened with %(n)s pairs.") % {"who": who, "n": n}
        if you:
            return _("You opened with %(total)s.") % {"total": event.get("total")}
        return _("%(who)s opened with %(total)s.") % {"who": who, "total": event.get("total")}
    if kind == "lay":
        laid = "; ".join(group_words(m.get("tiles") or []) for m in event.get("melds") or [])
        if you:
            return _("You laid %(melds)s.") % {"melds": laid}
        return _("%(who)s laid %(melds)s.") % {"who": who, "melds": laid}
    if kind == "add":
        if you:
            return _("You added %(tile)s to a meld.") % {"tile": tile}
        return _("%(who)s added %(tile)s to a meld.") % {"who": who, "tile": tile}
    if kind == "swap":
        if you:
            return _("You swapped %(tile)s for an okey.") % {"tile": tile}
        return _("%(who)s swapped %(tile)s for an okey.") % {"who": who, "tile": tile}
    if kind == "indicator_shown":
        if you:
            return _("You showed the indicator.")
        return _("%(who)s showed the indicator.") % {"who": who}
    if kind == "penalty":
        points, reason = event.get("points", 0), penalty_reason(str(event.get("reason", "")))
        if you:
            return _("You: %(points)+d points (%(reason)s).") % {"points": points, "reason": reason}
        return _("%(who)s: %(points)+d points (%(reason)s).") % {
            "who": who,
            "points": points,
            "reason": reason,
        }
    if kind == "penalty_cancelled":
        if you:
            return _("Your penalty is cancelled.")
        return _("%(who)s's penalty is cancelled.") % {"who": who}
    if kind == "hand_over":
        if event.get("ending") == "dry_wall":
            return _("The pile ran dry: the hand is over.")
        if event.get("ending") == "void":
            return _("Four players opened with pairs: the hand is void and is dealt again.")
        if viewer is not None and event.get("finisher") == viewer:
            return _("You finished the hand.")
        return _("%(who)s finished the hand.") % {"who": seat_name(names, event.get("finisher"))}
    return None


FINISH_KINDS: dict[str, Any] = {
    "normal": pgettext_lazy("finish kind", "normal"),
    "pairs": pgettext_lazy("finish kind", "pairs"),
    "colour": pgettext_lazy("finish kind", "colour"),
    "sequential_colour": pgettext_lazy("finish kind", "sequential colour"),
    "okey": pgettext_lazy("finish kind", "okey"),
}


DOUBLINGS: dict[str, Any] = {
    "okey": pgettext_lazy("doubling", "okey thrown last"),
    "pairs": pgettext_lazy("doubling", "opened with pairs"),
    "from_hand": pgettext_lazy("doubling", "from the hand"),
    "before_others_opened": pgettext_lazy("doubling", "before the others opened"),
}


def doubling(reason: str) -> str:
    """What doubled a hand's scores (the engine's ``result["doublings"]``), in words."""
    return str(DOUBLINGS.get(reason, reason.replace("_", " ")))


def finish_kind(kind: str | None) -> str:
    """A finish's kind (the engine's ``result["kind"]``) in words, in the active language."""
    if not kind:
        return ""
    return str(FINISH_KINDS.get(kind, kind.replace("_", " ")))


def variant_name(name: str) -> str:
    """A variant's stored name in the active language. The site's own names (games.catalog)
    are translated; a name the admin has changed is shown as it is."""
    return pgettext("variant name", name) if name else ""


def default_table_name(variant: str) -> str:
    """The name of a table nobody named: its variant's table (``variant``: the stored name)."""
    return _("%(variant)s table") % {"variant": variant_name(variant)}


def variant_description(text: str) -> str:
    """A variant's stored description in the active language, like ``variant_name``."""
    return _(text) if text else ""


PENALTY_REASONS: dict[str, Any] = {
    "indicator": gettext_lazy("indicator shown"),
    "taken": gettext_lazy("discard taken"),
    "fed": gettext_lazy("meld fed"),
    "swap": gettext_lazy("okey swapped"),
    "punished_discard": gettext_lazy("discard that fitted the table"),
    "pair_added": gettext_lazy("pair added to the row"),
    "give_back": gettext_lazy("tile given back"),
    "okey_discard": gettext_lazy("okey thrown"),
    "workable_discard": gettext_lazy("workable tile thrown"),
    "workable": gettext_lazy("workable tile thrown"),
    "okey_thrown": gettext_lazy("okey thrown"),
}


def score_part(part: dict[str, Any]) -> str:
    """One part of a seat's hand score (``engine.score_parts``) in words, without its points:
    "Tiles left 37 × 2 (opened with pairs)", "Okey held × 1", "Okey thrown × 2"."""
    item = part.get("item")
    m = int(part.get("multiplier") or 1)
    if item == "finished":
        words = pgettext("score part", "Finished")
        if part.get("kind") and part["kind"] != "normal":
            words = _("Finished (%(kind)s)") % {"kind": finish_kind(part["kind"])}
    elif item == "lost_to_finish":
        words = _("Another player finished")
        if part.get("kind") and part["kind"] != "normal":
            words = _("Another player finished (%(kind)s)") % {"kind": finish_kind(part["kind"])}
    elif item == "last_tile":
        words = _("Finished with the last tile of the pile")
    elif item == "never_opened":
        words = _("Never opened")
    elif item == "tiles_left":
        words = _("Tiles left: %(sum)s") % {"sum": part.get("sum", 0)}
        if int(part.get("factor") or 1) > 1:
            words += f" × {part['factor']}"
            if part.get("pairs"):
                words += " " + _("(opened with pairs)")
    elif item == "okey_held":
        words = _("Okey held × %(n)s") % {"n": part.get("count", 1)}
    elif item == "partner_finished":
        words = _("Your partner finished")
    elif item == "sequential_colour":
        words = _("Another player finished with a sequential colour")
    elif item == "penalty":
        words = _("%(reason)s × %(n)s") % {
            "reason": penalty_reason(str(part.get("reason", ""))).capitalize(),
            "n": part.get("count", 1),
        }
    else:
        words = str(item or "").replace("_", " ")
    if m > 1:
        words += f" × {m}"
    return words


def penalty_reason(reason: str) -> str:
    return str(PENALTY_REASONS.get(reason, reason.replace("_", " ")))


# Why a group of tiles is not a meld or a pair (the engine's MELD_ERRORS), as the end of a
# sentence that names the group.
MELD_REASONS: dict[str, Any] = {
    "meld_too_short": gettext_lazy("a run or a set has at least 3 tiles"),
    "meld_too_long": gettext_lazy("a set has at most 4 tiles and a run at most 13"),
    "all_wild": gettext_lazy("a meld needs a tile that is not an okey"),
    "mixed_colours": gettext_lazy("a run is of one colour"),
    "not_consecutive": gettext_lazy("the numbers of a run follow each other, each once"),
    "thirteen_one_two": gettext_lazy("13-1-2 is never a run"),
    "wrap_not_allowed": gettext_lazy("1 after 13 is not allowed at this table"),
    "mixed_numbers": gettext_lazy("a set is of one number"),
    "repeated_colour": gettext_lazy("a set's tiles are all of different colours"),
    "not_a_meld": gettext_lazy("it is neither one colour nor one number"),
    "suffix_mismatch": gettext_lazy("an okey does not stand for the tile it names"),
    "not_a_pair": gettext_lazy("a pair is two of the same tile"),
}


def group_words(tiles: list[str]) -> str:
    """A group of tiles in the reader's words: "red 5, red 6, blue 8"."""
    return ", ".join(tile_words(t) for t in tiles)


def refused(exc: Any) -> str:
    """A refusal (a ``games.errors.GameError``) in the active language, with what its detail
    adds: the group of a meld that is not one, and why."""
    return refusal_words(exc.code, exc.message, exc.detail, getattr(exc, "tiles", None))


def refusal_words(
    code: str, fallback: str = "", detail: str | None = None, tiles: list[str] | None = None
) -> str:
    """:func:`refusal`, with what a refusal's detail adds: the minutes a cooldown has left, the
    group of tiles that is not a meld (or pair) and why."""
    if code in ("invalid_meld", "invalid_pair") and tiles and detail != "bad_tile":
        group = group_words(tiles)
        if code == "invalid_pair":
            words = _("%(tiles)s are not a pair.") % {"tiles": group}
        elif detail in MELD_REASONS:
            words = _("%(tiles)s is not a run or a set: %(why)s.") % {
                "tiles": group,
                "why": MELD_REASONS[detail],
            }
        else:
            words = _("%(tiles)s is not a run or a set.") % {"tiles": group}
        return words[:1].upper() + words[1:]
    if code == "leave_cooldown" and detail and detail.isdigit():
        minutes = max(1, math.ceil(int(detail) / 60))
        return ngettext(
            "You left too many matches lately: tables with other players are closed to you "
            "for %(n)s more minute. Practice with bots stays open.",
            "You left too many matches lately: tables with other players are closed to you "
            "for %(n)s more minutes. Practice with bots stays open.",
            minutes,
        ) % {"n": minutes}
    return refusal(code, fallback)
