"""The DuckDB store: schema, idempotent writes and the queries the CLI and the UI need.

Every write is an ``INSERT … ON CONFLICT`` on a primary key inside one transaction, so writing
the same thing twice changes nothing and a killed writer leaves no half-written batch.
Connections are short-lived: DuckDB lets one process write a file at a time.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pandas as pd

from mortar.dataset import Dataset, TestCase

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DB = PROJECT_ROOT / "data" / "mortar.duckdb"

SCHEMA = """
CREATE TABLE IF NOT EXISTS datasets (
    dataset_id TEXT PRIMARY KEY,      -- sha256 of the file's bytes
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    n_seeds INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS seeds (
    dataset_id TEXT NOT NULL,
    seed_id TEXT NOT NULL,
    source TEXT,
    story TEXT NOT NULL,
    n_rounds INTEGER NOT NULL,
    PRIMARY KEY (dataset_id, seed_id)
);
CREATE TABLE IF NOT EXISTS seed_rounds (
    dataset_id TEXT NOT NULL,
    seed_id TEXT NOT NULL,
    turn_id INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT,
    PRIMARY KEY (dataset_id, seed_id, turn_id)
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,               -- 'generate' or 'run'
    dataset_id TEXT NOT NULL,
    run_seed INTEGER NOT NULL,
    config JSON NOT NULL,
    status TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS test_cases (
    run_id TEXT NOT NULL,
    test_case_id TEXT NOT NULL,
    seed_id TEXT NOT NULL,
    perturbation TEXT NOT NULL,
    replicate INTEGER NOT NULL,
    n_rounds INTEGER NOT NULL,
    PRIMARY KEY (run_id, test_case_id)
);
CREATE TABLE IF NOT EXISTS test_case_rounds (
    run_id TEXT NOT NULL,
    test_case_id TEXT NOT NULL,
    position INTEGER NOT NULL,        -- 1-based position in the perturbed dialogue
    source_round INTEGER NOT NULL,    -- turn_id of the seed round asked here
    question TEXT NOT NULL,
    PRIMARY KEY (run_id, test_case_id, position)
);
"""


def db_path(explicit: str | os.PathLike | None = None) -> Path:
    """``--db`` wins, then ``MORTAR_DB``, then ``data/mortar.duckdb`` in the project."""
    return Path(explicit or os.environ.get("MORTAR_DB") or DEFAULT_DB)


@contextmanager
def connect(path: str | os.PathLike | None = None, read_only: bool = False):
    path = db_path(path)
    if read_only and not path.exists():
        con = duckdb.connect(":memory:")  # an absent store reads as an empty one
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(path), read_only=read_only)
    try:
        if not read_only or not path.exists():
            con.execute(SCHEMA)
        yield con
    finally:
        con.close()


def upsert(con, table: str, rows: list[dict] | pd.DataFrame, update: tuple[str, ...] = ()) -> None:
    """Insert rows; on a primary-key conflict keep the stored row, or update the named columns."""
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    if frame.empty:
        return
    cols = ", ".join(frame.columns)
    action = "DO NOTHING"
    if update:
        action = "DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in update)
    con.register("_upsert_rows", frame)
    try:
        con.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM _upsert_rows ON CONFLICT {action}")
    finally:
        con.unregister("_upsert_rows")


def write_dataset(con, dataset: Dataset) -> None:
    upsert(con, "datasets", [dict(dataset_id=dataset.sha256, name=dataset.name, path=dataset.path,
                                  n_seeds=len(dataset.seeds))])
    upsert(con, "seeds", [dict(dataset_id=dataset.sha256, seed_id=s.id, source=s.source, story=s.story,
                               n_rounds=len(s.rounds)) for s in dataset.seeds])
    upsert(con, "seed_rounds", [dict(dataset_id=dataset.sha256, seed_id=s.id, turn_id=r.turn_id,
                                     question=r.question, answer=r.answer)
                                for s in dataset.seeds for r in s.rounds])


def write_run(con, run_id: str, kind: str, dataset: Dataset, run_seed: int, config: dict, status: str) -> None:
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    upsert(con, "runs", [dict(run_id=run_id, kind=kind, dataset_id=dataset.sha256, run_seed=run_seed,
                              config=json.dumps(config, sort_keys=True), status=status,
                              created_at=now, updated_at=now)],
           update=("status", "updated_at"))


def write_test_cases(con, run_id: str, dataset: Dataset, cases: list[TestCase]) -> None:
    seeds = {s.id: s for s in dataset.seeds}
    upsert(con, "test_cases", [dict(run_id=run_id, test_case_id=c.test_case_id, seed_id=c.seed_id,
                                    perturbation=c.perturbation, replicate=c.replicate,
                                    n_rounds=len(c.source_rounds)) for c in cases])
    upsert(con, "test_case_rounds", [
        dict(run_id=run_id, test_case_id=c.test_case_id, position=p, source_round=src,
             question=seeds[c.seed_id].round(src).question)
        for c in cases for p, src in enumerate(c.source_rounds, start=1)])


def resolve_run_id(con, run_id: str) -> str:
    """Accept ``latest`` for the most recently created run."""
    if run_id != "latest":
        return run_id
    row = con.execute("SELECT run_id FROM runs ORDER BY created_at DESC, run_id LIMIT 1").fetchone()
    if row is None:
        raise LookupError("the store holds no runs yet")
    return row[0]


def list_runs(con) -> pd.DataFrame:
    return con.execute("""
        SELECT r.run_id, r.kind, d.name AS dataset, r.run_seed, r.status, r.created_at,
               (SELECT count(*) FROM test_cases t WHERE t.run_id = r.run_id) AS test_cases
        FROM runs r LEFT JOIN datasets d USING (dataset_id)
        ORDER BY r.created_at DESC""").df()


def test_case_rounds(con, run_id: str) -> pd.DataFrame:
    return con.execute("""
        SELECT t.seed_id, t.test_case_id, t.perturbation, t.replicate, r.position, r.source_round, r.question
        FROM test_cases t JOIN test_case_rounds r USING (run_id, test_case_id)
        WHERE t.run_id = ? ORDER BY t.seed_id, t.test_case_id, r.position""", [run_id]).df()


test_case_rounds.__test__ = False
