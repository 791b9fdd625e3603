"""The metrics of the paper as counting functions — the only place they are computed (MORTAR §IV-G, Table II).

NBugs, Rate+ (bugs / checks), RETC (share of test cases with a bug), BPTC (bugs per test case), CV of
the L1/L2/L3 counts, uniqueness and overlap between methods, PPD (precision from labels) and Cohen's
kappa. Each function takes the checks, cases, labels and methods it counts over (the report, ``mortar.reports``,
hands it the registered methods), so nothing here reads the store or a registry. In the code a *check* is any comparison a relation made; a *detection* (a bug) is a
violated check.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Hashable, Sequence

import numpy as np
import pandas as pd

from mortar.calibrate import agreement, best_threshold
from mortar.vocab import LEVELS, MR1, MR2, ORIG, SEL, is_true_positive


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa between two raters' labels of the same items (1.0 when both agree trivially)."""
    if len(a) != len(b):
        raise ValueError("both raters must label the same items")
    n = len(a)
    if n == 0:
        return float("nan")
    observed = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca.keys() | cb.keys()) / (n * n)
    if expected == 1.0:
        return 1.0
    return (observed - expected) / (1.0 - expected)


# -- bug-detection metrics ---------------------------------------------------------------------------


def coefficient_of_variation(counts: Sequence[float]) -> float:
    """CV = standard deviation / mean of the counts (population form); 0 when all are 0."""
    if not counts:
        return float("nan")
    mean = sum(counts) / len(counts)
    if mean == 0:
        return 0.0
    var = sum((c - mean) ** 2 for c in counts) / len(counts)
    return var ** 0.5 / mean


def rate_plus(bugs, checks):
    """Rate+ = bugs / checks made, NaN where none was made: of two counts, or elementwise of two numpy arrays of
    counts (the bootstrap of ``mortar.compare``)."""
    if isinstance(checks, np.ndarray):
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.divide(bugs, checks, out=np.full(np.broadcast(bugs, checks).shape, np.nan),
                             where=checks != 0)
    return bugs / checks if checks else float("nan")


def method_summary(checks, n_test_cases: int) -> dict:
    """NBugs, checks, Rate+, RETC and BPTC of one method's checks over its test cases.

    ``detections`` keeps its name in exports for continuity: it counts every check made."""
    bugs = [c for c in checks if c.violated]
    effective = {tc for c in bugs for tc in c.test_case_ids}
    return {
        "test_cases": n_test_cases,
        "detections": len(checks),
        "NBugs": len(bugs),
        "Rate+": rate_plus(len(bugs), len(checks)),
        "RETC": len(effective) / n_test_cases if n_test_cases else float("nan"),
        "BPTC": len(bugs) / n_test_cases if n_test_cases else float("nan"),
    }


def level_counts(checks) -> dict[str, int]:
    counts = dict.fromkeys(LEVELS, 0)
    for c in checks:
        if c.violated and c.bug_level:
            counts[c.bug_level] += 1
    return counts


def _bug_questions(checks, relations) -> set[tuple[str, int]]:
    return {(c.seed_id, c.source_round) for c in checks if c.violated and c.relation in relations}


def uniqueness(checks, methods_run) -> list[dict]:
    """Per method and bug level: bugs, and unique bugs (no other method flagged a bug on that seed question),
    as in the paper's Table V."""
    rows = []
    for method in methods_run:
        mine = [c for c in checks if c.relation in method.relations]
        theirs = [c for c in checks if c.relation in {r for m in methods_run if m is not method for r in m.relations}]
        unique = unique_bugs(mine, theirs)
        bugs = [c for c in mine if c.violated]
        rows.append({"method": method.label, "bugs": len(bugs), "unique": len(unique),
                     "unique_share": len(unique) / len(bugs) if bugs else float("nan"),
                     **{f"unique_{lv}": sum(c.bug_level == lv for c in unique) for lv in LEVELS}})
    return rows


