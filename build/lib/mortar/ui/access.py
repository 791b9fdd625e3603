"""Reading the store from a page: short read-only connections that say so when a run holds the file."""

from __future__ import annotations

import streamlit as st

from mortar import store

READ_WAIT_S = 3.0  # how long a page waits for a run that is writing before it says the store is busy
WRITE_WAIT_S = 10.0  # … and a label or decision before it asks to save again


def read(fn, *args, **kwargs):
    """Open the store read-only, call ``fn(con, …)``, close it. While a background run holds the store's file
    for longer than READ_WAIT_S, say so and stop this page (or fragment) until the next rerun."""
    try:
        with store.session(read_only=True, wait_s=READ_WAIT_S) as con:
            return fn(con, *args, **kwargs)
    except store.StoreBusy:
        st.warning("The store is busy: a run in the background is writing to it. This view comes back as soon "
                   "as it lets go (refresh the page).", icon=":material/hourglass_top:")
        st.stop()


def try_read(fn, *args, **kwargs):
    """Like :func:`read`, but None while a background run holds the store."""
    try:
        with store.session(read_only=True, wait_s=READ_WAIT_S) as con:
            return fn(con, *args, **kwargs)
    except store.StoreBusy:
        return None
