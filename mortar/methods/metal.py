"""METAL, the single-turn baseline of the paper: its four most effective perturbations, one round at a time.

For round j of a seed, the test case is the seed's rounds 1…j with question j perturbed; the SUT
answers the earlier rounds as in the seed (shared with RBT by the prefix tree) and then the
perturbed question. Its relation: the answer must stay similar (ε) to the reference answer; a
question whose gold answer is "unknown" expects "Unknown". A perturbed question that fails the mutation
gate (``mortar.mutation_gate``: part of speech, word sense and the word read in context, protected words, the
story sentences it points to, the local LM's likelihood, embedding cosine ≥ 0.8) changed its meaning and is
reverted (no test case). With the gate on, SYN draws synonyms from the word's sense in context and ADD adds an
emphasis adverb; with ``--metal-gate off`` the perturbations and the filter are the paper's (EDA-style synonyms
and insertions, cosine only).
Every round keeps its seed context, so no context check applies: its rounds carry no EC verdict.
"""

from __future__ import annotations

import logging
import random
from dataclasses import asdict, dataclass

from mortar.dataset import Seed, TestCase
from mortar.methods import Made, Making, Table, TestMethod, register_method
from mortar.mutation_gate import (GATE_CHOICES, GATE_OFF, GATE_ON, NEUTRAL_WORDS, Gate, Mutation, emphasis_gap,
                                  make_gate, swap_options)
from mortar.perturb import case_rng
from mortar.relations import DIRECTION, Relation, matches_reference, register_relation
from mortar.settings import setting
from mortar.vocab import (ADD, LEET, METAL, METAL_METHOD, METAL_RATE, METAL_REVERT_BELOW, QUESTION_PERTURBATIONS,
                          SYN, TYPO)
from mortar.wordnet import synonyms

log = logging.getLogger(__name__)
LEET_DIGITS = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7", "l": "1", "g": "9", "b": "8"}
CONTENT = ("NOUN", "VERB", "ADJ", "ADV")


@dataclass(frozen=True)
class Word:
    """A token of the question as spaCy saw it: text, part of speech, lemma, trailing space."""

    text: str
    pos: str
    lemma: str
    space: str


@dataclass(frozen=True)
class MetalSettings:
    rate: float = setting(METAL_RATE, f"share of a question's eligible words (characters for leet) METAL's "
                          f"perturbations change (default {METAL_RATE})", label="METAL rate", flag="--metal-rate",
                          between=(0.0, 1.0), open_interval=True)
    perturbations: tuple[str, ...] = setting(
        QUESTION_PERTURBATIONS, "METAL's perturbations: SYN synonyms, ADD an added word, TYPO typos, LEET leet "
        f"(default: all of {' '.join(QUESTION_PERTURBATIONS)})", label="METAL perturbation",
        flag="--metal-perturbations", choices=QUESTION_PERTURBATIONS, nonempty=True)
    gate: str = setting(GATE_ON, "the mutation gate: on (part of speech, word sense, word in context, "
                        "protected words, story sentences, LM likelihood and cosine) or off (the paper's cosine-only "
                        "filter) (default on)",
                        label="METAL mutation gate", flag="--metal-gate", choices=GATE_CHOICES)


def _join(words: list[Word]) -> str:
    return "".join(w.text + w.space for w in words).strip()


def _count(n: int, rate: float) -> int:
    return max(1, round(rate * n)) if n else 0


def _pick(eligible: list[int], k: int, rng: random.Random, ranking: list[int] | None) -> list[int]:
    """k of the eligible word indices: at random, or the most sensitive first when a ranking is given."""
    if ranking is None:
        return rng.sample(eligible, k)
    return [i for i in ranking if i in eligible][:k]


def synonym_replacement(words: list[Word], rng: random.Random, rate: float, ranking: list[int] | None = None) -> str:
    """Replace some content words by a WordNet synonym."""
    eligible = [i for i, w in enumerate(words) if w.pos in CONTENT and synonyms(w.lemma, w.pos)]
    out = list(words)
    for i in _pick(eligible, _count(len(eligible), rate), rng, ranking):
        out[i] = Word(rng.choice(synonyms(words[i].lemma, words[i].pos)), words[i].pos, "", words[i].space)
    return _join(out)


def synonym_in_context(words: list[Word], rng: random.Random, rate: float, ranking: list[int] | None = None,
                       options=None) -> str:
    """SYN with the gate on: some words replaced by a synonym of their sense in context (``options``: word index →
    the forms that may replace it, ``mortar.mutation_gate.swap_options``)."""
    eligible = [i for i in range(len(words)) if options(i)]
    out = list(words)
    for i in _pick(eligible, _count(len(eligible), rate), rng, ranking):
        out[i] = Word(rng.choice(options(i)), words[i].pos, "", words[i].space)
    return _join(out)


