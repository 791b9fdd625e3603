"""Score candidate answers with an oracle, and calibrate the oracle on labelled answers.

A *pairs file* is JSON Lines, one candidate answer per line: ``question``, ``gold`` (the reference
answer) and ``candidate`` (the answer to judge), optionally the ``story`` the question is about (the
``answer`` oracle reads it: a description that the story links to the gold is the gold); any other field is kept. ``score_answers`` adds
``score`` (in [0, 1]), ``pass`` (score ≥ threshold) and ``reason`` to each line. When every line
also carries a boolean ``acceptable`` (a person's verdict), the summary says how well the oracle
agrees with people — accuracy, and the precision and recall of its bug flags (bug = not pass, the
way RBT and MR1 count a violation) — and which threshold would have maximised accuracy on these
answers. That is how a user calibrates ε for an oracle on their own labelled answers.

Dashboard labels (one row per labelled detection: question, reference, output and the 0–10 score,
≥ 6 meaning the output is acceptable) become such a file with ``labels_to_pairs``.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

from mortar.vocab import TRUE_POSITIVE_BELOW
from mortar.oracle import ORACLES, Oracle, default_threshold
from mortar.oracle.agreement import AGREE, DIFFER, NO_ANSWER

ACCEPTABLE_FROM = TRUE_POSITIVE_BELOW  # a label score of 6 or more (of 10): the output is acceptable (paper)
REQUIRED = ("question", "gold", "candidate")
AGREEMENT_FIELDS = ("question", "answer_a", "answer_b")  # a two-answer file; ``agree`` (and ``no_answer``: neither
# answers the question) is the person's verdict


class PairsError(ValueError):
    """A pairs file that cannot be scored, with the line that is wrong."""


def read_pairs(path: str | Path, required: tuple[str, ...] = REQUIRED) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise PairsError(f"{path}:{n}: not JSON ({e.msg})") from None
            if not isinstance(row, dict):
                raise PairsError(f"{path}:{n}: expected a JSON object")
            missing = [k for k in required if not isinstance(row.get(k), str)]
            if missing:
                raise PairsError(f"{path}:{n}: missing text field(s) {', '.join(missing)}")
            for label in ("acceptable", "agree", "no_answer"):
                if label in row and not isinstance(row[label], bool):
                    raise PairsError(f"{path}:{n}: '{label}' must be true or false")
            if row.get("story") is not None and not isinstance(row["story"], str):
                raise PairsError(f"{path}:{n}: 'story' must be text")
            rows.append(row)
    return rows


def write_pairs(rows: list[dict], path: str | Path) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def score_rows(rows: list[dict], oracle: Oracle, threshold: float) -> list[dict]:
    """Each row with ``score``, ``pass`` and ``reason`` added (judged in one batch)."""
    verdicts = oracle.judge_many([(r["question"], r["gold"], r["candidate"]) + ((r["story"],) if r.get("story") else ())
                                  for r in rows], threshold)
    return [{**r, "score": round(v.score, 4), "pass": v.passed, "reason": v.reason} for r, v in zip(rows, verdicts)]


def score_agreement(rows: list[dict], oracle: Oracle, threshold: float) -> list[dict]:
    """Two-answer rows with ``score``, ``outcome`` (agree, differ, or no answer: neither answers the question),
    ``same`` (they agree) and ``reason`` added, compared in one batch (``oracle.compare_many`` where it has one)."""
    items = [(r["question"], r["answer_a"], r["answer_b"], r.get("story")) for r in rows]
    if hasattr(oracle, "compare_many"):
        compared = oracle.compare_many(items)
    else:
        oracle.prepare([t for r in rows for t in (r["answer_a"], r["answer_b"])], [r["question"] for r in rows])
        compared = [oracle.compare(*item) for item in items]
    return [{**r, "score": round(c.score, 4), "outcome": c.outcome(threshold), "same": c.outcome(threshold) == AGREE,
             "reason": c.reason} for r, c in zip(rows, compared)]


def labelled_outcome(row: dict) -> str:
    """A person's verdict on a two-answer row: ``no_answer: true`` (neither answers), else ``agree`` true/false."""
    return NO_ANSWER if row.get("no_answer") else AGREE if row["agree"] else DIFFER


