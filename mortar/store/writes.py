"""Every write to the store, each idempotent: an ``INSERT … ON CONFLICT`` on the table's primary key.

Writing the same thing twice changes nothing; the caller wraps a batch in one transaction so a killed
writer leaves no half-written batch. Table and column names come from this module, never from input.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime, timezone

import pandas as pd

from mortar.dataset import Dataset, TestCase


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


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


# -- datasets, runs, test cases --------------------------------------------------------------------

def write_dataset(con, dataset: Dataset) -> None:
    upsert(con, "datasets", [dict(dataset_id=dataset.sha256, name=dataset.name, path=dataset.path,
                                  n_seeds=len(dataset.seeds))])
    upsert(con, "seeds", [dict(dataset_id=dataset.sha256, seed_id=s.id, source=s.source, story=s.story,
                               n_rounds=len(s.rounds), persona=_json_or_none(s.persona and asdict(s.persona)))
                          for s in dataset.seeds])
    upsert(con, "seed_rounds", [dict(dataset_id=dataset.sha256, seed_id=s.id, turn_id=r.turn_id,
                                     question=r.question, answer=r.answer,
                                     candidates=_json_or_none(list(r.candidates) or None), intent=r.intent,
                                     tags=_json_or_none(list(r.tags) or None))
                                for s in dataset.seeds for r in s.rounds])


def _json_or_none(value) -> str | None:
    return None if value is None else json.dumps(value)


def write_run(con, run_id: str, kind: str, dataset: Dataset, run_seed: int, config: dict, status: str) -> None:
    now = _now()
    upsert(con, "runs", [dict(run_id=run_id, kind=kind, dataset_id=dataset.sha256, run_seed=run_seed,
                              config=json.dumps(config, sort_keys=True), status=status,
                              created_at=now, updated_at=now)],
           update=("status", "updated_at"))


def write_run_status(con, run_id: str, status: str) -> None:
    con.execute("UPDATE runs SET status = ?, updated_at = ? WHERE run_id = ?", [status, _now(), run_id])


def write_test_cases(con, run_id: str, dataset: Dataset, cases: list[TestCase], verdicts: dict | None = None) -> None:
    """Store the test cases; ``verdicts`` maps test_case_id to the EC verdict of each position."""
    seeds = {s.id: s for s in dataset.seeds}
    verdicts = verdicts or {}
    upsert(con, "test_cases", [dict(run_id=run_id, test_case_id=c.test_case_id, seed_id=c.seed_id,
                                    perturbation=c.perturbation, replicate=c.replicate, target_round=c.target_round, story=c.story,
                                    guide=c.guide,
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


def write_graphs(con, dataset_id: str, backend: str, model: str,
                 results: dict[str, tuple[str, str | None, str | None]]) -> None:
    """Knowledge-graph extractions: seed_id → (status, graph JSON, error)."""
    upsert(con, "kg_extractions", [dict(dataset_id=dataset_id, seed_id=seed_id, backend=backend, model=model,
                                        status=status, graph=graph, error=error)
                                   for seed_id, (status, graph, error) in results.items()],
           update=("status", "graph", "error"))


# -- results of a run ------------------------------------------------------------------------------

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
                                ec_equivalent=c.ec_equivalent, violated=c.violated, bug_level=c.bug_level,
                                unstable=c.unstable, flaky=c.flaky, no_answer=c.no_answer)
                           for c in checks])


def write_confirmations(con, run_id: str, rows: list[dict]) -> None:
    """Answers asked to confirm detections (``--confirm``); ``rows``: dicts of test_case_id, position, confirmation,
    conversation_hash, output, error, seconds (idempotent)."""
    upsert(con, "confirmations", [{"run_id": run_id, **row} for row in rows],
           update=("conversation_hash", "output", "error", "seconds"))


def write_orig_samples(con, run_id: str, cases, orig_samples: list[dict]) -> None:
    """ORIG's answers when asked again (``--orig-repeats``): sample k of every ORIG round (idempotent)."""
    upsert(con, "orig_samples", [dict(run_id=run_id, test_case_id=c.test_case_id, position=pos, sample=k,
                                      output=sample[(c.test_case_id, pos)].text if (c.test_case_id, pos) in sample
                                      else None)
                                 for k, sample in enumerate(orig_samples, start=1) for c in cases
                                 for pos in range(1, len(c.source_rounds) + 1)], update=("output",))


