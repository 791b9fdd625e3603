"""Triage of detections: searching them, precision labels, samples to label, agreement and adjudication.

The paper's precision labelling (MORTAR §IV-G): each annotator scores a detection 0–10, high meaning
the SUT's output is acceptable; a score below ``metrics.TRUE_POSITIVE_BELOW`` (6) marks the detection
as a true positive. PPD is the share of true positives among labelled detections; Cohen's kappa
measures how far two annotators agree beyond chance. Where two annotators disagree, an adjudication
records the final label.

Everything here goes through :func:`session`, which keeps connections short and serialises them
inside one process: DuckDB lets one process write a file at a time, and inside a process it refuses a
read-only connection next to a read-write one and aborts one of two concurrent schema updates. The
dashboard serves every browser session from one process, so that is where this matters.
"""

from __future__ import annotations

import random
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone

import duckdb
import pandas as pd

from mortar import store
from mortar.metrics import METHODS, TRUE_POSITIVE_BELOW, cohen_kappa, method_of

SCORE_MIN, SCORE_MAX = 0, 10
RETRY_S = 30.0  # how long a write keeps retrying a transaction another writer made fail

_lock = threading.RLock()


class StoreBusy(RuntimeError):
    """Another process (a run in the background) holds the store's file longer than we wanted to wait."""


@contextmanager
def session(db=None, read_only: bool = True, wait_s: float | None = None):
    """A short connection to the store; one at a time in this process (other processes wait on the file lock).

    ``wait_s``: give up with :class:`StoreBusy` when another process holds the file that long (default: the
    store's own, longer wait).
    """
    path = store.db_path(db)
    with _lock:
        if wait_s is not None and read_only and path.exists():
            con = _open_read_only(path, wait_s)  # what store.connect does for an existing file, with a short wait
            try:
                yield con
            finally:
                con.close()
        else:
            if wait_s is not None and path.exists():  # a write: wait for the file briefly, then open it as usual
                _open_read_only(path, wait_s).close()
            with store.connect(db, read_only=read_only) as con:
                yield con


def _open_read_only(path, wait_s: float):
    try:
        return store.open_file(path, read_only=True, wait_s=wait_s)
    except duckdb.IOException as e:
        if "lock" not in str(e).lower():
            raise
        raise StoreBusy(f"{path.name} is held by another process (a run writing its results)") from None


def _write(db, work, wait_s: float | None = None):
    """Run ``work(con)`` in one transaction, retrying when a concurrent writer made it fail.

    ``wait_s``: raise StoreBusy when another process holds the file that long (default: the store's wait)."""
    deadline = time.monotonic() + RETRY_S
    delay = 0.02
    while True:
        try:
            with session(db, read_only=False, wait_s=wait_s) as con:
                con.begin()
                try:
                    result = work(con)
                    con.commit()
                except BaseException:
                    con.rollback()
                    raise
                return result
        except (duckdb.TransactionException, duckdb.ConnectionException):
            if time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def is_true_positive(score: float) -> bool:
    return score < TRUE_POSITIVE_BELOW


# -- finding detections ----------------------------------------------------------------------------

SORTABLE = {  # what the violations table may be sorted by → the SQL expression (never user text)
    "run": "d.run_id", "detection": "d.detection_id", "relation": "d.relation", "seed": "d.seed_id",
    "round": "d.source_round", "similarity": "d.similarity", "bug level": "d.bug_level", "SUT": "sut",
    "labels": "n_labels", "mean score": "mean_score",
}
NO_LEVEL = "none"  # the bug-level filter's name for detections without a level (RBT)


