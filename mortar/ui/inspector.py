"""The Inspector's views of a test case's rounds and their EC verdicts."""

from __future__ import annotations

import difflib

import pandas as pd

from mortar.ui.text import md_escape



def ec_summary(row) -> str:
    """One line saying what the EC verdict of a round was and why."""
    if row.get("ec_equivalent") is None or pd.isna(row.get("ec_equivalent")):
        return "no EC verdict stored"
    passed = [name for name in ("semantic", "ontology", "story") if bool(row.get(f"ec_{name}"))]
    if row["ec_equivalent"]:
        return "equivalent context — " + ("passed: " + ", ".join(passed) if passed else "original order")
    missing = row.get("ec_missing") or []
    why = "no check passed"
    if missing:
        why += "; the context lacks " + ", ".join(missing)
    if row.get("ec_follows_ok") is False:
        why += "; the elliptical question no longer follows the round it continues"
    return "context not equivalent — " + why


def verdict_table(rounds: pd.DataFrame) -> pd.DataFrame:
    """Rounds as a table with readable EC columns."""
    def tick(v):
        return "" if v is None or pd.isna(v) else ("✓" if v else "✗")

    return pd.DataFrame({
        "pos": rounds["position"], "round": rounds["source_round"], "question": rounds["question"],
        "SUT answer": rounds["sut_answer"].fillna(rounds["error"].map(lambda e: f"(no answer: {e})" if e else "")),
        "reference": rounds["reference"], "similarity": rounds["similarity"],
        "EC": rounds["ec_equivalent"].map(tick), "semantic": rounds["ec_semantic"].map(tick),
        "ontology": rounds["ec_ontology"].map(tick), "story": rounds["ec_story"].map(tick),
        "needed (Ḡ_j)": rounds["ec_needed"].map(", ".join), "missing": rounds["ec_missing"].map(", ".join),
    })


def word_diff(a: str, b: str) -> tuple[str, str]:
    """Two texts as escaped markdown with the words that differ between them highlighted (removed / added)."""
    wa, wb = a.split(), b.split()
    left, right = [], []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes():
        old, new = md_escape(" ".join(wa[i1:i2])), md_escape(" ".join(wb[j1:j2]))
        if op == "equal":
            left.append(old)
            right.append(new)
            continue
        if old:
            left.append(f":red-background[{old}]")
        if new:
            right.append(f":green-background[{new}]")
    return " ".join(left), " ".join(right)
