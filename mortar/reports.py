"""A run's report: the headline metrics of RBT and every method that ran, each method's own tables, response
selection, guided generation, uniqueness and overlap, precision from labels — computed with the counting
functions of ``mortar.metrics`` over the registered methods, and read from the store for a stored run."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from mortar import store
from mortar.guide.prioritise import at_equal_calls, evaluation, faults_of
from mortar.methods import Table, method_kinds, method_label_of, methods
from mortar.metrics import (is_missing, calibration_set, coefficient_of_variation, cohen_kappa, guidance_summary, level_counts,
                            method_summary, oracle_vs_humans, overlap, persona_paper_table, selection_summary, similarity_distribution, uniqueness,
                            unstable_summary, flaky_summary, no_answer_summary)
from mortar.relations import headline_checks
from mortar.vocab import ALL, CRITICAL_SIMILARITY, ORIG, P1, P2, P2_CHANGES, P3, RBT, is_true_positive


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


PRECISION_GROUPS = ("run", "method", "relation", "perturbation")  # what precision is broken down by


PRECISION_COLUMNS = ["group", "name", "labelled", "true_positives", "disputed", "PPD", "annotators", "both_labelled",
                     "kappa"]


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
    of = {d: (rel, tuple(perts)) for d, rel, perts in detections}
    verdict = {d: None if is_missing(tp) else bool(tp)
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
    return precision(store.run_detections(con, run_id), store.final_labels(con, run_id), store.read_labels(con, run_id),
                     pair)


def run_oracle_vs_humans(con, run_id: str) -> dict | None:
    """:func:`oracle_vs_humans` of a stored run with its oracle and threshold; None when it stored no threshold."""
    config = store.stored_config(con, run_id)
    if config.threshold is None:
        return None
    return {"oracle": config.oracle, **oracle_vs_humans(store.labelled_detections(con, run_id), config.threshold)}


def run_calibration_set(con, run_id: str) -> list[dict]:
    """:func:`calibration_set` of a stored run (``mortar export RUN --what labelled-pairs``)."""
    threshold = store.stored_config(con, run_id).threshold
    return [] if threshold is None else calibration_set(store.labelled_detections(con, run_id), threshold)


def report(checks, cases, verdicts, selections: dict | None = None, mutants: list[dict] | None = None,
           final_labels=None, label_scores=None, unknown: set | None = None, made: dict | None = None,
           budget_orders: dict[str, list[str]] | None = None) -> dict:
    """Everything ``mortar report`` and the dashboard show for a run: the headline metrics, each method's
    own tables, response selection and guided generation when they ran, with two or more methods the
    unique bugs and the overlap of seed questions, and with labels (``store.final_labels`` and
    ``store.read_labels`` of the run) the precision of the labelled detections (:func:`precision`).
    ``unknown``: (seed_id, turn_id) of the rounds whose gold answer is "unknown" (Table VI); ``made``: method name →
    what its make_cases recorded (the stored configuration's ``made``: METAL's and DialTest's mutation gate counts);
    ``budget_orders``: a run with ``--budget N --order X``: X's first N test cases and the random baseline's."""
    ran = methods_in(cases)
    labelled_checks = checks
    unstable = [c for c in checks if c.violated and c.unstable]
    flaky = [c for c in checks if c.violated and c.flaky]
    checks = headline_checks(checks)  # the noise floor and flaky detections: reported apart, in no headline figure
    result = {"metrics": run_metrics(checks, cases),
              "tables": [t for m in ran if m.tables
                         for t in m.tables(checks, cases, verdicts, unknown or set(), (made or {}).get(m.name, {}))]}

    def add(key: str, title: str, caption: str, rows: list[dict]) -> None:
        """A figure of the report that is also one of its tables."""
        result[key] = rows
        result["tables"].append(Table(key, title, caption, rows))

    relations = [RBT, *(r for m in ran for r in m.relations)]
    add("similarity", "Similarity of the answers per relation, and critical bugs",
        f"Quartiles of the similarity every check measured (to the reference, or between two answers). Critical "
        f"bugs: detections below {CRITICAL_SIMILARITY}, answers almost unrelated to what was expected (the journal "
        f"version's Fig. 7).", similarity_distribution(checks, relations))
    if selections:
        add("selection", "Response selection: hits@1 and MRR of the gold answer per version",
            "The SUT ranks the gold answer among distractors by its own likelihood (no judge, no threshold). "
            "agreement / kappa: how often 'gold ranked first' agrees with the answer oracle accepting the SUT's "
            "generated answer on the same rounds.", selection_summary(selections))
    if any(c.relation in (P1, P2, P2_CHANGES, P3) for c in checks):
        add("persona_paper", "Persona relations as the persona paper reports them: violation rate and selection "
            "accuracy per version", "Per version of the dialogue (P1 revised or synonymous persona, P2 the partner's "
            "persona or an added passage, P3 noise by location): the persona relations' checks and their violation "
            "rate; response selection: how often the first-ranked candidate changed against the seed, and the gold "
            "reply's hits@1 and MRR among the candidates.", persona_paper_table(checks, selections))
    if mutants:
        rows, result["guidance_curves"] = mutant_calls(checks, mutants)
        apfd = {row["order"]: row["APFD"] for row in rows}
        add("guidance", "Gini-guided generation against random transformation at the same budget",
            "Each evaluated mutant costs one SUT call. Gini: DialTest's Algorithm 1 keeps a mutant whose answer's "
            "Gini impurity rises by more than τ and goes on from it; random: random transformations of the seed "
            "question, all kept. Bugs: violations of the kept mutants' relations. APFD: how early the search found "
            "them (the area under bugs found against SUT calls spent; 1 = all at the first call).",
            [{**row, "APFD": apfd.get(row["guide"], float("nan"))} for row in guidance_summary(checks, mutants)])
    if budget_orders:
        calls = {c.test_case_id: len(c.source_rounds) for c in cases}
        rows, result["order_curves"] = at_equal_calls(budget_orders, faults_of(checks, cases), calls)
        add("budget_orders", "Guided order against random at equal calls: the first N test cases of each",
            "The run executed the first N test cases of the guided order (--order) and, as its baseline, the first N "
            "of a random order (ORIG always runs). Bugs: detections all of whose test cases are among an order's; "
            "SUT calls: the rounds its test cases ask (a shared prefix is asked once, so fewer are made); APFD over "
            "its own N test cases.", rows)
    if unstable:
        add("unstable", "Detections on unstable seed questions (reported apart)",
            "ORIG was answered more than once (--orig-repeats) and the answers to these seed questions disagree "
            "with each other: a detection there may come from the SUT's own randomness, not from the test case. "
            "They are left out of every other figure.", unstable_summary(unstable))
    if flaky:
        add("flaky", "Flaky detections: not reproduced when asked again (reported apart)",
            "Every detection's conversations were asked again (--confirm), bypassing the answer cache and the "
            "server's prompt cache where it allows; the relation did not find these detections again on every "
            "asking, so they may come from how the system was served, not from the test case. They are left out of "
            "every other figure.", flaky_summary(flaky))
    no_answer = no_answer_summary(checks)
    if no_answer:
        add("no_answer", "Pairs of answers where neither answers the question (no outcome)",
            "Relations that compare two system answers (MR3, MR4, DT-INV, P1–P3) read what each answer says to the "
            "question. Where neither answers — both say the story does not tell, or are empty, degenerate (one "
            "phrase over and over, no words) or evasive, or one gives nothing and the other not the kind of thing "
            "asked (a time, a place, a person, an amount) or only talk the story does not tell — the pair neither "
            "agrees nor differs: it is counted here and is never a violation.", no_answer)
    if len(ran) >= 2:
        result["uniqueness"] = uniqueness(checks, ran)
        result["overlap"] = overlap(checks, ran)
    if final_labels is not None and len(final_labels):
        scores = label_scores if label_scores is not None else pd.DataFrame(columns=["detection_id", "annotator",
                                                                                  "score"])
        rows = precision([(c.check_id, c.relation, c.perturbations) for c in labelled_checks if c.violated], final_labels,
                         scores)
        if rows:
            result["precision"] = rows
    return result


def mutant_calls(checks, mutants: list[dict]) -> tuple[list[dict], dict]:
    """Each guide's evaluated mutants in the order the search asked them, compared at equal SUT calls (one a
    mutant): ``at_equal_calls``'s rows and curves."""
    orders: dict[str, list[str]] = {}
    for m in sorted(mutants, key=lambda m: (m["step"], m["seed_id"], m["source_round"])):
        orders.setdefault(m["guide"], []).append(m["test_case_id"])
    kept = {m["test_case_id"] for m in mutants if m["kept"]}
    faults = [frozenset(t for t in c.test_case_ids if t in kept) for c in checks
              if c.violated and kept & set(c.test_case_ids)]
    return at_equal_calls(dict(sorted(orders.items())), faults)


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
    rows += [{"method": f"order {row['order']}", "metric": k, "value": v}
             for row in report.get("budget_orders", ()) for k, v in row.items() if k != "order"]
    rows += [{"method": f"{apart} {row['relation']}", "metric": k, "value": row[k]}
             for apart in ("unstable", "flaky") for row in report.get(apart, ()) for k in ("detections", "seed_questions")]
    rows += [{"method": f"no answer {row['relation']}", "metric": "no_answer_pairs", "value": row["no_answer_pairs"]}
             for row in report.get("no_answer", ())]
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
    cases, verdicts = store.read_cases_and_verdicts(con, run_id)
    return report(store.read_checks(con, run_id), cases, verdicts, store.read_selections(con, run_id),
                  store.read_mutants(con, run_id), store.final_labels(con, run_id), store.read_labels(con, run_id),
                  store.unknown_rounds(con, run_id), store.run_config(con, run_id).get("made", {}),
                  budget_orders(con, run_id))


