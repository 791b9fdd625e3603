"""The Violations page's query (``store.find_detections``) over a synthetic store of many detections: the time of each
filter, sort and page the page asks for, and its ratio to the baseline measured in the same run — reading every
detection of the store into one DataFrame (the same query without a filter, a sort key or a page), which is what a
page would pay if it filtered in pandas.

The store is the one of tests/test_labels.py: two runs of ``--detections`` detections each (and as many passed
checks), written with SQL in one go.

    .venv/bin/python benchmarks/labels.py                      # 2 × 25,000 detections, 5 repeats
    .venv/bin/python benchmarks/labels.py --detections 100000 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mortar import store  # noqa: E402
from tests.test_labels import RUN, synthetic_store  # noqa: E402

F = store.DetectionFilter
QUERIES = [  # (what the page asks, filter, sort and page)
    ("first page, no filter", F(), {}),
    ("one run", F(run_ids=(RUN,)), {}),
    ("one SUT", F(suts=("other-sut",)), {}),
    ("one run, MR1", F(run_ids=(RUN,), relations=("MR1",)), {}),
    ("one run, DRS", F(run_ids=(RUN,), perturbations=("DRS",)), {}),
    ("one run, no bug level", F(run_ids=(RUN,), bug_levels=(store.NO_LEVEL,)), {}),
    ("one run, text search", F(run_ids=(RUN,), text="NEEDLE"), {}),
    ("similarity range, sorted, page 3", F(similarity=(0.0, 0.1)), {"sort": "similarity", "descending": True,
                                                                    "limit": 10, "offset": 20}),
    ("last page", F(), {"offset": None}),
]


def timed(call, repeats: int) -> float:
    """The median seconds of ``repeats`` calls (after one unmeasured call)."""
    call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--detections", type=int, default=25_000, help="detections per run (two runs; default 25000)")
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per query (default 5; the median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "labels.duckdb"
        synthetic_store(db, args.detections)
        synthetic_store(db, args.detections, run_id="run-other", sut="other-sut")
        with store.session(db, read_only=True) as con:
            total = store.find_detections(con)[1]
            base = timed(lambda: store.find_detections(con, limit=total), args.repeats)
            print(f"{total:,} detections; baseline, every detection read into a DataFrame: {base * 1000:.0f} ms "
                  f"(median of {args.repeats})")
            print(f"{'query':<34} {'matching':>9} {'ms':>7} {'of baseline':>12}")
            worst = 0.0
            for name, flt, kw in QUERIES:
                kw = {**kw, "offset": total - 10} if kw.get("offset", 0) is None else kw
                matching = store.find_detections(con, flt, **kw)[1]
                seconds = timed(lambda: store.find_detections(con, flt, **kw), args.repeats)
                worst = max(worst, seconds)
                print(f"{name:<34} {matching:>9,} {seconds * 1000:>7.0f} {seconds / base:>12.2f}")
    print(f"slowest query: {worst * 1000:.0f} ms, {worst / base:.2f} × the baseline")


if __name__ == "__main__":
    main()
