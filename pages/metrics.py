"""Metrics: the paper's tables and plots for one run, and the comparison across runs and SUTs."""

import html

import pandas as pd
import plotly.express as px
import streamlit as st

from mortar import figures, report_html, store, ui
from mortar import reports
from mortar.augment import augmented_records
from mortar.formats.nlu import as_json
from mortar.figures import LEVEL_COLOURS
from mortar.profiles import settings_lines
from mortar.vocab import LEVELS, MT, RBT

st.title("Metrics")
st.caption(f"{RBT} (the seeds asked as they are) against every test method of the run ({MT}: MORTAR's relations on "
           "the perturbed dialogues), as in the paper's tables. Every figure downloads as HTML (interactive, "
           "offline) or PNG, every table as CSV.")

runs = ui.current_runs()
run_id = ui.pick_run_or_stop(runs, key="m-run")
row = runs[runs["run_id"] == run_id].iloc[0]


@st.cache_data(max_entries=16, show_spinner="Computing the run's metrics…")
def run_report(db: str, run_id: str, stamp: str) -> dict:
    return ui.read(reports.run_report, run_id)


report = run_report(str(store.db_path()), run_id, f"{row['created_at']}|{row['checks']}|{row['status']}")
methods = [m for m in report["metrics"] if m != RBT]  # the labels of the methods that ran, in registry order
colours = figures.method_colours()
main = methods[0] if methods else RBT  # the first method of the run leads the headline (MORTAR's MT when it ran)
rbt, lead = report["metrics"][RBT], report["metrics"][main]
ppd, labelled, _ = ui.read(ui.run_ppd, run_id)

st.subheader(f"Run {ui.md_escape(run_id)} — SUT {ui.md_escape(row['sut'])}")
cols = st.columns(7)
for col, (name, value, help_key) in zip(cols, [
        (f"{main} NBugs", lead["NBugs"], "NBugs"), (f"{RBT} NBugs", rbt["NBugs"], "NBugs"),
        (f"{main} RETC", lead["RETC"], "RETC"), (f"{main} BPTC", lead["BPTC"], "BPTC"),
        (f"{main} Rate+", lead["Rate+"], "Rate+"), ("CV of levels", lead["CV"], "CV"), ("PPD", ppd, "PPD")]):
    col.metric(name, ui.fmt(value, 2) if isinstance(value, float) else value, help=ui.help_for(help_key))
if labelled:
    st.caption(f"PPD from {labelled} labelled detections.")
against = ui.read(lambda con: settings_lines(store.run_config(con, run_id).get("run_config")))
if against:
    st.caption(ui.md_escape(against[0] + " " + "; ".join(line.strip() for line in against[1:])))
st.download_button("Report to share (HTML)", data=lambda: ui.read(report_html.html_report, run_id).encode(),
                   file_name=f"{run_id}-report.html", mime="text/html", key="m-report-html",
                   icon=":material/description:", on_click="ignore",
                   help="This run's summary, tables and figures, worked examples of detections and a glossary, as "
                        "one HTML file that opens offline in any browser (`mortar export RUN --format html`).")

title = " vs ".join(report["metrics"])
headline = pd.DataFrame(report["metrics"]).T.apply(pd.to_numeric, errors="coerce").reset_index(names="method")
st.markdown(f"**{ui.md_escape(title)}** — " + ui.md_escape(" ".join(ui.help_for(k) for k in ("RETC", "BPTC", "Rate+"))))
ui.table(headline, key="m-headline")
ui.csv_download(headline, f"{run_id}-headline", "m-headline-csv")

fig = figures.headline(report)
st.plotly_chart(fig, key="m-fig-headline")
ui.figure_downloads(fig, f"{run_id}-headline", "m-fig-headline")

tables = report["tables"]  # each method's own tables (MORTAR: the paper's Tables VI–IX)
left, right = st.columns(2)
for i, table in enumerate(tables):
    with (left, right)[i % 2]:
        st.markdown(f"**{ui.md_escape(table.title)}**")
        st.caption(table.caption)
        frame = pd.DataFrame(table.rows)
        ui.table(frame, key=f"m-{table.key}")
        ui.csv_download(frame, f"{run_id}-{table.key}", f"m-{table.key}-csv")

if any(t.key == "dialtest_nlu" for t in tables):  # an intent/slot run: its transformed utterances, labelled
    records = ui.read(augmented_records, run_id)
    if records:
        st.download_button(f"Transformed utterances, labelled ({sum(r['transformed'] for r in records)}, nlu JSON)",
                           data=as_json(records).encode(), file_name=f"{run_id}-augmented.json",
                           mime="application/json", key="m-augmented", icon=":material/download:", on_click="ignore",
                           help="DialTest's transformed utterances with their seed's intent and slot tags, in the nlu "
                                "format (it loads as a dataset; `mortar retrain RUN` measures retraining on them)")

