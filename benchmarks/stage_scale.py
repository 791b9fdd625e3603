"""Our own stages at scale: a MORTAR run with a system that answers instantly, on 30, 300 and 3,000 seed dialogues.

The datasets repeat the CoQA sample's 30 dialogues, each copy with its people and places renamed (so no cache
finds a copy's graphs or answers), and every run starts from an empty store. The system under test is a Python
function (``--sut module:function``, as a user would plug one in) that answers with the story sentence sharing
most words with the question, instantly. Per size the benchmark prints the seconds and peak resident memory of
each stage of the run (``RunResult.stages``; knowledge graphs and judging spread over one process a core from 100 dialogues, as the
``mortar`` command does, and the peak memory of those processes is not counted), the checks made and the checks
per second of the whole run; then the growth of the total time from each size to the next.

    .venv/bin/python benchmarks/stage_scale.py                    # 30, 300 and 3,000 dialogues
    .venv/bin/python benchmarks/stage_scale.py --sizes 30 300     # a quicker look
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample_coqa.json"
sys.path.insert(0, str(ROOT))

# names a copy gives the sample's people and places (the originals are kept in copy 0)
GIVEN = ("Ada Bram Cleo Dario Edda Fenn Greta Hugo Ines Jonas Kira Lars Mira Nils Olga Pavel Quinn Rosa Sven Tilda "
         "Uma Viggo Wren Xavi Yara Zeno Alba Bodo Cora Dag Elin Frode Gwen Hal Isak Juno Kai Lene Mads Nora Oskar "
         "Pia Rune Saga Tore Ulla Vera Wilm Ylva Zora").split()
PLACES = ("Ashby Brantwick Coldmere Dunholt Elmsworth Farrowdale Glenharrow Hollin Ivybridge Jarrow Kettlewell "
          "Lindow Marsby Northam Oakridge Penmoor Quarrington Ravensholt Stonebury Thistlewick").split()
SUFFIXES = ("", "ford", "ley", "wick", "holm", "by", "ton", "dale")
PROPER = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")


KEPT = set("Mrs Miss Mister Doctor Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March "
           "April May June July August September October November December English French German Spanish".split())


def proper_names(texts: list[str]) -> list[str]:
    """Capitalised words found somewhere other than a sentence's start, titles, days, months and languages
    left out: the dialogue's names."""
    found: dict[str, None] = {}
    for text in texts:
        for m in PROPER.finditer(text):
            if m.group(1) not in KEPT:
                found.setdefault(m.group(1))
    return list(found)


def renamed(dialogue: dict, copy: int) -> dict:
    """Copy ``copy`` of a CoQA dialogue: every name replaced, consistently, by another from the pools."""
    if copy == 0:
        return dialogue
    texts = [dialogue["story"]] + [q["input_text"] for q in dialogue["questions"]] + \
            [a["input_text"] for a in dialogue["answers"]]
    # copy k gives name i pool[(k + 11 i) mod P]: other names in every copy below P, other names within a copy;
    # from P on, a suffix tells the rounds of the pool apart (no two copies share their texts, so no cache helps)
    pool = GIVEN + PLACES
    suffix = SUFFIXES[copy // len(pool)]
    mapping = {name: pool[(copy + 11 * i) % len(pool)] + suffix for i, name in enumerate(proper_names(texts))}
    if not mapping:
        return dialogue
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, mapping)) + r")\b")

    def swap(text: str) -> str:
        return pattern.sub(lambda m: mapping[m.group(1)], text)
    return {**dialogue, "id": f"{dialogue['id']}-{copy}", "story": swap(dialogue["story"]),
            "questions": [{**q, "input_text": swap(q["input_text"])} for q in dialogue["questions"]],
            "answers": [{**a, "input_text": swap(a["input_text"])} for a in dialogue["answers"]]}


