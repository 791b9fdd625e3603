"""The rules of triage: precision-label scores, samples to label, agreement and adjudication.

The paper's precision labelling (MORTAR §IV-G): each annotator scores a detection 0–10, high meaning
the SUT's output is acceptable; a score below ``vocab.TRUE_POSITIVE_BELOW`` (6) marks the detection
as a true positive. PPD is the share of true positives among labelled detections; Cohen's kappa
measures how far two annotators agree beyond chance. Where two annotators disagree, an adjudication
records the final label.

The labels are stored and read through :mod:`mortar.store` (``store.read_labels``, ``store.final_labels``,
``store.find_detections`` …); writes go through ``store.transaction``, safe next to the dashboard's reads.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pandas as pd

from mortar import store
from mortar.methods import method_label_of
from mortar.metrics import cohen_kappa, method_labels
from mortar.vocab import SCORE_MAX, SCORE_MIN, is_true_positive


# -- samples to label ------------------------------------------------------------------------------

STRATA = {"relation": lambda rel, perts: rel,
          "perturbation": lambda rel, perts: perts[0] if len(perts) == 1 else "group (MR3/MR4)"}


def sample_detections(con, run_id: str, n: int, seed: int = 0, stratify_by: tuple[str, ...] = ()) -> list[str]:
    """``n`` detection ids of a run, drawn reproducibly (same run, size, seed and strata: same sample).

    Without strata: a uniform random sample. With strata (``relation`` and/or ``perturbation``): every
    stratum is shuffled and the strata are taken in turn, so small strata are not drowned by large ones.
    """
    rows = store.run_detections(con, run_id)
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


# -- labels and adjudication -----------------------------------------------------------------------

def save_label(run_id: str, detection_id: str, annotator: str, score: int, note: str = "", db=None,
               wait_s: float | None = None) -> None:
    """Store (or replace) one annotator's score of one detection."""
    annotator = (annotator or "").strip()
    if not annotator:
        raise ValueError("an annotator name is needed")
    if int(score) != score or not SCORE_MIN <= score <= SCORE_MAX:
        raise ValueError(f"a score is a whole number from {SCORE_MIN} to {SCORE_MAX}, not {score!r}")
    note = (note or "").strip() or None
    store.transaction(db, lambda con: store.write_label(con, run_id, detection_id, annotator, int(score), note),
                      wait_s)


def adjudicate(run_id: str, detection_id: str, true_positive: bool, adjudicator: str, note: str = "", db=None,
               wait_s: float | None = None) -> None:
    """Record the final label of a detection (replacing an earlier decision)."""
    adjudicator = (adjudicator or "").strip()
    if not adjudicator:
        raise ValueError("an adjudicator name is needed")
    note = (note or "").strip() or None
    store.transaction(db, lambda con: store.write_adjudication(con, run_id, detection_id, bool(true_positive),
                                                               adjudicator, note), wait_s)


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
    """Agreement of annotators ``a`` and ``b`` in a frame from ``store.read_labels`` (one run)."""
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
    relation = store.detection_relations(con, run_id)
    final = store.final_labels(con, run_id)
    scores = store.read_labels(con, run_id)
    final["method"] = final["detection_id"].map(relation).map(method_label_of)
    scores["method"] = scores["detection_id"].map(relation).map(method_label_of)
    if pair is None:
        pair = tuple(scores["annotator"].value_counts().index[:2])
    rows = []
    for method in method_labels():
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
