"""The DuckDB store: schema, idempotent writes and the queries the CLI and the UI need.

Every write is an ``INSERT … ON CONFLICT`` on a primary key inside one transaction, so writing
the same thing twice changes nothing and a killed writer leaves no half-written batch.
Connections are short-lived: DuckDB lets one process write a file at a time.
"""

from __future__ import annotations

import json
import os
import time
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
    ec_equivalent BOOLEAN,            -- the equivalent context verdict and the checks that passed
    ec_semantic BOOLEAN,
    ec_ontology BOOLEAN,
    ec_story BOOLEAN,
    ec_needed JSON,                   -- Ḡ_j: entities the question takes from its original context
    ec_missing JSON,                  -- needed entities the perturbed context lacks
    ec_follows_ok BOOLEAN,            -- elliptical questions: right after the round they continue?
    PRIMARY KEY (run_id, test_case_id, position)
);
CREATE TABLE IF NOT EXISTS kg_extractions (
    dataset_id TEXT NOT NULL,
    seed_id TEXT NOT NULL,
    backend TEXT NOT NULL,            -- 'spacy' or 'llm'
    model TEXT NOT NULL,              -- spaCy pipeline + coreference mode, or the LLM's name
    status TEXT NOT NULL,             -- 'ok' or 'failed'
    graph JSON,                       -- DialogueGraph.to_json() when ok
    error TEXT,                       -- the reason when failed
    PRIMARY KEY (dataset_id, seed_id, backend, model)
);
CREATE TABLE IF NOT EXISTS run_rounds (
    run_id TEXT NOT NULL,
    test_case_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    output TEXT,                      -- the SUT's answer; NULL when the round errored
    error TEXT,
    reference TEXT,                   -- what RBT/MR1/MR2 compared the output with
    similarity DOUBLE,
    PRIMARY KEY (run_id, test_case_id, position)
);
CREATE TABLE IF NOT EXISTS checks (   -- every comparison a relation made; violated ones are detections
    run_id TEXT NOT NULL,
    check_id TEXT NOT NULL,
    relation TEXT NOT NULL,           -- RBT, MR1, MR2, MR3, MR4
    seed_id TEXT NOT NULL,
    source_round INTEGER NOT NULL,
    perturbations JSON NOT NULL,
    test_case_ids JSON NOT NULL,
    positions JSON NOT NULL,
    text_a TEXT NOT NULL,
    text_b TEXT NOT NULL,
    similarity DOUBLE NOT NULL,
    ec_equivalent BOOLEAN,
    violated BOOLEAN NOT NULL,
    bug_level TEXT,                   -- L1, L2, L3 for MR detections
    PRIMARY KEY (run_id, check_id)
);
CREATE OR REPLACE VIEW detections AS
    SELECT run_id, check_id AS detection_id, relation, perturbations, seed_id, source_round, test_case_ids,
           positions, text_a, text_b, similarity, ec_equivalent, bug_level
    FROM checks WHERE violated;
