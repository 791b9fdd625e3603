"""Metrics: the paper's tables and plots for one run, and the comparison across runs and SUTs."""

import html

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

import ui
from mortar import labels, metrics, store

st.title("Metrics")
st.caption("RBT (the seeds asked as they are) against MT (MR1–MR4 on the perturbed dialogues), as in the paper's "
           "tables. Every figure downloads as HTML (interactive, offline) or PNG, every table as CSV.")

runs = ui.read(ui.runs_overview)
run_id = ui.pick_run_or_stop(runs, key="m-run")
row = runs[runs["run_id"] == run_id].iloc[0]


@st.cache_data(max_entries=16, show_spinner="Computing the run's metrics…")
def run_report(db: str, run_id: str, stamp: str) -> dict:
    def load(con):
        return store.read_checks(con, run_id), *store.read_cases_and_verdicts(con, run_id)

    checks, cases, verdicts = ui.read(load)
    return metrics.report(checks, cases, verdicts)


report = run_report(str(store.db_path()), run_id, f"{row['created_at']}|{row['checks']}|{row['status']}")
rbt, mt = report["metrics"]["RBT"], report["metrics"]["MT"]
ppd, labelled, _ = ui.read(ui.run_ppd, run_id)

st.subheader(f"Run {ui.md_escape(run_id)} — SUT {ui.md_escape(row['sut'])}")
cols = st.columns(7)
for col, (name, value, help_key) in zip(cols, [
        ("MT NBugs", mt["NBugs"], "NBugs"), ("RBT NBugs", rbt["NBugs"], "NBugs"), ("MT RETC", mt["RETC"], "RETC"),
        ("MT BPTC", mt["BPTC"], "BPTC"), ("MT Rate+", mt["Rate+"], "Rate+"), ("CV of levels", mt["CV"], "CV"),
        ("PPD", ppd, "PPD")]):
    col.metric(name, ui.fmt(value, 2) if isinstance(value, float) else value, help=ui.GLOSSARY[help_key])
if labelled:
    st.caption(f"PPD from {labelled} labelled detections.")

headline = pd.DataFrame(report["metrics"]).T.apply(pd.to_numeric, errors="coerce").reset_index(names="method")
st.markdown("**RBT vs MT** — " + ui.md_escape(" ".join(ui.GLOSSARY[k] for k in ("RETC", "BPTC", "Rate+"))))
st.dataframe(headline, hide_index=True, width="stretch", key="m-headline")
ui.csv_download(headline, f"{run_id}-rbt-vs-mt", "m-headline-csv")

fig = make_subplots(rows=1, cols=2, subplot_titles=("Bugs found (NBugs)", "Per test case and per check"))
COLOURS = {"RBT": "#8c8479", "MT": "#b5452b", "METAL": "#4c78a8"}
for method, colour in COLOURS.items():
    if method not in report["metrics"]:
        continue
    m = report["metrics"][method]
    fig.add_trace(go.Bar(x=["NBugs"], y=[m["NBugs"]], name=method, marker_color=colour, legendgroup=method), 1, 1)
    fig.add_trace(go.Bar(x=["RETC", "BPTC", "Rate+"], y=[m["RETC"], m["BPTC"], m["Rate+"]], name=method,
                         marker_color=colour, legendgroup=method, showlegend=False), 1, 2)
fig.update_layout(barmode="group", height=380, title="RBT vs MT" + (" vs METAL" if "METAL" in report["metrics"] else ""))
st.plotly_chart(fig, key="m-fig-rbt-mt")
ui.figure_downloads(fig, f"{run_id}-rbt-vs-mt", "m-fig-rbt-mt")

TABLES = {
    "table_vi": ("Table VI — test cases and questions per perturbation",
                 "Questions whose context is not equivalent (EC false) fall under MR2, the others under MR1."),
    "table_vii": ("Table VII — bugs per perturbation", "An MR3/MR4 group bug counts for every perturbation in its group."),
    "table_viii": ("Table VIII — bugs per metamorphic relation", ui.GLOSSARY["Rate+"]),
    "table_ix": ("Table IX — bug levels per metamorphic relation", ui.LEVELS_HELP),
}
left, right = st.columns(2)
for slot, key in zip([left, right, left, right], TABLES):
    title, caption = TABLES[key]
    with slot:
        st.markdown(f"**{title}**")
        st.caption(caption)
        frame = pd.DataFrame(report[key])
        st.dataframe(frame, hide_index=True, width="stretch", key=f"m-{key}")
        ui.csv_download(frame, f"{run_id}-{key}", f"m-{key}-csv")

levels = pd.DataFrame(report["table_ix"]).melt(id_vars="relation", var_name="level", value_name="bugs")
fig_levels = px.bar(levels, x="relation", y="bugs", color="level", title="Bug levels per relation (L1/L2/L3)",
                    color_discrete_map={"L1": "#8c8479", "L2": "#e4a33b", "L3": "#b5452b"}, height=380)
per_pert = pd.DataFrame(report["table_vii"])
fig_pert = px.bar(per_pert if not per_pert.empty else pd.DataFrame({"perturbation": [], "bugs": []}),
                  x="perturbation", y="bugs", title="Bugs per perturbation", height=380,
                  color_discrete_sequence=["#b5452b"])
