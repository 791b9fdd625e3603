"""Read-models for comparing two runs on the same test cases: what each run tested, the seed questions, and one
question's answers from both runs side by side."""

from __future__ import annotations

import pandas as pd

from mortar.store.reads import UnknownRun
from mortar.vocab import ORIG


def run_dataset(con, run_id: str) -> str:
    """The sha256 of the dataset the run tested."""
    row = con.execute("SELECT dataset_id FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if row is None:
        raise UnknownRun(f"no run {run_id!r} in the store")
    return row[0]


def case_signatures(con, run_id: str) -> dict[str, tuple]:
    """test_case_id → (seed, kind, and every round's source round and question as asked): two runs with equal
    signatures asked the same test cases."""
    rows = con.execute("""
        SELECT t.test_case_id, t.seed_id, t.perturbation, r.source_round, r.question
        FROM test_cases t JOIN test_case_rounds r USING (run_id, test_case_id)
        WHERE t.run_id = ? ORDER BY t.test_case_id, r.position""", [run_id]).fetchall()
    heads, rounds = {}, {}
    for tcid, seed_id, perturbation, source, question in rows:
        heads[tcid] = (seed_id, perturbation)
        rounds.setdefault(tcid, []).append((source, question))
    return {tcid: (*heads[tcid], tuple(rounds[tcid])) for tcid in heads}


def run_seeds(con, run_id: str) -> list[str]:
    """The seeds the run made test cases of (its dialogues), in order."""
    return [s for (s,) in con.execute("SELECT DISTINCT seed_id FROM test_cases WHERE run_id = ? ORDER BY seed_id",
                                      [run_id]).fetchall()]


def seed_questions(con, run_id: str) -> dict[tuple[str, int], str]:
    """(seed_id, turn_id) → the seed's question, for every seed the run tested."""
    rows = con.execute("""
        SELECT sr.seed_id, sr.turn_id, sr.question FROM seed_rounds sr JOIN runs r ON r.dataset_id = sr.dataset_id
        WHERE r.run_id = ? AND sr.seed_id IN (SELECT seed_id FROM test_cases WHERE run_id = ?)
        ORDER BY sr.seed_id, sr.turn_id""", [run_id, run_id]).fetchall()
    return {(seed_id, turn_id): question for seed_id, turn_id, question in rows}


def questions_with_detections(con, run_ids: list[str]) -> dict[tuple[str, int], int]:
    """(seed_id, turn_id) → how many detections the runs have on that seed question."""
    rows = con.execute("""
        SELECT seed_id, source_round, count(*) FROM checks WHERE violated AND list_contains(?::VARCHAR[], run_id)
        GROUP BY ALL""", [list(run_ids)]).fetchall()
    return {(seed_id, int(turn)): n for seed_id, turn, n in rows}


def paired_answers(con, run_a: str, run_b: str, seed_id: str, turn_id: int) -> pd.DataFrame:
    """Every asking of one seed question in run A's test cases (ORIG first) with run A's and run B's answers
    there: test_case_id, perturbation, position, question (as asked), ec_equivalent, answer_a, answer_b and the
    seed's gold answer."""
    frame = question_answers(con, [run_a, run_b], seed_id, turn_id)
    return frame.rename(columns={run_a: "answer_a", run_b: "answer_b"})


def question_answers(con, run_ids: list[str], seed_id: str, turn_id: int) -> pd.DataFrame:
    """Every asking of one seed question in the first run's test cases (ORIG first), with each run's answer there
    in a column named by its run id: test_case_id, perturbation, position, question (as asked), ec_equivalent,
    gold_answer, then one column per run (the N systems of a study, or the two of a comparison)."""
    long = con.execute("""
        SELECT t.test_case_id, t.perturbation, r.position, r.question, r.ec_equivalent, g.answer AS gold_answer,
               o.run_id AS answered_by, coalesce(o.output, '[errored: ' || o.error || ']') AS answer
        FROM test_cases t JOIN test_case_rounds r USING (run_id, test_case_id)
        JOIN runs ru ON ru.run_id = t.run_id
        LEFT JOIN seed_rounds g ON g.dataset_id = ru.dataset_id AND g.seed_id = t.seed_id AND g.turn_id = r.source_round
        LEFT JOIN run_rounds o ON list_contains(?::VARCHAR[], o.run_id) AND o.test_case_id = r.test_case_id
                               AND o.position = r.position
        WHERE t.run_id = ? AND t.seed_id = ? AND r.source_round = ?""",
                       [list(run_ids), run_ids[0], seed_id, int(turn_id)]).df()
    keys = ["test_case_id", "perturbation", "position", "question", "ec_equivalent", "gold_answer"]
    rows = long.drop_duplicates(keys)[keys].reset_index(drop=True)
    for run_id in dict.fromkeys(run_ids):
        mine = long[long["answered_by"] == run_id].set_index(["test_case_id", "position"])["answer"]
        rows[run_id] = [mine.get((t, p)) for t, p in zip(rows["test_case_id"], rows["position"])]
    order = rows.assign(_orig=rows["perturbation"] != ORIG).sort_values(["_orig", "perturbation", "test_case_id",
                                                                          "position"])
    return order.drop(columns="_orig").reset_index(drop=True)
