"""Labelling: score a sample of detections for precision (PPD) against the gold answer and the story passage,
compare two annotators (Cohen's kappa), adjudicate where they disagree, and measure the oracle against the labels."""

import pandas as pd
import streamlit as st

from mortar import ui
from mortar import labels, store
from mortar.ui.labelling import gold_and_passage, oracle_panel

st.title("Labelling")
st.caption("Precision labelling as in the paper: score each detection 0–10 for how acceptable the SUT's answer is; "
           "a score below 6 marks a true positive (a real bug). PPD is the share of true positives; Cohen's kappa "
           "says how well two annotators agree beyond chance.")

runs = ui.current_runs()
run_id = ui.pick_run_or_stop(runs, key="l-run")
annotator = ui.annotator_box("l")
if annotator is None:
    st.stop()

label_tab, agree_tab, oracle_tab = st.tabs(["Label a sample", "Agreement and adjudication", "Oracle against humans"])

STRATEGIES = {"random": (), "stratified by relation": ("relation",),
              "stratified by perturbation": ("perturbation",),
              "stratified by relation and perturbation": ("relation", "perturbation")}

with label_tab:
    with st.form("l-sample"):
        c1, c2, c3 = st.columns([1, 2, 1])
        size = c1.number_input("Sample size", min_value=1, max_value=5000, value=20, step=1)
        strategy = c2.radio("Sampling", list(STRATEGIES), horizontal=True,
                            help="Random: uniform over the run's detections. Stratified: the strata take turns, so "
                                 "rare relations or perturbations are represented.")
        seed = c3.number_input("Sample seed", min_value=0, value=0, step=1,
                               help="The same run, size, sampling and seed give the same sample, for every annotator.")
        if st.form_submit_button("Draw the sample"):
            ids = ui.read(labels.sample_detections, run_id, int(size), int(seed), STRATEGIES[strategy])
            st.session_state["l-drawn"] = {"run_id": run_id, "ids": ids}
            mine = ui.read(store.read_labels, run_id)
            done = set(mine.loc[mine["annotator"] == annotator, "detection_id"])
            st.session_state["l-pos"] = next((i for i, d in enumerate(ids) if d not in done), 0)

    sample = st.session_state.get("l-drawn")
    if not sample or sample["run_id"] != run_id:
        st.info("Draw a sample to start labelling.")
    elif not sample["ids"]:
        st.info("This run has no detections to label.")
    else:
        ids = sample["ids"]
        index = min(st.session_state.get("l-pos", 0), len(ids) - 1)
        mine = ui.read(store.read_labels, run_id)
        done = set(mine.loc[mine["annotator"] == annotator, "detection_id"]) & set(ids)
        st.progress(len(done) / len(ids), text=f"{len(done)} of {len(ids)} labelled by you · item {index + 1}")
        detection_id = ids[index]
        det = ui.read(store.detection, run_id, detection_id)
        st.markdown(f"**{det['relation']}** · detection {ui.md_escape(detection_id)} · similarity {ui.fmt(det['similarity'])}"
                    + (f" · {det['bug_level']}" if det["bug_level"] else ""))
        st.caption(ui.GLOSSARY.get(det["relation"], ""))
        rounds = ui.read(store.case_rounds, run_id, det["test_case_ids"][0])
        position = int(det["positions"][0])
        before = rounds[rounds["position"] < position]
        with st.expander(f"The conversation before the question ({len(before)} rounds)", expanded=False):
            if before.empty:
                st.caption("It is the first question of the dialogue.")
            for _, r in before.iterrows():
                st.text(f"Q{int(r['position'])}: {r['question']}\nA{int(r['position'])}: {r['sut_answer']}")
        asked = rounds[rounds["position"] == position]
        st.markdown("**Question**")
        st.text(asked["question"].iloc[0] if not asked.empty else "")
        c1, c2 = st.columns(2)
        pair = len(det["test_case_ids"]) > 1  # a group relation compared two versions
        c1.markdown("**" + ("Answer in one version" if pair else "SUT answer") + "**")
        c1.text(det["text_a"])
        c2.markdown("**" + ("Answer in another version" if pair else "Compared with") + "**")
        c2.text(det["text_b"])
        if not asked.empty and not pair:
            st.caption(ui.ec_summary(asked.iloc[0].to_dict()))
        gold_and_passage(run_id, detection_id)
        if ui.label_form(run_id, detection_id, key="l-form"):
            st.session_state["l-pos"] = min(index + 1, len(ids) - 1)
            st.toast("Label saved.")
            st.rerun()
        c1, c2, c3, _ = st.columns([1, 1, 1, 3])
        if c1.button("← Back", disabled=index == 0, key="l-back"):
            st.session_state["l-pos"] = index - 1
            st.rerun()
        if c2.button("Skip →", disabled=index >= len(ids) - 1, key="l-skip"):
            st.session_state["l-pos"] = index + 1
            st.rerun()
        if c3.button("Inspect", key="l-inspect", help="Open this detection in the inspector."):
            ui.open_inspector(run_id, detection_id)
    ui.ppd_metrics(run_id)

