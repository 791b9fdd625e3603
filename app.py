"""MORTAR Studio — the triage dashboard: launch runs, browse violations, inspect them, label precision.

`streamlit run app.py` (or `make run`). The store is $MORTAR_DB, else data/mortar.duckdb.
"""

import gc

import streamlit as st

from mortar import ui

st.set_page_config(page_title="MORTAR Studio", page_icon="🧱", layout="wide")

PAGES = {
    "Runs": [
        st.Page("pages/overview.py", title="Overview", icon=":material/home:", default=True),
        st.Page("pages/launch.py", title="Launch", icon=":material/rocket_launch:"),
    ],
    "Triage": [
        st.Page("pages/violations.py", title="Violations", icon=":material/search:"),
        st.Page("pages/inspector.py", title="Inspector", icon=":material/hub:"),
        st.Page("pages/labelling.py", title="Labelling", icon=":material/label:"),
    ],
    "Results": [
        st.Page("pages/metrics.py", title="Metrics", icon=":material/bar_chart:"),
        st.Page("pages/study.py", title="Studies", icon=":material/grid_view:"),
        st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:"),
        st.Page("pages/export.py", title="Export", icon=":material/download:"),
    ],
    "Data": [
        st.Page("pages/datasets.py", title="Datasets", icon=":material/library_books:"),
        st.Page("pages/test_cases.py", title="Test cases", icon=":material/science:"),
    ],
}

page = st.navigation(PAGES)
with st.sidebar:
    st.caption("Multi-turn metamorphic testing of LLM-based dialogue systems (MORTAR), without an LLM judge.")
    if st.session_state.get("annotator"):
        st.caption(f"Labelling as **{ui.md_escape(st.session_state['annotator'])}**")
page.run()


@st.cache_resource(show_spinner=False)
def heap_frozen(page_title: str) -> bool:
    """Once per page and server process, after the page's first run: what is loaded by then (Streamlit, pandas,
    plotly, the engine's UI and what the page imported) is left out of the cyclic garbage collector, whose full
    passes over it took about 0.2 s each while every session waited. Objects are still freed as soon as nothing
    refers to them."""
    gc.collect()
    gc.freeze()
    return True


if st.runtime.exists():  # not when app.py is only imported (a spawned worker re-running the main module)
    heap_frozen(page.title)
