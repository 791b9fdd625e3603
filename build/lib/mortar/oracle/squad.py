"""SQuAD-style exact match and F1, and MSS = (SS² + EM² + F1²) / (SS + EM + F1) (MORTAR journal version)."""

from __future__ import annotations

import re
import string
from collections import Counter


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(prediction: str, reference: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(reference))


def f1_score(prediction: str, reference: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(reference).split()
    if not pred or not ref:
        return float(pred == ref)
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(ref)
    return 2 * precision * recall / (precision + recall)


def mss(ss: float, em: float, f1: float) -> float:
    """(SS² + EM² + F1²) / (SS + EM + F1): dominated by the strongest signal, 0 when all are 0."""
    ss = max(ss, 0.0)
    total = ss + em + f1
    return 0.0 if total == 0 else (ss * ss + em * em + f1 * f1) / total