def overlap(checks, methods_run) -> dict[str, int]:
    """Seed questions with a bug, by the exact set of methods that flagged them (an UpSet plot's bars).

    Parts are named "<label> only", "both" (with two methods), or "<label> & <label> …"."""
    flagged = {m.label: _bug_questions(checks, m.relations) for m in methods_run}
    labels = list(flagged)
    parts: dict[str, int] = {}
    for size in range(1, len(labels) + 1):
        for combo in combinations(labels, size):
            inside = set.intersection(*(flagged[x] for x in combo))
            outside = set().union(*(flagged[x] for x in labels if x not in combo))
            n = len(inside - outside)
            if size == 1:
                parts[f"{combo[0]} only"] = n
            elif n:
                parts["both" if len(labels) == 2 else " & ".join(combo)] = n
    if len(labels) == 2:  # the paper's order: one only, both, the other only
        first, second = labels
        parts = {f"{first} only": parts[f"{first} only"], "both": parts.get("both", 0),
                 f"{second} only": parts[f"{second} only"]}
    return parts


def table_vi(cases, verdicts) -> list[dict]:
    """Per perturbation: test cases, questions, unanswerable (EC-false) questions, MR applicability."""
    rows = {}
    for case in cases:
        if case.perturbation == ORIG:
            continue
        row = rows.setdefault(case.perturbation, {"perturbation": case.perturbation, "test_cases": 0, "questions": 0,
                                                  "ec_false": 0, f"{MR1}_applicable": 0, f"{MR2}_applicable": 0})
        vs = verdicts[case.test_case_id]
        row["test_cases"] += 1
        row["questions"] += len(vs)
        row["ec_false"] += sum(not v.equivalent for v in vs)
        row[f"{MR1}_applicable"] += sum(v.equivalent for v in vs)
        row[f"{MR2}_applicable"] += sum(not v.equivalent for v in vs)
    return [rows[p] for p in sorted(rows)]


def bugs_per_perturbation(checks, relations) -> list[dict]:
    """Bugs per perturbation (Table VII); a group bug (MR3/MR4) counts for every perturbation in its group."""
    counts: dict[str, int] = {}
    for c in checks:
        if c.violated and c.relation in relations:
            for p in c.perturbations:
                counts[p] = counts.get(p, 0) + 1
    total = sum(counts.values())
    return [{"perturbation": p, "bugs": n, "share": n / total} for p, n in sorted(counts.items())]


def per_kind(checks, relations) -> list[dict]:
    """Per relation and kind of test case (a perturbation, a noise location): checks, bugs and Rate+."""
    rows: dict[tuple[str, str], list[int]] = {}
    for c in checks:
        if c.relation in relations:
            for kind in c.perturbations:
                counts = rows.setdefault((c.relation, kind), [0, 0])
                counts[0] += 1
                counts[1] += c.violated
    return [{"relation": rel, "version": kind, "checks": n, "bugs": bugs, "Rate+": bugs / n}
            for (rel, kind), (n, bugs) in sorted(rows.items())]


def bugs_per_relation(checks, relations) -> list[dict]:
    """Per relation: checks, bugs, Rate+, share of the method's bugs (Table VIII)."""
    all_bugs = sum(c.violated for c in checks if c.relation in relations)
    rows = []
    for rel in relations:
        mine = [c for c in checks if c.relation == rel]
        bugs = sum(c.violated for c in mine)
        rows.append({"relation": rel, "detections": len(mine), "bugs": bugs,
                     "Rate+": bugs / len(mine) if mine else float("nan"),
                     "share": bugs / all_bugs if all_bugs else float("nan")})
    return rows


def levels_per_relation(checks, relations) -> list[dict]:
    """Bug levels per relation (Table IX)."""
    return [{"relation": rel, **level_counts([c for c in checks if c.relation == rel])} for rel in relations]


def unique_bugs(mine, theirs) -> list:
    """Bugs of one method on seed questions where the other method flagged no bug (paper Table V)."""
    flagged = {(c.seed_id, c.source_round) for c in theirs if c.violated}
    return [c for c in mine if c.violated and (c.seed_id, c.source_round) not in flagged]