@dataclass(frozen=True)
class DetectionFilter:
    """What the violations table shows; an empty tuple means no restriction."""

    run_ids: tuple[str, ...] = ()
    suts: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    perturbations: tuple[str, ...] = ()  # a detection matches when any of its perturbations is named
    bug_levels: tuple[str, ...] = ()  # L1, L2, L3, or NO_LEVEL
    similarity: tuple[float, float] | None = None  # inclusive range
    seeds: tuple[str, ...] = ()
    text: str = ""  # case-insensitive substring of the question, the output or the reference
    labelled_by: str | None = None  # with ``unlabelled``: only detections this annotator has not scored
    unlabelled: bool = False

    def where(self) -> tuple[str, list]:
        clauses, params = ["TRUE"], []

        def any_of(expr: str, values) -> None:
            if values:
                clauses.append(f"{expr} IN ({', '.join('?' for _ in values)})")
                params.extend(values)

        any_of("d.run_id", self.run_ids)
        any_of("sut", self.suts)
        any_of("d.relation", self.relations)
        any_of("d.seed_id", self.seeds)
        if self.perturbations:
            clauses.append("list_has_any(CAST(d.perturbations AS VARCHAR[]), ?::VARCHAR[])")
            params.append(list(self.perturbations))
        if self.bug_levels:
            levels = [lv for lv in self.bug_levels if lv != NO_LEVEL]
            parts = []
            if levels:
                parts.append(f"d.bug_level IN ({', '.join('?' for _ in levels)})")
                params.extend(levels)
            if NO_LEVEL in self.bug_levels:
                parts.append("d.bug_level IS NULL")
            clauses.append("(" + " OR ".join(parts) + ")")
        if self.similarity is not None:
            clauses.append("d.similarity BETWEEN ? AND ?")
            params.extend([float(self.similarity[0]), float(self.similarity[1])])
        if self.text.strip():
            clauses.append("(contains(lower(sr.question), ?) OR contains(lower(d.text_a), ?) "
                           "OR contains(lower(d.text_b), ?))")
            params.extend([self.text.strip().lower()] * 3)
        if self.unlabelled and self.labelled_by:
            clauses.append("NOT EXISTS (SELECT 1 FROM labels x WHERE x.run_id = d.run_id "
                           "AND x.detection_id = d.detection_id AND x.annotator = ?)")
            params.append(self.labelled_by)
        return " AND ".join(clauses), params


_DETECTIONS_FROM = """
    FROM detections d
    JOIN runs r ON r.run_id = d.run_id
    CROSS JOIN LATERAL (SELECT coalesce(json_extract_string(r.config, '$.sut.model'), '?') AS sut) s
    LEFT JOIN seed_rounds sr ON sr.dataset_id = r.dataset_id AND sr.seed_id = d.seed_id
                            AND sr.turn_id = d.source_round
    LEFT JOIN (SELECT run_id, detection_id, count(*) AS n_labels, avg(score) AS mean_score
               FROM labels GROUP BY run_id, detection_id) l
           ON l.run_id = d.run_id AND l.detection_id = d.detection_id
"""


def find_detections(con, flt: DetectionFilter = DetectionFilter(), sort: str = "detection", descending: bool = False,
                    limit: int = 50, offset: int = 0) -> tuple[pd.DataFrame, int]:
    """One page of detections matching ``flt`` and how many match in all; filtered, sorted and paged in DuckDB."""
    if sort not in SORTABLE:
        raise ValueError(f"cannot sort by {sort!r}")
    where, params = flt.where()
    total = con.execute(f"SELECT count(*) {_DETECTIONS_FROM} WHERE {where}", params).fetchone()[0]
    order = f"{SORTABLE[sort]} {'DESC' if descending else 'ASC'} NULLS LAST, d.run_id, d.detection_id"
    page = con.execute(f"""
        SELECT d.run_id, d.detection_id, s.sut, d.relation, d.perturbations, d.seed_id, d.source_round,
               sr.question, d.text_a AS output, d.text_b AS reference, d.similarity, d.ec_equivalent, d.bug_level,
               coalesce(l.n_labels, 0) AS n_labels, l.mean_score
        {_DETECTIONS_FROM} WHERE {where}
        ORDER BY {order} LIMIT ? OFFSET ?""", params + [int(limit), int(offset)]).df()
    return page, int(total)


