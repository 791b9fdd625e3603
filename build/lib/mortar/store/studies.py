"""Studies in the store: a suite's configuration and its systems, each with the run that tests it."""

from __future__ import annotations

import json

import pandas as pd

from mortar.store.reads import UnknownRun
from mortar.store.writes import _now, upsert

STUDY_PREFIX = "stu-"


def write_study(con, study_id: str, name: str | None, dataset_id: str, config: dict) -> None:
    now = _now()
    upsert(con, "studies", [dict(study_id=study_id, name=name, dataset_id=dataset_id,
                                 config=json.dumps(config, sort_keys=True), created_at=now, updated_at=now)],
           update=("name", "updated_at"))


def write_study_system(con, study_id: str, system: str, position: int, spec: dict, run_id: str) -> None:
    upsert(con, "study_systems", [dict(study_id=study_id, system=system, position=position,
                                       spec=json.dumps(spec, sort_keys=True), run_id=run_id)],
           update=("position", "spec", "run_id"))


def is_study_id(text: str) -> bool:
    return text.startswith(STUDY_PREFIX)


def resolve_study_id(con, study_id: str) -> str:
    """Accept ``latest`` for the study most recently written to."""
    if study_id == "latest":
        row = con.execute("SELECT study_id FROM studies ORDER BY updated_at DESC, study_id LIMIT 1").fetchone()
        if row is None:
            raise UnknownRun("the store holds no studies yet")
        return row[0]
    if con.execute("SELECT 1 FROM studies WHERE study_id = ?", [study_id]).fetchone() is None:
        raise UnknownRun(f"no study {study_id!r} in the store")
    return study_id


def read_studies(con) -> pd.DataFrame:
    """Every study, newest first: study_id, name, dataset, systems, runs done, created_at, updated_at."""
    return con.execute("""
        SELECT s.study_id, coalesce(s.name, '') AS name, d.name AS dataset, count(y.system) AS systems,
               count(*) FILTER (WHERE r.status = 'done') AS runs_done, s.created_at, s.updated_at
        FROM studies s LEFT JOIN datasets d USING (dataset_id)
             LEFT JOIN study_systems y USING (study_id) LEFT JOIN runs r ON r.run_id = y.run_id
        GROUP BY ALL ORDER BY s.updated_at DESC, s.study_id""").df()


def study_config(con, study_id: str) -> dict:
    row = con.execute("SELECT config FROM studies WHERE study_id = ?", [study_id]).fetchone()
    if row is None:
        raise UnknownRun(f"no study {study_id!r} in the store")
    return json.loads(row[0])


def study_systems(con, study_id: str) -> pd.DataFrame:
    """The study's systems in their order: system, spec (a dict), run_id, and the run's status (missing: not
    started)."""
    frame = con.execute("""
        SELECT y.system, y.spec, y.run_id, coalesce(r.status, 'not started') AS status
        FROM study_systems y LEFT JOIN runs r ON r.run_id = y.run_id
        WHERE y.study_id = ? ORDER BY y.position, y.system""", [study_id]).df()
    frame["spec"] = frame["spec"].map(json.loads)
    return frame
