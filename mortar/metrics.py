"""The metrics of the paper — the only place they are computed (MORTAR §IV-G, Table II).

NBugs, Rate+ (bugs / checks), RETC (share of test cases with a bug), BPTC (bugs per test case), CV of
the L1/L2/L3 counts, uniqueness and overlap between methods, PPD (precision from labels) and Cohen's
kappa. Methods and relations come from their registries, so a registered method is reported without
an edit here. In the code a *check* is any comparison a relation made; a *detection* (a bug) is a
violated check.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from itertools import combinations
from typing import Hashable, Sequence

from mortar.methods import methods
from mortar.vocab import ALL, LEVELS, MR1, MR2, ORIG, RBT, SEL, is_true_positive


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


def method_summary(checks, n_test_cases: int) -> dict:
    """NBugs, checks, Rate+, RETC and BPTC of one method's checks over its test cases.

    ``detections`` keeps its name in exports for continuity: it counts every check made."""
    bugs = [c for c in checks if c.violated]
    effective = {tc for c in bugs for tc in c.test_case_ids}
    return {
        "test_cases": n_test_cases,
        "detections": len(checks),
        "NBugs": len(bugs),
        "Rate+": len(bugs) / len(checks) if checks else float("nan"),
        "RETC": len(effective) / n_test_cases if n_test_cases else float("nan"),
        "BPTC": len(bugs) / n_test_cases if n_test_cases else float("nan"),
    }


def level_counts(checks) -> dict[str, int]:
    counts = dict.fromkeys(LEVELS, 0)
    for c in checks:
        if c.violated and c.bug_level:
            counts[c.bug_level] += 1
    return counts


def methods_in(cases) -> list:
    """The registered methods that made some of these test cases, in registry order."""
    kinds = {c.perturbation for c in cases}
    return [m for m in methods().values() if kinds & set(m.perturbations)]


def run_metrics(checks, cases) -> dict:
    """The headline figures of a run: RBT and every method that ran, side by side, with bug levels and CV."""
    result = {RBT: method_summary([c for c in checks if c.relation == RBT],
                                  sum(c.perturbation == ORIG for c in cases))}
    for method in methods_in(cases):
        mine = [c for c in checks if c.relation in method.relations]
        levels = level_counts(mine)
        result[method.label] = {**method_summary(mine, sum(c.perturbation in method.perturbations for c in cases)),
                                **levels, "CV": coefficient_of_variation(list(levels.values()))}
    return result


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


def ppd(scores: Sequence[float]) -> float:
    """Precision of positive detections from 0–10 acceptability scores (score < 6: a true bug)."""
    if not scores:
        return float("nan")
    return sum(is_true_positive(s) for s in scores) / len(scores)


def ppd_by_run(final):
    """PPD of every labelled run from its final labels (``store.final_labels``: true_positive is None while
    disputed): run_id, PPD, labelled (decided) and disputed counts."""
    import pandas as pd

    rows = []
    for run_id, group in final.groupby("run_id", sort=True):
        decided = [bool(v) for v in group["true_positive"].dropna()]
        rows.append({"run_id": run_id, "PPD": sum(decided) / len(decided) if decided else float("nan"),
                     "labelled": len(decided), "disputed": len(group) - len(decided)})
    return pd.DataFrame(rows, columns=["run_id", "PPD", "labelled", "disputed"])


PRECISION_GROUPS = ("run", "method", "relation", "perturbation")  # what precision is broken down by
PRECISION_COLUMNS = ["group", "name", "labelled", "true_positives", "disputed", "PPD", "annotators", "both_labelled",
                     "kappa"]


def _is_missing(value) -> bool:
    """None, NaN or pandas' NA: a disputed detection's final label."""
    import pandas as pd

    return bool(pd.isna(value))


def _pair_of(scores, pair) -> tuple[str, ...]:
    """The two annotators kappa compares: ``pair``, or the two who labelled most (ties: by name)."""
    if pair is not None:
        return tuple(pair)
    counts = Counter(scores["annotator"]) if len(scores) else Counter()
    return tuple(sorted(counts, key=lambda a: (-counts[a], a))[:2])


def precision(detections, final, scores, pair: tuple[str, str] | None = None) -> list[dict]:
    """PPD of the labelled detections of a run: over the run, per method, per relation and per perturbation.

    ``detections``: (detection_id, relation, perturbations) of the run's detections (``store.run_detections``);
    ``final``: the run's final labels (``store.final_labels``: an adjudication wins, else the annotators' common
    label; ``true_positive`` is missing while they disagree: *disputed*, left out of PPD); ``scores``: every
    annotator's score (``store.read_labels``), for Cohen's kappa of ``pair`` (default: the two who labelled most)
    on the detections both labelled. A group detection (MR3/MR4) counts for every perturbation of its group, as in
    Table VII. Only groups with a labelled or disputed detection get a row."""
    from mortar.methods import method_label_of

    of = {d: (rel, tuple(perts)) for d, rel, perts in detections}
    verdict = {d: None if _is_missing(tp) else bool(tp)
               for d, tp in zip(final["detection_id"], final["true_positive"]) if d in of}
    pair = _pair_of(scores, pair)
    by_annotator: dict[str, dict[str, bool]] = {a: {} for a in pair}
    for d, a, s in zip(scores["detection_id"], scores["annotator"], scores["score"]):
        if a in by_annotator and d in of:
            by_annotator[a][d] = is_true_positive(s)

    members: dict[tuple[str, str], list[str]] = {}
    for d in verdict:
        rel, perts = of[d]
        for key in (("run", ALL), ("method", method_label_of(rel)), ("relation", rel),
                    *(("perturbation", p) for p in perts)):
            members.setdefault(key, []).append(d)
    ran = list(methods().values())
    order = {"method": method_labels(), "relation": [RBT, *(r for m in ran for r in m.relations)],
             "perturbation": [ORIG, *(p for m in ran for p in m.perturbations)], "run": [ALL]}

    def rank(key):
        known = order[key[0]]
        return PRECISION_GROUPS.index(key[0]), known.index(key[1]) if key[1] in known else len(known), key[1]

    rows = []
    for group, name in sorted(members, key=rank):
        ids = members[(group, name)]
        decided = [verdict[d] for d in ids if verdict[d] is not None]
        row = {"group": group, "name": name, "labelled": len(decided), "true_positives": sum(decided),
               "disputed": len(ids) - len(decided), "PPD": sum(decided) / len(decided) if decided else float("nan"),
               "annotators": " vs ".join(pair) if len(pair) == 2 else "", "both_labelled": 0, "kappa": float("nan")}
        if len(pair) == 2:
            a, b = (by_annotator[x] for x in pair)
            common = [d for d in ids if d in a and d in b]
            row["both_labelled"] = len(common)
            if common:
                row["kappa"] = cohen_kappa([a[d] for d in common], [b[d] for d in common])
        rows.append(row)
    return rows


def run_precision(con, run_id: str, pair: tuple[str, str] | None = None) -> list[dict]:
    """:func:`precision` of a stored run, read from the store (``con``)."""
    from mortar import store

    return precision(store.run_detections(con, run_id), store.final_labels(con, run_id), store.read_labels(con, run_id),
                     pair)


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
        if _is_missing(r["true_positive"]) or r["relation"] in THRESHOLD_FREE or not r["similarity"] < threshold:
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
    from mortar.calibrate import agreement, best_threshold

    decided = [bool(tp) for tp in labelled["true_positive"] if not _is_missing(tp)]
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


def run_oracle_vs_humans(con, run_id: str) -> dict | None:
    """:func:`oracle_vs_humans` of a stored run with its oracle and threshold; None when it stored no threshold."""
    from mortar import store

    config = store.stored_config(con, run_id)
    if config.threshold is None:
        return None
    return {"oracle": config.oracle, **oracle_vs_humans(store.labelled_detections(con, run_id), config.threshold)}


def run_calibration_set(con, run_id: str) -> list[dict]:
    """:func:`calibration_set` of a stored run (``mortar export RUN --what labelled-pairs``)."""
    from mortar import store

    threshold = store.stored_config(con, run_id).threshold
    return [] if threshold is None else calibration_set(store.labelled_detections(con, run_id), threshold)


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


def report(checks, cases, verdicts, selections: dict | None = None, mutants: list[dict] | None = None,
           final_labels=None, label_scores=None) -> dict:
    """Everything ``mortar report`` and the dashboard show for a run: the headline metrics, each method's
    own tables, response selection and guided generation when they ran, with two or more methods the
    unique bugs and the overlap of seed questions, and with labels (``store.final_labels`` and
    ``store.read_labels`` of the run) the precision of the labelled detections (:func:`precision`)."""
    from mortar.methods import Table

    ran = methods_in(cases)
    labelled_checks = checks
    unstable = [c for c in checks if c.violated and c.unstable]
    if unstable:  # the noise floor: reported apart, counted in no headline figure
        checks = [replace(c, violated=False, bug_level=None) if c.unstable else c for c in checks]
    result = {"metrics": run_metrics(checks, cases),
              "tables": [t for m in ran if m.tables for t in m.tables(checks, cases, verdicts)]}

    def add(key: str, title: str, caption: str, rows: list[dict]) -> None:
        """A figure of the report that is also one of its tables."""
        result[key] = rows
        result["tables"].append(Table(key, title, caption, rows))

    if selections:
        add("selection", "Response selection: hits@1 and MRR of the gold answer per version",
            "The SUT ranks the gold answer among distractors by its own likelihood (no judge, no threshold). "
            "agreement / kappa: how often 'gold ranked first' agrees with the answer oracle accepting the SUT's "
            "generated answer on the same rounds.", selection_summary(selections))
    if mutants:
        add("guidance", "Gini-guided generation against random transformation at the same budget",
            "Each evaluated mutant costs one SUT call. Gini: DialTest's Algorithm 1 keeps a mutant whose answer's "
            "Gini impurity rises by more than τ and goes on from it; random: random transformations of the seed "
            "question, all kept. Bugs: violations of the kept mutants' relations.", guidance_summary(checks, mutants))
    if unstable:
        add("unstable", "Detections on unstable seed questions (reported apart)",
            "ORIG was answered more than once (--orig-repeats) and the answers to these seed questions disagree "
            "with each other: a detection there may come from the SUT's own randomness, not from the test case. "
            "They are left out of every other figure.", unstable_summary(unstable))
    if len(ran) >= 2:
        result["uniqueness"] = uniqueness(checks, ran)
        result["overlap"] = overlap(checks, ran)
    if final_labels is not None and len(final_labels):
        import pandas as pd

        scores = label_scores if label_scores is not None else pd.DataFrame(columns=["detection_id", "annotator",
                                                                                      "score"])
        rows = precision([(c.check_id, c.relation, c.perturbations) for c in labelled_checks if c.violated], final_labels,
                         scores)
        if rows:
            result["precision"] = rows
    return result


def unstable_summary(unstable) -> list[dict]:
    """Per relation, the detections on unstable seed questions and how many seed questions they are on."""
    by_relation: dict[str, list] = {}
    for c in unstable:
        by_relation.setdefault(c.relation, []).append(c)
    return [{"relation": name, "detections": len(mine), "seed_questions": len({(c.seed_id, c.source_round)
                                                                              for c in mine})}
            for name, mine in sorted(by_relation.items())]


def metric_rows(report: dict) -> list[dict]:
    """The headline metrics, and with two or more methods the uniqueness and overlap, with labels the precision
    (method ``all`` for the whole run, ``MT`` …, ``relation MR1`` …, ``perturbation DRS`` …), as
    (method, metric, value) rows."""
    rows = [{"method": method, "metric": name, "value": value}
            for method, figures in report["metrics"].items() for name, value in figures.items()]
    for row in report.get("uniqueness", ()):
        rows += [{"method": row["method"], "metric": k, "value": v} for k, v in row.items() if k.startswith("unique")]
    rows += [{"method": part, "metric": "seed_questions_with_bugs", "value": n}
             for part, n in report.get("overlap", {}).items()]
    rows += [{"method": f"selection {row['version']}", "metric": k, "value": v}
             for row in report.get("selection", ()) for k, v in row.items() if k != "version"]
    rows += [{"method": f"guide {row['guide']}", "metric": k, "value": v}
             for row in report.get("guidance", ()) for k, v in row.items() if k != "guide"]
    rows += [{"method": f"unstable {row['relation']}", "metric": k, "value": row[k]}
             for row in report.get("unstable", ()) for k in ("detections", "seed_questions")]
    rows += [{"method": row["name"] if row["group"] in ("run", "method") else f"{row['group']} {row['name']}",
              "metric": k, "value": row[k]}
             for row in report.get("precision", ()) for k in ("PPD", "labelled", "true_positives", "disputed",
                                                              "both_labelled", "kappa")]
    return rows


def method_labels() -> list[str]:
    """RBT and the report label of every registered method, in registry order."""
    return [RBT] + [m.label for m in methods().values()]



def run_report(con, run_id: str) -> dict:
    """The report of a stored run, read from the store (``con``)."""
    from mortar import store

    cases, verdicts = store.read_cases_and_verdicts(con, run_id)
    return report(store.read_checks(con, run_id), cases, verdicts, store.read_selections(con, run_id),
                  store.read_mutants(con, run_id), store.final_labels(con, run_id), store.read_labels(con, run_id))


def prioritisation(con, run_id: str) -> dict:
    """The run's stored test orders (``mortar prioritise``) measured on its detections: per order its APFD (and
    for random orders the sd) and its curve of bugs found against the share of the suite executed. Empty when
    no order is stored or the run has no results."""
    from mortar import store
    from mortar.guide.prioritise import evaluation

    orders = store.read_priorities(con, run_id)
    checks = store.read_checks(con, run_id) if orders else []
    if not checks:
        return {}
    cases, _ = store.read_cases_and_verdicts(con, run_id)
    return evaluation(orders, checks, cases)


def metrics_frame(con, run_id: str):
    """A stored run's metrics as rows (run_id, method, metric, value): the metrics export."""
    import pandas as pd

    frame = pd.DataFrame(metric_rows(run_report(con, run_id)))
    frame.insert(0, "run_id", run_id)
    return frame
