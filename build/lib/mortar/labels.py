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
import re
from dataclasses import dataclass, field

import pandas as pd

from mortar import store
from mortar.dataset import UNKNOWN
from mortar.metrics import cohen_kappa
from mortar.reports import PRECISION_COLUMNS, run_precision
from mortar.vocab import SCORE_MAX, SCORE_MIN, is_true_positive
from mortar.metrics import ppd


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

    return ppd([float(s) for s in scores])


def precision_by_method(con, run_id: str, pair: tuple[str, str] | None = None) -> pd.DataFrame:
    """Per method with labelled detections: labelled, PPD of the final labels, and Cohen's kappa of two annotators
    (``reports.precision``'s method rows).

    ``pair``: the two annotators to compare (default: the two who labelled most of this run).
    """
    rows = [r for r in run_precision(con, run_id, pair) if r["group"] == "method"]
    frame = pd.DataFrame(rows, columns=PRECISION_COLUMNS).rename(columns={"name": "method"})
    return frame[["method", "labelled", "disputed", "PPD", "annotators", "both_labelled", "kappa"]]


# -- what a detection is about in the story ----------------------------------------------------------

# Words too common to say which sentence a question is about.
COMMON_WORDS = frozenset("""a an the and or but of to in on at by for with from as is are was were be been being it its
    this that these those he she they them his her their him i you we what who whom whose which when where why how
    did do does done has have had not no yes there here then than so if into about up out one""".split())


@dataclass(frozen=True)
class Passage:
    """The story sentence a question is about, and where the gold answer stands in it."""

    text: str
    span: tuple[int, int] | None  # the gold answer's characters in ``text``, when it occurs there
    overlap: int  # distinct content words it shares with the question and the gold answer


def _content_words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", (text or "").lower())) - COMMON_WORDS


def _answer_span(sentence: str, gold: str | None) -> tuple[int, int] | None:
    if not gold or not _content_words(gold) or gold.strip().lower() == UNKNOWN:  # "the" or "unknown" say nothing
        return None
    found = re.search(r"(?<!\w)" + re.escape(gold.strip().rstrip(".")) + r"(?!\w)", sentence, re.IGNORECASE)
    return found.span() if found else None


def story_passage(story: str, question: str, gold: str | None) -> Passage | None:
    """The story sentence the question is about: the one sharing most distinct content words with the question and
    the gold answer, a sentence holding the gold answer word for word beating one that does not; ties go to the
    earlier sentence. None for an empty story."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", story or "") if s.strip()]
    if not sentences:
        return None
    wanted = _content_words(question) | _content_words(gold or "")
    scored = [(_answer_span(s, gold) is not None, len(wanted & _content_words(s)), -i) for i, s in enumerate(sentences)]
    best = max(range(len(sentences)), key=lambda i: scored[i])
    text = sentences[best]
    return Passage(text, _answer_span(text, gold), scored[best][1])
