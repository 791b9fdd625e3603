"""Answer the same test cases twice — naively and with the executor — and compare time and answers.

Naive: for every round of every test case, one after another, render the chat template for the whole
conversation and call ``model.generate`` (no cache, no sharing between test cases). Executor:
``mortar.execute.execute`` with a fresh temporary store (prefix tree, KV reuse, batched lanes).

    .venv/bin/python benchmarks/sut_throughput.py            # first five sample seeds, all perturbations
    .venv/bin/python benchmarks/sut_throughput.py --seeds 1  # a quick look
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from mortar.dataset import Dataset  # noqa: E402
from mortar.formats import load_dataset  # noqa: E402
from mortar.execute import execute  # noqa: E402
from mortar.perturb import PerturbationSettings, test_cases_for  # noqa: E402
from mortar.store import StoreCache  # noqa: E402

from mortar.sut import Conversation, SutSettings, Turn, make_sut  # noqa: E402
from mortar.sut.local import stop_token_ids  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample_coqa.json"


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load() -> str:
    """The machine's load average: other processes on these 2 cores slow both phases, unevenly."""
    return "load %.1f" % os.getloadavg()[0]


def naive(sut, seeds: dict, cases) -> dict:
    model, tokenizer = sut.loaded
    stop = sorted(stop_token_ids(model, tokenizer, sut.local.stop_at_newline))
    answers = {}
    with torch.inference_mode():
        for case in cases:
            seed = seeds[case.seed_id]
            history: list[Turn] = []
            for position, turn_id in enumerate(case.source_rounds, start=1):
                conversation = Conversation(seed.story, tuple(history), seed.round(turn_id).question)
                ids = torch.tensor([sut.prompt_ids(conversation)])
                out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                     max_new_tokens=sut.settings.max_new_tokens, eos_token_id=stop,
                                     pad_token_id=tokenizer.pad_token_id or stop[0])
                text = tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
                if sut.local.stop_at_newline:
                    text = text.split("\n", 1)[0]
                answers[case.test_case_id, position] = text.strip()
                history.append(Turn(conversation.question, text.strip()))
                if len(answers) % 50 == 0:
                    print(f"  naive: {len(answers)} rounds", file=sys.stderr, flush=True)
    return answers


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=5, help="first N seeds of the sample dataset (default 5)")
    p.add_argument("--run-seed", type=int, default=0)
    p.add_argument("--sut", default="smollm2")
    p.add_argument("--lanes", type=int, default=None, help="executor batch size (default: the SUT's)")
    p.add_argument("--max-new-tokens", type=int, default=48)
    p.add_argument("--skip-naive", action="store_true", help="time the executor only")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    full = load_dataset(SAMPLE)
    dataset = Dataset(full.path, full.sha256, full.seeds[:args.seeds])
    cases = [c for s in dataset.seeds for c in test_cases_for(s, args.run_seed, PerturbationSettings())]
    rounds = sum(len(c.source_rounds) for c in cases)
    sut = make_sut(args.sut, SutSettings(max_new_tokens=args.max_new_tokens), lanes=args.lanes)
    start = time.perf_counter()
    sut.loaded  # noqa: B018 - load (and convert, the first time) before any timing
    print(f"{args.sut}: loaded in {time.perf_counter() - start:.1f} s; {len(dataset.seeds)} seeds, "
          f"{len(cases)} test cases, {rounds} test rounds; torch threads {torch.get_num_threads()}")
    print(f"peak RSS after loading: {peak_rss_mib():.0f} MiB")

    last_info = {}

    def progress(done, total, info):
        last_info.update(info, done=done, total=total)
        if info["computed"] and info["computed"] % 50 == 0:
            print(f"  executor: {done}/{total} answers, {info['answers_per_second']:.2f}/s", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        start, cpu, before = time.perf_counter(), time.process_time(), load()
        answers = execute(dataset.seeds, cases, sut, StoreCache(Path(tmp) / "bench.duckdb"), progress=progress)
        executor_s = time.perf_counter() - start
    print(f"executor: {executor_s:7.1f} s wall, {time.process_time() - cpu:7.1f} s CPU "
          f"({rounds / executor_s:.2f} rounds/s), peak RSS {peak_rss_mib():.0f} MiB; {before} → {load()}")
    print(f"sut_calls / test_rounds: {last_info['sut_calls']} / {rounds} = {last_info['sut_calls'] / rounds:.2f}"
          f"  (errors {last_info['errors']})")

    # naive second: its peak RSS line is the process's peak so far, so a higher executor peak shows above
    naive_answers, naive_s = {}, float("nan")
    if not args.skip_naive:
        start, cpu, before = time.perf_counter(), time.process_time(), load()
        naive_answers = naive(sut, {s.id: s for s in dataset.seeds}, cases)
        naive_s = time.perf_counter() - start
        print(f"naive:    {naive_s:7.1f} s wall, {time.process_time() - cpu:7.1f} s CPU "
              f"({rounds / naive_s:.2f} rounds/s), peak RSS {peak_rss_mib():.0f} MiB; {before} → {load()}")
    if naive_answers:
        same = sum(naive_answers[k] == a.text for k, a in answers.items())
        print(f"speed-up: {naive_s / executor_s:.2f}x")
        print(f"identical answers: {same} / {len(answers)} = {same / len(answers):.1%}")
        for k in sorted(k for k, a in answers.items() if naive_answers[k] != a.text)[:10]:
            print(f"  differs at {k}: naive {naive_answers[k]!r} vs executor {answers[k].text!r}")


if __name__ == "__main__":
    main()
