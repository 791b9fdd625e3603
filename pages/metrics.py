"""Metrics: the paper's tables and plots for one run, and the comparison across runs and SUTs."""

import html

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from mortar import labels, metrics, store, ui
from mortar.vocab import L1, L2, L3, LEVELS, MT, RBT

LEVEL_COLOURS = {L1: "#8c8479", L2: "#e4a33b", L3: "#b5452b"}
PALETTE = ("#8c8479", "#b5452b", "#4c78a8", "#54a24b", "#a36b8f", "#e4a33b", "#72b7b2")  # RBT first, then methods

st.title("Metrics")
st.caption(f"{RBT} (the seeds asked as they are) against every test method of the run ({MT}: MORTAR's relations on "
           "the perturbed dialogues), as in the paper's tables. Every figure downloads as HTML (interactive, "
           "offline) or PNG, every table as CSV.")

runs = ui.read(ui.runs_overview)
run_id = ui.pick_run_or_stop(runs, key="m-run")
row = runs[runs["run_id"] == run_id].iloc[0]


@st.cache_data(max_entries=16, show_spinner="Computing the run's metrics…")
def run_report(db: str, run_id: str, stamp: str) -> dict:
    return ui.read(metrics.run_report, run_id)


report = run_report(str(store.db_path()), run_id, f"{row['created_at']}|{row['checks']}|{row['status']}")
methods = [m for m in report["metrics"] if m != RBT]  # the labels of the methods that ran, in registry order
colours = dict(zip(metrics.method_labels(), PALETTE * 2))
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

title = " vs ".join(report["metrics"])
headline = pd.DataFrame(report["metrics"]).T.apply(pd.to_numeric, errors="coerce").reset_index(names="method")
st.markdown(f"**{ui.md_escape(title)}** — " + ui.md_escape(" ".join(ui.help_for(k) for k in ("RETC", "BPTC", "Rate+"))))
st.dataframe(headline, hide_index=True, width="stretch", key="m-headline")
ui.csv_download(headline, f"{run_id}-headline", "m-headline-csv")

fig = make_subplots(rows=1, cols=2, subplot_titles=("Bugs found (NBugs)", "Per test case and per check"))
for method, m in report["metrics"].items():
    fig.add_trace(go.Bar(x=["NBugs"], y=[m["NBugs"]], name=method, marker_color=colours.get(method),
                         legendgroup=method), 1, 1)
    fig.add_trace(go.Bar(x=["RETC", "BPTC", "Rate+"], y=[m["RETC"], m["BPTC"], m["Rate+"]], name=method,
                         marker_color=colours.get(method), legendgroup=method, showlegend=False), 1, 2)
fig.update_layout(barmode="group", height=380, title=html.escape(title))
st.plotly_chart(fig, key="m-fig-headline")
ui.figure_downloads(fig, f"{run_id}-headline", "m-fig-headline")

tables = report["tables"]  # each method's own tables (MORTAR: the paper's Tables VI–IX)
left, right = st.columns(2)
for i, table in enumerate(tables):
    with (left, right)[i % 2]:
        st.markdown(f"**{ui.md_escape(table.title)}**")
        st.caption(table.caption)
        frame = pd.DataFrame(table.rows)
        st.dataframe(frame, hide_index=True, width="stretch", key=f"m-{table.key}")
        ui.csv_download(frame, f"{run_id}-{table.key}", f"m-{table.key}-csv")

by_key = {t.key: pd.DataFrame(t.rows) for t in tables}
figures = []
if "table_ix" in by_key:
    levels = by_key["table_ix"].melt(id_vars="relation", var_name="level", value_name="bugs")
    figures.append(("bug-levels", px.bar(levels, x="relation", y="bugs", color="level", height=380,
                                         title="Bug levels per relation (L1/L2/L3)",
                                         color_discrete_map=LEVEL_COLOURS)))
if "table_vii" in by_key:
    per_pert = by_key["table_vii"]
    figures.append(("per-perturbation", px.bar(
        per_pert if not per_pert.empty else pd.DataFrame({"perturbation": [], "bugs": []}), x="perturbation", y="bugs",
        title="Bugs per perturbation", height=380, color_discrete_sequence=[colours[MT]])))
if "table_viii" in by_key:
    per_mr = by_key["table_viii"]
    fig_mr = make_subplots(specs=[[{"secondary_y": True}]])
    fig_mr.add_trace(go.Bar(x=per_mr["relation"], y=per_mr["bugs"], name="bugs", marker_color=colours[MT]))
    fig_mr.add_trace(go.Scatter(x=per_mr["relation"], y=per_mr["Rate+"], name="Rate+", mode="lines+markers",
                                marker_color="#4c78a8"), secondary_y=True)
    fig_mr.update_layout(title="Contribution of each relation: bugs and Rate+", height=380)
    fig_mr.update_yaxes(title_text="bugs", secondary_y=False)
    fig_mr.update_yaxes(title_text="Rate+", range=[0, 1.05], tickformat=".0%", secondary_y=True, showgrid=False)
    figures.append(("per-relation", fig_mr))
if "persona_versions" in by_key:
    versions = by_key["persona_versions"]
    figures.append(("persona-versions", px.bar(versions, x="version", y="Rate+", color="relation", barmode="group",
                                               height=380, range_y=[0, 1.05],
                                               title="Persona relations: share of violated checks per version")))
if "selection" in by_key:
    selected = by_key["selection"].melt(id_vars="version", value_vars=["hits@1", "MRR"], var_name="measure")
    figures.append(("selection", px.bar(selected, x="version", y="value", color="measure", barmode="group",
                                        height=380, range_y=[0, 1.05],
                                        title="Response selection: hits@1 and MRR per version")))