per_mr = pd.DataFrame(report["table_viii"])
fig_mr = make_subplots(specs=[[{"secondary_y": True}]])
fig_mr.add_trace(go.Bar(x=per_mr["relation"], y=per_mr["bugs"], name="bugs", marker_color="#b5452b"))
fig_mr.add_trace(go.Scatter(x=per_mr["relation"], y=per_mr["Rate+"], name="Rate+", mode="lines+markers",
                            marker_color="#4c78a8"), secondary_y=True)
fig_mr.update_layout(title="Contribution of each relation: bugs and Rate+", height=380)
fig_mr.update_yaxes(title_text="bugs", secondary_y=False)
fig_mr.update_yaxes(title_text="Rate+", range=[0, 1.05], tickformat=".0%", secondary_y=True, showgrid=False)
c1, c2, c3 = st.columns(3)
for slot, f, name in ((c1, fig_levels, "bug-levels"), (c2, fig_pert, "per-perturbation"), (c3, fig_mr, "per-relation")):
    with slot:
        st.plotly_chart(f, key=f"m-fig-{name}")
        ui.figure_downloads(f, f"{run_id}-{name}", f"m-fig-{name}")

if "METAL" in report["metrics"]:
    st.header("MORTAR vs METAL")
    st.caption(ui.GLOSSARY["METAL"] + " A bug is unique to a method when the other method flagged no bug on the same "
               "seed question (the paper's Table V).")
    unique = pd.DataFrame(report["uniqueness"])
    st.dataframe(unique, hide_index=True, width="stretch", key="m-uniqueness")
    ui.csv_download(unique, f"{run_id}-uniqueness", "m-uniqueness-csv")
    parts = report["overlap"]
    fig_overlap = go.Figure([go.Bar(y=["seed questions"], x=[n], name=part, orientation="h", text=[n],
                                    marker_color=colour)
                             for (part, n), colour in zip(parts.items(), ("#b5452b", "#a36b8f", "#4c78a8"))])
    fig_overlap.update_layout(barmode="stack", height=260, title="Overlap: seed questions with bugs, by method",
                              xaxis_title="seed questions with at least one bug")
    per_level = unique.melt(id_vars="method", value_vars=[f"unique_{lv}" for lv in metrics.LEVELS],
                            var_name="level", value_name="unique bugs")
    per_level["level"] = per_level["level"].str.removeprefix("unique_")
    fig_unique = px.bar(per_level, x="level", y="unique bugs", color="method", barmode="group", height=360,
                        title="Unique bugs per bug level", color_discrete_map=COLOURS)
    c1, c2 = st.columns(2)
    for slot, f, name in ((c1, fig_overlap, "overlap"), (c2, fig_unique, "unique-per-level")):
        with slot:
            st.plotly_chart(f, key=f"m-fig-{name}")
            ui.figure_downloads(f, f"{run_id}-{name}", f"m-fig-{name}")

precision = ui.read(labels.precision_by_method, run_id)
if not precision.empty:
    st.subheader("Precision per method")
    st.caption(ui.GLOSSARY["PPD"] + " " + ui.GLOSSARY["kappa"])
    st.dataframe(precision, hide_index=True, width="stretch", key="m-precision")
    ui.csv_download(precision, f"{run_id}-precision", "m-precision-csv")

st.header("Across runs")
finished = runs[runs["checks"] > 0].copy()
st.caption("Every finished run; compare SUTs on the same dataset and settings. " + ui.GLOSSARY["BPTC"])
finished["run"] = [html.escape(f"{s} · {r}") for s, r in zip(finished["sut"], finished["run_id"])]
compare = finished[["run_id", "sut", "dataset", "RBT NBugs", "MT NBugs", "RBT BPTC", "MT BPTC", "RBT Rate+", "MT Rate+",
                    "L1", "L2", "L3", "PPD", "labelled"]]
st.dataframe(compare, hide_index=True, width="stretch", key="m-compare")
ui.csv_download(compare, "runs-compared", "m-compare-csv")
long = finished.melt(id_vars="run", value_vars=["RBT NBugs", "MT NBugs"], var_name="method", value_name="bugs")
fig_runs = px.bar(long, x="run", y="bugs", color="method", barmode="group", title="Bugs per run and SUT: RBT vs MT",
                  color_discrete_map={"RBT NBugs": "#8c8479", "MT NBugs": "#b5452b"}, height=400)
by_sut = finished.groupby("sut", as_index=False)[["RBT NBugs", "MT NBugs", "L1", "L2", "L3"]].sum()
by_sut["sut"] = by_sut["sut"].map(html.escape)
fig_sut = px.bar(by_sut.melt(id_vars="sut", value_vars=["L1", "L2", "L3"], var_name="level", value_name="bugs"),
                 x="sut", y="bugs", color="level", title="MT bug levels per SUT (all runs)", height=400,
                 color_discrete_map={"L1": "#8c8479", "L2": "#e4a33b", "L3": "#b5452b"})
c1, c2 = st.columns(2)
with c1:
    st.plotly_chart(fig_runs, key="m-fig-runs")
    ui.figure_downloads(fig_runs, "runs-rbt-vs-mt", "m-fig-runs")
with c2:
    st.plotly_chart(fig_sut, key="m-fig-suts")
    ui.figure_downloads(fig_sut, "suts-bug-levels", "m-fig-suts")
