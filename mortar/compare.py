"""Two runs of the same test cases compared: the detections each found, and how sure the change in Rate+ and
NBugs is.

Runs A and B (two SUTs, or two versions of one) asked the same test cases of the same dataset. A check is
named independently of the SUT by its id: the relation with the test case and position it judged (RBT, MR1,
MR2, METAL, …) or with the seed question (the group relations MR3, MR4). The same detection in A and B is the
same check violated in both. Its bug level is compared separately: a row of one level counts the detections of
that level in each run, so a detection that is L1 in A and L2 in B is "both" over all levels, "only A" at L1
and "only B" at L2.

Confidence intervals are percentile bootstraps over the seed dialogues: the seeds are resampled with
replacement (the same resample for A and B, so the difference B - A is paired), with a fixed random seed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from mortar.errors import InputError
from mortar.metrics import level_counts, method_summary, rate_plus
from mortar.relations import headline_checks
from mortar.vocab import ALL, LEVELS, RBT
from mortar.methods import methods
from mortar import store

BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0  # same runs, same intervals
CONFIDENCE = 0.95
RATE_PLUS, NBUGS = "Rate+", "NBugs"  # the statistics, as metrics.method_summary names them


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    rows: list[dict]  # per relation and level: detections only in A, only in B, in both
    only_a: list  # A's detections that B did not find (B passed the check, or could not make it)
    only_b: list  # B's new detections
    both: list  # (A's, B's) detection of the same check
    intervals: list[dict]  # Rate+ and NBugs of A and B and of B - A, each with its bootstrap interval
    questions: dict = field(default_factory=dict)  # (seed_id, turn_id) → the seed's question


def relation_order(names) -> list[str]:
    """The relations named, in the report's order: RBT, then each registered method's relations."""

    known = [RBT] + [r for m in methods().values() for r in m.relations]
    return [r for r in known if r in names] + sorted(set(names) - set(known))


def diff(checks_a, checks_b) -> tuple[list, list, list]:
    """The detections only in A, only in B, and in both (as pairs), each by check id."""
    a = {c.check_id: c for c in checks_a if c.violated}
    b = {c.check_id: c for c in checks_b if c.violated}
    return ([a[k] for k in sorted(a.keys() - b.keys())], [b[k] for k in sorted(b.keys() - a.keys())],
            [(a[k], b[k]) for k in sorted(a.keys() & b.keys())])


def diff_rows(checks_a, checks_b) -> list[dict]:
    """Per relation (and over all of them), and per bug level within it (and over all levels): how many
    detections only A found, only B, and both. Levels no detection of either run has are left out."""
    a = [c for c in checks_a if c.violated]
    b = [c for c in checks_b if c.violated]
    rows = []
    for relation in [ALL, *relation_order({c.relation for c in a + b})]:
        mine_a = [c for c in a if relation in (ALL, c.relation)]
        mine_b = [c for c in b if relation in (ALL, c.relation)]
        for level in (ALL, *LEVELS):
            keys_a = {c.check_id for c in mine_a if level in (ALL, c.bug_level)}
            keys_b = {c.check_id for c in mine_b if level in (ALL, c.bug_level)}
            if level == ALL or keys_a or keys_b:
                rows.append({"relation": relation, "level": level, "only A": len(keys_a - keys_b),
                             "only B": len(keys_b - keys_a), "both": len(keys_a & keys_b)})
    return rows


def _counts(checks) -> list[int]:
    summary = method_summary(checks, 0)
    return [summary["detections"], summary["NBugs"]]  # checks made, bugs


def _statistics(relations) -> list[tuple[str, str]]:
    """(statistic, scope) in the order of the columns :func:`_seed_counts` makes."""
    return ([(RATE_PLUS, ALL), (NBUGS, ALL)] + [(NBUGS, lv) for lv in LEVELS]
            + [(stat, r) for r in relations for stat in (RATE_PLUS, NBUGS)])


def _seed_counts(checks, seeds, relations) -> np.ndarray:
    """Per seed: checks and bugs over all relations, bugs per level, checks and bugs per relation."""
    by_seed = defaultdict(list)
    for c in checks:
        by_seed[c.seed_id].append(c)
    rows = []
    for seed in seeds:
        mine = by_seed.get(seed, [])
        row = _counts(mine) + list(level_counts(mine).values())
        for relation in relations:
            row += _counts([c for c in mine if c.relation == relation])
        rows.append(row)
    return np.array(rows, dtype=float).reshape(len(seeds), 2 + len(LEVELS) + 2 * len(relations))


def _figures(totals: np.ndarray, relations) -> np.ndarray:
    """The statistics from summed counts (the last axis): Rate+ (``metrics.rate_plus``), NBugs, the levels."""
    checks = totals[..., [0] + [2 + len(LEVELS) + 2 * i for i in range(len(relations))]]
    bugs = totals[..., [1] + [3 + len(LEVELS) + 2 * i for i in range(len(relations))]]
    rates = rate_plus(bugs, checks)
    columns = [rates[..., 0], bugs[..., 0]] + [totals[..., 2 + i] for i in range(len(LEVELS))]
    for i in range(len(relations)):
        columns += [rates[..., 1 + i], bugs[..., 1 + i]]
    return np.stack(columns, axis=-1)


def percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    samples = samples[~np.isnan(samples)]
    if not samples.size:
        return float("nan"), float("nan")
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(low), float(high)


def bootstrap(checks_a, checks_b, seeds, resamples: int = BOOTSTRAP_RESAMPLES, rng_seed: int = BOOTSTRAP_SEED,
              confidence: float = CONFIDENCE) -> list[dict]:
    """Rate+ and NBugs (over all relations, per level, per relation) of A, of B and of B - A, each with its
    percentile bootstrap interval over the seed dialogues (the same resamples for both runs)."""
    relations = relation_order({c.relation for c in [*checks_a, *checks_b]})
    seeds = list(seeds)
    counts_a, counts_b = _seed_counts(checks_a, seeds, relations), _seed_counts(checks_b, seeds, relations)
    point_a, point_b = _figures(counts_a.sum(axis=0), relations), _figures(counts_b.sum(axis=0), relations)
    if seeds:
        # how often each seed is drawn in each resample: the same as drawing len(seeds) seeds with replacement
        weights = np.random.default_rng(rng_seed).multinomial(len(seeds), np.full(len(seeds), 1 / len(seeds)),
                                                              size=resamples)
        boot_a, boot_b = _figures(weights @ counts_a, relations), _figures(weights @ counts_b, relations)
    else:
        boot_a = boot_b = np.full((0, len(point_a)), np.nan)
    rows = []
    for i, (statistic, scope) in enumerate(_statistics(relations)):
        row = {"statistic": statistic, "scope": scope}
        for name, point, samples in (("A", point_a[i], boot_a[:, i]), ("B", point_b[i], boot_b[:, i]),
                                     ("B - A", point_b[i] - point_a[i], boot_b[:, i] - boot_a[:, i])):
            low, high = percentile_interval(samples, confidence)
            row.update({name: float(point), f"{name} low": low, f"{name} high": high})
        rows.append(row)
    return rows


def compare(checks_a, checks_b, seeds, run_a: str = "A", run_b: str = "B", questions: dict | None = None,
            resamples: int = BOOTSTRAP_RESAMPLES) -> Comparison:
    """The comparison of two runs' checks on the same test cases (``seeds``: the seed dialogues they tested).
    Detections reported apart (unstable, flaky) count as passed checks, as in the headline figures."""
    checks_a, checks_b = headline_checks(checks_a), headline_checks(checks_b)
    only_a, only_b, both = diff(checks_a, checks_b)
    return Comparison(run_a, run_b, diff_rows(checks_a, checks_b), only_a, only_b, both,
                      bootstrap(checks_a, checks_b, seeds, resamples), dict(questions or {}))


def read_pair(con, run_a: str, run_b: str) -> tuple[list, list]:
    """Both runs' checks, once it is sure they tested the same test cases of the same dataset (InputError
    otherwise, in one line)."""

    if store.run_dataset(con, run_a) != store.run_dataset(con, run_b):
        raise InputError(f"runs {run_a} and {run_b} tested different datasets; compare runs of one dataset")
    _same_cases(run_a, run_b, store.case_signatures(con, run_a), store.case_signatures(con, run_b))
    pair = store.read_checks(con, run_a), store.read_checks(con, run_b)
    for run_id, checks in zip((run_a, run_b), pair):
        if not checks:
            raise InputError(f"run {run_id} has no results yet (a `mortar generate` run, or one still in progress)")
    return pair


def _same_cases(run_a: str, run_b: str, cases_a: dict, cases_b: dict) -> None:
    only_a, only_b = sorted(cases_a.keys() - cases_b.keys()), sorted(cases_b.keys() - cases_a.keys())
    changed = sorted(k for k in cases_a.keys() & cases_b.keys() if cases_a[k] != cases_b[k])
    if only_a or only_b or changed:
        example = (only_a or only_b or changed)[0]
        raise InputError(
            f"runs {run_a} and {run_b} asked different test cases ({len(only_a)} only in {run_a}, {len(only_b)} "
            f"only in {run_b}, {len(changed)} asked differently; e.g. {example}): compare runs with the same "
            "dataset, seed, limit and test settings")


def compare_runs(con, run_a: str, run_b: str, resamples: int = BOOTSTRAP_RESAMPLES) -> Comparison:
    """Two stored runs compared (run ids as stored; InputError when they cannot be compared)."""

    checks_a, checks_b = read_pair(con, run_a, run_b)
    return compare(checks_a, checks_b, store.run_seeds(con, run_a), run_a, run_b, store.seed_questions(con, run_a),
                   resamples)


def _shown(statistic: str, value: float) -> str:
    if value != value:
        return "–"
    if statistic == RATE_PLUS:
        return f"{value:.3f}"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"  # a percentile may fall between two counts


def interval_table(intervals: list[dict]) -> list[dict]:
    """The intervals as text, each figure with its interval: '0.176 [0.083, 0.263]'."""
    return [{"statistic": r["statistic"], "scope": r["scope"],
             **{name: f"{_shown(r['statistic'], r[name])} [{_shown(r['statistic'], r[name + ' low'])}, "
                      f"{_shown(r['statistic'], r[name + ' high'])}]" for name in ("A", "B", "B - A")}}
            for r in intervals]


def detection_rows(detections, questions: dict) -> list[dict]:
    """Detections as table rows, with the seed question each is about."""
    return [{"detection_id": c.check_id, "relation": c.relation, "level": c.bug_level, "seed": c.seed_id,
             "round": c.source_round, "question": questions.get((c.seed_id, c.source_round)),
             "perturbations": ", ".join(c.perturbations), "answer": c.text_a, "compared with": c.text_b,
             "similarity": c.similarity} for c in detections]
