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
from mortar.vocab import (CRITICAL_SIMILARITY, LEVELS, MR1, MR2, MR3, MR4, ORIG, P1, P2, P2_CHANGES, P3,
                          PERSONA_VERSION_TEXT, RBT, SEL, is_true_positive)


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


def table_vi(cases, verdicts, checks, unknown) -> list[dict]:
    """The paper's Table VI, per perturbation: test cases, questions asked, unanswerable questions (gold "unknown"),
    the MR1 and MR2 checks made, and the MR3 and MR4 groups (one per seed question, counted for every perturbation
    among its versions), with a Sum row whose MR3/MR4 count each group once.

    ``unknown``: the (seed_id, turn_id) of the rounds whose gold answer is "unknown"."""
    columns = ("test_cases", "questions", "unanswerable_questions", f"{MR1}_checks", f"{MR2}_checks",
               f"{MR3}_groups", f"{MR4}_groups")
    rows: dict[str, dict] = {}

    def row(perturbation: str) -> dict:
        return rows.setdefault(perturbation, {"perturbation": perturbation, **dict.fromkeys(columns, 0)})

    for case in cases:
        if case.perturbation == ORIG or case.test_case_id not in verdicts:
            continue
        r = row(case.perturbation)
        r["test_cases"] += 1
        r["questions"] += len(case.source_rounds)
        r["unanswerable_questions"] += sum((case.seed_id, t) in unknown for t in case.source_rounds)
    groups = {MR3: set(), MR4: set()}
    for c in checks:
        column = {MR1: f"{MR1}_checks", MR2: f"{MR2}_checks", MR3: f"{MR3}_groups", MR4: f"{MR4}_groups"}.get(c.relation)
        if column is None:
            continue
        for p in c.perturbations:
            if p in rows:
                rows[p][column] += 1
        if c.relation in groups:
            groups[c.relation].add(c.check_id)
    ordered = [rows[p] for p in sorted(rows)]
    if not ordered:
        return []
    total = {"perturbation": "Sum", **{k: sum(r[k] for r in ordered) for k in columns}}
    total[f"{MR3}_groups"], total[f"{MR4}_groups"] = len(groups[MR3]), len(groups[MR4])
    return [*ordered, total]


def similarity_per_version(checks, seed_relation: str = RBT, relation: str = MR1) -> list[dict]:
    """The journal version's Table 6: per version of the dialogue (ORIG judged by RBT, each perturbation by MR1)
    the mean similarity of the answers to the reference, the mean similarity of the buggy ones, and the bug rate."""
    by_version: dict[str, list] = {}
    for c in checks:
        if c.relation == seed_relation or c.relation == relation:
            for version in c.perturbations:
                by_version.setdefault(version, []).append(c)
    rows = []
    for version in sorted(by_version, key=lambda v: (v != ORIG, v)):
        mine = by_version[version]
        bugs = [c.similarity for c in mine if c.violated]
        rows.append({"version": version, "relation": seed_relation if version == ORIG else relation,
                     "checks": len(mine), "mean_similarity": float(np.mean([c.similarity for c in mine])),
                     "mean_similarity_of_bugs": float(np.mean(bugs)) if bugs else float("nan"),
                     "bugs": len(bugs), "Rate+": len(bugs) / len(mine)})
    return rows


def similarity_distribution(checks, relations) -> list[dict]:
    """Per relation: how its checks' similarities spread (quartiles) and its critical bugs — detections whose
    answers are almost unrelated (similarity below ``CRITICAL_SIMILARITY``; the journal version's Fig. 7)."""
    rows = []
    for rel in relations:
        sims = np.array([c.similarity for c in checks if c.relation == rel and c.similarity == c.similarity])
        if not len(sims):
            continue
        q = np.quantile(sims, [0.0, 0.25, 0.5, 0.75, 1.0])
        rows.append({"relation": rel, "checks": len(sims), "min": q[0], "q1": q[1], "median": q[2], "q3": q[3],
                     "max": q[4], "mean": float(sims.mean()), "critical_bugs": critical_bugs(
                         [c for c in checks if c.relation == rel])})
    return rows


def critical_bugs(checks) -> int:
    """Detections whose similarity is below ``CRITICAL_SIMILARITY`` (the journal version's critical bugs)."""
    return sum(c.violated and c.similarity < CRITICAL_SIMILARITY for c in checks)


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


def persona_paper_table(checks, selections: dict) -> list[dict]:
    """The persona paper's table (its Table 2 with Fig. 3's hits@1): per version of the dialogue, the violation rate
    of the persona relations' checks (P1, P2, P2-change, P3; not SEL); with response selection, how often the
    first-ranked candidate changed (SEL), the gold reply's hits@1 and MRR, and the drop of hits@1 from the seed's."""
    relations = (P1, P2, P2_CHANGES, P3)
    versions = sorted({kind for c in checks if c.relation in relations for kind in c.perturbations})
    ranks: dict[str, list[int]] = {}
    for row in selections.values():
        ranks.setdefault(row["perturbation"], []).append(int(row["gold_rank"]))
    hits = {version: sum(r == 1 for r in got) / len(got) for version, got in ranks.items()}
    rows = []
    for version in versions:
        mine = [c for c in checks if version in c.perturbations and c.relation in relations]
        row = {"version": version, "changed": PERSONA_VERSION_TEXT.get(version, version), "checks": len(mine),
               "violations": sum(c.violated for c in mine), "violation rate": sum(c.violated for c in mine) / len(mine)}
        if selections:
            chosen = [c for c in checks if version in c.perturbations and c.relation == SEL]
            got = ranks.get(version, [])
            row.update({"selection violations": sum(c.violated for c in chosen),
                        "hits@1": hits.get(version, float("nan")),
                        "MRR": sum(1 / r for r in got) / len(got) if got else float("nan"),
                        "hits@1 drop": hits.get(ORIG, float("nan")) - hits.get(version, float("nan"))})
        rows.append(row)
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


flaky_summary = unstable_summary  # the same counts, of the detections a confirmation (--confirm) did not reproduce


def no_answer_summary(checks) -> list[dict]:
    """Per relation that compares two system answers, its checks where neither answer answers the question (no
    outcome: never a violation), out of all its checks, and how many seed questions they are on."""
    by_relation: dict[str, list] = {}
    for c in checks:
        by_relation.setdefault(c.relation, []).append(c)
    rows = []
    for name, mine in sorted(by_relation.items()):
        none = [c for c in mine if c.no_answer]
        if none:
            rows.append({"relation": name, "no_answer_pairs": len(none), "checks": len(mine),
                         "seed_questions": len({(c.seed_id, c.source_round) for c in none})})
    return rows


