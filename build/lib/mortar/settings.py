"""A test method's settings: a frozen dataclass whose fields say, each for itself, their default, their help text,
their command-line flag and what values they take. From these the CLI options, the Launch form, validation and
the stored JSON are made, so a method's settings are spelled in one place (as a spaCy factory's default config
or an Inspect task's parameters are its configuration).

    @dataclass(frozen=True)
    class ToySettings:
        strength: float = setting(0.5, "how hard the toy pushes", label="Toy strength", between=(0.0, 1.0))
"""

from __future__ import annotations

import typing
from dataclasses import MISSING, dataclass, field, fields


def setting(default, help: str, *, label: str | None = None, flag: str | None = None,
            choices: tuple | None = None, between: tuple[float, float] | None = None, open_interval: bool = False,
            minimum: int | None = None, nonempty: bool = False, sep: str | None = None, inverted_flag: bool = False,
            value_of: str | None = None):
    """A settings field.

    ``label``: how the Launch form and error messages name it; ``flag``: its command-line option (default
    ``--<method>-<name>``); ``choices``: the values it (or each of its items) takes; ``between``: its range,
    bounds included unless ``open_interval``; ``minimum``: the least integer; ``nonempty``: a list that needs one
    item at least; ``sep``: a list typed as one word with this separator (``SR,WI``) instead of several words;
    ``inverted_flag``: a switch whose flag turns it off (``--keep-names`` for ``noise_names``); ``value_of``: an
    integer setting that this switch's flag may take as its optional value (``--selection 5``).
    """
    meta = dict(help=help, label=label, flag=flag, choices=choices, between=between, open_interval=open_interval,
                minimum=minimum, nonempty=nonempty, sep=sep, inverted_flag=inverted_flag, value_of=value_of)
    return field(default=default, metadata={"setting": meta})


@dataclass(frozen=True)
class Option:
    """One settings field as the CLI, the form and validation see it."""

    name: str
    kind: type  # bool, int, float, str or tuple (a list of choices)
    default: object
    help: str
    label: str
    flag: str
    choices: tuple | None
    between: tuple[float, float] | None
    open_interval: bool
    minimum: int | None
    nonempty: bool
    sep: str | None
    inverted_flag: bool
    value_of: str | None


def options(settings_type, method: str) -> list[Option]:
    """The fields of a settings dataclass, in their order."""
    hints = typing.get_type_hints(settings_type)
    found = []
    for f in fields(settings_type):
        meta = dict(f.metadata.get("setting") or {"help": ""})
        default = f.default if f.default is not MISSING else f.default_factory()
        kind = _kind(hints[f.name])
        found.append(Option(
            name=f.name, kind=kind, default=default, help=meta.get("help", ""),
            label=meta.get("label") or f.name.replace("_", " "),
            flag=meta.get("flag") or f"--{method}-{f.name.replace('_', '-')}", choices=meta.get("choices"),
            between=meta.get("between"), open_interval=meta.get("open_interval", False),
            minimum=meta.get("minimum"), nonempty=meta.get("nonempty", False), sep=meta.get("sep"),
            inverted_flag=meta.get("inverted_flag", False), value_of=meta.get("value_of")))
    return found


def _kind(hint) -> type:
    origin = typing.get_origin(hint) or hint
    if origin in (tuple, list):
        return tuple
    return origin if origin in (bool, int, float, str) else str


def problems(settings, method: str) -> list[str]:
    """What is wrong with these settings, one line each, as the fields' declarations say."""
    found = []
    for o in options(type(settings), method):
        value = getattr(settings, o.name)
        if o.kind is tuple:
            unknown = [x for x in value if o.choices and x not in o.choices]
            if unknown:
                found.append(f"unknown {o.label} {', '.join(map(str, unknown))}; choose from "
                             f"{', '.join(map(str, o.choices))}")
            if o.nonempty and not value:
                found.append(f"choose at least one {o.label}")
            continue
        if o.choices and value not in o.choices:
            found.append(f"unknown {o.label} {value!r}; choose from {', '.join(map(str, o.choices))}")
        if o.minimum is not None and (not _is_int(value) or value < o.minimum):
            found.append(f"{o.label} {value} is " + ("negative" if o.minimum == 0 else "not a positive integer"
                                                     if o.minimum == 1 else f"less than {o.minimum}"))
        if o.between is not None:
            low, high = o.between
            inside = low < value < high if o.open_interval else low <= value <= high
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not inside:
                found.append(f"{o.label} {value} is not between {low:g} and {high:g}")
    return found


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def from_json(settings_type, data: dict | None):
    """Settings from their stored JSON (lists back to tuples); a field not stored takes its default."""
    data = dict(data or {})
    for o in options(settings_type, ""):
        if o.kind is tuple and o.name in data:
            data[o.name] = tuple(data[o.name])
    return settings_type(**data)
