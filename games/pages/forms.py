"""The lobby's "New table" form: a variant, its table options, a name, privacy, auto-start.

The option fields are built from the engine's list of options for the chosen variant
(``games.engine.variants.OPTIONS``), and the values are checked by the engine itself
(``engine.validate_options``): the form only turns the posted strings into Python values. A
refusal shows the engine's message, and a hint in the user's language next to the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from accounts import names
from games import engine, messages
from games.engine.variants import OPTIONS, PLAYERS, Choice
from games.models import Variant

LABELS: dict[str, Any] = {
    "scoring": _("Scoring"),
    "start_score": _("Start score"),
    "hands": _("Hands"),
    "doubling": _("Doubling: each melds opening must beat the highest so far"),
    "partners": _("Partners: two against two, partners sit across"),
    "give_back_penalty": _("Give-back penalty"),
    "add_limit": _("Tiles one player may add to one end of a meld in a turn"),
    "from_hand_below_bar": _(
        "An opening below the bar that leaves one tile is accepted (then throw it to finish)"
    ),
    "assisted": _("Assisted: mark workable discards, sort the rack, one-tap feeding"),
    "wrap_13_1": _("1 may follow 13 in a run (12-13-1)"),
    "timer": _("Move timer"),
    "players": _("Players"),
}

VALUE_LABELS: dict[str, dict[Any, Any]] = {
    "scoring": {
        "countdown": _("Countdown from the start score"),
        "plus_minus": _("Plus/minus: +1 to the winner, −1 to the others"),
    },
    "timer": {
        0: pgettext_lazy("move timer", "off"),
        15: _("15 s per move"),
        30: _("30 s per move"),
        60: _("60 s per move"),
    },
    "give_back_penalty": {0: pgettext_lazy("penalty", "none"), 500: "500", 101: "101"},
    "add_limit": {0: pgettext_lazy("add limit", "no limit")},
}


# The quick options' fields of the lobby's "Play now" form: ``opt-<variant>-<option>``.
QUICK_FIELD = "opt-{variant}-{name}"
_ON_OFF = {True: "1", False: "0"}


def quick_choices(variant: str, chosen: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The options a player chooses before sitting down at ``variant``
    (``engine.quick_options``), for the lobby's form: each with its field's ``name``, its
    ``label``, its ``choices`` (value as posted, words) and the ``selected`` one (``chosen``:
    the player's last choice, else the default)."""
    current = engine.default_options(variant)
    try:
        current = engine.validate_options(
            variant, {k: v for k, v in (chosen or {}).items() if k in current}
        )
    except engine.OptionsError:
        pass  # a remembered choice the rules no longer allow: the defaults
    out = []
    for name in engine.quick_options(variant):
        choice = OPTIONS[variant][name]
        names = VALUE_LABELS.get(name, {})
        if isinstance(choice.default, bool):
            values = [(_ON_OFF[True], _("on")), (_ON_OFF[False], _("off"))]
            selected = _ON_OFF[bool(current[name])]
        else:
            values = [(str(a), str(names.get(a, a))) for a in choice.allowed or ()]
            selected = str(current[name])
        out.append(
            {
                "name": QUICK_FIELD.format(variant=variant, name=name),
                "label": LABELS.get(name, name),
                "choices": values,
                "selected": selected,
            }
        )
    return out