def is_missing(value) -> bool:
    """None, NaN or pandas' NA: a disputed detection's final label."""
    return bool(pd.isna(value))


def ppd(scores: Sequence[float]) -> float:
    """Precision of positive detections from 0–10 acceptability scores (score < 6: a true bug)."""
    if not scores:
        return float("nan")
    return sum(is_true_positive(s) for s in scores) / len(scores)


def ppd_by_run(final):
    """PPD of every labelled run from its final labels (``store.final_labels``: true_positive is None while
    disputed): run_id, PPD, labelled (decided) and disputed counts."""
    rows = []
    for run_id, group in final.groupby("run_id", sort=True):
        decided = [bool(v) for v in group["true_positive"].dropna()]
        rows.append({"run_id": run_id, "PPD": sum(decided) / len(decided) if decided else float("nan"),
                     "labelled": len(decided), "disputed": len(group) - len(decided)})
    return pd.DataFrame(rows, columns=["run_id", "PPD", "labelled", "disputed"])


# -- the oracle against the annotators -------------------------------------------------------------

THRESHOLD_FREE = (SEL,)  # relations that compare choices, not similarities: nothing to calibrate


def calibration_set(labelled, threshold: float) -> list[dict]:
    """The labelled detections that calibrate the oracle, as ``mortar score-answers`` reads them: ``question``,
    ``gold`` (the reference, or the other version's answer), ``candidate``, ``story`` (the seed's, which an oracle
    may read), ``acceptable`` (the final label says false positive), and ``kind`` (the relation), ``detection_id``,
    ``similarity``.

    ``labelled``: ``store.labelled_detections``. Only detections flagged because their similarity fell below
    ``threshold`` (RBT, MR1, MR3, METAL, …) are in: there a bug flag means "the oracle says the answers do not
    match", which the annotators' verdict confirms or not. MR2/MR4 flag a *high* similarity and their false alarms
    are mostly the context check's; threshold-free relations (SEL) have nothing to calibrate. Disputed detections
    (no final label) are left out."""
    rows = []
    for r in labelled.to_dict("records"):
        if is_missing(r["true_positive"]) or r["relation"] in THRESHOLD_FREE or not r["similarity"] < threshold:
            continue
        rows.append({"question": r["question"], "gold": r["reference"], "candidate": r["output"],
                     "story": r["story"], "acceptable": not bool(r["true_positive"]), "kind": r["relation"],
                     "detection_id": r["detection_id"], "similarity": float(r["similarity"])})
    return rows


def oracle_vs_humans(labelled, threshold: float) -> dict:
    """The oracle's bug flags against the annotators' final labels of a run's detections.

    ``precision``: at the run's threshold every labelled detection was flagged, so the share the annotators
    confirmed (the run's PPD, disputed ones left out). On the :func:`calibration_set`, thresholds t are swept
    (a bug flag where similarity < t, as ``mortar score-answers`` counts): the best is the one with the highest
    *accuracy* against the labels, ties going to the one nearest the run's threshold (``calibrate.best_threshold``,
    the rule ``mortar score-answers`` reports). Only detections were labelled, so the sweep can say that a lower
    threshold would have dropped false alarms, never which bugs a higher one would have added. ``curve``: accuracy,
    precision, recall and F1 of the bug flags at each candidate threshold."""
    decided = [bool(tp) for tp in labelled["true_positive"] if not is_missing(tp)]
    pairs = calibration_set(labelled, threshold)
    scores, acceptable = [p["similarity"] for p in pairs], [p["acceptable"] for p in pairs]
    result = {"threshold": threshold, "labelled": len(decided), "confirmed": sum(decided),
              "precision": sum(decided) / len(decided) if decided else float("nan"), "calibration": len(pairs),
              "best_threshold": float("nan"), "best_accuracy": float("nan"), "curve": []}
    if not pairs:
        return result

    def at(t: float) -> dict:
        figures = agreement([s >= t for s in scores], acceptable)
        p, r = figures["bug_precision"], figures["bug_recall"]
        f1 = 2 * p * r / (p + r) if p == p and r == r and p + r else float("nan")
        return {"threshold": t, "flags": sum(s < t for s in scores), "accuracy": figures["accuracy"],
                "bug_precision": p, "bug_recall": r, "F1": f1}

    distinct = sorted(set(scores))
    cuts = sorted({threshold, distinct[0] - 1e-6, distinct[-1] + 1e-6,
                   *((a + b) / 2 for a, b in zip(distinct, distinct[1:]))})  # the candidates best_threshold tries
    best, best_accuracy = best_threshold(scores, acceptable, threshold)
    result.update(best_threshold=best, best_accuracy=best_accuracy, curve=[at(t) for t in cuts],
                  at_threshold=at(threshold), at_best=at(best))
    return result


