"""Read-models of runs, their test cases and results, the SUT's stored answers and background jobs."""

from __future__ import annotations

import json

import pandas as pd

from mortar.dataset import UNKNOWN, Persona, Round, Seed, TestCase
from mortar.errors import InputError
from mortar.relations import Check
from mortar.store.records import StoredConfig
from mortar.verdict import ECVerdict


class UnknownRun(InputError, LookupError):
    """The store holds no run by that id (or no run at all, for ``latest``)."""


# -- runs ------------------------------------------------------------------------------------------


def resolve_run_id(con, run_id: str) -> str:
    """Accept ``latest`` for the most recently created run."""
    if run_id != "latest":
        return run_id
    row = con.execute("SELECT run_id FROM runs ORDER BY created_at DESC, run_id LIMIT 1").fetchone()
    if row is None:
        raise UnknownRun("the store holds no runs yet")
    return row[0]


def run_config(con, run_id: str) -> dict:
    """The run's configuration as stored (a dict); :func:`stored_config` reads it typed."""
    row = con.execute("SELECT config FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if row is None:
        raise UnknownRun(f"no run {run_id!r} in the store")
    return json.loads(row[0])


def stored_config(con, run_id: str) -> StoredConfig:
    return StoredConfig(run_config(con, run_id))


def stored_configs(con, run_ids: tuple[str, ...] | None = None) -> dict[str, StoredConfig]:
    """run_id → its configuration, for every run (or the named ones)."""
    if run_ids is None:
        rows = con.execute("SELECT run_id, config FROM runs").fetchall()
    else:
        rows = con.execute("SELECT run_id, config FROM runs WHERE list_contains(?::VARCHAR[], run_id)",
                           [list(run_ids)]).fetchall()
    return {run_id: StoredConfig.from_json(config) for run_id, config in rows}


def stored_datasets(con) -> pd.DataFrame:
    """Every dataset a run or a generation has stored: dataset_id, name, path, seeds, runs (how many used it)."""
    return con.execute("""
        SELECT d.dataset_id, d.name, d.path, d.n_seeds AS seeds, count(r.run_id) AS runs
        FROM datasets d LEFT JOIN runs r USING (dataset_id) GROUP BY ALL ORDER BY d.name, d.path""").df()


def stored_seeds(con, dataset_id: str) -> list[Seed]:
    """A stored dataset's seeds as the store keeps them (for a dataset whose file is gone or elsewhere)."""
    seeds = con.execute("SELECT seed_id, source, story, persona FROM seeds WHERE dataset_id = ? ORDER BY seed_id",
                        [dataset_id]).fetchall()
    rounds: dict[str, list[Round]] = {}
    for seed_id, turn, question, answer, candidates, intent, tags in con.execute(
            "SELECT seed_id, turn_id, question, answer, candidates, intent, tags FROM seed_rounds WHERE dataset_id = ? "
            "ORDER BY seed_id, turn_id", [dataset_id]).fetchall():
        rounds.setdefault(seed_id, []).append(
            Round(int(turn), question, answer, tuple(json.loads(candidates)) if candidates else (), intent,
                  tuple(json.loads(tags)) if tags else ()))
    return [Seed(seed_id, story, tuple(rounds.get(seed_id, ())), source or "", _persona(persona))
            for seed_id, source, story, persona in seeds]


def _persona(stored: str | None) -> Persona | None:
    if not stored:
        return None
    data = json.loads(stored)
    return Persona(*(tuple(data[k]) for k in ("sentences", "revised", "partner")))


def read_runs(con) -> pd.DataFrame:
    """Every run, newest first: run_id, kind, dataset (name), status, created_at, test_cases and checks counts."""
    return con.execute("""
        WITH tc AS (SELECT run_id, count(*) AS n FROM test_cases GROUP BY run_id),
             ck AS (SELECT run_id, count(*) AS n FROM checks GROUP BY run_id)
        SELECT r.run_id, r.kind, d.name AS dataset, r.status, r.created_at,
               coalesce(tc.n, 0) AS test_cases, coalesce(ck.n, 0) AS checks
        FROM runs r LEFT JOIN datasets d ON d.dataset_id = r.dataset_id
        LEFT JOIN tc ON tc.run_id = r.run_id LEFT JOIN ck ON ck.run_id = r.run_id
        ORDER BY r.created_at DESC, r.run_id""").df()


def run_stamps(con) -> dict[str, str]:
    """run_id → a text that changes whenever what the dashboard shows of the run changes: its status and last
    update, how many checks, answers and confirmations it stored, its labels and adjudications (how many, the
    latest), and the sensitivity scores stored for its dataset. One query; pages key their caches by it."""
    rows = con.execute("""
        WITH ck AS (SELECT run_id, count(*) AS n FROM checks GROUP BY run_id),
             rr AS (SELECT run_id, count(*) AS n FROM run_rounds GROUP BY run_id),
             cf AS (SELECT run_id, count(*) AS n FROM confirmations GROUP BY run_id),
             lb AS (SELECT run_id, count(*) AS n, max(labelled_at) AS last FROM labels GROUP BY run_id),
             ad AS (SELECT run_id, count(*) AS n, max(decided_at) AS last FROM adjudications GROUP BY run_id),
             se AS (SELECT dataset_id, count(*) AS n FROM sensitivities GROUP BY dataset_id)
        SELECT r.run_id, concat_ws('|', r.status, r.updated_at, coalesce(ck.n, 0), coalesce(rr.n, 0),
                                   coalesce(cf.n, 0), coalesce(lb.n, 0), coalesce(lb.last::VARCHAR, '-'),
                                   coalesce(ad.n, 0), coalesce(ad.last::VARCHAR, '-'), coalesce(se.n, 0))
        FROM runs r LEFT JOIN ck ON ck.run_id = r.run_id LEFT JOIN rr ON rr.run_id = r.run_id
        LEFT JOIN cf ON cf.run_id = r.run_id LEFT JOIN lb ON lb.run_id = r.run_id LEFT JOIN ad ON ad.run_id = r.run_id
        LEFT JOIN se ON se.dataset_id = r.dataset_id""").fetchall()
    return dict(rows)


def read_run_metrics(con, run_id: str | None = None) -> pd.DataFrame:
    """The metrics runs stored when they finished, one row per (run_id, method, metric) with its value."""
    clause, params = ("WHERE run_id = ?", [run_id]) if run_id else ("", [])
    return con.execute(f"SELECT run_id, method, metric, value FROM run_metrics {clause} "
                       "ORDER BY run_id, method, metric", params).df()


def read_selections(con, run_id: str) -> dict[tuple[str, int], dict]:
    """The run's response-selection results: (test_case_id, position) → row."""
    frame = con.execute("SELECT test_case_id, position, source_round, perturbation, gold_rank, top, candidates, "
                        "oracle_pass FROM selections WHERE run_id = ? ORDER BY test_case_id, position",
                        [run_id]).df()
    return {(r["test_case_id"], int(r["position"])): r for r in frame.to_dict("records")}


def read_mutants(con, run_id: str) -> list[dict]:
    """The mutants guided generation evaluated in the run, in the order of the search."""
    return con.execute("SELECT test_case_id, seed_id, source_round, guide, step, operators, question, answer, gini, "
                       "parent_gini, kept FROM mutants WHERE run_id = ? ORDER BY guide, seed_id, source_round, step",
                       [run_id]).df().to_dict("records")


def read_sensitivities(con, fingerprint: str, dataset_id: str, method: str | None = None,
                       target: str | None = None) -> list[dict]:
    """Stored sensitivity scores of a SUT on a dataset's seed rounds (every method and target unless named)."""
    rows = con.execute("SELECT seed_id, turn_id, method, target, segments, question_tokens, seconds FROM sensitivities "
                       "WHERE sut_fingerprint = ? AND dataset_id = ? AND (? IS NULL OR method = ?) "
                       "AND (? IS NULL OR target = ?) ORDER BY seed_id, turn_id",
                       [fingerprint, dataset_id, method, method, target, target]).fetchall()
    return [dict(seed_id=r[0], turn_id=r[1], method=r[2], target=r[3], segments=json.loads(r[4]),
                 question_tokens=[tuple(t) for t in json.loads(r[5])], seconds=r[6]) for r in rows]


def read_priorities(con, run_id: str) -> dict[str, list[str]]:
    """The run's stored orders: order_by → test case ids, first to run first."""
    orders: dict[str, list[str]] = {}
    for order_by, tcid in con.execute("SELECT order_by, test_case_id FROM priorities WHERE run_id = ? "
                                      "ORDER BY order_by, rank", [run_id]).fetchall():
        orders.setdefault(order_by, []).append(tcid)
    return orders


# -- test cases and results ------------------------------------------------------------------------

def read_graphs(con, dataset_id: str, backend: str, model: str) -> dict[str, tuple[str, str | None, str | None]]:
    """Cached extractions of a dataset: seed_id → (status, graph JSON, error)."""
    rows = con.execute("SELECT seed_id, status, graph, error FROM kg_extractions "
                       "WHERE dataset_id = ? AND backend = ? AND model = ?", [dataset_id, backend, model]).fetchall()
    return {seed_id: (status, graph, error) for seed_id, status, graph, error in rows}


def read_checks(con, run_id: str) -> list:
    """The run's checks (every comparison a relation made), by check id."""
    rows = con.execute("""SELECT check_id, relation, seed_id, source_round, perturbations, test_case_ids, positions,
                                 text_a, text_b, similarity, ec_equivalent, violated, bug_level,
                                 coalesce(unstable, false), coalesce(flaky, false) AS flaky,
                                 coalesce(no_answer, false) AS no_answer
                          FROM checks WHERE run_id = ? ORDER BY check_id""", [run_id]).fetchall()
    return [Check(r[0], r[1], r[2], r[3], tuple(json.loads(r[4])), tuple(json.loads(r[5])), tuple(json.loads(r[6])),
                  r[7], r[8], r[9], r[10], r[11], r[12], r[13], flaky=r[14], no_answer=r[15]) for r in rows]


def read_confirmations(con, run_id: str) -> dict[tuple[str, int, int], tuple[str, str | None]]:
    """The answers asked to confirm the run's detections: (test_case_id, position, confirmation) →
    (conversation hash, output); errored ones are left out (asked again)."""
    rows = con.execute("SELECT test_case_id, position, confirmation, conversation_hash, output FROM confirmations "
                       "WHERE run_id = ? AND output IS NOT NULL", [run_id]).fetchall()
    return {(t, p, k): (h, o) for t, p, k, h, o in rows}


def read_orig_samples(con, run_id: str, test_case_id: str) -> dict[int, list[str | None]]:
    """ORIG's repeated answers (``--orig-repeats``) of one ORIG test case: position → outputs by sample."""
    rows = con.execute("SELECT position, output FROM orig_samples WHERE run_id = ? AND test_case_id = ? "
                       "ORDER BY position, sample", [run_id, test_case_id]).fetchall()
    found: dict[int, list[str | None]] = {}
    for position, output in rows:
        found.setdefault(position, []).append(output)
    return found


def read_cases_and_verdicts(con, run_id: str):
    """The run's test cases and, per test case, the EC verdict of every position."""
    rows = con.execute("""
        SELECT t.seed_id, t.perturbation, t.replicate, t.target_round, t.story, t.guide, r.test_case_id, r.source_round,
               r.ec_equivalent,
               r.ec_semantic, r.ec_ontology, r.ec_story, r.ec_needed, r.ec_missing, r.ec_follows_ok
        FROM test_cases t JOIN test_case_rounds r USING (run_id, test_case_id)
        WHERE t.run_id = ? ORDER BY t.seed_id, r.test_case_id, r.position""", [run_id]).fetchall()
    sources: dict[str, list] = {}
    meta, verdicts = {}, {}
    for seed_id, pert, rep, target, grounding, guide, tcid, src, eq, sem, onto, story, needed, missing, follows in rows:
        meta[tcid] = (seed_id, pert, rep, target, grounding, guide)
        sources.setdefault(tcid, []).append(src)
        verdicts.setdefault(tcid, []).append(None if eq is None else ECVerdict(
            bool(eq), bool(sem), bool(onto), bool(story), frozenset(json.loads(needed or "[]")),
            frozenset(json.loads(missing or "[]")), follows))
    cases = [TestCase(seed_id, pert, rep, tuple(sources[t]), target_round=target, story=grounding, guide=guide)
             for t, (seed_id, pert, rep, target, grounding, guide) in meta.items()]
    return cases, verdicts


def unknown_rounds(con, run_id: str) -> set[tuple[str, int]]:
    """(seed_id, turn_id) of the run's seed rounds whose gold answer is "unknown" (unanswerable questions)."""
    rows = con.execute("""
        SELECT s.seed_id, s.turn_id FROM runs r JOIN seed_rounds s USING (dataset_id)
        WHERE r.run_id = ? AND lower(trim(s.answer)) = ?""", [run_id, UNKNOWN]).fetchall()
    return {(seed_id, int(turn)) for seed_id, turn in rows}


def test_case_rounds(con, run_id: str) -> pd.DataFrame:
    """Every round of every test case of the run, with its EC verdict."""
    return con.execute("""
        SELECT t.seed_id, t.test_case_id, t.perturbation, t.replicate, r.position, r.source_round, r.question,
               r.ec_equivalent, r.ec_semantic, r.ec_ontology, r.ec_story, r.ec_needed, r.ec_missing
        FROM test_cases t JOIN test_case_rounds r USING (run_id, test_case_id)
        WHERE t.run_id = ? ORDER BY t.seed_id, t.test_case_id, r.position""", [run_id]).df()


test_case_rounds.__test__ = False


def rounds_export(con, run_id: str) -> pd.DataFrame:
    """Every round of the run with the SUT's output, the reference, similarity and EC verdict (for download)."""
    return con.execute("""
        SELECT r.run_id, t.seed_id, r.test_case_id, t.perturbation, r.position, r.source_round, r.question,
               o.output, o.reference, o.similarity, r.ec_equivalent, r.ec_semantic, r.ec_ontology, r.ec_story,
               r.ec_needed, r.ec_missing, o.error, o.output IS NULL AS errored
        FROM test_case_rounds r JOIN test_cases t USING (run_id, test_case_id)
        LEFT JOIN run_rounds o USING (run_id, test_case_id, position)
        WHERE r.run_id = ? ORDER BY t.seed_id, r.test_case_id, r.position""", [run_id]).df()


def transformed_rounds(con, run_id: str, perturbations: tuple[str, ...]) -> pd.DataFrame:
    """Every round of the run's test cases of these kinds (e.g. DialTest's operators) with the question asked,
    the seed's story and the gold answer: the rows of an augmented dataset."""
    marks = ", ".join("?" * len(perturbations))
    return con.execute(f"""
        SELECT t.seed_id, r.test_case_id, t.perturbation, t.guide, r.position, r.source_round, r.question,
               g.answer, s.story
        FROM test_cases t JOIN test_case_rounds r USING (run_id, test_case_id)
        JOIN runs USING (run_id)
        JOIN seeds s ON s.dataset_id = runs.dataset_id AND s.seed_id = t.seed_id
        JOIN seed_rounds g ON g.dataset_id = runs.dataset_id AND g.seed_id = t.seed_id AND g.turn_id = r.source_round
        WHERE r.run_id = ? AND t.perturbation IN ({marks})
        ORDER BY t.seed_id, r.test_case_id, r.position""", [run_id, *perturbations]).df()


def detections_export(con, run_id: str) -> pd.DataFrame:
    """The run's detections (violated checks), for download."""
    return con.execute("""
        SELECT detection_id, relation, perturbations, seed_id, source_round, test_case_ids, positions,
               text_a, text_b, similarity, ec_equivalent, bug_level, unstable, flaky
        FROM detections WHERE run_id = ? ORDER BY detection_id""", [run_id]).df()


# -- the SUT's answers -----------------------------------------------------------------------------

def mean_answer_seconds(con, fingerprint: str) -> float | None:
    """How long this SUT took per answer, on average over the answers it computed."""
    row = con.execute("SELECT avg(seconds) FROM answers WHERE sut_fingerprint = ? AND answer IS NOT NULL "
                      "AND seconds > 0", [fingerprint]).fetchone()
    return row[0] if row else None


def stored_answers(con, fingerprint: str) -> dict[str, tuple[str, float | None, float | None]]:
    """The answers this SUT gave before: conversation hash → (answer, seconds, gini); errored rounds are left out."""
    rows = con.execute("SELECT conversation_hash, answer, seconds, gini FROM answers "
                       "WHERE sut_fingerprint = ? AND answer IS NOT NULL", [fingerprint]).fetchall()
    return {h: (a, s, g) for h, a, s, g in rows}


# -- background jobs -------------------------------------------------------------------------------

def list_jobs(con) -> pd.DataFrame:
    """Every background job, newest first."""
    return con.execute("SELECT * FROM jobs ORDER BY started_at DESC").df()


def read_job(con, job_id: str) -> dict | None:
    """One job's pid, status and arguments (a dict), or None when there is no such job."""
    row = con.execute("SELECT pid, status, args FROM jobs WHERE job_id = ?", [job_id]).fetchone()
    if row is None:
        return None
    return {"pid": row[0], "status": row[1], "args": json.loads(row[2])}
