"""Shared pieces of the dashboard pages: what the numbers mean, store reads, run pickers, job progress,
the runs overview and the knowledge-graph figure.

Every read opens the store, reads, and closes it again (through ``mortar.store.session``), so a run
in the background can write between two page renders. Dataset and SUT text is shown with ``st.text``,
``st.dataframe`` or escaped markdown, never as HTML.
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from mortar import jobs, labels, metrics, store
from mortar.kg.model import DialogueGraph
from mortar.vocab import L1, L2, L3, LEVELS, METAL, MT, RBT

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data"
SAMPLE = DATA / "sample_coqa.json"

# The one-click demo: the first sample seed, shuffled (DRS) and reduced (DRR), with the local default SUT.
# Measured with SmolLM2 on two CPU cores: this demo took 65 s with the cores free; one seed with all five
# perturbations took 6.5 minutes (11 on a busy machine), too long for a first look.
DEMO_ARGS = {"dataset": str(SAMPLE), "sut": "smollm2", "limit": 1, "perturbations": ["DRS", "DRR"]}
DEMO_DURATION = "about a minute on two free CPU cores (a few minutes while the machine is busy)"

GLOSSARY = {
    "RBT": "Reference-based testing: the seed's questions asked in their original order; a round is a bug "
           "when the SUT's answer is less similar than ε to the gold answer.",
    "MT": "Metamorphic testing with MR1–MR4 on the perturbed dialogues (DRS, DRR, DRD, DSR, DSD).",
    "MR1": "MR1, context-preserving: the context stayed equivalent (EC true), so the answer should still match "
           "the reference (similarity ≥ ε); a violation is a detection.",
    "MR2": "MR2, context-altering: the context lost what the question needs (EC false), so the answer should "
           "no longer match the reference (similarity < ε).",
    "MR3": "MR3, inner-group consistency: every EC-true version of a question should get the same answer "
           "(least similar pair ≥ ε); one detection per question.",
    "MR4": "MR4, inter-group divergence: an EC-true and an EC-false version of a question should get different "
           "answers (most similar pair < ε); one detection per question.",
    "METAL": "METAL, the single-turn baseline: one question perturbed (synonym, added word, typos, leet); the "
             "answer should stay similar to the reference.",
    "EC": "Equivalent context check: is the context before a perturbed question as informative for it as the "
          "original one? Three checks, OR-ed: semantic (the question resolves itself), ontology (the entities it "
          "needs from its context, Ḡ_j, are in the perturbed context), story (its pronoun has one referent in the "
          "story).",
    "NBugs": "NBugs: the number of bugs, i.e. violated checks (detections).",
    "RETC": "RETC: rate of effective test cases, the share of test cases with at least one bug.",
    "BPTC": "BPTC: bugs per test case, NBugs divided by the number of test cases.",
    "Rate+": "Rate+: the share of checks that are violated (bugs / checks made).",
    "CV": "CV: coefficient of variation (standard deviation / mean) of the L1/L2/L3 counts; lower means the "
          "bugs spread more evenly over the levels.",
    "PPD": "PPD: precision of positive detections, the share of labelled detections that are true bugs "
           "(an annotator's acceptability score below 6 of 10; adjudicated where annotators disagree).",
    "kappa": "Cohen's kappa: agreement of two annotators on true/false positive beyond chance "
             "(1 perfect, 0 no better than chance).",
    "L1": "L1: the question is also answered wrongly in RBT.",
    "L2": "L2: answered correctly in RBT, in a seed where RBT found some other bug.",
    "L3": "L3: in a seed where RBT found no bug at all — bugs only metamorphic testing reveals.",
    "similarity": "Similarity of the two compared texts under the run's oracle (cosine of MiniLM embeddings, "
                  "or MSS); ε is the run's threshold (0.6 by default).",
}
LEVELS_HELP = " ".join(GLOSSARY[k] for k in ("L1", "L2", "L3"))


def md_escape(text) -> str:
    """Text safe to put inside markdown: HTML and markdown syntax characters are escaped."""
    text = html.escape(str(text), quote=False)
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|~>$])", r"\\\1", text)


READ_WAIT_S = 3.0  # how long a page waits for a run that is writing before it says the store is busy
WRITE_WAIT_S = 10.0  # … and a label or decision before it asks to save again


def read(fn, *args, **kwargs):
    """Open the store read-only, call ``fn(con, …)``, close it. While a background run holds the store's file
    for longer than READ_WAIT_S, say so and stop this page (or fragment) until the next rerun."""
    try:
        with store.session(read_only=True, wait_s=READ_WAIT_S) as con:
            return fn(con, *args, **kwargs)
    except store.StoreBusy:
        st.warning("The store is busy: a run in the background is writing to it. This view comes back as soon "
                   "as it lets go (refresh the page).", icon=":material/hourglass_top:")
        st.stop()


def try_read(fn, *args, **kwargs):
    """Like :func:`read`, but None while a background run holds the store."""
    try:
        with store.session(read_only=True, wait_s=READ_WAIT_S) as con:
            return fn(con, *args, **kwargs)
    except store.StoreBusy:
        return None


def fmt(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


# -- runs ------------------------------------------------------------------------------------------

# The runs overview's metric columns → (method, metric) in ``metrics.run_metrics``.
METRIC_COLUMNS = {
    f"{RBT} NBugs": (RBT, "NBugs"), f"{MT} NBugs": (MT, "NBugs"),
    f"{RBT} BPTC": (RBT, "BPTC"), f"{MT} BPTC": (MT, "BPTC"),
    f"{RBT} Rate+": (RBT, "Rate+"), f"{MT} Rate+": (MT, "Rate+"),
    **{level: (MT, level) for level in LEVELS},
    f"{METAL} NBugs": (METAL, "NBugs"),
}
COUNT_COLUMNS = (f"{RBT} NBugs", f"{MT} NBugs", L1, L2, L3, f"{METAL} NBugs")
NO_SUT = "–"  # the SUT column of a generation (test cases only, no SUT)


def stored_metrics(con) -> dict[str, dict[str, dict[str, float]]]:
    """The metrics runs stored when they finished: run_id → method → metric → value."""
    nested: dict[str, dict[str, dict[str, float]]] = {}
    for run_id, method, metric, value in store.read_run_metrics(con).itertuples(index=False):
        nested.setdefault(run_id, {}).setdefault(method, {})[metric] = value
    return nested


def run_figures(con, run_id: str, stored: dict) -> dict:
    """A run's headline metrics: as it stored them, else computed from its checks by ``metrics.run_metrics``."""
    if run_id in stored:
        return stored[run_id]
    cases, _ = store.read_cases_and_verdicts(con, run_id)
    return metrics.run_metrics(store.read_checks(con, run_id), cases)


