"""Metrics of the paper: agreement statistics first (others follow with the relations)."""

from __future__ import annotations

from collections import Counter
from typing import Hashable, Sequence


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


# -- bug-detection metrics (MORTAR §IV-G, Table II) -----------------------------------------
MT_RELATIONS = ("MR1", "MR2", "MR3", "MR4")
LEVELS = ("L1", "L2", "L3")
TRUE_POSITIVE_BELOW = 6  # an annotator's 0–10 score below this marks a detection as a true positive


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
    """NBugs, detections, Rate+, RETC and BPTC of one method's checks over its test cases."""
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


METHODS = {"MT": (MT_RELATIONS, ("DRS", "DRR", "DRD", "DSR", "DSD")),  # MORTAR
           "METAL": (("METAL",), ("SYN", "ADD", "TYPO", "LEET"))}  # the single-turn baseline


def method_of(relation: str) -> str:
    """RBT, MT (MORTAR's MR1–MR4) or METAL: the method a check's relation belongs to."""
    return next((method for method, (relations, _) in METHODS.items() if relation in relations), "RBT")


def run_metrics(checks, cases) -> dict:
    """The headline figures of a run: RBT, MT (MORTAR's MR1–MR4) and, when run, the METAL baseline,
    side by side, with bug levels and their CV."""
    result = {"RBT": method_summary([c for c in checks if c.relation == "RBT"],
                                    sum(c.perturbation == "ORIG" for c in cases))}
    for method, (relations, perturbations) in METHODS.items():
        n_cases = sum(c.perturbation in perturbations for c in cases)
        if method != "MT" and not n_cases:
            continue
        mine = [c for c in checks if c.relation in relations]
        levels = level_counts(mine)
        result[method] = {**method_summary(mine, n_cases), **levels,
                          "CV": coefficient_of_variation(list(levels.values()))}
    return result


def uniqueness(checks) -> list[dict]:
    """Per method and bug level: bugs, and unique bugs (the other method flagged no bug on that seed
    question), as in the paper's Table V."""
    mortar = [c for c in checks if c.relation in MT_RELATIONS]
    metal = [c for c in checks if c.relation == "METAL"]
    rows = []
    for method, mine, theirs in (("MT", mortar, metal), ("METAL", metal, mortar)):
        unique = unique_bugs(mine, theirs)
        bugs = [c for c in mine if c.violated]
        rows.append({"method": method, "bugs": len(bugs), "unique": len(unique),
                     "unique_share": len(unique) / len(bugs) if bugs else float("nan"),
                     **{f"unique_{lv}": sum(c.bug_level == lv for c in unique) for lv in LEVELS}})
    return rows


def overlap(checks) -> dict[str, int]:
    """Seed questions with a bug from MORTAR only, from both methods, and from METAL only."""
    def flagged(relations) -> set:
        return {(c.seed_id, c.source_round) for c in checks if c.violated and c.relation in relations}

    mortar, metal = flagged(MT_RELATIONS), flagged(("METAL",))
    return {"MT only": len(mortar - metal), "both": len(mortar & metal), "METAL only": len(metal - mortar)}


def table_vi(cases, verdicts) -> list[dict]:
    """Per perturbation: test cases, questions, unanswerable (EC-false) questions, MR applicability."""
    rows = {}
    for case in cases:
        if case.perturbation == "ORIG":
            continue
        row = rows.setdefault(case.perturbation, {"perturbation": case.perturbation, "test_cases": 0, "questions": 0,
                                                  "ec_false": 0, "MR1_applicable": 0, "MR2_applicable": 0})
        vs = verdicts[case.test_case_id]
        row["test_cases"] += 1
        row["questions"] += len(vs)
        row["ec_false"] += sum(not v.equivalent for v in vs)
        row["MR1_applicable"] += sum(v.equivalent for v in vs)
        row["MR2_applicable"] += sum(not v.equivalent for v in vs)
    return [rows[p] for p in sorted(rows)]


def table_vii(checks) -> list[dict]:
    """Bugs per perturbation; an MR3/MR4 group bug counts for every perturbation in its group."""
    counts: dict[str, int] = {}
    for c in checks:
        if c.violated and c.relation in MT_RELATIONS:
            for p in c.perturbations:
                counts[p] = counts.get(p, 0) + 1
    total = sum(counts.values())
    return [{"perturbation": p, "bugs": n, "share": n / total} for p, n in sorted(counts.items())]


def table_viii(checks) -> list[dict]:
    """Per relation: detections, bugs, Rate+, share of all MT bugs."""
    mt_bugs = sum(c.violated for c in checks if c.relation in MT_RELATIONS)
    rows = []
    for rel in MT_RELATIONS:
        mine = [c for c in checks if c.relation == rel]
        bugs = sum(c.violated for c in mine)
        rows.append({"relation": rel, "detections": len(mine), "bugs": bugs,
                     "Rate+": bugs / len(mine) if mine else float("nan"),
                     "share": bugs / mt_bugs if mt_bugs else float("nan")})
    return rows


def table_ix(checks) -> list[dict]:
    """Bug levels per relation."""
    return [{"relation": rel, **level_counts([c for c in checks if c.relation == rel])} for rel in MT_RELATIONS]


def unique_bugs(mine, theirs) -> list:
    """Bugs of one method on seed questions where the other method flagged no bug (paper Table V)."""
    flagged = {(c.seed_id, c.source_round) for c in theirs if c.violated}
    return [c for c in mine if c.violated and (c.seed_id, c.source_round) not in flagged]


def ppd(scores: Sequence[float]) -> float:
    """Precision of positive detections from 0–10 acceptability scores (score < 6: a true bug)."""
    if not scores:
        return float("nan")
    return sum(s < TRUE_POSITIVE_BELOW for s in scores) / len(scores)


def report(checks, cases, verdicts) -> dict:
    """Everything ``mortar report`` and the dashboard show for a run."""
    mortar_cases = [c for c in cases if c.perturbation not in METHODS["METAL"][1]]
    result = {"metrics": run_metrics(checks, cases), "table_vi": table_vi(mortar_cases, verdicts),
              "table_vii": table_vii(checks), "table_viii": table_viii(checks), "table_ix": table_ix(checks)}
    if any(c.relation == "METAL" for c in checks):
        result["uniqueness"] = uniqueness(checks)
        result["overlap"] = overlap(checks)
    return result


def metric_rows(report: dict) -> list[dict]:
    """The headline metrics, and with METAL the uniqueness and overlap, as (method, metric, value) rows."""
    rows = [{"method": method, "metric": name, "value": value}
            for method, figures in report["metrics"].items() for name, value in figures.items()]
    for row in report.get("uniqueness", ()):
        rows += [{"method": row["method"], "metric": k, "value": v} for k, v in row.items() if k.startswith("unique")]
    rows += [{"method": part, "metric": "seed_questions_with_bugs", "value": n}
             for part, n in report.get("overlap", {}).items()]
    return rows
