"""Downloads of figures (HTML that works offline, PNG) and tables (CSV)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

def png_export_available() -> bool:
    """PNG export of plotly figures needs kaleido and a Chrome/Chromium it can start (offline is fine)."""
    import importlib.util
    import shutil

    if importlib.util.find_spec("kaleido") is None:
        return False
    return any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome", "chrome"))


def figure_downloads(fig: go.Figure, name: str, key: str) -> None:
    """HTML (works offline: plotly.js is embedded) and PNG downloads of a figure, made only when clicked."""
    row = st.container(horizontal=True)
    row.download_button("HTML", data=lambda: fig.to_html(include_plotlyjs=True, full_html=True),
                       file_name=f"{name}.html", mime="text/html", key=f"{key}-html", icon=":material/code:", on_click="ignore")
    if png_export_available():
        row.download_button("PNG", data=lambda: fig.to_image(format="png", scale=2, width=1000, height=520),
                           file_name=f"{name}.png", mime="image/png", key=f"{key}-png", icon=":material/image:", on_click="ignore")
    else:
        row.caption("PNG needs kaleido and Chromium")


def csv_download(frame: pd.DataFrame, name: str, key: str, label: str = "CSV") -> None:
    st.download_button(label, data=frame.to_csv(index=False).encode(), file_name=f"{name}.csv", mime="text/csv",
                       key=key, icon=":material/download:", on_click="ignore")