def runs_overview(con) -> pd.DataFrame:
    """Every run with its SUT, dataset, status and headline metrics; PPD where detections are labelled."""
    runs = store.read_runs(con)
    configs = store.stored_configs(con)
    stored = stored_metrics(con)
    rows = []
    for run in runs.to_dict("records"):
        config = configs.get(run["run_id"], store.StoredConfig())
        figures = run_figures(con, run["run_id"], stored) if run["checks"] else {}
        row = {"run_id": run["run_id"], "kind": run["kind"],
               "sut": NO_SUT if config.sut_model is None else config.sut_model,
               "dataset": run["dataset"], "status": run["status"], "created_at": run["created_at"],
               "test_cases": run["test_cases"]}
        row.update({column: figures.get(method, {}).get(metric) for column, (method, metric) in METRIC_COLUMNS.items()})
        if figures:  # a method that did not run in a judged run found no bug (as the overview counted before)
            row.update({column: 0 for column in COUNT_COLUMNS if row[column] is None})
        row.update(checks=run["checks"], oracle=config.oracle, threshold=config.threshold)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=["run_id", "kind", "sut", "dataset", "status", "created_at", "test_cases",
                                        *METRIC_COLUMNS, "checks", "oracle", "threshold"])
    for column in COUNT_COLUMNS:
        frame[column] = frame[column].astype("Int64")
    for column in ("test_cases", "checks"):
        frame[column] = frame[column].astype("int64")
    for column in [c for c in METRIC_COLUMNS if c not in COUNT_COLUMNS] + ["threshold"]:
        frame[column] = frame[column].astype("float64")
    frame["created_at"] = runs["created_at"]  # keeps the store's datetime type on an empty store too
    ppd = store.ppd_by_run(con)
    frame = frame.merge(ppd[["run_id", "PPD", "labelled"]], on="run_id", how="left")
    frame["labelled"] = frame["labelled"].fillna(0).astype(int)
    return frame


