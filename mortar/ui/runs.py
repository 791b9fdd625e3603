"""The runs overview (headline metrics from ``mortar.metrics``) and the run picker the pages share."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from mortar import metrics, store
from mortar import reports
from mortar.ui.access import read
from mortar.vocab import LEVELS, MT, RBT

ROOT = store.PROJECT_ROOT
DATA = ROOT / "data"
SAMPLE = DATA / "sample_coqa.json"
NO_SUT = "–"  # the SUT column of a generation (test cases only, no SUT)


def metric_columns() -> dict[str, tuple[str, str]]:
    """The runs overview's metric columns → (method, metric) in ``reports.run_metrics``: RBT against MORTAR
    (MT) in full, MORTAR's bug levels, and the bugs of every other registered method."""
    columns = {f"{method} {metric}": (method, metric) for metric in ("NBugs", "BPTC", "Rate+") for method in (RBT, MT)}
    columns.update({level: (MT, level) for level in LEVELS})
    columns.update({f"{label} NBugs": (label, "NBugs") for label in reports.method_labels() if label not in (RBT, MT)})
    return columns


def count_columns(columns) -> list[str]:
    return [c for c, (_, metric) in columns.items() if metric == "NBugs" or metric in LEVELS]


def stored_metrics(con) -> dict[str, dict[str, dict[str, float]]]:
    """The metrics runs stored when they finished: run_id → method → metric → value."""
    nested: dict[str, dict[str, dict[str, float]]] = {}
    for run_id, method, metric, value in store.read_run_metrics(con).itertuples(index=False):
        nested.setdefault(run_id, {}).setdefault(method, {})[metric] = value
    return nested


def run_figures(con, run_id: str, stored: dict) -> dict:
    """A run's headline metrics: as it stored them, else computed from its checks by ``reports.run_metrics``."""
    if run_id in stored:
        return stored[run_id]
    cases, _ = store.read_cases_and_verdicts(con, run_id)
    return reports.run_metrics(store.read_checks(con, run_id), cases)


def runs_overview(con) -> pd.DataFrame:
    """Every run with its SUT, dataset, status and headline metrics; PPD where detections are labelled."""
    runs = store.read_runs(con)
    columns = metric_columns()
    counts = count_columns(columns)
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
        row.update({column: figures.get(method, {}).get(metric) for column, (method, metric) in columns.items()})
        if figures:  # a method that did not run in a judged run found no bug (as the overview counted before)
            row.update({column: 0 for column in counts if row[column] is None})
        row.update(checks=run["checks"], oracle=config.oracle, threshold=config.threshold)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=["run_id", "kind", "sut", "dataset", "status", "created_at", "test_cases",
                                        *columns, "checks", "oracle", "threshold"])
    for column in counts:
        frame[column] = frame[column].astype("Int64")
    for column in ("test_cases", "checks"):
        frame[column] = frame[column].astype("int64")
    for column in [c for c in columns if c not in counts] + ["threshold"]:
        frame[column] = frame[column].astype("float64")
    frame["created_at"] = runs["created_at"]  # keeps the store's datetime type on an empty store too
    ppd = metrics.ppd_by_run(store.final_labels(con))
    frame = frame.merge(ppd[["run_id", "PPD", "labelled"]], on="run_id", how="left")
    frame["labelled"] = frame["labelled"].fillna(0).astype(int)
    return frame


def run_stamps() -> dict[str, str]:
    """Every run's stamp (``store.run_stamps``), read in one query: what the pages key their cached reads by."""
    return read(store.run_stamps)


@st.cache_data(max_entries=8, show_spinner=False)
def cached_runs_overview(db: str, stamps: dict[str, str]) -> pd.DataFrame:
    """:func:`runs_overview` of the store ``db``, read again only when a run's stamp has changed."""
    return read(runs_overview)


def current_runs() -> pd.DataFrame:
    """:func:`runs_overview` of the store now: one query for the stamps, the rest from the cache while no run
    changed."""
    return cached_runs_overview(str(store.db_path()), run_stamps())


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


def open_inspector(run_id: str, detection_id: str) -> None:
    st.session_state["inspect"] = (run_id, detection_id)
    st.session_state["current_run"] = run_id
    st.switch_page("pages/inspector.py", query_params={"run": run_id, "detection": detection_id})
