"""Export: a run's rounds, detections, labels and metrics as CSV, Parquet or JSON."""

import io

import pandas as pd
import streamlit as st

from mortar import ui
from mortar import store
from mortar import reports

st.title("Export")
st.caption("Downloads of one run: every round with the SUT's answer, reference, similarity and EC verdict; the "
           "detections; the precision labels with the final (adjudicated) labels; and the metrics of RBT and MT.")

runs = ui.current_runs()
run_id = ui.pick_run_or_stop(runs, key="e-run", with_checks=False)




def labels_frame(con, run_id):
    frame = store.read_labels(con, run_id)
    final = store.final_labels(con, run_id)[["detection_id", "true_positive", "decided_by"]]
    return frame.merge(final.rename(columns={"true_positive": "final_true_positive"}), on="detection_id", how="left")


WHAT = {
    "rounds": ("Rounds", "every question of every test case, the SUT's answer, reference, similarity, EC verdict",
               store.rounds_export),
    "detections": ("Detections", "violated checks with relation, perturbations, compared texts, bug level",
                   store.detections_export),
    "labels": ("Labels", "every annotator's score and note, and each detection's final label", labels_frame),
    "metrics": ("Metrics", "NBugs, RETC, BPTC, Rate+, L1–L3 and CV of RBT and MT", reports.metrics_frame),
}
FORMATS = {"CSV": ("csv", "text/csv"), "Parquet": ("parquet", "application/vnd.apache.parquet"),
           "JSON": ("json", "application/json")}


def encode(frame: pd.DataFrame, fmt: str) -> bytes:
    if fmt == "CSV":
        return frame.to_csv(index=False).encode()
    if fmt == "Parquet":
        buf = io.BytesIO()
        frame.to_parquet(buf, index=False)
        return buf.getvalue()
    return frame.to_json(orient="records", force_ascii=False, date_format="iso", indent=1).encode()


fmt = st.radio("Format", list(FORMATS), horizontal=True, key="e-format",
               help="JSON is one array of records; Parquet keeps column types.")
for what, (title, description, query) in WHAT.items():
    frame = ui.read(query, run_id)
    with st.container(border=True):
        c1, c2 = st.columns([4, 1])
        c1.markdown(f"**{title}** — {len(frame):,} rows")
        c1.caption(description)
        ext, mime = FORMATS[fmt]
        c2.download_button(f"Download {title.lower()}", data=encode(frame, fmt), file_name=f"{run_id}-{what}.{ext}",
                           mime=mime, key=f"e-{what}", icon=":material/download:", on_click="ignore")