def run_label(row) -> str:
    return f"{row['run_id']} · {row['sut']} · {row['dataset']} · {str(row['created_at'])[:16]}"


def pick_run(runs: pd.DataFrame, label: str = "Run", key: str = "run", with_checks: bool = True,
             help: str | None = None) -> str | None:
    """A run selector shared by the pages: remembers the last run chosen on any page (and ?run=)."""
    if with_checks:
        runs = runs[runs["checks"] > 0]
    if runs.empty:
        return None
    ids = list(runs["run_id"])
    names = {r["run_id"]: run_label(r) for _, r in runs.iterrows()}
    wanted = st.query_params.get("run") or st.session_state.get("current_run")
    index = ids.index(wanted) if wanted in ids else 0
    run_id = st.selectbox(label, ids, index=index, format_func=names.get, key=key,
                          help=help or "Runs are listed newest first: run id · SUT · dataset · started.")
    st.session_state["current_run"] = run_id
    return run_id


def no_runs_yet() -> None:
    st.info("No finished run in the store yet. Start one on the **Launch** page, or the demo run on the "
            "**Overview** page.")


def pick_run_or_stop(runs: pd.DataFrame, key: str, with_checks: bool = True) -> str:
    """:func:`pick_run`, or say there is no run yet and stop the page."""
    run_id = pick_run(runs, key=key, with_checks=with_checks)
    if run_id is None:
        no_runs_yet()
        st.stop()
    return run_id


# -- background jobs -------------------------------------------------------------------------------

def job_rows(con) -> pd.DataFrame:
    frame = store.list_jobs(con)
    if frame.empty:
        return frame
    frame["alive"] = [jobs.alive(int(p)) if s in ("queued", "running") and not pd.isna(p) else False
                      for p, s in zip(frame["pid"], frame["status"])]
    return frame


def job_state(row) -> str:
    """The job's status, with a running job whose process has gone reported as stopped."""
    if row["status"] in ("queued", "running") and not row["alive"]:
        return "stopped"
    return row["status"]


def num(value) -> float | None:
    """A number from a store row, or None for NULL / NaN / NA."""
    try:
        return None if value is None or pd.isna(value) else float(value)
    except (TypeError, ValueError):
        return None


def eta_text(done: float | None, total: float | None, rate: float | None) -> str:
    if done is None or not total or not rate:
        return ""
    left = max(0.0, (total - done) / rate)
    return f"about {int(left // 60)} min {int(left % 60)} s left" if left >= 60 else f"about {int(left)} s left"


def render_job(row, key_prefix: str = "job") -> None:
    """One background run: stage, progress bar, answers/s, ETA, and cancel / resume buttons."""
    state = job_state(row)
    args = json.loads(row["args"]) if isinstance(row["args"], str) else row["args"]
    with st.container(border=True):
        head, buttons = st.columns([4, 1])
        with head:
            st.markdown(f"**Job {md_escape(row['job_id'])}** — {md_escape(state)}"
                        + (f" · run `{row['run_id']}`" if isinstance(row["run_id"], str) and row["run_id"] else ""))
            st.caption(md_escape("mortar run " + " ".join(jobs.command_line(args))))
            done, total, rate = num(row["done"]), num(row["total"]), num(row["rate"])
            if state in ("queued", "running"):
                frac = done / total if done is not None and total else 0.0
                stage = row["stage"] if isinstance(row["stage"], str) and row["stage"] else "starting"
                parts = [stage]
                if done is not None and total:
                    parts.append(f"{int(done)}/{int(total)}")
                if rate:
                    parts.append(f"{rate:.2f} answers/s")
                parts.append(eta_text(done, total, rate))
                st.progress(min(1.0, max(0.0, frac)), text=" · ".join(p for p in parts if p))
            elif isinstance(row["message"], str) and row["message"]:
                st.text(row["message"])
        with buttons:
            if state in ("queued", "running"):
                if st.button("Cancel", key=f"{key_prefix}-cancel-{row['job_id']}",
                             help="Stop the run; what it stored stays, and Resume continues from there."):
                    with store.process_lock:
                        jobs.cancel(row["job_id"])
                    st.rerun()
            elif state in ("cancelled", "failed", "stopped"):
                if st.button("Resume", key=f"{key_prefix}-resume-{row['job_id']}",
                             help="Start the same run again: stored answers are reused, so it continues."):
                    with store.process_lock:
                        jobs.resume(row["job_id"])
                    st.rerun()


