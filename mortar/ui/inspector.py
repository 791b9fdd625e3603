"""The Inspector's views of a test case's rounds and their EC verdicts."""

from __future__ import annotations

import difflib

import pandas as pd

from mortar.alignment import align
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


def line_diff(a: str, b: str) -> tuple[str, str]:
    """Two texts of one sentence a line (personas) as markdown, line for line, with the words that differ
    highlighted: line by line where both have as many lines (a revised or noisy persona), else as wholes (the
    partner's persona instead of the speaker's)."""
    la, lb = a.splitlines(), b.splitlines()
    pairs = [word_diff(x, y) for x, y in zip(la, lb)] if len(la) == len(lb) else \
        [word_diff(" ".join(la), " ".join(lb))]
    return "  \n".join(p[0] for p in pairs), "  \n".join(p[1] for p in pairs)


def answer_text(value) -> str:
    """A stored SUT answer as shown; a round that errored has none."""
    return "(no answer)" if value is None or pd.isna(value) else str(value)


def aligned_rounds(original: pd.DataFrame, perturbed: pd.DataFrame, needed: dict[int, frozenset[str]],
                   source_round: int, position: int | None) -> list[str]:
    """The perturbed dialogue against the seed, one markdown paragraph per seed round in the seed's order: where
    it went (``round 3 → 1``, moved, dropped and struck through, asked twice), its question, and its answer here
    against its ORIG answer as a word diff. The detection's round and the rounds its question needs are marked.

    ``original`` and ``perturbed`` are :func:`mortar.store.case_rounds` frames; ``needed`` is
    :func:`mortar.alignment.needed_rounds`.
    """
    positions = list(perturbed["position"])  # stored positions, by their order in the dialogue
    answers = dict(zip(perturbed["position"], perturbed["sut_answer"]))
    seed_answers = dict(zip(original["source_round"], original["sut_answer"]))
    paragraphs = []
    for a in align(list(original["source_round"]), list(perturbed["source_round"])):
        question = md_escape(original.loc[original["source_round"] == a.source_round, "question"].iloc[0])
        at = [positions[p - 1] for p in a.positions]
        head = (f"~~**round {a.seed_position}**~~" if a.dropped
                else f"**round {a.seed_position} → {', '.join(map(str, at))}**")
        badges = []
        if a.moved:
            badges.append(":orange-badge[moved]")
        if a.dropped:
            badges.append(":gray-badge[dropped]")
            question = f"~~{question}~~"
        if a.duplicated:
            copies = [positions[p - 1] for p in a.copies]
            badges.append(f":violet-badge[asked {len(at)} times"
                          + (f" · copy at {', '.join(map(str, copies))}" if a.in_order else "") + "]")
        if a.source_round == source_round:
            badges.append(":red-badge[the detection" + (f" at {position}" if a.duplicated and position else "") + "]")
            question = f"**{question}**"
        if a.source_round in needed:
            gives = needed[a.source_round]
            badges.append(":blue-badge[needed: " + (md_escape(", ".join(sorted(gives))) if gives
                                                     else "the question continues it") + "]")
            question = f":blue-background[{question}]"
        before = answer_text(seed_answers.get(a.source_round))
        lines = [" ".join([head, *badges]), question]
        if a.dropped:
            lines.append(f"ORIG answer: {md_escape(before)}")
        for p in at:
            after = answer_text(answers.get(p))
            if after == before:
                lines.append(f"answer at {p}: {md_escape(after)} (as in ORIG)")
            else:
                old, new = word_diff(before, after)
                lines.append(f"answer at {p}: {new} · ORIG: {old}")
        paragraphs.append("  \n".join(lines))
    return paragraphs