if "dialtest_operators" in by_key:
    figures.append(("dialtest-operators", px.bar(by_key["dialtest_operators"], x="version", y="Rate+", color="relation",
                                                 barmode="group", height=380, range_y=[0, 1.05],
                                                 labels={"version": "operator"},
                                                 title="DialTest: share of violated checks per operator")))
if "guidance" in by_key:
    guidance = by_key["guidance"]
    fig_guide = make_subplots(rows=1, cols=2, subplot_titles=("Bugs per SUT call", "Seed questions with a bug"))
    for i, r in guidance.iterrows():
        colour = ("#b5452b", "#8c8479")[i % 2]
        fig_guide.add_trace(go.Bar(x=[r["guide"]], y=[r["bugs_per_call"]], marker_color=colour, showlegend=False,
                                   text=[f"{r['bugs']} bugs / {r['sut_calls']} calls"]), 1, 1)
        fig_guide.add_trace(go.Bar(x=[r["guide"]], y=[r["bug_questions"]], marker_color=colour, showlegend=False), 1, 2)
    fig_guide.update_layout(height=380, title="Gini-guided search against random transformation, same budget")
    figures.append(("guidance", fig_guide))
for slot, (name, f) in zip(st.columns(max(1, min(3, len(figures)))) * 2, figures):
    with slot:
        st.plotly_chart(f, key=f"m-fig-{name}")
        ui.figure_downloads(f, f"{run_id}-{name}", f"m-fig-{name}")

if "uniqueness" in report:
    st.header(" vs ".join(methods))
    st.caption(" ".join(ui.help_for(m) for m in methods) + " A bug is unique to a method when no other method "
               "flagged a bug on the same seed question (the paper's Table V).")
    unique = pd.DataFrame(report["uniqueness"])
    st.dataframe(unique, hide_index=True, width="stretch", key="m-uniqueness")
    ui.csv_download(unique, f"{run_id}-uniqueness", "m-uniqueness-csv")
    parts = report["overlap"]
    if len(methods) == 2:
        part_colours = (colours[methods[0]], "#a36b8f", colours[methods[1]])
        fig_overlap = go.Figure([go.Bar(y=["seed questions"], x=[n], name=part, orientation="h", text=[n],
                                        marker_color=colour) for (part, n), colour in zip(parts.items(), part_colours)])
        fig_overlap.update_layout(barmode="stack", height=260, title="Overlap: seed questions with bugs, by method",
                                  xaxis_title="seed questions with at least one bug")
    else:  # UpSet-style: one bar per exact combination of methods
        fig_overlap = go.Figure([go.Bar(x=list(parts), y=list(parts.values()), text=list(parts.values()),
                                        marker_color="#a36b8f")])
        fig_overlap.update_layout(height=360, title="Overlap: seed questions with bugs, by the methods that found them",
                                  yaxis_title="seed questions", xaxis_title="found by exactly")
    per_level = unique.melt(id_vars="method", value_vars=[f"unique_{lv}" for lv in LEVELS],
                            var_name="level", value_name="unique bugs")
    per_level["level"] = per_level["level"].str.removeprefix("unique_")
    fig_unique = px.bar(per_level, x="level", y="unique bugs", color="method", barmode="group", height=360,
                        title="Unique bugs per bug level", color_discrete_map=colours)
    c1, c2 = st.columns(2)
    for slot, f, name in ((c1, fig_overlap, "overlap"), (c2, fig_unique, "unique-per-level")):
        with slot:
            st.plotly_chart(f, key=f"m-fig-{name}")
            ui.figure_downloads(f, f"{run_id}-{name}", f"m-fig-{name}")

priorities = ui.read(metrics.prioritisation, run_id)
if priorities:
    st.subheader("Test prioritisation: bugs found against the share of the suite executed")
    st.caption("Orders stored by `mortar prioritise RUN --by gri|wali|gini|random`, beside the order the run made the "
               "test cases in (initial), the mean of 20 random orders and the ideal order (greedy, knowing the bugs). "
               "APFD: the area under the curve, 1 = every bug found by the first test case. ORIG always runs.")
    apfd = pd.DataFrame([{"order": name, "APFD": f["apfd"], "sd": f.get("sd")} for name, f in priorities.items()])
    curves = pd.DataFrame([{"order": name, "share executed": x, "share of bugs found": y}
                           for name, f in priorities.items() for x, y in f["curve"]])
    fig_prio = px.line(curves, x="share executed", y="share of bugs found", color="order", height=400,
                       title="Bugs found as the suite runs, per order", range_y=[0, 1.02])
    fig_prio.update_layout(xaxis_tickformat=".0%", yaxis_tickformat=".0%")
    c1, c2 = st.columns([1, 2])
    with c1:
        st.dataframe(apfd, hide_index=True, width="stretch", key="m-apfd")
        ui.csv_download(apfd, f"{run_id}-apfd", "m-apfd-csv")
    with c2:
        st.plotly_chart(fig_prio, key="m-fig-prioritisation")
        ui.figure_downloads(fig_prio, f"{run_id}-prioritisation", "m-fig-prioritisation")

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
compare = finished[["run_id", "sut", "dataset", *[c for c in finished.columns if c.split(" ")[-1] in
                                                   ("NBugs", "BPTC", "Rate+") or c in LEVELS], "PPD", "labelled"]]
st.dataframe(compare, hide_index=True, width="stretch", key="m-compare")
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