def filter_choices(con, run_ids: tuple[str, ...] = ()) -> dict[str, list]:
    """The values each filter can take (within the chosen runs), for the filter widgets."""
    runs_clause = f"WHERE d.run_id IN ({', '.join('?' for _ in run_ids)})" if run_ids else ""
    params = list(run_ids)

    def values(expr: str) -> list:
        rows = con.execute(f"SELECT DISTINCT {expr} AS v FROM detections d JOIN runs r ON r.run_id = d.run_id "
                           f"{runs_clause} ORDER BY v NULLS FIRST", params).fetchall()
        return [v for (v,) in rows]

    perts = con.execute(f"SELECT DISTINCT unnest(CAST(d.perturbations AS VARCHAR[])) AS p FROM detections d "
                        f"{runs_clause} ORDER BY p", params).fetchall()
    sims = con.execute(f"SELECT min(similarity), max(similarity) FROM detections d {runs_clause}", params).fetchone()
    return {"suts": values("coalesce(json_extract_string(r.config, '$.sut.model'), '?')"),
            "relations": values("d.relation"), "seeds": values("d.seed_id"),
            "bug_levels": [NO_LEVEL if v is None else v for v in values("d.bug_level")],
            "perturbations": [p for (p,) in perts],
            "similarity": (sims[0], sims[1]) if sims[0] is not None else (0.0, 1.0)}


# -- samples to label ------------------------------------------------------------------------------

STRATA = {"relation": lambda rel, perts: rel,
          "perturbation": lambda rel, perts: perts[0] if len(perts) == 1 else "group (MR3/MR4)"}


def sample_detections(con, run_id: str, n: int, seed: int = 0, stratify_by: tuple[str, ...] = ()) -> list[str]:
    """``n`` detection ids of a run, drawn reproducibly (same run, size, seed and strata: same sample).

    Without strata: a uniform random sample. With strata (``relation`` and/or ``perturbation``): every
    stratum is shuffled and the strata are taken in turn, so small strata are not drowned by large ones.
    """
    rows = con.execute("SELECT detection_id, relation, CAST(perturbations AS VARCHAR[]) FROM detections "
                       "WHERE run_id = ? ORDER BY detection_id", [run_id]).fetchall()
    rng = random.Random(f"{run_id}|{seed}")
    if not stratify_by:
        ids = [r[0] for r in rows]
        rng.shuffle(ids)
        return ids[:n]
    strata: dict[tuple, list[str]] = {}
    for det, rel, perts in rows:
        key = tuple(STRATA[s](rel, perts) for s in stratify_by)
        strata.setdefault(key, []).append(det)
    queues = []
    for key in sorted(strata):
        ids = strata[key]
        rng.shuffle(ids)
        queues.append(ids)
    picked: list[str] = []
    while len(picked) < n and any(queues):
        for q in queues:
            if q and len(picked) < n:
                picked.append(q.pop())
    return picked


# -- labels, agreement, adjudication ---------------------------------------------------------------

def save_label(run_id: str, detection_id: str, annotator: str, score: int, note: str = "", db=None,
               wait_s: float | None = None) -> None:
    """Store (or replace) one annotator's score of one detection."""
    annotator = (annotator or "").strip()
    if not annotator:
        raise ValueError("an annotator name is needed")
    if int(score) != score or not SCORE_MIN <= score <= SCORE_MAX:
        raise ValueError(f"a score is a whole number from {SCORE_MIN} to {SCORE_MAX}, not {score!r}")
    row = [dict(run_id=run_id, detection_id=detection_id, annotator=annotator, score=int(score),
                note=(note or "").strip() or None, labelled_at=_now())]
    _write(db, lambda con: store.upsert(con, "labels", row, update=("score", "note", "labelled_at")), wait_s)


def delete_label(run_id: str, detection_id: str, annotator: str, db=None) -> None:
    _write(db, lambda con: con.execute("DELETE FROM labels WHERE run_id = ? AND detection_id = ? AND annotator = ?",
                                       [run_id, detection_id, annotator]))


def adjudicate(run_id: str, detection_id: str, true_positive: bool, adjudicator: str, note: str = "", db=None,
               wait_s: float | None = None) -> None:
    """Record the final label of a detection (replacing an earlier decision)."""
    adjudicator = (adjudicator or "").strip()
    if not adjudicator:
        raise ValueError("an adjudicator name is needed")
    row = [dict(run_id=run_id, detection_id=detection_id, true_positive=bool(true_positive),
                adjudicator=adjudicator, note=(note or "").strip() or None, decided_at=_now())]
    _write(db, lambda con: store.upsert(con, "adjudications", row,
                                        update=("true_positive", "adjudicator", "note", "decided_at")), wait_s)