CREATE TABLE IF NOT EXISTS labels (   -- precision labelling: one score per (detection, annotator)
    run_id TEXT NOT NULL,
    detection_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    score INTEGER NOT NULL,           -- 0–10, high = the SUT output is acceptable; < 6 = true positive
    note TEXT,
    labelled_at TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, detection_id, annotator)
);
CREATE TABLE IF NOT EXISTS adjudications (  -- the final label where two annotators disagree
    run_id TEXT NOT NULL,
    detection_id TEXT NOT NULL,
    true_positive BOOLEAN NOT NULL,
    adjudicator TEXT NOT NULL,
    note TEXT,
    decided_at TIMESTAMP NOT NULL,
    PRIMARY KEY (run_id, detection_id)
);
CREATE TABLE IF NOT EXISTS jobs (     -- runs launched in the background (from the dashboard)
    job_id TEXT PRIMARY KEY,
    args JSON NOT NULL,               -- the `mortar run` arguments; never a key
    pid INTEGER,
    status TEXT NOT NULL,             -- queued, running, done, failed, cancelled
    stage TEXT,
    done INTEGER,
    total INTEGER,
    rate DOUBLE,                      -- answers per second
    run_id TEXT,
    message TEXT,
    started_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS suts (
    sut_fingerprint TEXT PRIMARY KEY, -- hash of backend, model, system prompt, decoding settings
    config JSON NOT NULL              -- the same, readable; never holds an API key
);
CREATE TABLE IF NOT EXISTS answers (
    sut_fingerprint TEXT NOT NULL,
    conversation_hash TEXT NOT NULL,  -- hash of story + earlier questions/answers + the new question
    answer TEXT,                      -- NULL when errored
    error TEXT,                       -- why the SUT gave no answer (an errored round is never a bug)
    seconds DOUBLE,
    created_at TIMESTAMP NOT NULL,
    PRIMARY KEY (sut_fingerprint, conversation_hash)
);
"""


def db_path(explicit: str | os.PathLike | None = None) -> Path:
    """``--db`` wins, then ``MORTAR_DB``, then ``data/mortar.duckdb`` in the project."""
    return Path(explicit or os.environ.get("MORTAR_DB") or DEFAULT_DB)


LOCK_WAIT_S = 30.0  # how long to wait for another process (a running run, the dashboard) to let go


def open_file(path: Path, read_only: bool, wait_s: float = LOCK_WAIT_S):
    """Open the file, waiting up to ``wait_s`` while another process holds it: DuckDB allows one writer process."""
    deadline = time.monotonic() + wait_s
    delay = 0.02
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as e:
            if "lock" not in str(e).lower() or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


@contextmanager
def connect(path: str | os.PathLike | None = None, read_only: bool = False):
    path = db_path(path)
    if read_only and not path.exists():
        con = duckdb.connect(":memory:")  # an absent store reads as an empty one
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        con = open_file(path, read_only)
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


def write_test_cases(con, run_id: str, dataset: Dataset, cases: list[TestCase], verdicts: dict | None = None) -> None:
    """Store the test cases; ``verdicts`` maps test_case_id to the EC verdict of each position."""
    seeds = {s.id: s for s in dataset.seeds}
    verdicts = verdicts or {}
    upsert(con, "test_cases", [dict(run_id=run_id, test_case_id=c.test_case_id, seed_id=c.seed_id,
                                    perturbation=c.perturbation, replicate=c.replicate,
                                    n_rounds=len(c.source_rounds)) for c in cases])
    rows = []
    for c in cases:
        case_verdicts = verdicts.get(c.test_case_id)
        for p, src in enumerate(c.source_rounds, start=1):
            row = dict(run_id=run_id, test_case_id=c.test_case_id, position=p, source_round=src,
                       question=c.question_at(seeds[c.seed_id], p))
            if case_verdicts:
                v = case_verdicts[p - 1]
                row.update(ec_equivalent=v.equivalent, ec_semantic=v.semantic, ec_ontology=v.ontology,
                           ec_story=v.story, ec_needed=json.dumps(sorted(v.needed)),
                           ec_missing=json.dumps(sorted(v.missing)), ec_follows_ok=v.follows_ok)
            rows.append(row)
    upsert(con, "test_case_rounds", rows)


def read_graphs(con, dataset_id: str, backend: str, model: str) -> dict[str, tuple[str, str | None, str | None]]:
    """Cached extractions of a dataset: seed_id → (status, graph JSON, error)."""
    rows = con.execute("SELECT seed_id, status, graph, error FROM kg_extractions "
                       "WHERE dataset_id = ? AND backend = ? AND model = ?", [dataset_id, backend, model]).fetchall()
    return {seed_id: (status, graph, error) for seed_id, status, graph, error in rows}


def write_graphs(con, dataset_id: str, backend: str, model: str, results: dict[str, tuple[str, str | None, str | None]]) -> None:
    upsert(con, "kg_extractions", [dict(dataset_id=dataset_id, seed_id=seed_id, backend=backend, model=model,
                                        status=status, graph=graph, error=error)
                                   for seed_id, (status, graph, error) in results.items()],
           update=("status", "graph", "error"))


def write_run_status(con, run_id: str, status: str) -> None:
    con.execute("UPDATE runs SET status = ?, updated_at = ? WHERE run_id = ?",
                [status, datetime.now(timezone.utc).replace(tzinfo=None), run_id])


def write_outputs(con, run_id: str, rows: list[dict]) -> None:
    upsert(con, "run_rounds", [{"run_id": run_id, **r} for r in rows],
           update=("output", "error", "reference", "similarity"))


def write_checks(con, run_id: str, checks) -> None:
    """Replace the run's checks: judging is deterministic, so a re-run writes the same rows."""
    con.execute("DELETE FROM checks WHERE run_id = ?", [run_id])
    upsert(con, "checks", [dict(run_id=run_id, check_id=c.check_id, relation=c.relation, seed_id=c.seed_id,
                                source_round=c.source_round, perturbations=json.dumps(list(c.perturbations)),
                                test_case_ids=json.dumps(list(c.test_case_ids)), positions=json.dumps(list(c.positions)),
                                text_a=c.text_a, text_b=c.text_b, similarity=c.similarity,
                                ec_equivalent=c.ec_equivalent, violated=c.violated, bug_level=c.bug_level)
                           for c in checks])


def read_checks(con, run_id: str) -> list:
    from mortar.relations import Check

    rows = con.execute("""SELECT check_id, relation, seed_id, source_round, perturbations, test_case_ids, positions,
                                 text_a, text_b, similarity, ec_equivalent, violated, bug_level
                          FROM checks WHERE run_id = ? ORDER BY check_id""", [run_id]).fetchall()
    return [Check(r[0], r[1], r[2], r[3], tuple(json.loads(r[4])), tuple(json.loads(r[5])), tuple(json.loads(r[6])),
                  r[7], r[8], r[9], r[10], r[11], r[12]) for r in rows]


def read_cases_and_verdicts(con, run_id: str):
    """The run's test cases and, per test case, the EC verdict of every position."""
    from mortar.context import ECVerdict
    from mortar.dataset import TestCase

    rows = con.execute("""
        SELECT t.seed_id, t.perturbation, t.replicate, r.test_case_id, r.source_round, r.ec_equivalent, r.ec_semantic,
               r.ec_ontology, r.ec_story, r.ec_needed, r.ec_missing, r.ec_follows_ok
        FROM test_cases t JOIN test_case_rounds r USING (run_id, test_case_id)
        WHERE t.run_id = ? ORDER BY t.seed_id, r.test_case_id, r.position""", [run_id]).fetchall()
    sources: dict[str, list] = {}
    meta, verdicts = {}, {}
    for seed_id, pert, rep, tcid, src, eq, sem, onto, story, needed, missing, follows in rows:
        meta[tcid] = (seed_id, pert, rep)
        sources.setdefault(tcid, []).append(src)
        verdicts.setdefault(tcid, []).append(ECVerdict(bool(eq), bool(sem), bool(onto), bool(story),
                                                        frozenset(json.loads(needed or "[]")),
                                                        frozenset(json.loads(missing or "[]")), follows))
    cases = [TestCase(*meta[t], tuple(sources[t])) for t in meta]
    return cases, verdicts


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
        SELECT t.seed_id, t.test_case_id, t.perturbation, t.replicate, r.position, r.source_round, r.question,
               r.ec_equivalent, r.ec_semantic, r.ec_ontology, r.ec_story, r.ec_needed, r.ec_missing
        FROM test_cases t JOIN test_case_rounds r USING (run_id, test_case_id)
        WHERE t.run_id = ? ORDER BY t.seed_id, t.test_case_id, r.position""", [run_id]).df()


def run_config(con, run_id: str) -> dict:
    row = con.execute("SELECT config FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if row is None:
        raise LookupError(f"no run {run_id!r} in the store")
    return json.loads(row[0])


test_case_rounds.__test__ = False


def rounds_export(con, run_id: str) -> pd.DataFrame:
    return con.execute("""
        SELECT r.run_id, t.seed_id, r.test_case_id, t.perturbation, r.position, r.source_round, r.question,
               o.output, o.reference, o.similarity, r.ec_equivalent, r.ec_semantic, r.ec_ontology, r.ec_story,
               r.ec_needed, r.ec_missing, o.error, o.output IS NULL AS errored
        FROM test_case_rounds r JOIN test_cases t USING (run_id, test_case_id)
        LEFT JOIN run_rounds o USING (run_id, test_case_id, position)
        WHERE r.run_id = ? ORDER BY t.seed_id, r.test_case_id, r.position""", [run_id]).df()


def detections_export(con, run_id: str) -> pd.DataFrame:
    return con.execute("""
        SELECT detection_id, relation, perturbations, seed_id, source_round, test_case_ids, positions,
               text_a, text_b, similarity, ec_equivalent, bug_level
        FROM detections WHERE run_id = ? ORDER BY detection_id""", [run_id]).df()


def _now():
    return datetime.now(timezone.utc).replace(tzinfo=None)


def write_job(con, job_id: str, **fields) -> None:
    """Create or update a background job's row."""
    row = {"job_id": job_id, "updated_at": _now(), **fields}
    exists = con.execute("SELECT 1 FROM jobs WHERE job_id = ?", [job_id]).fetchone()
    if exists:
        cols = [c for c in row if c != "job_id"]
        con.execute(f"UPDATE jobs SET {', '.join(f'{c} = ?' for c in cols)} WHERE job_id = ?",
                    [row[c] for c in cols] + [job_id])
    else:
        row.setdefault("started_at", row["updated_at"])
        row.setdefault("status", "queued")
        row["args"] = json.dumps(row.get("args", {}))
        upsert(con, "jobs", [row])


def list_jobs(con) -> pd.DataFrame:
    return con.execute("SELECT * FROM jobs ORDER BY started_at DESC").df()