def scaled_dataset(n: int) -> dict:
    data = json.loads(SAMPLE.read_text(encoding="utf-8"))["data"]
    return {"version": "1.0", "data": [renamed(data[i % len(data)], i // len(data)) for i in range(n)]}


def instant_answer(messages: list[dict]) -> str:
    """The system under test: the story sentence that shares most words with the question (first 8 words)."""
    story = messages[0]["content"] if messages[0]["role"] == "system" else ""
    question = set(re.findall(r"[a-z]+", messages[-1]["content"].lower()))
    best, _ = max(story_sentences(story), key=lambda sentence: len(question & sentence[1]))
    return " ".join(best.split()[:8])


@lru_cache(maxsize=64)
def story_sentences(story: str) -> list[tuple[str, frozenset[str]]]:
    """The story's sentences with their words, read once per story (the system answers instantly)."""
    sentences = re.split(r"(?<=[.!?])\s+", story) or [""]
    return [(s, frozenset(re.findall(r"[a-z]+", s.lower()))) for s in sentences]


class RssSampler:
    """Peak resident memory per stage: the stage running (``Stages.current``), sampled every 20 ms from /proc."""

    def __init__(self, stages):
        self.stages, self.peaks, self._stop = stages, {}, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    @staticmethod
    def rss_mib() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

    def _sample(self):
        while not self._stop.wait(0.02):
            stage = self.stages.current or "between stages"
            self.peaks[stage] = max(self.peaks.get(stage, 0.0), self.rss_mib())

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def one_size(n: int, methods: str) -> dict:
    """Run ``methods`` on ``n`` renamed dialogues in a fresh store (in this process): seconds and peak memory per
    stage, checks."""
    from mortar import store
    from mortar.config import RunConfig
    from mortar.formats import load_dataset
    from mortar.pipeline import run
    from mortar.stages import Stages

    from mortar.parallel import MAX_WORKERS, PARALLEL_FROM_SEEDS

    # worker processes as the `mortar` command would use them for this many seeds
    workers = min(MAX_WORKERS, os.cpu_count() or 1) if n >= PARALLEL_FROM_SEEDS else 1
    os.environ["MORTAR_WORKERS"] = str(workers)
    stages = Stages()
    with tempfile.TemporaryDirectory() as tmp, RssSampler(stages) as memory:
        path = Path(tmp) / f"scaled_{n}.json"
        path.write_text(json.dumps(scaled_dataset(n)), encoding="utf-8")
        start = time.perf_counter()
        with stages("loading the dataset"):
            dataset = load_dataset(path)
        config = RunConfig(dataset=str(path), methods=methods, sut="benchmarks.stage_scale:instant_answer")
        result = run(dataset, config, db=Path(tmp) / "scale.duckdb", stages=stages)
        total = time.perf_counter() - start
        with store.connect(Path(tmp) / "scale.duckdb", read_only=True) as con:
            checks = con.execute("SELECT count(*) FROM checks WHERE run_id = ?", [result.run_id]).fetchone()[0]
    return {"dialogues": n, "checks": checks, "seconds": total, "stages": result.stages, "peaks": memory.peaks,
            "workers": workers}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[30, 300, 3000])
    p.add_argument("--methods", default="mortar")
    p.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child process measuring one size
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(one_size(args.one, args.methods)))
        return
    results = []
    for n in args.sizes:  # each size in a process of its own: its peak memory is its own
        out = subprocess.run([sys.executable, __file__, "--one", str(n), "--methods", args.methods], cwd=ROOT,
                             capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        if out.returncode:
            sys.exit(f"{n} dialogues failed:\n{out.stderr[-3000:]}")
        r = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(r)
        print(f"\n{n} dialogues: {r['checks']:,} checks in {r['seconds']:.1f} s = {r['checks'] / r['seconds']:.0f} "
              f"checks/s (knowledge graphs and judging in {r['workers']} process{'es' if r['workers'] > 1 else ''})", flush=True)
        print(f"  {'stage':<36}{'seconds':>9}{'share':>8}{'peak RSS MiB':>14}")
        for stage, seconds in r["stages"].items():
            peak = r["peaks"].get(stage)
            print(f"  {stage:<36}{seconds:>9.2f}{seconds / r['seconds']:>8.0%}{(f'{peak:.0f}' if peak else '—'):>14}")
    for a, b in zip(results, results[1:]):
        print(f"\n{b['dialogues']} vs {a['dialogues']} dialogues: ×{b['dialogues'] / a['dialogues']:.0f} the data, "
              f"×{b['seconds'] / a['seconds']:.1f} the time")


if __name__ == "__main__":
    main()
