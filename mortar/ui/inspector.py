"""The Inspector's reads and views: what it shows of a detection, read once per run stamp (``store.run_stamps``)
and kept in Streamlit's data cache for every browser session; the knowledge-graph figures of a round, laid out
once; a test case's rounds and their EC verdicts as tables and aligned paragraphs."""

from __future__ import annotations

import difflib

import pandas as pd
import streamlit as st

from mortar import store
from mortar.alignment import align
from mortar.ui.access import read
from mortar.ui.kg_figure import kg_figures
from mortar.ui.text import md_escape

# The cached reads take the store's file (``db``) and the run's stamp as arguments: another store, or a run whose
# results or labels changed, is read afresh.


@st.cache_data(max_entries=64, show_spinner=False)
def detection_choices(db: str, run_id: str, stamp: str) -> tuple[list[str], int]:
    """The first 1,000 detection ids of the run (the picker's choices) and how many it has."""
    return read(store.run_detection_ids, run_id, 1000)


@st.cache_data(max_entries=64, show_spinner=False)
def group_view(db: str, run_id: str, seed_id: str, source_round: int, stamp: str) -> dict:
    """A bug group: its detections (``members``), the seed question and every version of it."""
    def fetch(con):
        return dict(members=store.group_detections(con, run_id, seed_id, source_round),
                    question=store.seed_question(con, run_id, seed_id, source_round),
                    versions=store.question_versions(con, run_id, seed_id, source_round))
    return read(fetch)


@st.cache_data(max_entries=64, show_spinner=False)
def detection_view(db: str, run_id: str, detection_id: str, stamp: str) -> dict | None:
    """What the Inspector shows of one detection, whichever version or round is picked, in one visit to the
    store; None when the run has no such detection."""
    return read(_detection_view, run_id, detection_id)


def _detection_view(con, run_id: str, detection_id: str) -> dict | None:
    det = store.detection(con, run_id, detection_id)
    if det is None:
        return None
    seed_id, source_round = det["seed_id"], det["source_round"]
    orig_id = store.original_case_id(con, run_id, seed_id)
    original = store.case_rounds(con, run_id, orig_id) if orig_id else pd.DataFrame()
    graph, why = store.seed_graph(con, run_id, seed_id)
    return dict(
        det=det, question=store.seed_question(con, run_id, seed_id, source_round), orig_id=orig_id,
        original=original, graph=graph, no_graph=why,
        versions=store.versions(con, run_id, det) if len(det["test_case_ids"]) > 1 else None,
        orig_repeats=store.read_orig_samples(con, run_id, orig_id) if det.get("unstable") and orig_id else {},
        confirmations=store.read_confirmations(con, run_id) if det.get("flaky") else {},
        sensitivity=store.round_sensitivity(con, run_id, seed_id, source_round),
        story=store.story(con, run_id, seed_id), persona=store.is_persona_seed(con, run_id, seed_id))


@st.cache_data(max_entries=64, show_spinner=False)
def case_view(db: str, run_id: str, test_case_id: str, stamp: str) -> tuple[pd.DataFrame, dict | None]:
    """A test case's rounds (``store.case_rounds``) and its kind and grounding (``store.test_case``)."""
    def fetch(con):
        return store.case_rounds(con, run_id, test_case_id), store.test_case(con, run_id, test_case_id)
    return read(fetch)


# A resource cache: the figures are shared as they are, not unpickled on every rerun (which validates them again);
# nothing changes them after they are drawn (st.plotly_chart copies a figure before it sends it).
@st.cache_resource(max_entries=64, show_spinner=False)
def round_figures(db: str, run_id: str, seed_id: str, stamp: str, _graph, turn_id: int, original: tuple[str, ...],
                  perturbed: tuple[str, ...], whole: bool, width: int):
    """:func:`mortar.ui.kg_figure.kg_figures` of a round; ``_graph`` (not hashed) is the seed's graph that db, run,
    seed and stamp name."""
    return kg_figures(_graph, turn_id, set(original), set(perturbed), whole=whole, width=width)


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
    seed_questions = dict(zip(original["source_round"], original["question"]))
    paragraphs = []
    for a in align(list(original["source_round"]), list(perturbed["source_round"])):
        question = md_escape(seed_questions[a.source_round])
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
