"""Read-models of one detection and what it came from: its test cases round by round, the seed and its graph."""

from __future__ import annotations

import json

import pandas as pd

from mortar.kg.model import DialogueGraph
from mortar.store.reads import stored_config
from mortar.vocab import ORIG


def detection(con, run_id: str, detection_id: str) -> dict | None:
    """The detection's row, with its JSON lists (perturbations, test case ids, positions) read."""
    row = con.execute("SELECT * FROM detections WHERE run_id = ? AND detection_id = ?", [run_id, detection_id]).df()
    if row.empty:
        return None
    d = row.iloc[0].to_dict()
    for k in ("perturbations", "test_case_ids", "positions"):
        d[k] = json.loads(d[k])
    return d


def case_rounds(con, run_id: str, test_case_id: str) -> pd.DataFrame:
    """Every round of a test case: the question, the SUT's answer, the reference, similarity and EC verdict."""
    frame = con.execute("""
        SELECT r.position, r.source_round, r.question, o.output AS sut_answer, sr.answer AS gold_answer,
               o.reference, o.similarity, o.error, r.ec_equivalent, r.ec_semantic, r.ec_ontology, r.ec_story,
               r.ec_needed, r.ec_missing, r.ec_follows_ok
        FROM test_case_rounds r
        JOIN test_cases t ON t.run_id = r.run_id AND t.test_case_id = r.test_case_id
        JOIN runs ru ON ru.run_id = r.run_id
        LEFT JOIN run_rounds o ON o.run_id = r.run_id AND o.test_case_id = r.test_case_id AND o.position = r.position
        LEFT JOIN seed_rounds sr ON sr.dataset_id = ru.dataset_id AND sr.seed_id = t.seed_id
                                AND sr.turn_id = r.source_round
        WHERE r.run_id = ? AND r.test_case_id = ? ORDER BY r.position""", [run_id, test_case_id]).df()
    for k in ("ec_needed", "ec_missing"):
        frame[k] = [json.loads(v) if isinstance(v, str) else [] for v in frame[k]]
    return frame


def test_case(con, run_id: str, test_case_id: str) -> dict | None:
    """A test case's kind and grounding; a mutant of a guided search also has its search record (``mutant``)."""
    row = con.execute("SELECT seed_id, perturbation, replicate, story, guide FROM test_cases "
                      "WHERE run_id = ? AND test_case_id = ?", [run_id, test_case_id]).fetchone()
    if row is None:
        return None
    mutant = con.execute("SELECT operators, gini, parent_gini, step FROM mutants WHERE run_id = ? AND test_case_id = ?",
                         [run_id, test_case_id]).fetchone()
    return dict(seed_id=row[0], perturbation=row[1], replicate=row[2], story=row[3], guide=row[4],
                mutant=None if mutant is None else dict(operators=mutant[0], gini=mutant[1], parent_gini=mutant[2],
                                                        step=mutant[3]))


test_case.__test__ = False


def original_case_id(con, run_id: str, seed_id: str) -> str | None:
    """The seed's unperturbed test case in this run (the one RBT asked)."""
    row = con.execute("SELECT test_case_id FROM test_cases WHERE run_id = ? AND seed_id = ? AND perturbation = ? "
                      "ORDER BY replicate LIMIT 1", [run_id, seed_id, ORIG]).fetchone()
    return row[0] if row else None


def story(con, run_id: str, seed_id: str) -> str:
    row = con.execute("SELECT s.story FROM seeds s JOIN runs r ON r.dataset_id = s.dataset_id "
                      "WHERE r.run_id = ? AND s.seed_id = ?", [run_id, seed_id]).fetchone()
    return row[0] if row else ""


def is_persona_seed(con, run_id: str, seed_id: str) -> bool:
    """Whether the seed is a persona dialogue (its story is the speaker's persona)."""
    row = con.execute("SELECT s.persona IS NOT NULL FROM seeds s JOIN runs r ON r.dataset_id = s.dataset_id "
                      "WHERE r.run_id = ? AND s.seed_id = ?", [run_id, seed_id]).fetchone()
    return bool(row and row[0])


def seed_question(con, run_id: str, seed_id: str, turn_id: int) -> str | None:
    """The seed's question in round ``turn_id``, as the dataset has it."""
    row = con.execute("SELECT sr.question FROM seed_rounds sr JOIN runs r ON r.dataset_id = sr.dataset_id "
                      "WHERE r.run_id = ? AND sr.seed_id = ? AND sr.turn_id = ?", [run_id, seed_id, turn_id]).fetchone()
    return row[0] if row else None


