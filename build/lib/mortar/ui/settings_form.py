"""A test method's settings as form widgets, one per field of its settings dataclass (``mortar.settings``): the
Launch page shows every registered method's settings without knowing any of them."""

import streamlit as st

from mortar.settings import options


def settings_form(method, current):
    """Widgets for the method's settings, starting from ``current``; returns the settings the form holds."""
    fields = options(method.settings, method.name)
    if not fields:
        return current
    st.markdown(f"**{method.label}** ({method.name})")
    lists = [o for o in fields if o.kind is tuple]  # multiselects get wide columns, the other widgets narrow ones
    others = [o for o in fields if o.kind is not tuple]
    given = {}
    for group, width in ((lists, 2), (others, 4)):
        columns = st.columns(width) if group else []
        for i, o in enumerate(group):
            given[o.name] = _widget(columns[i % width], o, getattr(current, o.name), f"{method.name}-{o.name}")
    return method.settings(**given)


def _widget(column, o, value, key: str):
    """One setting's widget, by the field's type."""
    label = o.label[:1].upper() + o.label[1:]
    if o.kind is tuple:
        label = label if label.endswith("s") else label + "s"
        return tuple(column.multiselect(label, list(o.choices or value), default=list(value), help=o.help, key=key))
    if o.kind is bool:
        return column.checkbox(label, value=bool(value), help=o.help, key=key)
    if o.kind is int:
        return int(column.number_input(label, value=int(value), step=1, help=o.help, key=key, min_value=o.minimum))
    if o.kind is float:
        low, high = o.between or (None, None)
        return float(column.number_input(label, value=float(value), step=0.05, format="%.2f", min_value=low,
                                         max_value=high, help=o.help, key=key))
    return column.text_input(label, value=str(value), help=o.help, key=key)