def budget_orders(con, run_id: str) -> dict[str, list[str]]:
    """The orders a run with ``--budget N --order X`` executed (X's first N and the random baseline's), else {}."""
    budget = store.run_config(con, run_id).get("budget")
    return {name: order[:budget["n"]] for name, order in store.read_priorities(con, run_id).items()} if budget else {}


def prioritisation(con, run_id: str) -> dict:
    """The run's stored test orders (``mortar prioritise``) measured on its detections: per order its APFD (and
    for random orders the sd) and its curve of bugs found against the share of the suite executed. Empty when
    no order is stored or the run has no results."""
    orders = store.read_priorities(con, run_id)
    if budget_orders(con, run_id):
        return {}  # a budgeted run executed only the orders' first N: its own table compares them at equal calls
    checks = store.read_checks(con, run_id) if orders else []
    if not checks:
        return {}
    cases, _ = store.read_cases_and_verdicts(con, run_id)
    return evaluation(orders, checks, cases, method_kinds())


PRIORITISATION_CAPTION = (
    "APFD: the area under the curve of bugs found against the share of the suite executed, 1 = every bug found by "
    "the first test case; a single-turn test case (DialTest, METAL) is one SUT call, so there equal shares are equal calls. initial: the order the run made "
    "the test cases in; random: the mean of 20 shuffles (sd over them); ideal: greedy, knowing the bugs (the bound). "
    "ORIG always runs.")
SHARES_RUN = (0.1, 0.25, 0.5)


def prioritisation_rows(priorities: dict) -> list[dict]:
    """Per order (``prioritisation``): its APFD, the sd over random orders, and the share of the bugs found once
    10%, 25% and 50% of the suite has run."""
    rows = []
    for name, figures in priorities.items():
        row = {"order": name, "APFD": figures["apfd"], "sd_over_random_orders": figures.get("sd")}
        for share in SHARES_RUN:
            row[f"bugs_found_by_{share:.0%}_run"] = max((y for x, y in figures["curve"] if x <= share + 1e-9),
                                                        default=0.0)
        rows.append(row)
    return rows


def metrics_frame(con, run_id: str):
    """A stored run's metrics as rows (run_id, method, metric, value): the metrics export."""
    frame = pd.DataFrame(metric_rows(run_report(con, run_id)))
    frame.insert(0, "run_id", run_id)
    return frame