run_figures = figures.table_figures(report)
for slot, (name, f) in zip(st.columns(max(1, min(3, len(run_figures)))) * 2, run_figures):
    with slot:
        st.plotly_chart(f, key=f"m-fig-{name}")
        ui.figure_downloads(f, f"{run_id}-{name}", f"m-fig-{name}")

if "uniqueness" in report:
    st.header(" vs ".join(methods))
    st.caption(" ".join(ui.help_for(m) for m in methods) + " A bug is unique to a method when no other method "
               "flagged a bug on the same seed question (the paper's Table V).")
    unique = pd.DataFrame(report["uniqueness"])
    ui.table(unique, key="m-uniqueness")
    ui.csv_download(unique, f"{run_id}-uniqueness", "m-uniqueness-csv")
    for slot, (name, f) in zip(st.columns(2), figures.comparison_figures(report)):
        with slot:
            st.plotly_chart(f, key=f"m-fig-{name}")
            ui.figure_downloads(f, f"{run_id}-{name}", f"m-fig-{name}")

priorities = ui.read(reports.prioritisation, run_id)
if priorities:
    st.subheader("Test prioritisation: bugs found against the share of the suite executed")
    st.caption("Orders stored by `mortar prioritise RUN --by gri|wali|gini|random` (an intent/slot run stores its "
               "gini order itself: the classifier's answers carry their intent distributions). "
               + reports.PRIORITISATION_CAPTION)
    apfd = pd.DataFrame(reports.prioritisation_rows(priorities))
    fig_prio = figures.prioritisation(priorities)
    c1, c2 = st.columns([1, 2])
    with c1:
        ui.table(apfd, key="m-apfd")
        ui.csv_download(apfd, f"{run_id}-apfd", "m-apfd-csv")
    with c2:
        st.plotly_chart(fig_prio, key="m-fig-prioritisation")
        ui.figure_downloads(fig_prio, f"{run_id}-prioritisation", "m-fig-prioritisation")

precision = ui.read(reports.run_precision, run_id)  # read on every render: labels change without the run
if precision:
    st.subheader("Precision of the labelled detections")
    st.caption(ui.GLOSSARY["PPD"] + " " + ui.GLOSSARY["kappa"] + " Annotators are combined as everywhere: an "
               "adjudication decides, otherwise the annotators' common verdict; detections they disagree on are "
               "*disputed* and left out of PPD until adjudicated. A group detection (MR3/MR4) counts for every "
               "perturbation of its group. Label on the Labelling page.")
    shown = pd.DataFrame(precision)
    tabs = st.columns(3)
    for slot, group in zip(tabs, ("method", "relation", "perturbation")):
        part = shown[shown["group"] == group].drop(columns="group").rename(columns={"name": group})
        with slot:
            st.markdown(f"**Per {group}**")
            ui.table(part, key=f"m-precision-{group}")
            ui.csv_download(part, f"{run_id}-precision-{group}", f"m-precision-{group}-csv")
    fig_precision = figures.precision(precision)
    st.plotly_chart(fig_precision, key="m-fig-precision")
    ui.figure_downloads(fig_precision, f"{run_id}-precision", "m-fig-precision")

st.header("Across runs")
finished = runs[runs["checks"] > 0].copy()
st.caption("Every finished run; compare SUTs on the same dataset and settings. " + ui.GLOSSARY["BPTC"])
finished["run"] = [html.escape(f"{s} · {r}") for s, r in zip(finished["sut"], finished["run_id"])]
compare = finished[["run_id", "sut", "dataset", *[c for c in finished.columns if c.split(" ")[-1] in
                                                   ("NBugs", "BPTC", "Rate+") or c in LEVELS], "PPD", "labelled"]]
ui.table(compare, key="m-compare")
ui.csv_download(compare, "runs-compared", "m-compare-csv")
bug_columns = [c for c in finished.columns if c.endswith(" NBugs")]
long = finished.melt(id_vars="run", value_vars=bug_columns, var_name="method", value_name="bugs")
long["method"] = long["method"].str.removesuffix(" NBugs")
fig_runs = px.bar(long, x="run", y="bugs", color="method", barmode="group", title="Bugs per run and SUT, by method",
                  color_discrete_map=colours, height=400)
by_sut = finished.groupby("sut", as_index=False)[list(LEVELS)].sum()
by_sut["sut"] = by_sut["sut"].map(html.escape)
fig_sut = px.bar(by_sut.melt(id_vars="sut", value_vars=list(LEVELS), var_name="level", value_name="bugs"),
                 x="sut", y="bugs", color="level", title=f"{MT} bug levels per SUT (all runs)", height=400,
                 color_discrete_map=LEVEL_COLOURS)
c1, c2 = st.columns(2)
with c1:
    st.plotly_chart(fig_runs, key="m-fig-runs")
    ui.figure_downloads(fig_runs, "runs-rbt-vs-mt", "m-fig-runs")
with c2:
    st.plotly_chart(fig_sut, key="m-fig-suts")
    ui.figure_downloads(fig_sut, "suts-bug-levels", "m-fig-suts")
