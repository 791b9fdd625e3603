"""Read-models of the precision labels: annotators' scores, adjudications, final labels and PPD per run."""

from __future__ import annotations

import pandas as pd

from mortar.vocab import TRUE_POSITIVE_BELOW


def read_labels(con, run_id: str | None = None) -> pd.DataFrame:
    """Every annotator's score (of one run, or all), with ``true_positive`` (score below the cut-off)."""
    clause, params = ("WHERE run_id = ?", [run_id]) if run_id else ("", [])
    frame = con.execute(f"SELECT run_id, detection_id, annotator, score, note, labelled_at FROM labels {clause} "
                        "ORDER BY run_id, detection_id, annotator", params).df()
    frame["true_positive"] = frame["score"] < TRUE_POSITIVE_BELOW
    return frame


def read_adjudications(con, run_id: str | None = None) -> pd.DataFrame:
    clause, params = ("WHERE run_id = ?", [run_id]) if run_id else ("", [])
    return con.execute(f"SELECT run_id, detection_id, true_positive, adjudicator, note, decided_at FROM adjudications "
                       f"{clause} ORDER BY run_id, detection_id", params).df()


def label_of(con, run_id: str, detection_id: str, annotator: str) -> tuple[int, str | None] | None:
    """This annotator's (score, note) of the detection, or None."""
    row = con.execute("SELECT score, note FROM labels WHERE run_id = ? AND detection_id = ? AND annotator = ?",
                      [run_id, detection_id, annotator]).fetchone()
    return None if row is None else (row[0], row[1])


def annotators(con, run_id: str) -> list[str]:
    return [a for (a,) in con.execute("SELECT DISTINCT annotator FROM labels WHERE run_id = ? ORDER BY annotator",
                                      [run_id]).fetchall()]


# Both parameters are the true-positive cut-off.
_FINAL_LABELS = """
    WITH per AS (
        SELECT run_id, detection_id, count(*) AS n_labels, bool_and(score < ?) AS all_tp, bool_or(score < ?) AS any_tp
        FROM labels GROUP BY run_id, detection_id)
    SELECT coalesce(p.run_id, a.run_id) AS run_id, coalesce(p.detection_id, a.detection_id) AS detection_id,
           coalesce(p.n_labels, 0) AS n_labels,
           CASE WHEN a.true_positive IS NOT NULL THEN a.true_positive
                WHEN p.all_tp THEN TRUE WHEN NOT p.any_tp THEN FALSE END AS true_positive,
           CASE WHEN a.true_positive IS NOT NULL THEN 'adjudicated' WHEN p.n_labels = 1 THEN 'single annotator'
                WHEN p.all_tp OR NOT p.any_tp THEN 'agreed' ELSE 'disputed' END AS decided_by
    FROM per p FULL JOIN adjudications a ON a.run_id = p.run_id AND a.detection_id = p.detection_id
"""


def final_labels(con, run_id: str | None = None) -> pd.DataFrame:
    """Per labelled detection: the final true/false-positive label and how it was reached.

    An adjudication wins; otherwise the annotators' common label; detections they disagree on and that
    no one adjudicated are ``disputed`` (no final label yet).
    """
    params = [TRUE_POSITIVE_BELOW, TRUE_POSITIVE_BELOW]
    clause = ""
    if run_id:
        clause, params = "WHERE run_id = ?", params + [run_id]
    return con.execute(f"SELECT * FROM ({_FINAL_LABELS}) {clause} ORDER BY run_id, detection_id", params).df()


def detection_context(con, run_id: str, detection_id: str) -> dict | None:
    """What an annotator judges a detection against: the seed's question, its gold answer and the seed's story
    (None for an unknown detection; the gold answer is None where the dataset has none)."""
    row = con.execute("""
        SELECT sr.question, sr.answer, s.story
        FROM detections d JOIN runs r ON r.run_id = d.run_id
        LEFT JOIN seed_rounds sr ON sr.dataset_id = r.dataset_id AND sr.seed_id = d.seed_id
                                AND sr.turn_id = d.source_round
        LEFT JOIN seeds s ON s.dataset_id = r.dataset_id AND s.seed_id = d.seed_id
        WHERE d.run_id = ? AND d.detection_id = ?""", [run_id, detection_id]).fetchone()
    if row is None:
        return None
    return {"question": row[0] or "", "gold_answer": row[1], "story": row[2] or ""}


def labelled_detections(con, run_id: str) -> pd.DataFrame:
    """The run's detections that have a final label or are disputed, with what the oracle compared: the seed's
    question, ``reference`` (the gold answer, or the other version's answer), ``output``, the similarity, the seed's
    story, and the final label (``true_positive`` None while disputed), by detection id."""
    frame = con.execute(f"""
        SELECT d.detection_id, d.relation, CAST(d.perturbations AS VARCHAR[]) AS perturbations, d.similarity,
               coalesce(sr.question, '') AS question, d.text_b AS reference, d.text_a AS output,
               s.story, f.true_positive, f.decided_by, f.n_labels
        FROM ({_FINAL_LABELS}) f
        JOIN detections d ON d.run_id = f.run_id AND d.detection_id = f.detection_id
        JOIN runs r ON r.run_id = d.run_id
        LEFT JOIN seed_rounds sr ON sr.dataset_id = r.dataset_id AND sr.seed_id = d.seed_id
                                AND sr.turn_id = d.source_round
        LEFT JOIN seeds s ON s.dataset_id = r.dataset_id AND s.seed_id = d.seed_id
        WHERE f.run_id = ? ORDER BY d.detection_id""", [TRUE_POSITIVE_BELOW, TRUE_POSITIVE_BELOW, run_id]).df()
    frame["true_positive"] = frame["true_positive"].astype(object).where(frame["true_positive"].notna(), None)
    return frame