def write_run_metrics(con, run_id: str, rows: list[dict]) -> None:
    """Replace the run's stored metrics; ``rows``: dicts of method, metric and value."""
    con.execute("DELETE FROM run_metrics WHERE run_id = ?", [run_id])
    upsert(con, "run_metrics", [dict(run_id=run_id, method=r["method"], metric=r["metric"],
                                     value=None if r["value"] is None else float(r["value"])) for r in rows],
           update=("value",))


def write_selections(con, run_id: str, rows) -> None:
    """Store the response-selection results of a run (idempotent: the stage is deterministic)."""
    upsert(con, "selections", [{"run_id": run_id, **row} for row in rows],
           update=("gold_rank", "top", "candidates", "oracle_pass"))


def write_mutants(con, run_id: str, rows) -> None:
    """Every mutant a guided search evaluated (idempotent: the search is deterministic)."""
    upsert(con, "mutants", [{"run_id": run_id, **row} for row in rows],
           update=("operators", "question", "answer", "gini", "parent_gini", "kept"))


def write_sensitivities(con, fingerprint: str, dataset_id: str, method: str, target: str, rows) -> None:
    """Sensitivity scores of seed rounds; ``rows``: dicts of seed_id, turn_id, segments, question_tokens, seconds."""
    upsert(con, "sensitivities", [dict(sut_fingerprint=fingerprint, dataset_id=dataset_id, method=method,
                                       target=target, seed_id=r["seed_id"], turn_id=r["turn_id"],
                                       segments=json.dumps(r["segments"]),
                                       question_tokens=json.dumps(r["question_tokens"]), seconds=r["seconds"])
                                  for r in rows], update=("segments", "question_tokens", "seconds"))


def write_priorities(con, run_id: str, order_by: str, ranked: list[tuple[str, float | None]]) -> None:
    """Replace the run's order under ``order_by``: (test_case_id, score), first to run first."""
    con.execute("DELETE FROM priorities WHERE run_id = ? AND order_by = ?", [run_id, order_by])
    upsert(con, "priorities", [dict(run_id=run_id, order_by=order_by, rank=i, test_case_id=t, score=s)
                               for i, (t, s) in enumerate(ranked, start=1)])


# -- the SUT's answers -----------------------------------------------------------------------------

def write_sut(con, fingerprint: str, config: dict) -> None:
    """A SUT's readable configuration under its fingerprint (never an API key: ``config`` holds none)."""
    upsert(con, "suts", [dict(sut_fingerprint=fingerprint, config=json.dumps(config, sort_keys=True))])


def write_answers(con, fingerprint: str, rows: list[dict]) -> None:
    """Answers of one SUT; ``rows``: dicts of conversation_hash, answer, error, seconds, created_at and gini
    (optional)."""
    upsert(con, "answers", [{"sut_fingerprint": fingerprint, "gini": None, **row} for row in rows],
           update=("answer", "error", "seconds", "created_at", "gini"))


# -- precision labels ------------------------------------------------------------------------------

def write_label(con, run_id: str, detection_id: str, annotator: str, score: int, note: str | None) -> None:
    """Store (or replace) one annotator's score of one detection."""
    upsert(con, "labels", [dict(run_id=run_id, detection_id=detection_id, annotator=annotator, score=score,
                                note=note, labelled_at=_now())],
           update=("score", "note", "labelled_at"))


def write_adjudication(con, run_id: str, detection_id: str, true_positive: bool, adjudicator: str,
                       note: str | None) -> None:
    """Record (or replace) the final label of a detection."""
    upsert(con, "adjudications", [dict(run_id=run_id, detection_id=detection_id, true_positive=true_positive,
                                       adjudicator=adjudicator, note=note, decided_at=_now())],
           update=("true_positive", "adjudicator", "note", "decided_at"))


# -- background jobs -------------------------------------------------------------------------------

JOB_COLUMNS = ("args", "pid", "status", "stage", "done", "total", "rate", "run_id", "message", "started_at")


def write_job(con, job_id: str, **fields) -> None:
    """Create or update a background job's row."""
    unknown = set(fields) - set(JOB_COLUMNS)
    if unknown:
        raise ValueError(f"jobs has no column {', '.join(sorted(unknown))}")
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
