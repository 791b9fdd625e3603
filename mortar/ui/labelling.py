"""The labelling form: who labels, a 0–10 score per detection, and the run's PPD."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from mortar import labels, metrics, store
from mortar.ui.access import WRITE_WAIT_S, read
from mortar.ui.text import fmt, help_for, md_escape
from mortar.vocab import SCORE_MAX, SCORE_MIN, TRUE_POSITIVE_BELOW, is_true_positive

SCORE_HELP = (f"How acceptable is the SUT's answer here, {SCORE_MIN} (clearly wrong) to {SCORE_MAX} (fully "
              f"acceptable)? A score below {TRUE_POSITIVE_BELOW} marks the detection as a true positive: a real bug.")


def annotator_box(key: str) -> str | None:
    """The annotator's name, asked once per browser session."""
    name = st.session_state.get("annotator")
    if name:
        c1, c2 = st.columns([5, 1])
        c1.caption(f"Labelling as **{md_escape(name)}**")
        if c2.button("Change name", key=f"{key}-change"):
            del st.session_state["annotator"]
            st.rerun()
        return name
    with st.form(f"{key}-who"):
        entered = st.text_input("Your name, as annotator", help="Labels are stored per detection and annotator.")
        if st.form_submit_button("Start labelling", type="primary") and entered.strip():
            st.session_state["annotator"] = entered.strip()
            st.rerun()
    return None


def label_form(run_id: str, detection_id: str, key: str) -> bool:
    """Score one detection (Enter submits); True when a label was saved in this run of the page."""
    name = st.session_state["annotator"]
    prev = read(store.label_of, run_id, detection_id, name)
    with st.form(f"{key}-{run_id}-{detection_id}", border=True):
        c1, c2 = st.columns([1, 3])
        score = c1.number_input(f"Score ({SCORE_MIN}–{SCORE_MAX})", min_value=SCORE_MIN, max_value=SCORE_MAX, step=1,
                                value=int(prev[0]) if prev else None, placeholder=f"{SCORE_MIN}–{SCORE_MAX}",
                                help=SCORE_HELP)
        note = c2.text_input("Note (optional)", value=(prev[1] or "") if prev else "")
        saved = st.form_submit_button("Save label", type="primary", icon=":material/label:")
    if prev:
        st.caption(f"You scored this {prev[0]} before ({'true' if is_true_positive(prev[0]) else 'false'} positive); saving again "
                   "replaces it.")
    if not saved:
        return False
    if score is None:
        st.warning(f"Enter a score from {SCORE_MIN} to {SCORE_MAX} first.")
        return False
    try:
        labels.save_label(run_id, detection_id, name, int(score), note, wait_s=WRITE_WAIT_S)
    except store.StoreBusy:
        st.error("The label was not saved: a run in the background is writing to the store. Save again in a moment.")
        return False
    st.success(f"Saved: score {int(score)}, a {'true' if is_true_positive(int(score)) else 'false'} positive.")
    return True


def run_ppd(con, run_id: str) -> tuple[float, int, int]:
    frame = metrics.ppd_by_run(store.final_labels(con))
    frame = frame[frame["run_id"] == run_id]
    if frame.empty:
        return float("nan"), 0, 0
    r = frame.iloc[0]
    return float(r["PPD"]) if not pd.isna(r["PPD"]) else float("nan"), int(r["labelled"]), int(r["disputed"])


def ppd_metrics(run_id: str) -> None:
    ppd, n, disputed = read(run_ppd, run_id)
    c1, c2, c3 = st.columns(3)
    c1.metric("PPD of this run", fmt(ppd), help=help_for("PPD"))
    c2.metric("Labelled detections", n, help="Detections with a final label: one annotator, agreeing annotators, "
                                             "or an adjudication.")
    c3.metric("Disputed", disputed, help="Annotators disagree and no one has adjudicated yet.")


def quick_label(run_id: str, detection_id: str, key: str) -> None:
    if annotator_box(key) is not None and label_form(run_id, detection_id, key):
        st.toast("Label saved.")
    ppd_metrics(run_id)
