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
    columns = st.columns(min(4, len(fields)))
    given = {}
    for i, o in enumerate(fields):
        column, value, key = columns[i % len(columns)], getattr(current, o.name), f"{method.name}-{o.name}"
        label = o.label[:1].upper() + o.label[1:]
        if o.kind is tuple:
            label = label if label.endswith("s") else label + "s"
            given[o.name] = tuple(column.multiselect(label, list(o.choices or value), default=list(value), help=o.help,
                                                     key=key))
        elif o.kind is bool:
            given[o.name] = column.checkbox(label, value=bool(value), help=o.help, key=key)
        elif o.kind is int:
            given[o.name] = int(column.number_input(label, value=int(value), step=1, help=o.help, key=key,
                                                    min_value=o.minimum))
        elif o.kind is float:
            low, high = o.between or (None, None)
            given[o.name] = float(column.number_input(label, value=float(value), step=0.05, format="%.2f",
                                                      min_value=low, max_value=high, help=o.help, key=key))
        else:
            given[o.name] = column.text_input(label, value=str(value), help=o.help, key=key)
    return method.settings(**given)
