"""The plotly figures of a run's report, shared by the Metrics page and the HTML report (no Streamlit here).

Each builder takes what ``reports.run_report`` (or ``reports.prioritisation``) returns and gives plotly
figures; figures that depend on a method's tables appear only when that method ran.
"""

from __future__ import annotations

import html

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from mortar.reports import method_labels
from mortar.vocab import CRITICAL_SIMILARITY, L1, L2, L3, LEVELS, MT

LEVEL_COLOURS = {L1: "#8c8479", L2: "#e4a33b", L3: "#b5452b"}
PALETTE = ("#8c8479", "#b5452b", "#4c78a8", "#54a24b", "#a36b8f", "#e4a33b", "#72b7b2")  # RBT first, then methods


def method_colours() -> dict[str, str]:
    """RBT and every registered method's label → its colour, the same on every figure."""
    return dict(zip(method_labels(), PALETTE * 2))


def headline(report: dict) -> go.Figure:
    """NBugs, and RETC / BPTC / Rate+, of RBT and every method of the run side by side."""
    colours = method_colours()
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Bugs found (NBugs)", "Per test case and per check"))
    for method, m in report["metrics"].items():
        fig.add_trace(go.Bar(x=["NBugs"], y=[m["NBugs"]], name=method, marker_color=colours.get(method),
                             legendgroup=method), 1, 1)
        fig.add_trace(go.Bar(x=["RETC", "BPTC", "Rate+"], y=[m["RETC"], m["BPTC"], m["Rate+"]], name=method,
                             marker_color=colours.get(method), legendgroup=method, showlegend=False), 1, 2)
    fig.update_layout(barmode="group", height=380, title=html.escape(" vs ".join(report["metrics"])))
    return fig


def table_figures(report: dict) -> list[tuple[str, go.Figure]]:
    """(name, figure) for each method table of the report that has a figure (MORTAR's Tables VII–IX, …)."""
    colours = method_colours()
    by_key = {t.key: pd.DataFrame(t.rows) for t in report["tables"]}
    figures = []
    if "table_ix" in by_key:
        levels = by_key["table_ix"].melt(id_vars="relation", var_name="level", value_name="bugs")
        figures.append(("bug-levels", px.bar(levels, x="relation", y="bugs", color="level", height=380,
                                             title="Bug levels per relation (L1/L2/L3)",
                                             color_discrete_map=LEVEL_COLOURS)))
    if "table_vii" in by_key:
        per_pert = by_key["table_vii"]
        figures.append(("per-perturbation", px.bar(
            per_pert if not per_pert.empty else pd.DataFrame({"perturbation": [], "bugs": []}), x="perturbation",
            y="bugs", title="Bugs per perturbation", height=380, color_discrete_sequence=[colours[MT]])))
    if "table_viii" in by_key:
        per_mr = by_key["table_viii"]
        fig = make_subplots(specs=[[{"secondary_y": True}]])
        fig.add_trace(go.Bar(x=per_mr["relation"], y=per_mr["bugs"], name="bugs", marker_color=colours[MT]))
        fig.add_trace(go.Scatter(x=per_mr["relation"], y=per_mr["Rate+"], name="Rate+", mode="lines+markers",
                                 marker_color="#4c78a8"), secondary_y=True)
        fig.update_layout(title="Contribution of each relation: bugs and Rate+", height=380)
        fig.update_yaxes(title_text="bugs", secondary_y=False)
        fig.update_yaxes(title_text="Rate+", range=[0, 1.05], tickformat=".0%", secondary_y=True, showgrid=False)
        figures.append(("per-relation", fig))
    if "persona_versions" in by_key:
        figures.append(("persona-versions", px.bar(
            by_key["persona_versions"], x="version", y="Rate+", color="relation", barmode="group", height=380,
            range_y=[0, 1.05], title="Persona relations: share of violated checks per version")))
    if "selection" in by_key:
        selected = by_key["selection"].melt(id_vars="version", value_vars=["hits@1", "MRR"], var_name="measure")
        figures.append(("selection", px.bar(selected, x="version", y="value", color="measure", barmode="group",
                                            height=380, range_y=[0, 1.05],
                                            title="Response selection: hits@1 and MRR per version")))
    if "dialtest_operators" in by_key:
        figures.append(("dialtest-operators", px.bar(
            by_key["dialtest_operators"], x="version", y="Rate+", color="relation", barmode="group", height=380,
            range_y=[0, 1.05], labels={"version": "operator"},
            title="DialTest: share of violated checks per operator")))
    if "guidance" in by_key:
        figures.append(("guidance", _guidance(by_key["guidance"])))
    if report.get("guidance_curves"):
        figures.append(("guidance-curve", found_curves(
            report["guidance_curves"], "Bugs found against SUT calls spent, per guide", "SUT calls (evaluated mutants)")))
    if report.get("order_curves"):
        figures.append(("budget-orders", found_curves(
            report["order_curves"], "Bugs found against test cases executed: guided order and random, same budget",
            "test cases executed")))
    if not by_key.get("similarity", pd.DataFrame()).empty:
        figures.append(("similarity", similarity(by_key["similarity"])))
    return figures