def add_emphasis(words: list[Word], rng: random.Random, gap: int | None) -> str:
    """ADD with the gate on: one emphasis adverb ("actually", "really"), which narrows nothing, before the word at
    ``gap``, the question's main verb (``mortar.mutation_gate.emphasis_gap``; None: the question is left as is)."""
    if gap is None:
        return _join(words)
    return _join(words[:gap] + [Word(rng.choice(NEUTRAL_WORDS), "ADV", "", " ")] + words[gap:])


def add_random_word(words: list[Word], rng: random.Random, rate: float, ranking: list[int] | None = None) -> str:
    """Insert synonyms of random content words at random places (EDA's random insertion); with a ranking, a
    synonym of each of the most sensitive content words goes right before it."""
    content = [w for w in words if w.pos in CONTENT]
    out = list(words)
    if ranking is not None and content:
        targets = [i for i in ranking if words[i].pos in CONTENT][:_count(len(content), rate)]
        for i in sorted(targets, reverse=True):
            pool = synonyms(words[i].lemma, words[i].pos) or (words[i].text,)
            out.insert(i, Word(rng.choice(pool), "X", "", " "))
        return _join(out)
    for _ in range(_count(len(content), rate)):
        source = rng.choice(content) if content else rng.choice(words)
        pool = synonyms(source.lemma, source.pos) or (source.text,)
        out.insert(rng.randint(0, max(0, len(out) - 1)), Word(rng.choice(pool), "X", "", " "))
    return _join(out)


def introduce_typos(words: list[Word], rng: random.Random, rate: float, ranking: list[int] | None = None) -> str:
    """Swap, drop or double a letter inside some words."""
    eligible = [i for i, w in enumerate(words) if w.text.isalpha() and len(w.text) >= 3]
    out = list(words)
    for i in _pick(eligible, _count(len(eligible), rate), rng, ranking):
        t = words[i].text
        k = rng.randrange(1, len(t) - 1)
        edit = rng.choice(("swap", "drop", "double"))
        t = t[:k] + t[k + 1] + t[k] + t[k + 2:] if edit == "swap" else t[:k] + t[k + 1:] if edit == "drop" else t[:k] + t[k] + t[k:]
        out[i] = Word(t, words[i].pos, words[i].lemma, words[i].space)
    return _join(out)


def convert_to_leet(words: list[Word], rng: random.Random, rate: float, ranking: list[int] | None = None) -> str:
    """Write some letters as look-alike digits (with a ranking, those of the most sensitive words first)."""
    text = _join(words)
    positions = [i for i, ch in enumerate(text) if ch.lower() in LEET_DIGITS]
    k = _count(len(positions), rate)
    if ranking is None:
        chosen = rng.sample(positions, k)
    else:
        spans = word_spans(words)
        first = {i: r for r, i in enumerate(ranking)}
        word_at = {c: w for w, (a, b) in enumerate(spans) for c in range(a, b)}
        chosen = sorted(positions, key=lambda c: first.get(word_at.get(c), len(ranking)))[:k]
    chars = list(text)
    for i in chosen:
        chars[i] = LEET_DIGITS[chars[i].lower()]
    return "".join(chars)


def word_spans(words: list[Word]) -> list[tuple[int, int]]:
    """Each word's (start, end) characters in the question."""
    spans, at = [], 0
    for w in words:
        spans.append((at, at + len(w.text)))
        at += len(w.text) + len(w.space)
    return spans


PERTURB = {SYN: synonym_replacement, ADD: add_random_word, TYPO: introduce_typos, LEET: convert_to_leet}
GATED = {SYN: synonym_in_context, ADD: add_emphasis}  # the proposals with the gate on


def parse_questions(seeds: list[Seed], nlp, docs: dict | None = None) -> dict[tuple[str, int], list[Word]]:
    """Each question's words; ``docs`` (when given) receives each question's spaCy parse."""
    parsed = nlp.pipe([r.question for s in seeds for r in s.rounds], batch_size=64)
    keys = [(s.id, r.turn_id) for s in seeds for r in s.rounds]
    out = {}
    for k, doc in zip(keys, parsed):
        out[k] = [Word(t.text, t.pos_, t.lemma_, t.whitespace_) for t in doc if not t.is_space]
        if docs is not None:
            docs[k] = doc
    return out


def perturb(name: str, words: list[Word], rng: random.Random, rate: float, ranking, gated: bool, doc=None,
            story: str = "") -> str:
    """One perturbation of a question: the paper's, or with the gate on the gated proposal (SYN, ADD)."""
    if not gated or name not in GATED:
        return PERTURB[name](words, rng, rate, ranking)
    spaced = [i for i, t in enumerate(doc) if not t.is_space]  # Word index → token index
    if name == SYN:
        return synonym_in_context(words, rng, rate, ranking, options=lambda i: swap_options(doc, spaced[i], story))
    gap = emphasis_gap(doc)
    return add_emphasis(words, rng, None if gap is None else spaced.index(gap))