def start_job(args: dict) -> str:
    with store.process_lock:
        return jobs.start(args)


def jobs_panel(key_prefix: str, limit: int = 5, refresh_s: float = 2.0) -> None:
    """Live progress of the latest background runs; refreshes itself while one is running and reruns the
    whole page when one finishes (so its results appear)."""
    def active_ids(frame) -> set[str]:
        if frame.empty:
            return set()
        return {r["job_id"] for _, r in frame.iterrows() if job_state(r) in ("queued", "running")}

    first = try_read(job_rows)
    seen_key = f"{key_prefix}-active-jobs"
    st.session_state[seen_key] = {"?"} if first is None else active_ids(first)  # busy: a run is writing

    @st.fragment(run_every=refresh_s if st.session_state[seen_key] else None)
    def panel():
        frame = try_read(job_rows)
        if frame is None:
            st.info("A run is writing its results to the store; its progress shows again when it pauses.", icon=":material/hourglass_top:")
            return
        now = active_ids(frame)
        if st.session_state.get(seen_key, set()) - now:  # a run finished or stopped: refresh the whole page
            st.session_state[seen_key] = now
            st.rerun()
        if frame.empty:
            st.caption("No background run yet.")
            return
        for _, row in frame.head(limit).iterrows():
            render_job(row, key_prefix)

    panel()


def secrets_to_environment(names) -> None:
    """Copy these names from st.secrets into the environment (where launched runs read them), unless set."""
    import os

    try:
        found = {n: str(st.secrets[n]) for n in names if n in st.secrets}
    except Exception:  # no secrets file: the environment is all there is
        return
    for name, value in found.items():
        os.environ.setdefault(name, value)


def env_status(names) -> dict[str, bool]:
    """Which of these environment variables are set (never their values)."""
    import os

    return {n: bool(os.environ.get(n)) for n in names}


# -- the inspector's views ---------------------------------------------------------------------------

def context_before(dg: DialogueGraph, rounds: pd.DataFrame, position: int) -> set[str]:
    """Entities the perturbed context has accumulated before ``position``, as the EC check accumulates them:
    a round whose context was equivalent adds what its question and answer gave, another only its question."""
    names: set[str] = set()
    for _, r in rounds[rounds["position"] < position].iterrows():
        try:
            rg = dg.round(int(r["source_round"]))
        except KeyError:
            continue
        names |= (rg.given if r["ec_equivalent"] else rg.question).names
    return names


def ec_summary(row) -> str:
    """One line saying what the EC verdict of a round was and why."""
    if row.get("ec_equivalent") is None or pd.isna(row.get("ec_equivalent")):
        return "no EC verdict stored"
    passed = [name for name in ("semantic", "ontology", "story") if bool(row.get(f"ec_{name}"))]
    if row["ec_equivalent"]:
        return "equivalent context — " + ("passed: " + ", ".join(passed) if passed else "original order")
    missing = row.get("ec_missing") or []
    why = "no check passed"
    if missing:
        why += "; the context lacks " + ", ".join(missing)
    if row.get("ec_follows_ok") is False:
        why += "; the elliptical question no longer follows the round it continues"
    return "context not equivalent — " + why