def seed_graph(con, run_id: str, seed_id: str):
    """The seed's knowledge graph as the run's context check used it (its KG backend and model), or (None, why not)."""
    try:
        config = stored_config(con, run_id)
    except LookupError:
        config = None
    row = None
    if config is not None and config.kg_backend is not None and config.kg_model is not None:
        row = con.execute("""
            SELECT k.status, k.graph, k.error FROM kg_extractions k JOIN runs r ON r.dataset_id = k.dataset_id
            WHERE r.run_id = ? AND k.seed_id = ? AND k.backend = ? AND k.model = ?""",
                          [run_id, seed_id, config.kg_backend, config.kg_model]).fetchone()
    if row is None:
        return None, "no knowledge graph is stored for this seed"
    status, graph, error = row
    if status != "ok" or not graph:
        return None, f"extraction failed: {error}"
    return DialogueGraph.from_json(graph), None


def versions(con, run_id: str, det: dict) -> pd.DataFrame:
    """MR3/MR4: every version of the question in the group, with its answer and EC verdict (one query)."""
    found = {(tc, pos): row for tc, pos, *row in con.execute("""
        SELECT r.test_case_id, r.position, t.perturbation, r.question, o.output, r.ec_equivalent
        FROM test_case_rounds r JOIN test_cases t ON t.run_id = r.run_id AND t.test_case_id = r.test_case_id
        LEFT JOIN run_rounds o ON o.run_id = r.run_id AND o.test_case_id = r.test_case_id AND o.position = r.position
        WHERE r.run_id = ? AND r.test_case_id IN (SELECT unnest(?::VARCHAR[]))""",
        [run_id, list(det["test_case_ids"])]).fetchall()}
    rows = []
    for tc, pos in zip(det["test_case_ids"], det["positions"]):
        if (tc, pos) in found:
            perturbation, question, output, ec = found[(tc, pos)]
            rows.append({"test_case": tc, "perturbation": perturbation, "position": pos, "question": question,
                         "sut_answer": output, "EC": "equivalent" if ec else "not equivalent",
                         "compared": output in (det["text_a"], det["text_b"])})
    return pd.DataFrame(rows)


def question_versions(con, run_id: str, seed_id: str, source_round: int) -> pd.DataFrame:
    """Every version of one seed question in a run: each test case round that asks seed round ``source_round``,
    with its SUT answer, similarity, EC verdict and how many detections name it, ORIG first."""
    return con.execute("""
        SELECT r.test_case_id AS test_case, t.perturbation, r.position, r.question, o.output AS sut_answer,
               o.similarity, r.ec_equivalent,
               (SELECT count(*) FROM detections d
                WHERE d.run_id = r.run_id AND d.seed_id = t.seed_id AND d.source_round = r.source_round
                  AND list_contains(list_zip(CAST(d.test_case_ids AS VARCHAR[]), CAST(d.positions AS INTEGER[])),
                                    row(r.test_case_id, r.position))) AS detections
        FROM test_case_rounds r
        JOIN test_cases t ON t.run_id = r.run_id AND t.test_case_id = r.test_case_id
        LEFT JOIN run_rounds o ON o.run_id = r.run_id AND o.test_case_id = r.test_case_id AND o.position = r.position
        WHERE r.run_id = ? AND t.seed_id = ? AND r.source_round = ?
        ORDER BY t.perturbation <> ?, t.perturbation, t.replicate, r.position""",
                       [run_id, seed_id, int(source_round), ORIG]).df()


def round_sensitivity(con, run_id: str, seed_id: str, turn_id: int) -> dict | None:
    """The stored sensitivity (GRI first, then WALI) of the run's SUT to each segment of the seed conversation
    before round ``turn_id``: {method, target, segments}; None when none was computed."""
    fingerprint = stored_config(con, run_id).sut_fingerprint
    row = con.execute("""
        SELECT s.method, s.target, s.segments FROM sensitivities s JOIN runs r ON r.dataset_id = s.dataset_id
        WHERE r.run_id = ? AND s.seed_id = ? AND s.turn_id = ? AND s.sut_fingerprint = ?
        ORDER BY s.method, s.target LIMIT 1""", [run_id, seed_id, turn_id, fingerprint]).fetchone()
    return None if row is None else dict(method=row[0], target=row[1], segments=json.loads(row[2]))