def found_curves(curves: dict[str, list[tuple[int, int]]], title: str, x_title: str) -> go.Figure:
    """Cumulative bugs found as tests run, one line per guide or order (``guide.prioritise.at_equal_calls``)."""
    fig = go.Figure([go.Scatter(x=[x for x, _ in points], y=[y for _, y in points], name=name, mode="lines",
                                line_shape="hv", line_color=("#b5452b", "#8c8479", "#4c78a8")[k % 3])
                     for k, (name, points) in enumerate(curves.items())])
    fig.update_layout(height=380, title=title, xaxis_title=x_title, yaxis_title="bugs found")
    return fig


def similarity(spread: pd.DataFrame) -> go.Figure:
    """How each relation's similarities spread (``metrics.similarity_distribution``: boxes from the quartiles), with
    its critical bugs written above the box."""
    fig = go.Figure(go.Box(x=spread["relation"], q1=spread["q1"], median=spread["median"], q3=spread["q3"],
                           lowerfence=spread["min"], upperfence=spread["max"], mean=spread["mean"],
                           marker_color="#4c78a8", name="similarity", showlegend=False))
    fig.add_trace(go.Scatter(x=spread["relation"], y=[1.08] * len(spread), mode="text", showlegend=False,
                             text=[f"{n} critical" for n in spread["critical_bugs"]], hoverinfo="skip"))
    fig.add_hline(y=CRITICAL_SIMILARITY, line_dash="dot", line_color="#b5452b",
                  annotation_text=f"critical below {CRITICAL_SIMILARITY}", annotation_position="bottom right")
    fig.update_layout(height=380, title="Similarity of the answers per relation, and critical bugs",
                      yaxis=dict(range=[-0.03, 1.15], title="similarity"))
    return fig


def _guidance(guidance: pd.DataFrame) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Bugs per SUT call", "Seed questions with a bug"))
    for i, r in guidance.iterrows():
        colour = ("#b5452b", "#8c8479")[i % 2]
        fig.add_trace(go.Bar(x=[r["guide"]], y=[r["bugs_per_call"]], marker_color=colour, showlegend=False,
                             text=[f"{r['bugs']} bugs / {r['sut_calls']} calls"]), 1, 1)
        fig.add_trace(go.Bar(x=[r["guide"]], y=[r["bug_questions"]], marker_color=colour, showlegend=False), 1, 2)
    fig.update_layout(height=380, title="Gini-guided search against random transformation, same budget")
    return fig


def comparison_figures(report: dict) -> list[tuple[str, go.Figure]]:
    """With two or more methods: the overlap of seed questions with bugs, and unique bugs per bug level."""
    if "uniqueness" not in report:
        return []
    colours = method_colours()
    methods = [row["method"] for row in report["uniqueness"]]
    parts = report["overlap"]
    if len(methods) == 2:
        part_colours = (colours[methods[0]], "#a36b8f", colours[methods[1]])
        overlap = go.Figure([go.Bar(y=["seed questions"], x=[n], name=part, orientation="h", text=[n],
                                    marker_color=colour) for (part, n), colour in zip(parts.items(), part_colours)])
        overlap.update_layout(barmode="stack", height=260, title="Overlap: seed questions with bugs, by method",
                              xaxis_title="seed questions with at least one bug")
    else:  # UpSet-style: one bar per exact combination of methods
        overlap = go.Figure([go.Bar(x=list(parts), y=list(parts.values()), text=list(parts.values()),
                                    marker_color="#a36b8f")])
        overlap.update_layout(height=360, title="Overlap: seed questions with bugs, by the methods that found them",
                              yaxis_title="seed questions", xaxis_title="found by exactly")
    per_level = pd.DataFrame(report["uniqueness"]).melt(id_vars="method", value_vars=[f"unique_{lv}" for lv in LEVELS],
                                                        var_name="level", value_name="unique bugs")
    per_level["level"] = per_level["level"].str.removeprefix("unique_")
    unique = px.bar(per_level, x="level", y="unique bugs", color="method", barmode="group", height=360,
                    title="Unique bugs per bug level", color_discrete_map=colours)
    return [("overlap", overlap), ("unique-per-level", unique)]


def prioritisation(priorities: dict) -> go.Figure:
    """Bugs found against the share of the suite executed, one line per stored order (``reports.prioritisation``)."""
    curves = pd.DataFrame([{"order": name, "share executed": x, "share of bugs found": y}
                           for name, f in priorities.items() for x, y in f["curve"]])
    fig = px.line(curves, x="share executed", y="share of bugs found", color="order", height=400,
                  title="Bugs found as the suite runs, per order", range_y=[0, 1.02])
    fig.update_layout(xaxis_tickformat=".0%", yaxis_tickformat=".0%")
    return fig


