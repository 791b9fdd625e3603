"""Test prioritisation and targeted generation on a completed SmolLM2 run (the GRI/WALI thesis's measures).

1. APFD of the orders gri, wali, gini and random (``mortar prioritise``) against the initial order, 20 random
   orders (mean ± sd) and the ideal order, on the detections of a `--limit 5 --method mortar,metal` run (made
   first, or resumed, in the store given; pass --run to use another finished run).
2. Targeted vs random generation: METAL alone with `--targets random|gri|wali` on the same seeds; bugs
   among the first k METAL test cases of each (k: the fewest any of them made), so each spends the same
   number of SUT calls (one new answer per METAL test case; the history is the seed's, shared with ORIG).

    .venv/bin/python benchmarks/prioritisation.py --db /tmp/prio.duckdb
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mortar import store  # noqa: E402
from mortar.config import RunConfig  # noqa: E402
from mortar.guide.prioritise import ORDERS, initial_order  # noqa: E402
from mortar.methods import method_kinds  # noqa: E402
from mortar.prioritise import prioritise_run  # noqa: E402
from mortar.pipeline import run  # noqa: E402
from mortar.vocab import METAL, METAL_METHOD, MORTAR_METHOD  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample_coqa.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="DuckDB file (runs are made or resumed there)")
    parser.add_argument("--run", help="a finished run to prioritise (default: a --limit N mortar,metal run)")
    parser.add_argument("--limit", type=int, default=5)
    parser.add_argument("--sut", default="smollm2")
    parser.add_argument("--skip-targets", action="store_true", help="only the prioritisation")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    run_id = args.run
    if run_id is None:
        start = time.perf_counter()
        config = RunConfig(dataset=str(SAMPLE), methods=(MORTAR_METHOD, METAL_METHOD), sut=args.sut, limit=args.limit)
        run_id = run(None, config, db=args.db).run_id
        print(f"run {run_id}: {time.perf_counter() - start:.0f} s (made or resumed)", flush=True)
    print(f"\nPrioritisation of run {run_id} (APFD on its detections; 1 = every bug found by the first test case)")
    evaluation = {}
    for by in ORDERS:
        result = prioritise_run(run_id, by, args.db)
        evaluation = result["evaluation"]
        if result["seconds"]:
            per_seed = sum(result["seconds"].values()) / len(result["seconds"])
            answering = (result["answer_seconds"] or 0) * result["rounds_per_seed"]
            print(f"  {by}: scores {per_seed:.1f} s per seed (stored ones count their first computation); the SUT "
                  f"answers a seed's {result['rounds_per_seed']:.0f} rounds in about {answering:.1f} s", flush=True)
    for name, figures in evaluation.items():
        spread = f" ± {figures['sd']:.3f}" if "sd" in figures else ""
        print(f"  APFD {name:>8}: {figures['apfd']:.3f}{spread}")

    if args.skip_targets:
        return
    print("\nMETAL's operators, targeted vs random, at the same number of SUT calls")
    made = {}
    for targets in ("random", "gri", "wali"):
        config = RunConfig(dataset=str(SAMPLE), methods=(METAL_METHOD,), sut=args.sut, limit=args.limit, targets=targets)
        start = time.perf_counter()
        result = run(None, config, db=args.db)
        print(f"  (--targets {targets}: run {result.run_id}, {time.perf_counter() - start:.0f} s made or resumed)",
              flush=True)
        with store.connect(args.db, read_only=True) as con:
            cases, _ = store.read_cases_and_verdicts(con, result.run_id)
            checks = [c for c in store.read_checks(con, result.run_id) if c.relation == METAL]
        made[targets] = ([c.test_case_id for c in initial_order(cases, method_kinds())], checks)
    k = min(len(order) for order, _ in made.values())
    for targets, (order, checks) in made.items():
        first = set(order[:k])
        bugs = [c for c in checks if c.violated and c.test_case_ids[0] in first]
        print(f"  {targets:>6}: {len(bugs)} bugs in the first {k} of {len(order)} test cases "
              f"({len(bugs) / k:.3f} per SUT call), {len({(c.seed_id, c.source_round) for c in bugs})} seed questions")


if __name__ == "__main__":
    main()