def selection_summary(selections: dict) -> list[dict]:
    """Response selection per version (ORIG, each persona version): rounds, hits@1 and MRR of the gold answer,
    and how far "the SUT ranks the gold answer first" agrees with the answer oracle accepting the SUT's own
    generated answer on the same rounds (share of agreeing rounds and Cohen's kappa)."""
    by_version: dict[str, list[dict]] = {}
    for row in selections.values():
        by_version.setdefault(row["perturbation"], []).append(row)
    rows = []
    for version in sorted(by_version, key=lambda v: (v != ORIG, v)):
        ranks = [int(r["gold_rank"]) for r in by_version[version]]
        judged = [(int(r["gold_rank"]) == 1, bool(r["oracle_pass"])) for r in by_version[version]
                  if r["oracle_pass"] is not None and r["oracle_pass"] == r["oracle_pass"]]
        first, accepted = (list(x) for x in zip(*judged)) if judged else ([], [])
        rows.append({"version": version, "rounds": len(ranks), "hits@1": sum(x == 1 for x in ranks) / len(ranks),
                     "MRR": sum(1 / x for x in ranks) / len(ranks),
                     "agreement": sum(x == y for x, y in judged) / len(judged) if judged else float("nan"),
                     "kappa": cohen_kappa(first, accepted) if judged else float("nan")})
    return rows


def guidance_summary(checks, mutants: list[dict]) -> list[dict]:
    """Guided generation against its random baseline at the same budget: per guide, SUT calls (evaluated
    mutants), kept mutants (test cases), their bugs, bugs per SUT call and distinct seed questions with a bug,
    and the mean Gini impurity of the answers."""
    calls: dict[str, list[dict]] = {}
    for row in mutants:
        calls.setdefault(row["guide"], []).append(row)
    rows = []
    for guide, evaluated in sorted(calls.items()):
        kept = {r["test_case_id"] for r in evaluated if r["kept"]}
        bugs = [c for c in checks if c.violated and set(c.test_case_ids) & kept]
        ginis = [r["gini"] for r in evaluated if r["gini"] is not None and r["gini"] == r["gini"]]
        rows.append({"guide": guide, "questions": len({(r["seed_id"], r["source_round"]) for r in evaluated}),
                     "sut_calls": len(evaluated), "kept": len(kept), "bugs": len(bugs),
                     "bugs_per_call": len(bugs) / len(evaluated) if evaluated else float("nan"),
                     "bug_questions": len({(c.seed_id, c.source_round) for c in bugs}),
                     "mean_gini": sum(ginis) / len(ginis) if ginis else float("nan")})
    return rows


def unstable_summary(unstable) -> list[dict]:
    """Per relation, the detections on unstable seed questions and how many seed questions they are on."""
    by_relation: dict[str, list] = {}
    for c in unstable:
        by_relation.setdefault(c.relation, []).append(c)
    return [{"relation": name, "detections": len(mine), "seed_questions": len({(c.seed_id, c.source_round)
                                                                              for c in mine})}
            for name, mine in sorted(by_relation.items())]


