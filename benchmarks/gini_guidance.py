"""DialTest's Gini-guided search against random transformation at the same budget of SUT calls.

For each run seed, one `mortar run --method dialtest --gini-budget B` on the first sample seeds: the run
makes both the guided mutants (Algorithm 1: kept when the answer's Gini impurity rises by more than τ)
and the random baseline (random transformations of the seed question, all kept), and judges the kept
ones with DT-REF and DT-INV. Printed per guide: SUT calls, kept mutants, bugs, bugs per SUT call and
seed questions with a bug, as mean ± sd over the run seeds. Answers are stored in one temporary store,
so a conversation met again under another run seed is not asked twice (the counts are unaffected).

    .venv/bin/python benchmarks/gini_guidance.py                    # 2 seeds, budget 3, run seeds 0 1 2
    .venv/bin/python benchmarks/gini_guidance.py --seeds 3 --budget 4 --run-seeds 0 1 2 3 4
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mortar import store  # noqa: E402
from mortar.config import RunConfig  # noqa: E402
from mortar.methods.dialtest import DialTestSettings  # noqa: E402
from mortar.metrics import run_report  # noqa: E402
from mortar.pipeline import run  # noqa: E402
from mortar.vocab import DIALTEST_METHOD, GINI_TAU, GUIDES, SR, WI  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample_coqa.json"
MEASURES = ("sut_calls", "kept", "bugs", "bugs_per_call", "bug_questions")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=2, help="first N sample dialogues (default 2)")
    parser.add_argument("--budget", type=int, default=3, help="SUT calls per question and guide (default 3)")
    parser.add_argument("--tau", type=float, default=GINI_TAU)
    parser.add_argument("--run-seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--sut", default="smollm2")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    rows = {guide: [] for guide in GUIDES}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "gini.duckdb"
        for run_seed in args.run_seeds:
            start = time.perf_counter()
            config = RunConfig(dataset=str(SAMPLE), methods=(DIALTEST_METHOD,), sut=args.sut, run_seed=run_seed,
                               limit=args.seeds, settings={"dialtest": DialTestSettings(
                                   operators=(SR, WI), gini_budget=args.budget, gini_tau=args.tau)})
            result = run(None, config, db=db)
            with store.connect(db, read_only=True) as con:
                guidance = run_report(con, result.run_id)["guidance"]
            for row in guidance:
                rows[row["guide"]].append(row)
                print(f"run seed {run_seed} {row['guide']:>6}: " + ", ".join(
                    f"{k} {row[k]:.3f}" if isinstance(row[k], float) else f"{k} {row[k]}" for k in MEASURES),
                    flush=True)
            print(f"  ({time.perf_counter() - start:.0f} s)", flush=True)

    print(f"\nGini guidance vs random, {args.seeds} seeds, budget {args.budget} SUT calls per question, τ {args.tau}, "
          f"SUT {args.sut}, run seeds {' '.join(map(str, args.run_seeds))} (mean ± sd):")
    for guide in GUIDES:
        parts = []
        for k in MEASURES:
            values = [r[k] for r in rows[guide]]
            sd = statistics.stdev(values) if len(values) > 1 else 0.0
            parts.append(f"{k} {statistics.mean(values):.3f} ± {sd:.3f}")
        print(f"  {guide:>6}: " + ", ".join(parts))
    ratio = [g["bugs_per_call"] / r["bugs_per_call"] for g, r in zip(rows["gini"], rows["random"]) if r["bugs_per_call"]]
    if ratio:
        print(f"  bugs per SUT call, gini / random: {statistics.mean(ratio):.2f} "
              f"(per run seed: {', '.join(f'{x:.2f}' for x in ratio)})")


if __name__ == "__main__":
    main()
