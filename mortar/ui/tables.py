"""Tables as the dashboard shows them: counts as integers even beside a missing value, other numbers to three
decimals, missing values as a dash (Streamlit would write "None")."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

DIGITS = 3
MISSING = "—"


def tidy(data) -> Styler:
    """``data`` (a frame, or rows) with its numbers formatted; the values stay numbers, so columns sort as numbers."""
    return pd.DataFrame(data).convert_dtypes().style.format(precision=DIGITS, na_rep=MISSING)


def table(data, key: str | None = None, **kwargs):
    """A summary table, tidied, the width of its container, without the index."""
    return st.dataframe(tidy(data), hide_index=True, width="stretch", placeholder=MISSING, key=key, **kwargs)
