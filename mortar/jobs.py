"""Background runs: `mortar run` in its own process, so it keeps going when the browser tab closes.

The process reports its stage and progress into the ``jobs`` table; cancelling stops the process
(everything it stored stays); resuming starts the same command again, which continues the run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from mortar import store
from mortar.config import RunConfig
from mortar.errors import InputError
from mortar.study import Study, from_document, study_document
from mortar.vocab import MORTAR_METHOD

PROGRESS_EVERY_S = 1.0
STUDY = "study"  # a study job's arguments: {"study": its study file's content}
CANCELLED = "cancelled; resume continues where it stopped"  # the message of a cancelled job, whoever writes it last


def start(config: RunConfig, db=None) -> str:
    """Launch ``mortar run --config`` with this configuration, as is, in its own process."""
    return _launch(config.to_json(), ["run", "--config"], db)


def start_study(study: Study, db=None) -> str:
    """Launch ``mortar study`` on this study (its study file written beside the store), in its own process."""
    return _launch({STUDY: study_document(study)}, ["study"], db)


def _launch(args: dict, command: list[str], db=None) -> str:
    job_id = uuid.uuid4().hex[:12]
    db = str(store.db_path(db))
    with store.connect(db) as con:
        store.write_job(con, job_id, args=args, status="queued", stage="starting")
    config_file = Path(db).with_name(f"job-{job_id}.json")
    config_file.write_text(json.dumps(args.get(STUDY, args), indent=1), encoding="utf-8")
    cmd = [sys.executable, "-m", "mortar", *command, str(config_file), "--db", db, "--job", job_id]
    log = Path(db).with_name(f"job-{job_id}.log")
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=str(store.PROJECT_ROOT))
    with store.connect(db) as con:
        store.write_job(con, job_id, pid=proc.pid)
    return job_id


def job_config(args: dict | str) -> RunConfig:
    """The run configuration a job was started with (InputError for a job of an older version)."""
    try:
        return RunConfig.from_json(args)
    except TypeError:
        raise InputError("this job was started by an older version of MORTAR Studio; start the run again from "
                         "the Launch page (its stored answers are reused)") from None


def describe_job(args: dict | str) -> str:
    """One line for a job, a run's or a study's (InputError for a job of an older version)."""
    data = json.loads(args) if isinstance(args, str) else args
    if STUDY in data:
        study, _ = from_document(data[STUDY], Path("study"))
        names = ", ".join(s.name for s in study.systems)
        return f"study{' ' + study.name if study.name else ''}: {len(study.systems)} systems ({names}) · " + \
            describe(study.suite).split(" · ", 2)[2]
    return describe(job_config(data))


def describe(config: RunConfig) -> str:
    """One line for a job: what is tested, with what, on how much."""
    limit = f"first {config.limit} seed{'s' if config.limit > 1 else ''}" if config.limit else "all seeds"
    methods = [f"{m} ({' '.join(config.settings_of(MORTAR_METHOD).perturbations)})" if m == MORTAR_METHOD else m
               for m in config.methods]
    return (f"{', '.join(methods)} · SUT {config.sut} · {Path(config.dataset or '?').name} ({limit}) · "
            f"oracle {config.oracle} · run seed {config.run_seed}")


def cancel(job_id: str, db=None) -> None:
    with store.connect(db) as con:
        job = store.read_job(con, job_id)
    if job is None:
        raise LookupError(f"no job {job_id!r}")
    pid, status = job["pid"], job["status"]
    if pid and status in ("queued", "running"):
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    with store.connect(db) as con:
        store.write_job(con, job_id, status="cancelled", message=CANCELLED)


def resume(job_id: str, db=None) -> str:
    with store.connect(db, read_only=True) as con:
        job = store.read_job(con, job_id)
    if job is None:
        raise LookupError(f"no job {job_id!r}")
    data = json.loads(job["args"]) if isinstance(job["args"], str) else job["args"]
    if STUDY in data:
        return start_study(from_document(data[STUDY], Path("study"))[0], db)
    return start(job_config(data), db)


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """An ended process that its parent (the dashboard, which launched it) has not reaped yet: it still answers
    signal 0, but it runs no more. Read from /proc (Linux); elsewhere taken as not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


class JobReporter:
    """A progress callback that writes the job's stage, counts, rate and ETA into the store (throttled)."""

    def __init__(self, job_id: str, db=None):
        self.job_id, self.db, self.last = job_id, db, 0.0
        self.write(status="running", pid=os.getpid())

    def write(self, **fields) -> None:
        with store.connect(self.db) as con:
            store.write_job(con, self.job_id, **fields)

    def __call__(self, done: int, total: int, info: dict | None = None) -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_EVERY_S and done < total:
            return
        self.last = now
        info = info or {}
        self.write(stage=info.get("stage", ""), done=int(done), total=int(total),
                   rate=float(info["answers_per_second"]) if info.get("answers_per_second") else None)
