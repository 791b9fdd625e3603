"""How often each answer oracle agrees with hand labels on candidate answers (issue 8).

For every labelled pairs file (question, gold, candidate, kind, acceptable) and every oracle at its
threshold, prints accuracy, the precision and recall of the bug flags (bug = not pass), the
threshold that would have maximised accuracy, accuracy per kind of candidate, and throughput.

    python benchmarks/oracle_accuracy.py [PAIRS.jsonl ...] [--oracles cosine@0.6 mss@0.6 answer@0.5]
                                         [--show-errors N]

Defaults: tests/data/answer_pairs_dev.jsonl and answer_pairs_dev2.jsonl (tuned on), answer_pairs_heldout.jsonl
and answer_pairs_holdout2.jsonl (written before the oracle changes they test, never tuned on). A pair may
carry its ``story``; the oracle then reads it (a description the story links to the gold is the gold).

Agreement between two system answers (MR3/MR4 compare two outputs, neither a reference) is measured on
tests/data/agreement_pairs_{dev,holdout}.jsonl (question, answer_a, answer_b, story, agree, kind):
accuracy, and the precision and recall of "they differ" (score < threshold), per kind.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from mortar.calibrate import (AGREEMENT_FIELDS, agreement_summary, read_pairs, score_agreement,  # noqa: E402
                              score_rows, summarize)
from mortar.oracle import Embeddings, Oracle  # noqa: E402

DATA = ROOT / "tests/data"
DEFAULT_FILES = [DATA / f"answer_pairs_{name}.jsonl" for name in ("dev", "heldout", "dev2", "holdout2")]
AGREEMENT_FILES = [DATA / "agreement_pairs_dev.jsonl", DATA / "agreement_pairs_holdout.jsonl"]
KINDS = ("gold", "wordy", "paraphrase", "wrong_entity", "long_wrong", "unknown")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, default=DEFAULT_FILES)
    ap.add_argument("--oracles", nargs="+", default=["cosine@0.6", "mss@0.6", "answer@0.5", "answer-noq@0.5"],
                    help="NAME@THRESHOLD; answer-noq is the answer oracle without the question, "
                         "as similarity(output, reference) sees it")
    ap.add_argument("--show-errors", type=int, default=0, help="print up to N disagreements per oracle and file")
    ap.add_argument("--agreement", nargs="*", type=Path, default=AGREEMENT_FILES,
                    help="two-answer agreement files (none: skip)")
    args = ap.parse_args(argv)
    embeddings = Embeddings()  # shared: each text is embedded once for all oracles
    header = (f"{'file':<12} {'oracle':<15} {'acc':>6} {'bugP':>6} {'bugR':>6} {'best t':>7} {'acc@t':>6}  "
              + " ".join(f"{k[:10]:>10}" for k in KINDS) + f"  {'ms/ans':>7}")
    print(header)
    print("-" * len(header))
    for path in args.files:
        rows = read_pairs(path)
        for spec in args.oracles:
            name, _, t = spec.partition("@")
            blind = name.endswith("-noq")
            oracle = Oracle(name.removesuffix("-noq"), embeddings)
            threshold = float(t) if t else oracle.threshold
            start = time.perf_counter()
            scored = score_rows([{**r, "question": ""} for r in rows] if blind else rows, oracle, threshold)
            ms = 1000 * (time.perf_counter() - start) / max(1, len(rows))
            s = summarize(scored, threshold, name)
            kinds = s.get("accuracy_by_kind", {})
            print(f"{path.stem.replace('answer_pairs_', ''):<12} {spec:<15} {s['accuracy']:>6.3f} "
                  f"{s['bug_precision']:>6.3f} {s['bug_recall']:>6.3f} {s['best_threshold']:>7.3f} "
                  f"{s['best_accuracy']:>6.3f}  " + " ".join(f"{kinds.get(k, float('nan')):>10.3f}" for k in KINDS)
                  + f"  {ms:>7.1f}")
            others = sorted(set(kinds) - set(KINDS))
            if others:  # files in other styles have kinds of their own
                print("    " + "  ".join(f"{k} {kinds[k]:.2f} (n={s['n_by_kind'][k]})" for k in others))
            if args.show_errors:
                wrong = [r for r in scored if r["pass"] != r["acceptable"]][:args.show_errors]
                for r in wrong:
                    print(f"    [{r['kind']}] Q: {r['question']} | gold: {r['gold']} | cand: {r['candidate']} "
                          f"→ {r['score']:.2f} {r['reason']}")
    for path in args.agreement:
        rows = read_pairs(path, required=AGREEMENT_FIELDS)
        for spec in args.oracles:
            name, _, t = spec.partition("@")
            if name.endswith("-noq"):
                continue
            oracle = Oracle(name, embeddings)
            threshold = float(t) if t else oracle.threshold
            scored = score_agreement(rows, oracle, threshold)
            s = agreement_summary(scored)
            print(f"{path.stem:<28} {spec:<12} acc {s['accuracy']:.3f}  differ: precision {s['precision']:.3f} "
                  f"recall {s['recall']:.3f}  " + "  ".join(f"{k} {v:.2f}" for k, v in sorted(s["by_kind"].items())))
            if args.show_errors:
                for r in [r for r in scored if r["same"] != r["agree"]][:args.show_errors]:
                    print(f"    [{r['kind']}] Q: {r['question']} | a: {r['answer_a']} | b: {r['answer_b']} "
                          f"→ {r['score']:.2f}")
    print(f"\n{len(args.files)} file(s); per kind: share of candidates judged as labelled; "
          "bugP/bugR: precision/recall of bug flags (bug = not pass);\nbest t: the threshold that maximises accuracy "
          "on that file, acc@t its accuracy; ms/ans: time per answer, reading and embedding included "
          "(embeddings are shared across oracles, so the first oracle of a file pays for most of them)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