def read_labels(con, run_id: str | None = None) -> pd.DataFrame:
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
    row = con.execute("SELECT score, note FROM labels WHERE run_id = ? AND detection_id = ? AND annotator = ?",
                      [run_id, detection_id, annotator]).fetchone()
    return None if row is None else (row[0], row[1])


def annotators(con, run_id: str) -> list[str]:
    return [a for (a,) in con.execute("SELECT DISTINCT annotator FROM labels WHERE run_id = ? ORDER BY annotator",
                                      [run_id]).fetchall()]


FINAL_LABELS = """
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
    return con.execute(f"SELECT * FROM ({FINAL_LABELS}) {clause} ORDER BY run_id, detection_id", params).df()


def ppd_by_run(con) -> pd.DataFrame:
    """PPD of every labelled run from the final labels: run_id, PPD, labelled (decided) and disputed counts."""
    return con.execute(f"""
        SELECT run_id, avg(CAST(true_positive AS DOUBLE)) AS PPD, count(true_positive) AS labelled,
               count(*) - count(true_positive) AS disputed
        FROM ({FINAL_LABELS}) GROUP BY run_id ORDER BY run_id""", [TRUE_POSITIVE_BELOW, TRUE_POSITIVE_BELOW]).df()


@dataclass(frozen=True)
class Agreement:
    """How two annotators' labels of the same detections compare."""

    annotator_a: str
    annotator_b: str
    common: int  # detections both labelled
    kappa: float  # Cohen's kappa of their true/false-positive labels on those
    ppd_a: float  # each one's PPD over everything they labelled
    ppd_b: float
    disagreements: list[str] = field(default_factory=list)  # detection ids they label differently


def agreement(labels: pd.DataFrame, a: str, b: str) -> Agreement:
    """Agreement of annotators ``a`` and ``b`` in a frame from :func:`read_labels` (one run)."""
    la = labels[labels["annotator"] == a].set_index("detection_id")["score"]
    lb = labels[labels["annotator"] == b].set_index("detection_id")["score"]
    common = sorted(set(la.index) & set(lb.index))
    ta = [is_true_positive(la[d]) for d in common]
    tb = [is_true_positive(lb[d]) for d in common]
    return Agreement(a, b, len(common), cohen_kappa(ta, tb) if common else float("nan"),
                     _ppd(la), _ppd(lb), [d for d, x, y in zip(common, ta, tb) if x != y])


def _ppd(scores: pd.Series) -> float:
    from mortar.metrics import ppd

    return ppd([float(s) for s in scores])


def precision_by_method(con, run_id: str, pair: tuple[str, str] | None = None) -> pd.DataFrame:
    """Per method with labelled detections: labelled, PPD of the final labels, and Cohen's kappa of two annotators.

    ``pair``: the two annotators to compare (default: the two who labelled most of this run).
    """
    relation = dict(con.execute("SELECT detection_id, relation FROM detections WHERE run_id = ?", [run_id]).fetchall())
    final = final_labels(con, run_id)
    scores = read_labels(con, run_id)
    final["method"] = final["detection_id"].map(relation).map(method_of)
    scores["method"] = scores["detection_id"].map(relation).map(method_of)
    if pair is None:
        pair = tuple(scores["annotator"].value_counts().index[:2])
    rows = []
    for method in ("RBT", *METHODS):
        mine = final[final["method"] == method]
        if mine.empty:
            continue
        decided = mine["true_positive"].dropna()
        row = {"method": method, "labelled": len(decided), "disputed": len(mine) - len(decided),
               "PPD": float(decided.astype(float).mean()) if len(decided) else float("nan"),
               "annotators": " vs ".join(pair) if len(pair) == 2 else "", "both_labelled": 0, "kappa": float("nan")}
        if len(pair) == 2:
            both = agreement(scores[scores["method"] == method], *pair)
            row.update(both_labelled=both.common, kappa=both.kappa)
        rows.append(row)
    return pd.DataFrame(rows, columns=["method", "labelled", "disputed", "PPD", "annotators", "both_labelled", "kappa"])
