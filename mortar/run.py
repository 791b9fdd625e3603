"""One MORTAR run end to end. So far: seeds → dialogue-level perturbations → test cases in the store."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

from mortar import store
from mortar.dataset import Dataset, TestCase
from mortar.perturb import PerturbationSettings, test_cases_for


def make_test_cases(dataset: Dataset, run_seed: int, settings: PerturbationSettings) -> list[TestCase]:
    return [case for seed in dataset.seeds for case in test_cases_for(seed, run_seed, settings)]


def run_id_for(kind: str, dataset: Dataset, run_seed: int, config: dict) -> str:
    """Same dataset, seed and settings give the same run id: re-running resumes, never duplicates."""
    key = json.dumps({"kind": kind, "dataset": dataset.sha256, "seed": run_seed, "config": config}, sort_keys=True)
    return f"{kind[:3]}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def generate(dataset: Dataset, run_seed: int, settings: PerturbationSettings, db=None) -> tuple[str, list[TestCase]]:
    """Perturb every seed and store the test cases under a deterministic run id."""
    cases = make_test_cases(dataset, run_seed, settings)
    config = {"perturbations": asdict(settings)}
    run_id = run_id_for("generate", dataset, run_seed, config)
    with store.connect(db) as con:
        con.begin()
        store.write_dataset(con, dataset)
        store.write_run(con, run_id, "generate", dataset, run_seed, config, status="done")
        store.write_test_cases(con, run_id, dataset, cases)
        con.commit()
    return run_id, cases


def case_records(dataset: Dataset, cases: list[TestCase]) -> list[dict]:
    """The export shape of a test case (later stages add fields to the rounds)."""
    seeds = {s.id: s for s in dataset.seeds}
    return [
        {
            "seed_id": c.seed_id,
            "test_case_id": c.test_case_id,
            "perturbation": c.perturbation,
            "replicate": c.replicate,
            "rounds": [
                {"position": p, "source_round": src, "question": seeds[c.seed_id].round(src).question}
                for p, src in enumerate(c.source_rounds, start=1)
            ],
        }
        for c in cases
    ]


def write_jsonl(records: list[dict], out: str | Path) -> None:
    """Write atomically, so an interrupted export never leaves half a file."""
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8", newline="\n") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    tmp.replace(out)