def verdict_table(rounds: pd.DataFrame) -> pd.DataFrame:
    """Rounds as a table with readable EC columns."""
    def tick(v):
        return "" if v is None or pd.isna(v) else ("✓" if v else "✗")

    return pd.DataFrame({
        "pos": rounds["position"], "round": rounds["source_round"], "question": rounds["question"],
        "SUT answer": rounds["sut_answer"].fillna(rounds["error"].map(lambda e: f"(no answer: {e})" if e else "")),
        "reference": rounds["reference"], "similarity": rounds["similarity"],
        "EC": rounds["ec_equivalent"].map(tick), "semantic": rounds["ec_semantic"].map(tick),
        "ontology": rounds["ec_ontology"].map(tick), "story": rounds["ec_story"].map(tick),
        "needed (Ḡ_j)": rounds["ec_needed"].map(", ".join), "missing": rounds["ec_missing"].map(", ".join),
    })


# -- the knowledge-graph figure ----------------------------------------------------------------------

NODE_KINDS = (  # legend name, colour — drawn in this order, later ones on top
    ("other entity of the dialogue", "#c9c4bb"),
    ("in the context so far", "#4c78a8"),
    ("stated by this question", "#e4a33b"),
    ("needed (Ḡ_j), in context", "#3a9a5b"),
    ("needed (Ḡ_j), missing", "#c8312b"),
)


def kg_figure(dg: DialogueGraph, turn_id: int, available: set[str], whole: bool = False) -> go.Figure:
    """The dialogue's knowledge graph around one question: what it needs, what the context offers.

    ``whole``: every entity of the dialogue; otherwise the question's own entities, what it needs and
    what the perturbed context holds at that point.
    """
    import networkx as nx

    rg = dg.round(turn_id)
    needed = set(rg.needed)
    stated = set(rg.question.names)
    graphs = [dg.graph] + [g for r in dg.rounds for g in (r.question, r.answer, r.decontextualised)]
    entities = {}
    for g in graphs:
        for e in g.entities:
            entities.setdefault(e.name, e)
    nodes = set(entities) if whole else (needed | stated | available | set(rg.decontextualised.names)) & set(entities)
    nodes |= needed  # a needed entity is drawn even when no graph names it as an entity
    edges = {}
    for g in graphs:
        for rel in g.relations:
            if rel.source in nodes and rel.target in nodes and rel.source != rel.target:
                edges.setdefault((rel.source, rel.target), rel.name)
    g = nx.Graph()
    g.add_nodes_from(sorted(nodes))
    g.add_edges_from(edges)
    pos = nx.spring_layout(g, seed=7, k=1.2 / math.sqrt(max(1, len(nodes)))) if nodes else {}

    def kind(name: str) -> str:
        if name in needed:
            return NODE_KINDS[3][0] if name in available else NODE_KINDS[4][0]
        if name in stated:
            return NODE_KINDS[2][0]
        if name in available:
            return NODE_KINDS[1][0]
        return NODE_KINDS[0][0]

    fig = go.Figure()
    ex, ey, mx, my, mtext = [], [], [], [], []
    for (a, b), name in edges.items():
        ex += [pos[a][0], pos[b][0], None]
        ey += [pos[a][1], pos[b][1], None]
        mx.append((pos[a][0] + pos[b][0]) / 2)
        my.append((pos[a][1] + pos[b][1]) / 2)
        mtext.append(html.escape(f"{a} —{name}→ {b}"))
    fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line=dict(width=1, color="#9a958d"), hoverinfo="skip",
                             showlegend=False))
    fig.add_trace(go.Scatter(x=mx, y=my, mode="markers", marker=dict(size=6, color="rgba(0,0,0,0)"),
                             hovertext=mtext, hoverinfo="text", showlegend=False))
    for label, colour in NODE_KINDS:
        names = [n for n in sorted(nodes) if kind(n) == label]
        if not names:
            continue
        big = label.startswith("needed")
        fig.add_trace(go.Scatter(
            x=[pos[n][0] for n in names], y=[pos[n][1] for n in names], mode="markers+text", name=label,
            text=[html.escape(n) for n in names], textposition="top center",
            hovertext=[html.escape(f"{n} ({entities[n].type})" if n in entities and entities[n].type else n)
                       for n in names], hoverinfo="text",
            marker=dict(size=18 if big else 12, color=colour, line=dict(width=2 if big else 1, color="#1f1d1a"))))
    fig.update_layout(height=460, margin=dict(l=10, r=10, t=30, b=10), plot_bgcolor="#ffffff",
                      legend=dict(orientation="h", y=-0.05), hovermode="closest",
                      xaxis=dict(visible=False), yaxis=dict(visible=False),
                      title=dict(text=html.escape(f"Round {turn_id}: " + rg.decontextualised_question)[:120],
                                 font=dict(size=13)))
    return fig