def agreement_summary(scored: list[dict]) -> dict:
    """On labelled two-answer rows: accuracy over the three outcomes; the precision and recall of "they differ"
    (what MR3, DT-INV and P1–P3 report as a violation); how many of the labelled no-answer pairs were found, and
    how many found were right; accuracy per kind."""
    said = [r["outcome"] for r in scored]
    truth = [labelled_outcome(r) for r in scored]

    def share(hits: int, out_of: int) -> float:
        return hits / out_of if out_of else math.nan

    both = list(zip(said, truth))
    kinds = defaultdict(list)
    for r, (s, t) in zip(scored, both):
        kinds[str(r.get("kind", ""))].append(s == t)
    return {"n": len(scored), "accuracy": share(sum(s == t for s, t in both), len(both)),
            "precision": share(sum(s == t == DIFFER for s, t in both), said.count(DIFFER)),
            "recall": share(sum(s == t == DIFFER for s, t in both), truth.count(DIFFER)),
            "differ": said.count(DIFFER), "false_differ": sum(s == DIFFER != t for s, t in both),
            "no_answer_recall": share(sum(s == t == NO_ANSWER for s, t in both), truth.count(NO_ANSWER)),
            "no_answer_precision": share(sum(s == t == NO_ANSWER for s, t in both), said.count(NO_ANSWER)),
            "no_answer_pairs": truth.count(NO_ANSWER),
            "by_kind": {k: sum(v) / len(v) for k, v in kinds.items()},
            "n_by_kind": {k: len(v) for k, v in kinds.items()}}


def score_answers(in_path: str | Path, oracle_name: str = "answer", threshold: float | None = None,
                  out_path: str | Path | None = None, oracle: Oracle | None = None) -> dict:
    """Score a pairs file, write the scored lines to ``out_path``, return the summary.

    ``threshold`` defaults to the oracle's own (``default_threshold(oracle_name)``).
    """
    if oracle_name not in ORACLES:
        raise PairsError(f"unknown oracle {oracle_name!r}; choose from {', '.join(ORACLES)}")
    threshold = default_threshold(oracle_name) if threshold is None else threshold
    rows = read_pairs(in_path)
    scored = score_rows(rows, oracle or Oracle(oracle_name), threshold)
    if out_path is not None:
        write_pairs(scored, out_path)
    return {"input": str(in_path), "output": None if out_path is None else str(out_path),
            **summarize(scored, threshold, oracle_name)}


def summarize(scored: list[dict], threshold: float, oracle_name: str = "") -> dict:
    """Counts, and — when every row is labelled — agreement with the labels and the best threshold."""
    summary: dict = {"oracle": oracle_name, "threshold": threshold, "n": len(scored),
                     "passed": sum(r["pass"] for r in scored), "bugs": sum(not r["pass"] for r in scored),
                     "labelled": bool(scored) and all(isinstance(r.get("acceptable"), bool) for r in scored)}
    if not summary["labelled"]:
        return summary
    summary.update(agreement([r["pass"] for r in scored], [r["acceptable"] for r in scored]))
    best_t, best_acc = best_threshold([r["score"] for r in scored], [r["acceptable"] for r in scored], threshold)
    summary["best_threshold"], summary["best_accuracy"] = best_t, best_acc
    kinds = defaultdict(list)
    for r in scored:
        if "kind" in r:
            kinds[str(r["kind"])].append(r["pass"] == r["acceptable"])
    if kinds:
        summary["accuracy_by_kind"] = {k: sum(v) / len(v) for k, v in kinds.items()}
        summary["n_by_kind"] = {k: len(v) for k, v in kinds.items()}
    return summary


def agreement(passed: list[bool], acceptable: list[bool]) -> dict:
    """Accuracy and the bug flags' precision/recall; a bug flag is right when the answer is unacceptable."""
    tp = sum(not p and not a for p, a in zip(passed, acceptable))  # flagged, and truly wrong
    fp = sum(not p and a for p, a in zip(passed, acceptable))  # flagged, but acceptable: a false bug report
    fn = sum(p and not a for p, a in zip(passed, acceptable))  # passed, but wrong: a missed bug
    n = len(passed)
    return {"accuracy": (n - fp - fn) / n if n else math.nan,
            "bug_precision": tp / (tp + fp) if tp + fp else math.nan,
            "bug_recall": tp / (tp + fn) if tp + fn else math.nan,
            "true_bugs": tp, "false_bugs": fp, "missed_bugs": fn}