def quick_posted(variant: str, data: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """The quick options posted for ``variant`` (the fields of :func:`quick_choices`) as the
    engine's values, over ``base`` (a table's options, for the same game again); an option
    not posted, or not one of its values, keeps its value there, else its default."""
    quick = engine.quick_options(variant)
    out: dict[str, Any] = {k: v for k, v in (base or {}).items() if k in quick}
    for name in engine.quick_options(variant):
        raw = data.get(QUICK_FIELD.format(variant=variant, name=name))
        choice = OPTIONS[variant][name]
        if raw is None:
            continue
        if isinstance(choice.default, bool):
            if raw in ("0", "1"):
                out[name] = raw == "1"
            continue
        for allowed in choice.allowed or ():
            if str(allowed) == raw:
                out[name] = allowed
    return out


def variant_choices(rows: Sequence[Variant] | None = None) -> list[tuple[str, str]]:
    """The variants the engine plays (``rows``: every Variant row, if read already)."""
    if rows is None:
        rows = Variant.objects.filter(key__in=engine.VARIANTS)
    return [(v.key, messages.variant_name(v.name)) for v in rows if v.key in engine.VARIANTS]


def _hint(key: str, choice: Choice) -> Any:
    """What the engine accepts for an option, in the user's language (its values by their
    labels on the form)."""
    if choice.allowed is not None:
        names = VALUE_LABELS.get(key, {})
        allowed = ", ".join(str(names.get(a, a)) for a in choice.allowed)
        return _("Choose one of: %(values)s.") % {"values": allowed}
    if isinstance(choice.default, bool):
        return _("Tick the box or leave it empty.")
    return _("Choose a whole number from %(low)s to %(high)s.") % {
        "low": choice.low,
        "high": choice.high,
    }


class NewTableForm(forms.Form):
    """Fields: ``variant``, ``name``, ``is_private``, ``auto_start``, ``other_tables``,
    ``chat_enabled`` (players and spectators may chat; on unless unticked), then one
    field per option of the variant (named as the engine names it), and ``players`` where the
    variant allows several counts (classic)."""

    variant = forms.ChoiceField(label=_("Variant"))
    name = forms.CharField(label=_("Table name"), max_length=80, required=False)
    is_private = forms.BooleanField(
        label=_("Private: only people with the invite link may join"), required=False
    )
    auto_start = forms.BooleanField(
        label=_("Start when full: the match begins as soon as every seat is filled"),
        required=False,
    )
    other_tables = forms.BooleanField(
        label=_("Players here may also sit at other tables at the same time"),
        required=False,
    )
    chat_enabled = forms.BooleanField(label=_("Chat at this table"), required=False, initial=True)

    def __init__(
        self,
        data: Any = None,
        *,
        variant: str | None = None,
        initial: dict[str, Any] | None = None,
        variant_rows: Sequence[Variant] | None = None,
    ) -> None:
        """``variant_rows``: every Variant row (in their order), when the caller has read
        them: the form then reads nothing."""
        super().__init__(data, initial=initial)
        choices = variant_choices(variant_rows)
        self.fields["variant"].choices = choices  # type: ignore[attr-defined]
        # Choosing another variant fetches the form again with that variant's options.
        self.fields["variant"].widget.attrs.update(
            {
                "hx-get": reverse("new_table"),
                "hx-trigger": "change",
                "hx-target": "#new-table",
                "hx-swap": "outerHTML",
                "hx-include": "closest form",
            }
        )
        keys = [k for k, _name in choices]
        chosen = (data.get("variant") if data is not None else None) or variant
        if chosen not in keys:
            chosen = keys[0] if keys else engine.VARIANTS[0]
        self.variant_key: str = chosen
        self.initial.setdefault("variant", chosen)
        if variant_rows is not None:
            row = next((v for v in variant_rows if v.key == chosen), None)
        else:
            row = Variant.objects.filter(key=chosen).first()
        defaults = {**engine.default_options(chosen), **(row.default_options if row else {})}
        self.option_names: list[str] = []
        for key, choice in OPTIONS[chosen].items():
            self.fields[key] = self._field(key, choice)
            self.initial.setdefault(key, defaults.get(key, choice.default))
            self.option_names.append(key)
        self.idle_when = self._idle_when(chosen, defaults)
        # An option the rules ignore under the posted choices (a number of hands under a
        # countdown) is neither read nor checked: the table gets its default.
        posted = {}
        if data is not None:
            posted = {k: v for k in self.option_names if (v := data.get(k)) is not None}
        self.idle: frozenset[str] = engine.idle_options(chosen, {**defaults, **posted})
        if data is not None and self.idle:
            # Read as its default (not disabled: the page may show the field again when the
            # other choice changes, and a disabled field could not be typed in or sent).
            self.data = self.data.copy()
            for key in self.idle:
                self.data[key] = defaults.get(key, OPTIONS[chosen][key].default)
        for field in self.fields.values():
            if isinstance(field, forms.BooleanField):
                field.label_suffix = ""  # a box's label follows it: no colon
        if len(PLAYERS[chosen]) > 1:
            self.fields["players"] = forms.IntegerField(
                label=LABELS["players"],
                widget=forms.Select(choices=[(n, str(n)) for n in PLAYERS[chosen]]),
            )
            self.initial.setdefault("players", max(PLAYERS[chosen]))

    def _idle_when(self, variant: str, defaults: dict[str, Any]) -> dict[str, str]:
        """For each option the rules ignore under some choice of another option, that choice
        as ``"name=value"`` (the page hides the field while it is chosen), from the engine's
        ``idle_options``."""
        idle_when: dict[str, str] = {}
        for key, choice in OPTIONS[variant].items():
            values = list(choice.allowed or ())
            idle = {v: engine.idle_options(variant, {**defaults, key: v}) for v in values}
            for value in values:
                # Idle under this value and not under every other: this choice idles it.
                for option in idle[value] - frozenset.intersection(*idle.values()):
                    idle_when.setdefault(option, f"{key}={value}")
        return idle_when

    @staticmethod
    def _field(key: str, choice: Choice) -> forms.Field:
        label = LABELS.get(key, key)
        if isinstance(choice.default, bool):
            return forms.BooleanField(label=label, required=False)
        names = VALUE_LABELS.get(key, {})
        if isinstance(choice.default, int):
            if choice.allowed is not None:
                options = [(a, names.get(a, str(a))) for a in choice.allowed]
                # An IntegerField, not a choice field: the engine says what is allowed.
                return forms.IntegerField(label=label, widget=forms.Select(choices=options))
            # Bounds checked here too, so that each field out of range says so in the
            # reader's language (the engine's own check names only the first).
            return forms.IntegerField(
                label=label,
                min_value=choice.low,
                max_value=choice.high,
                widget=forms.NumberInput(attrs={"min": choice.low, "max": choice.high}),
            )
        options = [(a, names.get(a, str(a))) for a in (choice.allowed or ())]
        return forms.CharField(label=label, widget=forms.Select(choices=options))

    def clean_name(self) -> str:
        """The name cleaned as every name is (``accounts.names``); "" (the default name) when
        nothing visible is left."""
        return names.clean_name(self.cleaned_data["name"])

    def options(self) -> dict[str, Any]:
        """The table options, as posted (call after ``is_valid``), but those the rules ignore
        under the others."""
        return {
            k: self.cleaned_data[k]
            for k in self.option_names
            if k in self.cleaned_data and k not in self.idle
        }

    def players(self) -> int:
        return int(self.cleaned_data.get("players") or max(PLAYERS[self.variant_key]))

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        try:
            checked = engine.validate_options(self.variant_key, self.options())
            engine.variants.check_players(self.variant_key, self.players(), checked)
        except engine.OptionsError as exc:
            # The engine's message is for developers (English, option keys): the reader gets
            # the hint of the option it names, beside that field, in their language.
            words = str(exc).replace("'", " ").split()
            named = {w for w in words if w in self.fields and w not in ("variant", "name")}
            key = next(iter(named)) if len(named) == 1 else None
            if key == "players":
                counts = ", ".join(str(n) for n in PLAYERS[self.variant_key])
                self.add_error(key, _("Choose one of: %(values)s.") % {"values": counts})
            elif key is not None:
                self.add_error(key, _hint(key, OPTIONS[self.variant_key][key]))
            else:
                self.add_error(None, _("The rules do not allow these options together."))
        return cleaned

    def option_fields(self) -> list[forms.BoundField]:
        names = [*self.option_names, *(["players"] if "players" in self.fields else [])]
        return [self[name] for name in names]

    def option_rows(self) -> list[dict[str, Any]]:
        """Each option's field, with ``idle_when`` (:meth:`_idle_when`; "" for none) and
        whether the posted choices make it idle now."""
        return [
            {
                "field": field,
                "idle_when": self.idle_when.get(field.name, ""),
                "idle": field.name in self.idle,
            }
            for field in self.option_fields()
        ]
