"""Does a reply depend on a persona fact? The rule P2 uses on a persona dialogue (``persona_fact``) against
hand-labelled replies: a reply depends on the speaker's persona when it states, paraphrases, contradicts or relies
on one of its sentences and the partner's persona does not state the same. Where it depends, swapping in the
partner's persona should change the reply (P2-change); where it does not, the reply should stay (P2).

Per set (dev: used to set the rule; held-out: personas and replies found nowhere else, never used to set it):
replies, accuracy, precision and recall of "depends", and the share of right sentence indices among the true
positives.

    .venv/bin/python benchmarks/persona_dependence.py [--show]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mortar.methods.persona_transforms import persona_fact  # noqa: E402
from mortar.oracle.embeddings import Embeddings  # noqa: E402

DATA = ROOT / "tests" / "data"
SETS = {"dev": DATA / "persona_dependence_dev.jsonl", "held-out": DATA / "persona_dependence_heldout.jsonl"}


def measure(path: Path, embeddings, show: bool = False) -> dict:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    tp = fp = fn = tn = right_sentence = 0
    for row in rows:
        found = persona_fact(row["reply"], tuple(row["persona"]), tuple(row["partner"]), embeddings)
        said, truth = found is not None, row["depends"]
        tp, fp, fn, tn = tp + (said and truth), fp + (said and not truth), fn + (truth and not said), \
            tn + (not said and not truth)
        right_sentence += said and truth and found == row["sentence"]
        if show and said != truth:
            print(f"  {'FP' if said else 'FN'} {row['reply']!r} ({row.get('note', '')})")
    return {"replies": len(rows), "accuracy": (tp + tn) / len(rows),
            "precision": tp / (tp + fp) if tp + fp else float("nan"), "recall": tp / (tp + fn) if tp + fn else float("nan"),
            "right sentence": right_sentence / tp if tp else float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print the dev set's errors")
    args = parser.parse_args()
    embeddings = Embeddings()
    for name, path in SETS.items():
        result = measure(path, embeddings, show=args.show and name == "dev")
        print(f"{name:9s} " + "  ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in result.items()))


if __name__ == "__main__":
    main()
