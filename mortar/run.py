"""One MORTAR run end to end. So far: seeds → dialogue-level perturbations → knowledge graphs →
equivalent context check → test cases with their EC verdicts in the store."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path

from mortar import store
from mortar.context import ECVerdict, check_case
from mortar.dataset import Dataset, TestCase
from mortar.kg.model import DialogueGraph, ExtractionError
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
             progress=None) -> Generated:
    """Perturb every seed, check every perturbed round's context, store it all under a deterministic run id."""
    extractor = extractor or default_extractor()
    graphs, failed = knowledge_graphs(dataset, extractor, db, progress)
    seeds = {s.id: s for s in dataset.seeds}
    cases = [c for c in make_test_cases(dataset, run_seed, settings) if c.seed_id not in failed]
    verdicts = {}
    for c in cases:
        questions = {r.turn_id: r.question for r in seeds[c.seed_id].rounds}
        verdicts[c.test_case_id] = check_case(graphs[c.seed_id], c, questions)
    config = {"perturbations": asdict(settings), "kg": {"backend": extractor.backend, "model": extractor.model}}
    run_id = run_id_for("generate", dataset, run_seed, config)
    with store.connect(db) as con:
        con.begin()
        store.write_dataset(con, dataset)
        store.write_run(con, run_id, "generate", dataset, run_seed, {**config, "failed_seeds": failed}, status="done")
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
                {"position": p, "source_round": src, "question": seeds[c.seed_id].round(src).question,
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
