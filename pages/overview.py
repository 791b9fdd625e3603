"""Overview: every run with its SUT, dataset, status and headline metrics; the demo run on an empty store."""

import streamlit as st

from mortar import ui
from mortar import reports
from mortar.vocab import DRR, DRS, LEVELS, MT, ORIG, RBT

st.title("Overview")
st.caption(f"Each run tests one dialogue system (the SUT) on one dataset: reference-based testing ({RBT}) on the "
           f"seeds as they are, and each chosen method's tests ({MT}: MORTAR's metamorphic relations on dialogue-level "
           "perturbations). "
           "Hover over a column title for what it means.")

runs = ui.current_runs()
has_jobs = not ui.read(ui.job_rows).empty

if runs.empty and not has_jobs:
    st.info("The store is empty. Start a small demo run on the bundled sample data with the local default SUT "
            f"(SmolLM2-135M, no key or network needed): one seed dialogue, shuffled ({DRS}) and with rounds dropped ({DRR}). "
            "It takes "
            f"{ui.DEMO_DURATION}; it runs in the background, so you may close this tab meanwhile.")
    if st.button("Start the demo run", type="primary", icon=":material/play_arrow:"):
        job_id = ui.start_job(ui.DEMO_CONFIG)
        st.toast(f"Demo run started (job {job_id}).")
        st.rerun()
    st.caption("Or configure a run on the **Launch** page.")
else:
    finished = runs[runs["checks"] > 0]
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Runs", len(runs), help="Runs in the store, including test-case generations and unfinished runs.")
    c2.metric("SUTs tested", finished["sut"].nunique())
    c3.metric(f"{MT} bugs (all runs)", int(finished[f"{MT} NBugs"].fillna(0).sum()), help=ui.help_for("NBugs"))
    c4.metric("Detections labelled", int(runs["labelled"].sum()),
              help="Detections with a final precision label (see the Labelling page). " + ui.GLOSSARY["PPD"])
    col = st.column_config
    shown = runs.drop(columns=["checks"])
    help_of = {f"{label} {metric}": ui.help_for(label) + " " + ui.help_for(metric)
               for label in reports.method_labels() for metric in ("NBugs", "BPTC", "Rate+")}
    config = {column: col.NumberColumn(format="%d" if column.endswith("NBugs") else "%.2f", help=help_of[column])
              for column in shown.columns if column in help_of}
    config.update({level: col.NumberColumn(help=f"MORTAR ({MT}) bugs at this level. " + ui.help_for(level))
                   for level in LEVELS})
    config.update({
        "run_id": col.TextColumn("run", help="Same dataset, seed and settings give the same run id."),
        "kind": col.TextColumn("kind", help="'run': a full run; 'generate': test cases only."),
        "sut": col.TextColumn("SUT", help="The dialogue system under test."),
        "created_at": col.DatetimeColumn("started", format="YYYY-MM-DD HH:mm"),
        "test_cases": col.NumberColumn("test cases", help=f"{ORIG} cases (the seeds as they are, for {RBT}) plus "
                                                          "every method's test cases."),
        "oracle": col.TextColumn(help=ui.help_for("similarity")),
        "threshold": col.NumberColumn("ε", format="%.2f", help="Similarity threshold ε of the run."),
        "PPD": col.NumberColumn(format="%.2f", help=ui.help_for("PPD")),
        "labelled": col.NumberColumn(help="Detections with a final precision label."),
    })
    st.dataframe(shown, hide_index=True, placeholder=ui.MISSING, width="stretch", column_config=config)
    st.page_link("pages/violations.py", label="Browse the violations", icon=":material/search:")

st.subheader("Background runs")
st.caption("Runs started from the dashboard keep going when the tab is closed; progress updates here live.")
ui.jobs_panel("overview")