def open_inspector(run_id: str, detection_id: str) -> None:
    st.session_state["inspect"] = (run_id, detection_id)
    st.session_state["current_run"] = run_id
    st.switch_page("pages/inspector.py", query_params={"run": run_id, "detection": detection_id})


# -- labelling ---------------------------------------------------------------------------------------

SCORE_HELP = ("How acceptable is the SUT's answer here, 0 (clearly wrong) to 10 (fully acceptable)? "
              "A score below 6 marks the detection as a true positive: a real bug.")


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
        score = c1.number_input("Score (0–10)", min_value=0, max_value=10, step=1,
                                value=int(prev[0]) if prev else None, placeholder="0–10", help=SCORE_HELP)
        note = c2.text_input("Note (optional)", value=(prev[1] or "") if prev else "")
        saved = st.form_submit_button("Save label", type="primary", icon=":material/label:")
    if prev:
        st.caption(f"You scored this {prev[0]} before ({'true' if prev[0] < 6 else 'false'} positive); saving again "
                   "replaces it.")
    if not saved:
        return False
    if score is None:
        st.warning("Enter a score from 0 to 10 first.")
        return False
    try:
        labels.save_label(run_id, detection_id, name, int(score), note, wait_s=WRITE_WAIT_S)
    except store.StoreBusy:
        st.error("The label was not saved: a run in the background is writing to the store. Save again in a moment.")
        return False
    st.success(f"Saved: score {int(score)}, a {'true' if int(score) < 6 else 'false'} positive.")
    return True


def run_ppd(con, run_id: str) -> tuple[float, int, int]:
    frame = store.ppd_by_run(con)
    frame = frame[frame["run_id"] == run_id]
    if frame.empty:
        return float("nan"), 0, 0
    r = frame.iloc[0]
    return float(r["PPD"]) if not pd.isna(r["PPD"]) else float("nan"), int(r["labelled"]), int(r["disputed"])


def ppd_metrics(run_id: str) -> None:
    ppd, n, disputed = read(run_ppd, run_id)
    c1, c2, c3 = st.columns(3)
    c1.metric("PPD of this run", fmt(ppd), help=GLOSSARY["PPD"])
    c2.metric("Labelled detections", n, help="Detections with a final label: one annotator, agreeing annotators, "
                                             "or an adjudication.")
    c3.metric("Disputed", disputed, help="Annotators disagree and no one has adjudicated yet.")


def quick_label(run_id: str, detection_id: str, key: str) -> None:
    if annotator_box(key) is not None and label_form(run_id, detection_id, key):
        st.toast("Label saved.")
    ppd_metrics(run_id)


# -- figures and downloads ---------------------------------------------------------------------------

def png_export_available() -> bool:
    """PNG export of plotly figures needs kaleido and a Chrome/Chromium it can start (offline is fine)."""
    import importlib.util
    import shutil

    if importlib.util.find_spec("kaleido") is None:
        return False
    return any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome", "chrome"))


def figure_downloads(fig: go.Figure, name: str, key: str) -> None:
    """HTML (works offline: plotly.js is embedded) and PNG downloads of a figure, made only when clicked."""
    row = st.container(horizontal=True)
    row.download_button("HTML", data=lambda: fig.to_html(include_plotlyjs=True, full_html=True),
                       file_name=f"{name}.html", mime="text/html", key=f"{key}-html", icon=":material/code:", on_click="ignore")
    if png_export_available():
        row.download_button("PNG", data=lambda: fig.to_image(format="png", scale=2, width=1000, height=520),
                           file_name=f"{name}.png", mime="image/png", key=f"{key}-png", icon=":material/image:", on_click="ignore")
    else:
        row.caption("PNG needs kaleido and Chromium")


def csv_download(frame: pd.DataFrame, name: str, key: str, label: str = "CSV") -> None:
    st.download_button(label, data=frame.to_csv(index=False).encode(), file_name=f"{name}.csv", mime="text/csv",
                       key=key, icon=":material/download:", on_click="ignore")
