"""Unlabelled two-answer pairs from a real SUT, for annotators to label as agreement pairs.

Each story of the given answer-pair files is asked its first questions (at most six); from the second on, each
question is asked twice: after the earlier rounds in order, and after them shuffled with one dropped (the pair MR3
compares). The pairs go to OUT as JSON lines (id, sut, question, gold, answer_a, answer_b, story); an annotator adds
`agree`, `no_answer` and `kind` by tests/data's labelling rules. `agreement_pairs_real_dev`/`real_heldout` (SmolLM2,
stories of answer_pairs_dev5 and dev6, split by story) and `agreement_pairs_real_heldout2` (Gemma3-270M, stories of
answer_pairs_dev7 and dev8) were made this way on 2026-11-28, and `agreement_pairs_real_dev2` (SmolLM2, stories of
answer_pairs_dev4 and dev9), `agreement_pairs_real_dev3` (SmolLM2, stories of answer_pairs_dev10) and
`agreement_pairs_real_dev4` (SmolLM2, stories of answer_pairs_dev11) after them.

    python benchmarks/real_agreement_pairs.py smollm2 OUT.jsonl tests/data/answer_pairs_dev5.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from mortar.sut import Conversation, Turn, make_sut  # noqa: E402

QUESTIONS = 6  # per story


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sut", help="a SUT spec (smollm2, gemma3-270m, openai:MODEL, …)")
    ap.add_argument("out", type=Path)
    ap.add_argument("files", nargs="+", type=Path, help="answer-pair files whose stories and questions to ask")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    stories: dict[str, dict] = {}
    for path in args.files:
        for line in path.open(encoding="utf-8"):
            row = json.loads(line)
            story = stories.setdefault(row.get("seed_id") or row["id"].split("/")[0], {"story": row["story"], "qa": {}})
            story["qa"].setdefault(row["question"], row["gold"])
    sut = make_sut(args.sut)
    with args.out.open("a", encoding="utf-8") as out:
        for seed_id, story in stories.items():
            asked = list(story["qa"].items())[:QUESTIONS]
            for k, (question, gold) in enumerate(asked[1:], start=1):
                history = [Turn(q, a) for q, a in asked[:k]]
                other = history[:]
                rng.shuffle(other)
                if len(other) > 1:
                    other.pop(rng.randrange(len(other)))
                a = sut.answer(Conversation(story["story"], tuple(history), question))
                b = sut.answer(Conversation(story["story"], tuple(other), question))
                out.write(json.dumps({"id": f"{seed_id}/{k}", "sut": args.sut, "question": question, "gold": gold,
                                      "answer_a": a, "answer_b": b, "story": story["story"]}) + "\n")
                out.flush()
                print(f"{seed_id}/{k}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
