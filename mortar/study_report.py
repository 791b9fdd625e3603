"""A study's report: the paper's tables with one row per system (Tables IV, VI, VII, VIII), Rate+ and NBugs with
bootstrap intervals over the seeds, the robustness drop, critical bugs and PPD per system, read from the store.

The robustness drop is how much worse a system does when the dialogue is perturbed than on the seed, on the same
questions: over the perturbed versions of seed questions whose context was kept (MR1, judged against the same
reference), the share whose seed question the system answered right (RBT) minus the share it answered right in the
perturbed dialogue. RBT accuracy over every seed question and the share of every metamorphic check passed are
given beside it. The
intervals are percentile bootstraps over the seed dialogues, the same resamples for every system (they share the
suite's seeds), as ``mortar compare`` does for two runs.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd

from mortar import reports, store
from mortar.compare import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, CONFIDENCE, percentile_interval
from mortar.methods import method_label_of
from mortar.metrics import critical_bugs, rate_plus
from mortar.relations import reported_apart
from mortar.vocab import LEVELS, MR1, RBT

PAPER_TABLES = ("table_vi", "table_vii", "table_viii")  # method tables read per system (Table IV: the levels)


def study_report(con, study_id: str, resamples: int = BOOTSTRAP_RESAMPLES) -> dict:
    """Everything ``mortar report STUDY``, the HTML report and the Study page show of a study."""
    systems = store.study_systems(con, study_id)
    config = store.study_config(con, study_id)
    done = systems[systems["status"] == "done"]
    pieces = {row.system: _pieces(con, row.run_id) for row in done.itertuples()}
    seeds = sorted({c.seed_id for checks, _ in pieces.values() for c in checks})
    weights = _resample_weights(len(seeds), resamples)
    result = {"study_id": study_id, "config": config,
              "systems": [{"system": r.system, "SUT": _sut_text(r.spec), "run_id": r.run_id, "status": r.status}
                          for r in systems.itertuples()],
              "headline": [], "robustness": [], "table_iv": [], "precision": [], "breakdown": [],
              **{key: [] for key in PAPER_TABLES}}
    for system, (checks, report) in pieces.items():
        result["headline"] += [{"system": system, **row} for row in _headline(checks, report, seeds, weights)]
        result["robustness"].append({"system": system, **_robustness(checks, seeds, weights)})
        result["table_iv"].append({"system": system, **{f"{method} {k}": figures[k]
                                                       for method, figures in report["metrics"].items()
                                                       if method != RBT and LEVELS[0] in figures
                                                       for k in (*LEVELS, "CV")}})
        tables = {t.key: t.rows for t in report["tables"]}
        for key in PAPER_TABLES:
            result[key] += [{"system": system, **row} for row in tables.get(key, [])]
        run_rows = [r for r in report.get("precision", []) if r["group"] == "run"]
        if run_rows:
            r = run_rows[0]
            result["precision"].append({"system": system, "labelled": r["labelled"], "true_positives":
                                        r["true_positives"], "PPD": r["PPD"], "kappa": r["kappa"]})
        result["breakdown"] += [{"system": system, **row} for row in breakdown(checks)]
    return result


def _pieces(con, run_id: str) -> tuple[list, dict]:
    checks = store.read_checks(con, run_id)
    cases, verdicts = store.read_cases_and_verdicts(con, run_id)
    report = reports.report(checks, cases, verdicts, store.read_selections(con, run_id), store.read_mutants(con, run_id),
                            store.final_labels(con, run_id), store.read_labels(con, run_id),
                            store.unknown_rounds(con, run_id), store.run_config(con, run_id).get("made", {}))
    return [c for c in checks if not reported_apart(c)], report


def _sut_text(spec: dict) -> str:
    parts = [spec.get("sut", "")]
    if spec.get("system_prompt"):
        parts.append("own system prompt")
    if spec.get("max_new_tokens"):
        parts.append(f"max {spec['max_new_tokens']} new tokens")
    if spec.get("base_url"):
        parts.append(spec["base_url"])
    return ", ".join(parts)


def _resample_weights(n_seeds: int, resamples: int) -> np.ndarray:
    """How often each seed is drawn in each resample (drawing n seeds with replacement), the same for every system.
    With fewer than two seeds there is no spread to resample: no intervals."""
    if n_seeds < 2:
        return np.zeros((0, 0))
    return np.random.default_rng(BOOTSTRAP_SEED).multinomial(n_seeds, np.full(n_seeds, 1 / n_seeds), size=resamples)


def _per_seed(checks, seeds, keep) -> np.ndarray:
    """Per seed: (checks, bugs) of the checks ``keep`` accepts."""
    counts = defaultdict(lambda: [0, 0])
    for c in checks:
        if keep(c):
            counts[c.seed_id][0] += 1
            counts[c.seed_id][1] += c.violated
    return np.array([counts[s] if s in counts else [0, 0] for s in seeds], dtype=float).reshape(len(seeds), 2)


def _with_interval(name: str, point: float, samples: np.ndarray) -> dict:
    low, high = percentile_interval(samples, CONFIDENCE) if samples.size else (float("nan"), float("nan"))
    return {name: point, f"{name} low": low, f"{name} high": high}


def _headline(checks, report: dict, seeds, weights) -> list[dict]:
    """Per method (RBT, MT, …): checks, NBugs and Rate+ with their intervals, bug levels, critical bugs."""
    rows = []
    for method, figures in report["metrics"].items():
        mine = [c for c in checks if method_label_of(c.relation) == method]
        counts = _per_seed(mine, seeds, lambda c: True)
        boot = weights @ counts if weights.size else np.zeros((0, 2))
        row = {"method": method, "test_cases": figures["test_cases"], "checks": figures["detections"],
               **_with_interval("NBugs", figures["NBugs"], boot[:, 1]),
               **_with_interval("Rate+", figures["Rate+"], rate_plus(boot[:, 1], boot[:, 0])),
               **{lv: figures.get(lv, float("nan")) for lv in LEVELS}, "CV": figures.get("CV", float("nan")),
               "critical_bugs": critical_bugs(mine)}
        rows.append(row)
    return rows


def _robustness(checks, seeds, weights) -> dict:
    """Accuracy on the seed dialogues against accuracy on the perturbed ones, on the same questions: over the
    perturbed versions of seed questions judged against the reference (MORTAR's MR1: the context was kept; without
    MR1, every metamorphic check of a seed question), the share whose seed question passed RBT and the share that
    passed themselves; the robustness drop is the difference. Beside them RBT accuracy over every seed question and
    the share of every metamorphic check passed; each with its interval."""
    rbt_passed = {(c.seed_id, c.source_round): not c.violated for c in checks if c.relation == RBT}
    perturbed = MR1 if any(c.relation == MR1 for c in checks) else None
    paired = defaultdict(lambda: [0, 0, 0])  # seed → versions, their seed question passed RBT, they passed
    for c in checks:
        if (c.relation == perturbed if perturbed else c.relation != RBT) and (c.seed_id, c.source_round) in rbt_passed:
            row = paired[c.seed_id]
            row[0] += 1
            row[1] += rbt_passed[(c.seed_id, c.source_round)]
            row[2] += not c.violated
    counts = np.array([paired[s] if s in paired else [0, 0, 0] for s in seeds], dtype=float).reshape(len(seeds), 3)
    totals = weights @ counts if weights.size else np.zeros((0, 3))

    def share(rows, column):  # passed / versions (the counts in ``column`` over those in the first), NaN for none
        return rate_plus(rows[..., column], rows[..., 0])

    point = counts.sum(axis=0)
    seed_acc, pert_acc = float(share(point, 1)), float(share(point, 2))
    def passed_share(name: str, keep) -> dict:  # the share of the checks ``keep`` accepts that passed
        counts = _per_seed(checks, seeds, keep)  # per seed: checks, bugs
        return _with_interval(name, float(1 - share(counts.sum(axis=0), 1)),
                              1 - share(weights @ counts, 1) if weights.size else np.zeros(0))

    return {**passed_share("RBT accuracy", lambda c: c.relation == RBT),
            **_with_interval("seed accuracy", seed_acc, share(totals, 1)),
            **_with_interval("perturbed accuracy", pert_acc, share(totals, 2)),
            **_with_interval("robustness drop", seed_acc - pert_acc, share(totals, 1) - share(totals, 2)),
            **passed_share("MR checks passed", lambda c: c.relation != RBT)}


def breakdown(checks) -> list[dict]:
    """One row per relation and version of the dialogue (perturbation, operator, noise location): checks, bugs,
    Rate+, critical bugs and mean similarity (the study export, one row per system × relation × perturbation)."""
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for c in checks:
        for version in c.perturbations:
            groups[(c.relation, version)].append(c)
    rows = []
    for (relation, version), mine in sorted(groups.items()):
        sims = [c.similarity for c in mine if c.similarity == c.similarity]
        bugs = sum(c.violated for c in mine)
        rows.append({"method": method_label_of(relation), "relation": relation, "perturbation": version,
                     "checks": len(mine), "bugs": bugs, "Rate+": rate_plus(bugs, len(mine)),
                     "critical_bugs": critical_bugs(mine),
                     "mean_similarity": float(np.mean(sims)) if sims else float("nan")})
    return rows


def wide(rows: list[dict], column: str, value: str = "bugs", share: str | None = "share") -> pd.DataFrame:
    """A long table (system × column) as the paper prints it: one row per system, "bugs (share)" per column."""
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    if share:
        frame["cell"] = [f"{int(v):,} ({s:.1%})" if s == s else f"{int(v):,}" for v, s in zip(frame[value], frame[share])]
    else:
        frame["cell"] = frame[value]
    systems = list(dict.fromkeys(frame["system"]))
    table = frame.pivot(index="system", columns=column, values="cell").reindex(systems)
    table.columns.name = None
    return table.fillna("").reset_index()


def metrics_matrix(report: dict) -> pd.DataFrame:
    """Systems × the figures a reader compares them on (the Study page's heat map): Rate+ per method, the
    robustness drop, bugs per level, critical bugs and, once labelled, PPD."""
    rows = {r["system"]: {} for r in report["robustness"]}
    for r in report["headline"]:
        rows[r["system"]][f"{r['method']} Rate+"] = r["Rate+"]
        if r["method"] != RBT:
            for lv in LEVELS:
                rows[r["system"]][f"{r['method']} {lv}"] = r[lv]
        rows[r["system"]][f"{r['method']} critical bugs"] = r["critical_bugs"]
    for r in report["robustness"]:
        rows[r["system"]]["RBT accuracy"] = r["RBT accuracy"]
        rows[r["system"]]["robustness drop"] = r["robustness drop"]
    for r in report["precision"]:
        rows[r["system"]]["PPD"] = r["PPD"]
    return pd.DataFrame.from_dict(rows, orient="index")


def study_frame(con, study_id: str) -> pd.DataFrame:
    """The study export: one row per system × relation × perturbation."""
    report = study_report(con, study_id, resamples=0)
    frame = pd.DataFrame(report["breakdown"], columns=["system", "method", "relation", "perturbation", "checks", "bugs",
                                                       "Rate+", "critical_bugs", "mean_similarity"])
    frame.insert(0, "study_id", study_id)
    runs = {r["system"]: r["run_id"] for r in report["systems"]}
    frame.insert(2, "run_id", frame["system"].map(runs))
    return frame