with agree_tab:
    frame = ui.read(store.read_labels, run_id)
    people = sorted(frame["annotator"].unique())
    if len(people) < 2:
        st.info("Agreement needs two annotators who labelled this run"
                + (f"; so far only {ui.md_escape(people[0])} has." if people else "."))
    else:
        c1, c2 = st.columns(2)
        a = c1.selectbox("Annotator A", people, index=0, key="l-a")
        b = c2.selectbox("Annotator B", people, index=1, key="l-b")
        if a == b:
            st.warning("Choose two different annotators.")
        else:
            ag = labels.agreement(frame, a, b)
            c1, c2, c3, c4 = st.columns(4)
            c1.metric(f"PPD of {a}", ui.fmt(ag.ppd_a), help=ui.GLOSSARY["PPD"])
            c2.metric(f"PPD of {b}", ui.fmt(ag.ppd_b), help=ui.GLOSSARY["PPD"])
            c3.metric("Cohen's kappa", ui.fmt(ag.kappa), help=ui.GLOSSARY["kappa"])
            c4.metric("Labelled by both", ag.common)
            if ag.disagreements:
                st.subheader(f"Disagreements ({len(ag.disagreements)})")
                adj = ui.read(store.read_adjudications, run_id).set_index("detection_id")
                pivot = frame.pivot(index="detection_id", columns="annotator", values="score")
                table = pd.DataFrame({"detection": ag.disagreements,
                                      f"score {a}": [pivot.loc[d, a] for d in ag.disagreements],
                                      f"score {b}": [pivot.loc[d, b] for d in ag.disagreements],
                                      "final": [("true positive" if adj.loc[d, "true_positive"] else "false positive")
                                                if d in adj.index else "" for d in ag.disagreements]})
                st.dataframe(table, hide_index=True, placeholder=ui.MISSING, width="stretch")
                with st.form("l-adjudicate"):
                    st.markdown("**Adjudicate** — decide the final label of a disputed detection")
                    which = st.selectbox("Detection", ag.disagreements)
                    verdict = st.radio("Final label", ["true positive (a real bug)", "false positive"], horizontal=True)
                    note = st.text_input("Note (optional)")
                    if st.form_submit_button("Save the decision", type="primary"):
                        try:
                            labels.adjudicate(run_id, which, verdict.startswith("true"), annotator, note,
                                              wait_s=ui.WRITE_WAIT_S)
                        except store.StoreBusy:
                            st.error("Not saved: a run in the background is writing to the store. Try again soon.")
                        else:
                            st.toast("Decision saved.")
                            st.rerun()
            else:
                st.success("They agree on every detection both labelled.")
    st.subheader("All labels of this run")
    st.dataframe(frame, hide_index=True, placeholder=ui.MISSING, width="stretch")

with oracle_tab:
    st.caption("The labelled detections are a calibration set for the oracle: its similarity against the "
               "annotators' final verdict.")
    oracle_panel(run_id)
