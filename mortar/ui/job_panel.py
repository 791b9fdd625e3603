"""Background runs on a page: live progress, cancel and resume; the demo run; which keys are set."""

from __future__ import annotations

import os

import pandas as pd
import streamlit as st

from mortar import jobs, store
from mortar.config import RunConfig
from mortar.errors import InputError
from mortar.perturb import PerturbationSettings
from mortar.ui.access import try_read
from mortar.ui.text import md_escape
from mortar.ui.runs import SAMPLE
from mortar.vocab import DRR, DRS, MORTAR_METHOD

# The one-click demo: the first sample seed, shuffled (DRS) and reduced (DRR), with the local default SUT.
# Measured with SmolLM2 on two CPU cores: this demo took 65 s with the cores free; one seed with all five
# perturbations took 6.5 minutes (11 on a busy machine), too long for a first look.
DEMO_CONFIG = RunConfig(dataset=str(SAMPLE), limit=1,
                        settings={MORTAR_METHOD: PerturbationSettings(perturbations=(DRS, DRR))})
DEMO_DURATION = "about a minute on two free CPU cores (a few minutes while the machine is busy)"

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
    with st.container(border=True):
        head, buttons = st.columns([4, 1])
        with head:
            made = row["run_id"] if isinstance(row["run_id"], str) and row["run_id"] else ""
            what = ("study" if store.is_study_id(made) else "run") if made else ""
            st.markdown(f"**Job {md_escape(row['job_id'])}** — {md_escape(state)}"
                        + (f" · {what} `{made}`" if made else "")
                        + (" (on the Studies page)" if what == "study" and state == "done" else ""))
            try:
                st.caption(md_escape(jobs.describe_job(row["args"])))
            except InputError as e:
                st.caption(md_escape(str(e)))
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
                    try:
                        with store.process_lock:
                            jobs.resume(row["job_id"])
                    except InputError as e:
                        st.error(md_escape(str(e)))
                    else:
                        st.rerun()


def start_job(config: RunConfig) -> str:
    with store.process_lock:
        return jobs.start(config)


def start_study_job(study) -> str:
    with store.process_lock:
        return jobs.start_study(study)


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
    try:
        found = {n: str(st.secrets[n]) for n in names if n in st.secrets}
    except Exception:  # no secrets file: the environment is all there is
        return
    for name, value in found.items():
        os.environ.setdefault(name, value)


def env_status(names) -> dict[str, bool]:
    """Which of these environment variables are set (never their values)."""
    return {n: bool(os.environ.get(n)) for n in names}
