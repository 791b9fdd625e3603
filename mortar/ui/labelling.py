"""The labelling form: who labels, what a detection is judged against (the gold answer, the story passage), a 0–10
score per detection, the run's PPD, and the oracle measured against the labels."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from mortar import figures, labels, metrics, store
from mortar import reports
from mortar.ui.access import WRITE_WAIT_S, read
from mortar.ui.tables import MISSING
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
    frame = metrics.ppd_by_run(store.final_labels(con, run_id))
    if frame.empty:
        return float("nan"), 0, 0
    r = frame.iloc[0]
    return float(r["PPD"]) if not pd.isna(r["PPD"]) else float("nan"), int(r["labelled"]), int(r["disputed"])


@st.cache_data(max_entries=64, show_spinner=False)
def cached_run_ppd(db: str, run_id: str, stamp: str) -> tuple[float, int, int]:
    """:func:`run_ppd`, read again when the run's stamp (which counts its labels) has changed."""
    return read(run_ppd, run_id)


def ppd_metrics(run_id: str, stamp: str | None = None) -> None:
    """The run's PPD, labelled and disputed counts; ``stamp`` (the run's, read before this rerun changed
    nothing): from the cache."""
    ppd, n, disputed = read(run_ppd, run_id) if stamp is None else cached_run_ppd(str(store.db_path()), run_id, stamp)
    c1, c2, c3 = st.columns(3)
    c1.metric("PPD of this run", fmt(ppd), help=help_for("PPD"))
    c2.metric("Labelled detections", n, help="Detections with a final label: one annotator, agreeing annotators, "
                                             "or an adjudication.")
    c3.metric("Disputed", disputed, help="Annotators disagree and no one has adjudicated yet.")


def quick_label(run_id: str, detection_id: str, key: str, stamp: str | None = None) -> None:
    """Name the annotator, label the detection, and the run's PPD (``stamp``: the run's stamp read at the top of
    the page, for the cached figures while no label has been saved since)."""
    saved = annotator_box(key) is not None and label_form(run_id, detection_id, key)
    if saved:
        st.toast("Label saved.")
    ppd_metrics(run_id, None if saved else stamp)


def highlighted(passage: labels.Passage) -> str:
    """The passage as escaped markdown, the gold answer in bold where it occurs."""
    if passage.span is None:
        return md_escape(passage.text)
    a, b = passage.span
    t = passage.text
    return f"{md_escape(t[:a])}**{md_escape(t[a:b])}**{md_escape(t[b:])}"


def gold_and_passage(run_id: str, detection_id: str) -> None:
    """The dataset's gold answer to the seed question and the story sentence the question is about."""
    ctx = read(store.detection_context, run_id, detection_id)
    if ctx is None:
        return
    gold = ctx["gold_answer"]
    st.markdown("**Reference (gold) answer**")
    st.text(gold if gold is not None else "The dataset gives no gold answer for this question.")
    passage = labels.story_passage(ctx["story"], ctx["question"], gold)
    if passage is None:
        return
    st.markdown("**Story passage**")
    st.markdown(highlighted(passage))
    st.caption("The story sentence that shares most content words with the seed question and the gold answer"
               + (" (the gold answer in bold)." if passage.span else "; the gold answer does not occur in it word for "
                  "word."))
    with st.expander("The whole story"):
        st.text(ctx["story"])


def oracle_panel(run_id: str) -> None:
    """The oracle's bug flags against the annotators' final labels, and the threshold that fits them best."""
    result = read(reports.run_oracle_vs_humans, run_id)
    if result is None:
        st.info("This run stored no threshold to measure the oracle at.")
        return
    if not result["labelled"]:
        st.info("No detection of this run has a final label yet: label some (or adjudicate the disputed ones).")
        return
    eps = result["threshold"]
    c1, c2, c3, c4 = st.columns(4)
    c1.metric(f"Oracle precision at ε = {eps:g}", fmt(result["precision"]),
              help="Every labelled detection was flagged by the oracle at the run's threshold: the share of them the "
                   "annotators confirmed as real bugs (the run's PPD).")
    c2.metric("Confirmed flags", f"{result['confirmed']} of {result['labelled']}")
    c3.metric("Best threshold", fmt(result["best_threshold"], 4),
              help="Highest accuracy against the labels on the calibration set; ties go to the threshold nearest ε "
                   "(the rule `mortar score-answers` uses).")
    c4.metric("Accuracy at best", fmt(result["best_accuracy"]),
              delta=None if not result["calibration"] else
              f"{result['best_accuracy'] - result['at_threshold']['accuracy']:+.3f} vs ε")
    st.caption(f"Calibration set: {result['calibration']} labelled detections flagged because their similarity fell "
               "below ε (RBT, MR1, MR3, METAL …; MR2/MR4 flag a high similarity and their false alarms are mostly the "
               "context check's; disputed detections wait for adjudication). Thresholds are swept over their "
               "similarities: a flag where similarity < t. Only detections are labelled, so the sweep can show that a "
               "lower threshold would have dropped false alarms, not which bugs a higher one would have found.")
    if result["curve"]:
        fig = figures.oracle_curve(result)
        st.plotly_chart(fig, key="l-fig-oracle")
        st.dataframe(result["curve"], hide_index=True, placeholder=MISSING, width="stretch", key="l-oracle-curve")
    st.markdown("The same from the command line:")
    st.code(f"mortar export {run_id} --what labelled-pairs --out labelled.jsonl\n"
            f"mortar score-answers labelled.jsonl --oracle {result['oracle'] or 'ORACLE'} --threshold {eps:g} "
            "--out scored.jsonl", language="bash")