def metal_test_cases(seeds: list[Seed], run_seed: int, settings: MetalSettings, nlp, oracle, sensitivities=None,
                     gate: Gate | None = None) -> tuple[list[TestCase], int]:
    """One test case per (seed round, perturbation) that the mutation gate keeps; and how many were reverted.

    ``sensitivities``: (seed_id, turn_id) → the SUT's sensitivity to the question's words: the perturbations
    change the most sensitive words instead of random ones (targeted generation). ``gate``: default, the gate of
    ``settings.gate`` (its counts say which constraint rejected what)."""
    gate = gate or make_gate(nlp, oracle.embeddings, METAL_REVERT_BELOW, settings.gate)
    gated = settings.gate != GATE_OFF
    docs: dict = {}
    parsed = parse_questions(seeds, nlp, docs)
    proposals = []
    for seed in seeds:
        order = tuple(r.turn_id for r in seed.rounds)
        for j, r in enumerate(seed.rounds):
            for name in settings.perturbations:
                rng = case_rng(run_seed, seed.id, f"{METAL}-{name}", r.turn_id)
                words = parsed[(seed.id, r.turn_id)]
                ranking = None if sensitivities is None else \
                    sensitivities[(seed.id, r.turn_id)].rank_spans(word_spans(words))
                new = perturb(name, words, rng, settings.rate, ranking, gated, docs[(seed.id, r.turn_id)], seed.story)
                proposals.append((seed.id, name, r.turn_id, order[:j + 1], r.question, new, seed.story))
    oracle.prepare([p[4] for p in proposals] + [p[5] for p in proposals])
    reasons = gate.reasons([Mutation(name, original, new, story) for _, name, _, _, original, new, story in proposals])
    cases, reverted = [], 0
    for (seed_id, name, turn, prefix, original, new, _), why in zip(proposals, reasons):
        if why is not None:
            reverted += 1
            continue
        cases.append(TestCase(seed_id, name, 1, prefix, replaced=((len(prefix), new),), target_round=turn))
    return cases, reverted


def make_cases(making: Making) -> Made:
    from mortar.nlp import load_nlp  # spaCy: loaded only when METAL runs

    settings = making.settings
    nlp = load_nlp().nlp
    gate = make_gate(nlp, making.oracle.embeddings, METAL_REVERT_BELOW, settings.gate)
    cases, reverted = metal_test_cases(making.seeds, making.run_seed, settings, nlp, making.oracle,
                                       making.sensitivities(), gate)
    filter_ = "the mutation gate" if settings.gate != GATE_OFF else f"cosine < {METAL_REVERT_BELOW}"
    notes = (f"METAL: {len(cases)} test cases, {reverted} perturbed questions reverted ({filter_})",
             f"METAL mutation gate: {gate.summary()}")
    for note in notes:
        log.info(note)
    return Made(cases, notes=notes, record={"mutation_gate": gate.rows()})


def tables(checks, cases, verdicts, unknown, record: dict | None = None) -> list[Table]:
    """The mutation gate's table, from the run's stored record (``Made.record``) when the report passes it."""
    rows = (record or {}).get("mutation_gate")
    return [gate_table("metal_mutation_gate", METAL, rows)] if rows else []


def gate_table(key: str, label: str, rows: list[dict]) -> Table:
    return Table(key, f"{label}: mutations proposed, kept and rejected per constraint",
                 "Per operator: the mutated questions proposed (changed or not), how many the mutation gate kept, and "
                 "how many each constraint rejected first (mortar.mutation_gate).", rows)


def run_key(settings: MetalSettings, chosen: bool) -> dict:
    """The settings; the gate only when it is off (runs before the gate keep their ids)."""
    data = {k: v for k, v in asdict(settings).items() if not (k == "gate" and v == GATE_ON)}
    return {"metal": data} if chosen and data else {}


register_relation(Relation(
    METAL, METAL, DIRECTION, "METAL, the single-turn baseline: one question perturbed (synonym, added word, typos, "
    "leet); the answer should stay similar to the reference.", matches_reference(METAL)))

register_method(TestMethod(
    name=METAL_METHOD, label=METAL, perturbations=QUESTION_PERTURBATIONS, relations=(METAL,),
    text="METAL, the single-turn baseline: one question at a time perturbed by synonyms, an added word, typos or "
         "leet, reverted when its meaning drifts (embedding cosine < 0.8).",
    make_cases=make_cases, tables=tables, settings=MetalSettings, config_key="metal", run_key=run_key))