def precision(rows: list[dict]) -> go.Figure:
    """PPD of the labelled detections per method, relation and perturbation (``reports.precision``), each bar
    labelled with its true positives / labelled detections."""
    groups = [g for g in ("method", "relation", "perturbation") if any(r["group"] == g for r in rows)]
    fig = make_subplots(rows=1, cols=max(1, len(groups)), subplot_titles=[f"per {g}" for g in groups],
                        shared_yaxes=True)
    for col, group in enumerate(groups, start=1):
        mine = [r for r in rows if r["group"] == group]
        fig.add_trace(go.Bar(x=[html.escape(str(r["name"])) for r in mine], y=[r["PPD"] for r in mine],
                             text=[f"{r['true_positives']}/{r['labelled']}" for r in mine], showlegend=False,
                             marker_color=PALETTE[col]), 1, col)
    fig.update_yaxes(range=[0, 1.05], tickformat=".0%")
    fig.update_yaxes(title_text="PPD (true positives / labelled)", col=1)
    fig.update_layout(height=380, title="Precision of the labelled detections (PPD)")
    return fig


def oracle_curve(result: dict) -> go.Figure:
    """The oracle's bug flags against the annotators' labels as the threshold moves (``metrics.oracle_vs_humans``),
    with the run's threshold and the best one marked."""
    curve = pd.DataFrame(result["curve"]).melt(id_vars="threshold", value_vars=["accuracy", "bug_precision", "F1"],
                                               var_name="measure")
    fig = px.line(curve, x="threshold", y="value", color="measure", markers=True, height=360, range_y=[0, 1.05],
                  title="Oracle against the annotators, threshold by threshold")
    fig.add_vline(x=result["threshold"], line_dash="dash", line_color="#8c8479",
                  annotation_text=f"run ε = {result['threshold']:g}")
    fig.add_vline(x=result["best_threshold"], line_dash="dot", line_color="#b5452b",
                  annotation_text=f"best {result['best_threshold']:g}", annotation_position="bottom right")
    return fig


# -- studies: several systems side by side ----------------------------------------------------------------


def study_heatmap(matrix: pd.DataFrame) -> go.Figure:
    """Systems × metrics (``study_report.metrics_matrix``): each column shaded from its lowest to its highest
    value (columns count different things), the value written in the cell."""
    shade = matrix.apply(lambda col: (col - col.min()) / (col.max() - col.min()) if col.max() > col.min()
                         else col * 0)  # every system alike: nothing to single out
    text = matrix.map(lambda v: "" if v != v else f"{v:.3f}" if isinstance(v, float) and not float(v).is_integer()
                      else f"{v:.0f}")
    fig = go.Figure(go.Heatmap(z=shade.values, x=list(matrix.columns), y=[html.escape(str(s)) for s in matrix.index],
                               text=text.values, texttemplate="%{text}", colorscale="OrRd", showscale=False,
                               customdata=matrix.values, hovertemplate="%{y} · %{x}: %{customdata}<extra></extra>"))
    fig.update_layout(height=140 + 48 * len(matrix), title="Systems side by side (each column shaded on its own)",
                      yaxis=dict(autorange="reversed"), xaxis=dict(side="top", tickangle=-30), margin=dict(t=140))
    return fig


def robustness(rows: list[dict]) -> go.Figure:
    """Accuracy on the seed dialogues against the perturbed ones, on the same questions (``study_report``), per
    system, and the drop between them, each with its bootstrap interval."""
    frame = pd.DataFrame(rows)
    systems = [html.escape(str(s)) for s in frame["system"]]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Accuracy: seed dialogues vs perturbed ones",
                                                        "Robustness drop (lower is more robust)"))
    for name, colour in (("seed accuracy", PALETTE[0]), ("perturbed accuracy", PALETTE[1])):
        fig.add_trace(go.Bar(x=systems, y=frame[name], name=name, marker_color=colour, error_y=dict(
            type="data", symmetric=False, array=frame[f"{name} high"] - frame[name],
            arrayminus=frame[name] - frame[f"{name} low"])), 1, 1)
    drop = frame["robustness drop"]
    fig.add_trace(go.Bar(x=systems, y=drop, name="drop", marker_color=PALETTE[2], showlegend=False, error_y=dict(
        type="data", symmetric=False, array=frame["robustness drop high"] - drop,
        arrayminus=drop - frame["robustness drop low"])), 1, 2)
    fig.update_yaxes(tickformat=".0%")
    fig.update_yaxes(range=[0, 1.05], col=1)
    fig.update_layout(barmode="group", height=400, title="Robustness in multi-turn use, with 95% bootstrap intervals")
    return fig


def study_breakdown(rows: list[dict], by: str) -> go.Figure:
    """Bugs per relation or per perturbation (``by``), one bar per system (Tables VIII and VII side by side)."""
    frame = pd.DataFrame(rows)
    frame["system"] = frame["system"].map(lambda s: html.escape(str(s)))
    fig = px.bar(frame, x=by, y="bugs", color="system", barmode="group", height=380,
                 hover_data=[c for c in ("share", "Rate+") if c in frame], color_discrete_sequence=PALETTE[1:] + PALETTE[:1],
                 title=f"Bugs per {by}, per system")
    return fig
