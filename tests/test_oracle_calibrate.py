"""score-answers and calibration: scored lines, agreement with labels, best threshold, labels → pairs."""

import json
import math
from pathlib import Path

import pytest

from mortar.calibrate import (PairsError, agreement, best_threshold, format_summary, labels_to_pairs, read_pairs,
                              score_answers)
from mortar.oracle import Verdict

SMALL = Path(__file__).parent / "data" / "answer_pairs_small.jsonl"


class TableOracle:
    """Scores looked up by candidate: calibration arithmetic without any model."""

    def __init__(self, scores):
        self.scores = scores

    def judge_many(self, triples, threshold):
        return [Verdict(self.scores[c], self.scores[c] >= threshold, "table") for _, _, c in triples]


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_summary_counts_precision_recall_and_best_threshold(tmp_path):
    rows = [{"question": "q", "gold": "g", "candidate": c, "acceptable": ok, "kind": k, "seed_id": "s1"}
            for c, ok, k in [("a", True, "wordy"), ("b", True, "wordy"), ("c", True, "paraphrase"),
                             ("d", False, "wrong"), ("e", False, "wrong"), ("f", False, "wrong")]]
    scores = {"a": 0.9, "b": 0.55, "c": 0.45, "d": 0.5, "e": 0.2, "f": 0.1}
    out = tmp_path / "scored.jsonl"
    summary = score_answers(write(tmp_path / "pairs.jsonl", rows), "cosine", 0.6, out, oracle=TableOracle(scores))
    # at 0.6 only 'a' passes: bugs b c d e f, of which d e f are true → precision 3/5, recall 3/3
    assert summary["n"] == 6 and summary["passed"] == 1 and summary["bugs"] == 5
    assert summary["accuracy"] == pytest.approx(4 / 6)
    assert summary["bug_precision"] == pytest.approx(3 / 5) and summary["bug_recall"] == 1.0
    assert (summary["true_bugs"], summary["false_bugs"], summary["missed_bugs"]) == (3, 2, 0)
    # the best cut keeps a and b, fails d e f and c: between 0.5 and 0.55 → 5 of 6
    assert 0.5 < summary["best_threshold"] <= 0.55 and summary["best_accuracy"] == pytest.approx(5 / 6)
    assert summary["accuracy_by_kind"]["wordy"] == 0.5 and summary["n_by_kind"]["wrong"] == 3
    scored = read_pairs(out)
    assert [r["pass"] for r in scored] == [True, False, False, False, False, False]
    assert all(r["seed_id"] == "s1" and r["reason"] == "table" and "score" in r for r in scored)
    text = format_summary(summary)
    assert "precision 0.600" in text and "recall 1.000" in text and "best threshold" in text


def test_unlabelled_file_is_scored_without_calibration(tmp_path):
    rows = [{"question": "q", "gold": "g", "candidate": "a"}, {"question": "q", "gold": "g", "candidate": "e"}]
    summary = score_answers(write(tmp_path / "p.jsonl", rows), "cosine", 0.6, None,
                            oracle=TableOracle({"a": 0.9, "e": 0.2}))
    assert not summary["labelled"] and "accuracy" not in summary and summary["bugs"] == 1
    assert "no 'acceptable' labels" in format_summary(summary)


def test_best_threshold_and_agreement_edges():
    assert best_threshold([0.2, 0.8], [False, True], prefer=0.5) == (0.5, 1.0)
    t, acc = best_threshold([0.3, 0.3, 0.9], [True, False, True], prefer=0.6)
    assert acc == pytest.approx(2 / 3)
    stats = agreement([True, True], [True, True])
    assert stats["accuracy"] == 1.0 and math.isnan(stats["bug_precision"]) and math.isnan(stats["bug_recall"])


def test_bad_pairs_files_say_which_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "gold": "g", "candidate": "c"}\n{"question": "q", "gold": "g"}\n')
    with pytest.raises(PairsError, match="bad.jsonl:2: missing text field"):
        read_pairs(bad)
    bad.write_text('{"question": "q", "gold": "g", "candidate": "c", "acceptable": "yes"}\n')
    with pytest.raises(PairsError, match="acceptable"):
        read_pairs(bad)
    with pytest.raises(PairsError, match="unknown oracle"):
        score_answers(SMALL, "gpt-judge", None, None)


def test_dashboard_labels_become_pairs(tmp_path):
    labels = [
        {"detection_id": "RBT/t1/1", "question": "Q1?", "reference": "yes", "output": "Yes, they did.", "score": 9,
         "annotator": "ann"},
        {"detection_id": "RBT/t1/1", "question": "Q1?", "reference": "yes", "output": "Yes, they did.", "score": 5,
         "annotator": "bob"},
        {"detection_id": "MR1/t2/3", "question": "Q2?", "reference": "red", "output": "blue", "score": 1,
         "annotator": "ann"},
    ]
    out = tmp_path / "labelled.jsonl"
    pairs = labels_to_pairs(labels, out)
    assert len(pairs) == 2 and read_pairs(out) == pairs
    first, second = pairs
    assert first["acceptable"] and first["label_score"] == 7 and first["annotators"] == 2  # mean 7 ≥ 6
    assert first["gold"] == "yes" and first["candidate"] == "Yes, they did." and first["detection_id"] == "RBT/t1/1"
    assert not second["acceptable"] and "annotator" not in second
    with pytest.raises(PairsError, match="missing score"):
        labels_to_pairs([{"question": "q", "reference": "r", "output": "o"}])


def test_score_answers_with_the_answer_oracle(tmp_path):
    out = tmp_path / "scored.jsonl"
    summary = score_answers(SMALL, "answer", None, out)
    assert summary["threshold"] == 0.5 and summary["labelled"] and summary["n"] == 8
    assert summary["accuracy"] == 1.0 and summary["bug_precision"] == 1.0 and summary["bug_recall"] == 1.0
    scored = read_pairs(out)
    assert all(0 <= r["score"] <= 1 and isinstance(r["pass"], bool) and r["reason"] for r in scored)
    assert {r["id"] for r in scored} == {f"s{k}" for k in range(1, 9)}