def best_threshold(scores: list[float], acceptable: list[bool], prefer: float = 0.5) -> tuple[float, float]:
    """The threshold (pass = score ≥ t) with the highest accuracy; ties go to the one nearest ``prefer``.

    Candidates are ``prefer`` itself, the midpoints between consecutive distinct scores, and one below
    and one above all scores.
    """
    if not scores:
        return prefer, math.nan
    distinct = sorted(set(scores))
    cuts = sorted({distinct[0] - 1e-6, distinct[-1] + 1e-6, prefer, *((a + b) / 2 for a, b in zip(distinct, distinct[1:]))})
    pairs = sorted(zip(scores, acceptable))
    n, best = len(pairs), None
    total_unacceptable = sum(not a for a in acceptable)
    i, unacceptable_below = 0, 0  # sweep: below the cut everything fails, from the cut on everything passes
    for cut in cuts:
        while i < n and pairs[i][0] < cut:
            unacceptable_below += not pairs[i][1]
            i += 1
        # right: the unacceptable answers below the cut, and the acceptable ones above it
        correct = unacceptable_below + (n - i) - (total_unacceptable - unacceptable_below)
        key = (correct, -abs(cut - prefer))
        if best is None or key > best[0]:
            best = (key, cut)
    (correct, _), cut = best
    return round(cut, 4), correct / n


def labels_to_pairs(rows, out_path: str | Path | None = None) -> list[dict]:
    """Dashboard labels → a labelled pairs file.

    ``rows``: dicts (or a DataFrame) with ``question``, ``reference``, ``output`` and ``score`` (0–10).
    Several annotators' scores of the same (question, reference, output) are averaged; the answer is
    acceptable when that mean is ≥ 6. Other fields of the first row (e.g. ``detection_id``) are kept.
    """
    if hasattr(rows, "to_dict"):
        rows = rows.to_dict("records")
    groups: dict[tuple, list[dict]] = {}
    for n, row in enumerate(rows, start=1):
        missing = [k for k in ("question", "reference", "output", "score") if row.get(k) is None]
        if missing:
            raise PairsError(f"label row {n}: missing {', '.join(missing)}")
        groups.setdefault((row["question"], row["reference"], row["output"]), []).append(row)
    pairs = []
    for (question, reference, output), group in groups.items():
        mean = sum(float(r["score"]) for r in group) / len(group)
        extra = {k: v for k, v in group[0].items() if k not in ("question", "reference", "output", "score",
                                                                  "annotator", "note", "labelled_at")}
        pairs.append({**_plain(extra), "question": question, "gold": reference, "candidate": output,
                      "label_score": mean, "annotators": len(group), "acceptable": mean >= ACCEPTABLE_FROM})
    if out_path is not None:
        write_pairs(pairs, out_path)
    return pairs


def _plain(d: dict) -> dict:
    """JSON-safe values (timestamps, numpy scalars from a DataFrame) for the pairs file."""
    out = {}
    for k, v in d.items():
        if hasattr(v, "item"):
            v = v.item()
        try:
            json.dumps(v)
        except TypeError:
            v = str(v)
        out[k] = v
    return out


def format_summary(summary: dict) -> str:
    """A few lines for the terminal."""
    lines = [f"{summary['n']} answers scored with oracle {summary.get('oracle') or '?'} "
             f"(threshold {summary['threshold']:g}): {summary['passed']} pass, {summary['bugs']} flagged as bugs"]
    if summary.get("output"):
        lines.append(f"scored answers written to {summary['output']}")
    if summary.get("labelled"):
        lines.append(f"agreement with the labels: accuracy {summary['accuracy']:.3f}; bug flags: precision "
                     f"{_f(summary['bug_precision'])}, recall {_f(summary['bug_recall'])} "
                     f"({summary['true_bugs']} right, {summary['false_bugs']} false, {summary['missed_bugs']} missed)")
        lines.append(f"best threshold on these answers: {summary['best_threshold']:g} "
                     f"(accuracy {summary['best_accuracy']:.3f})")
        for kind, acc in sorted(summary.get("accuracy_by_kind", {}).items()):
            lines.append(f"  {kind:<14} accuracy {acc:.3f}  (n={summary['n_by_kind'][kind]})")
    elif summary["n"]:
        lines.append("no 'acceptable' labels on every line: no accuracy or calibration")
    return "\n".join(lines)


def _f(x: float) -> str:
    return "n/a" if isinstance(x, float) and math.isnan(x) else f"{x:.3f}"
