"""Overview: every run with its SUT, dataset, status and headline metrics; the demo run on an empty store."""

import streamlit as st

import ui

st.title("Overview")
st.caption("Each run tests one dialogue system (the SUT) on one dataset: reference-based testing (RBT) on the seeds "
           "as they are, and metamorphic testing (MT: MR1–MR4) on their dialogue-level perturbations. "
           "Hover over a column title for what it means.")

runs = ui.read(ui.runs_overview)
has_jobs = not ui.read(ui.job_rows).empty

if runs.empty and not has_jobs:
    st.info("The store is empty. Start a small demo run on the bundled sample data with the local default SUT "
            f"(SmolLM2-135M, no key or network needed): one seed dialogue, shuffled (DRS) and with rounds dropped (DRR). It takes "
            f"{ui.DEMO_DURATION}; it runs in the background, so you may close this tab meanwhile.")
    if st.button("Start the demo run", type="primary", icon=":material/play_arrow:"):
        job_id = ui.start_job(dict(ui.DEMO_ARGS))
        st.toast(f"Demo run started (job {job_id}).")
        st.rerun()
    st.caption("Or configure a run on the **Launch** page.")
else:
    finished = runs[runs["checks"] > 0]
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Runs", len(runs), help="Runs in the store, including test-case generations and unfinished runs.")
    c2.metric("SUTs tested", finished["sut"].nunique())
    c3.metric("MT bugs (all runs)", int(finished["MT NBugs"].fillna(0).sum()), help=ui.GLOSSARY["NBugs"])
    c4.metric("Detections labelled", int(runs["labelled"].sum()),
              help="Detections with a final precision label (see the Labelling page). " + ui.GLOSSARY["PPD"])
    col = st.column_config
    shown = runs.drop(columns=["checks"])
    st.dataframe(
        shown, hide_index=True, width="stretch",
        column_config={
            "run_id": col.TextColumn("run", help="Same dataset, seed and settings give the same run id."),
            "kind": col.TextColumn("kind", help="'run': a full MORTAR run; 'generate': test cases only."),
            "sut": col.TextColumn("SUT", help="The dialogue system under test."),
            "created_at": col.DatetimeColumn("started", format="YYYY-MM-DD HH:mm"),
            "test_cases": col.NumberColumn("test cases", help="ORIG cases (for RBT) plus perturbed cases (for MT)."),
            "RBT NBugs": col.NumberColumn(help=ui.GLOSSARY["RBT"] + " " + ui.GLOSSARY["NBugs"]),
            "MT NBugs": col.NumberColumn(help=ui.GLOSSARY["MT"] + " " + ui.GLOSSARY["NBugs"]),
            "RBT BPTC": col.NumberColumn(format="%.2f", help=ui.GLOSSARY["BPTC"]),
            "MT BPTC": col.NumberColumn(format="%.2f", help=ui.GLOSSARY["BPTC"]),
            "RBT Rate+": col.NumberColumn(format="%.2f", help=ui.GLOSSARY["Rate+"]),
            "MT Rate+": col.NumberColumn(format="%.2f", help=ui.GLOSSARY["Rate+"]),
            "L1": col.NumberColumn(help=ui.GLOSSARY["L1"]), "L2": col.NumberColumn(help=ui.GLOSSARY["L2"]),
            "L3": col.NumberColumn(help=ui.GLOSSARY["L3"]),
            "METAL NBugs": col.NumberColumn(help=ui.GLOSSARY["METAL"] + " " + ui.GLOSSARY["NBugs"]),
            "oracle": col.TextColumn(help=ui.GLOSSARY["similarity"]),
            "threshold": col.NumberColumn("ε", format="%.2f", help="Similarity threshold ε of the run."),
            "PPD": col.NumberColumn(format="%.2f", help=ui.GLOSSARY["PPD"]),
            "labelled": col.NumberColumn(help="Detections with a final precision label."),
        })
    st.page_link("pages/violations.py", label="Browse the violations", icon=":material/search:")

st.subheader("Background runs")
st.caption("Runs started from the dashboard keep going when the tab is closed; progress updates here live.")
ui.jobs_panel("overview")
