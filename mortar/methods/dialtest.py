"""DialTest as a test method: one question of a dialogue transformed by a meaning-preserving operator
(SR synonym replacement, BT back translation, WI word insertion), the earlier rounds as in the seed.

Relations (DialTest's metamorphic relation: the transformed sentence keeps its label): the answer to the
transformed question should still match the reference (DT-REF, a direction, like METAL) and agree with
the SUT's own answer to the seed question (DT-INV, an invariance, like MR3). A transformed question whose
embedding cosine to the original falls below 0.8 changed its meaning and is reverted; so is one that fails the
mutation gate (``mortar.mutation_gate``: part of speech, word sense and the word read in context, protected
words, the story sentences it points to, the local LM's likelihood). ``--dialtest-gate off`` keeps the paper's
operators and its cosine-only filter.

Generation: unguided, each operator once per question. With a Gini budget, DialTest's Algorithm 1 runs per
question (``mortar.guide.gini``) and, at the same budget, its random baseline, so the report compares bugs
per SUT call of the two.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass

from mortar.dataset import Seed, TestCase
from mortar.execute import execute
from mortar.guide.gini import GiniUnavailable, score_cases, search
from mortar.methods import Made, Making, Table, TestMethod, register_method
from mortar.methods.metal import gate_table
from mortar.mutation_gate import GATE_CHOICES, GATE_OFF, GATE_ON, Gate, Mutation, make_gate
from mortar.methods.dialtest_nlu import (accuracy_rows, intent_references, intent_unchanged, is_nlu, keeps_slot_words,
                                         slot_references, slots_unchanged)
from mortar.methods.dialtest_operators import BackTranslator, WordInserter, synonym_replacement
from mortar.perturb import case_rng, original_case
from mortar.relations import DIRECTION, INVARIANCE, Relation, matches_reference, register_relation, same_as_orig
from mortar.settings import setting
from mortar.sut.base import LOGPROBS
from mortar.vocab import (BT, DIALTEST, DIALTEST_KEEP_ABOVE, DIALTEST_METHOD, DIALTEST_OPERATORS, DIALTEST_RELATIONS,
                          DT_INTENT, DT_INV, DT_REF, DT_SLOTS, GINI, INTENT, SLOTS, GINI_TAU, GUIDES, OPERATOR_TEXT, ORIG, RANDOM, SR, WI)
from mortar import metrics
from mortar.chat import ChatConfig, ChatConfigError, ChatError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DialTestSettings:
    operators: tuple[str, ...] = setting(
        DIALTEST_OPERATORS, "; ".join(f"{k}: {v}" for k, v in OPERATOR_TEXT.items())
        + f" (a comma list, default {','.join(DIALTEST_OPERATORS)}; without a chat endpoint BT is reported "
          "unavailable and the others run)", label="DialTest operator", flag="--dialtest-operators",
        choices=DIALTEST_OPERATORS, nonempty=True, sep=",")
    keep_above: float = setting(DIALTEST_KEEP_ABOVE, "the meaning filter: a transformed question is reverted below "
                                f"this embedding cosine to the original (default {DIALTEST_KEEP_ABOVE})",
                                label="DialTest meaning filter", flag="--dialtest-keep-above", between=(0.0, 1.0))
    gini_budget: int = setting(0, "SUT calls per question for DialTest's Gini-guided search (Algorithm 1), compared "
                               "with random transformation at the same budget (default 0: each operator once, "
                               "unguided)", label="Gini budget", flag="--gini-budget", minimum=0)
    gini_tau: float = setting(GINI_TAU, "a mutant is kept when its answer's Gini impurity rises by more than τ "
                              f"(default {GINI_TAU:g})", label="Gini τ", flag="--gini-tau")
    gate: str = setting(GATE_ON, "the mutation gate: on (part of speech, word sense, word in context, "
                        "protected words, story sentences, LM likelihood and the meaning filter's cosine) or off "
                        "(the paper's cosine-only filter) (default on)", label="DialTest mutation gate",
                        flag="--dialtest-gate", choices=GATE_CHOICES)


class Operators:
    """The chosen operators that can run here; ``unavailable`` says in one line why the others cannot."""

    def __init__(self, names: tuple[str, ...], nlp, translator=None, inserter=None, gated: bool = False):
        self.nlp = nlp
        self.gated = gated  # the gate on: SR's synonyms from the sense in context, WI's words emphasis adverbs
        self.unavailable: dict[str, str] = {}
        self.translator = translator
        if BT in names and translator is None:

            try:
                self.translator = BackTranslator.from_env()
            except ChatConfigError as e:
                self.unavailable[BT] = f"DialTest: BT unavailable ({e}); running {', '.join(n for n in names if n != BT) or 'nothing'}"
        self.inserter = inserter
        self.available = tuple(n for n in names if n not in self.unavailable)
        self.failures = 0  # BT requests that failed (the question is then left as it is)
        self._docs: dict[str, object] = {}

    def _doc(self, text: str):
        if text not in self._docs:
            self._docs[text] = self.nlp(text)
        return self._docs[text]

    def apply(self, name: str, question: str, rng, sensitivity=None, story: str = "") -> str:
        """The operator on the question; with the SUT's ``sensitivity`` to its words (targeted generation), SR
        and WI change the most sensitive word instead of a random one. ``story``: where the question's words take
        their sense (the gate on)."""
        doc = self._doc(question) if name in (SR, WI) else None
        ranking = None if sensitivity is None else sensitivity.rank_spans([(t.idx, t.idx + len(t)) for t in doc])
        if name == SR:
            return synonym_replacement(doc, rng, ranking, story if self.gated else None)
        if name == WI:
            if self.inserter is None:
                self.inserter = WordInserter.local(neutral=self.gated)
            return self.inserter.insert(doc, rng, ranking=ranking)
        if name == BT:

            try:
                return self.translator.back_translate(question, rng)
            except ChatError as e:
                self.failures += 1
                log.warning("back translation failed: %s", e)
                return question
        raise ValueError(f"unknown DialTest operator {name!r}")

    def close(self) -> None:
        if self.translator is not None:
            self.translator.close()


def bt_model() -> str | None:
    """The chat model BT would use (part of the run id: another translator gives other test cases)."""

    try:
        return ChatConfig.from_env(json_mode=False).model
    except ChatConfigError:
        return None


def single_turn_case(seed: Seed, turn: int, operator: str, question: str, guide: str | None = None,
                     step: int = 1) -> TestCase:
    order = tuple(r.turn_id for r in seed.rounds)
    j = order.index(turn) + 1
    return TestCase(seed.id, operator, step, order[:j], replaced=((j, question),), target_round=turn, guide=guide)


def unguided_cases(seeds: list[Seed], run_seed: int, ops: Operators, keep_above: float, embeddings,
                   sensitivities=None, gate: Gate | None = None) -> tuple[list[TestCase], int]:
    """Each available operator once on every question; the test cases the mutation gate keeps, and how many
    transformed questions were reverted. ``gate``: default, the paper's filter (unchanged, or cosine below
    ``keep_above``). ``sensitivities``: (seed_id, turn_id) → the SUT's sensitivity to the question's words
    (targeted generation)."""
    gate = gate or make_gate(ops.nlp, embeddings, keep_above, GATE_OFF)
    proposals = []
    for seed in seeds:
        for r in seed.rounds:
            for name in ops.available:
                new = ops.apply(name, r.question, case_rng(run_seed, seed.id, f"{DIALTEST}-{name}", r.turn_id),
                                None if sensitivities is None else sensitivities[(seed.id, r.turn_id)], seed.story)
                proposals.append((seed, r, name, new))
    reasons = gate.reasons([Mutation(name, r.question, new, seed.story) for seed, r, name, new in proposals])
    cases, reverted = [], 0
    for (seed, r, name, new), why in zip(proposals, reasons):
        if r.tags and name != BT and not keeps_slot_words(r.question, r.tags, new):
            why = "slot word changed"  # the paper transforms only words outside the slots
        if why is not None:
            reverted += 1
        else:
            cases.append(single_turn_case(seed, r.turn_id, name, new))
    return cases, reverted


def guided_cases(making: Making, ops: Operators, settings: DialTestSettings, progress=None, gate: Gate | None = None
                 ) -> tuple[list[TestCase], list[dict]]:
    """Algorithm 1 (GINI) and the random baseline at the same budget on every question: the kept mutants as
    test cases, and every evaluated mutant as a row (what the guidance comparison counts)."""
    seeds, sut, cache = making.seeds, making.sut, making.cache
    gate = gate or make_gate(ops.nlp, making.oracle.embeddings, settings.keep_above, settings.gate)
    by_id = {s.id: s for s in seeds}
    stage = (lambda label: (lambda done, total, info=None: progress(done, total, {**(info or {}), "stage": label}))) \
        if progress else (lambda label: None)
    # the seed conversations first: their answers are every mutant's history (and the run's ORIG answers)
    orig = [original_case(s) for s in seeds]
    answered = execute(seeds, orig, sut, cache, progress=stage("DialTest: seed answers"))
    orig_answers = {(c.seed_id, pos): answered[(c.test_case_id, pos)] for c in orig
                    for pos in range(1, len(c.source_rounds) + 1)}
    starts_cases = {(s.id, r.turn_id): single_turn_case(s, r.turn_id, ORIG, r.question, "start") for s in seeds
                    for r in s.rounds}
    start_scores = score_cases(seeds, list(starts_cases.values()), orig_answers, sut, cache)
    starts = {key: (by_id[key[0]].round(key[1]).question, start_scores[case.test_case_id].gini)
              for key, case in starts_cases.items()}
    sensitivities = making.sensitivities()

    def propose(key, parent, rng):
        original = starts[key][0]
        story, tags = by_id[key[0]].story, by_id[key[0]].round(key[1]).tags
        # targeted generation scores the seed question's words; a mutant's own words are chosen at random
        targets = sensitivities[key] if sensitivities is not None and parent == original else None
        for _ in range(5):  # a few tries for a mutant the gate keeps; none costs a SUT call
            name = rng.choice(ops.available)
            new = ops.apply(name, parent, rng, targets, story)
            slots_kept = not tags or name == BT or keeps_slot_words(original, tags, new)
            if new not in (parent, original) and slots_kept and gate.keeps(Mutation(name, original, new, story)):
                return name, new
        return None

    cases, rows = [], []
    for guide in GUIDES:
        rngs = {key: case_rng(making.run_seed, key[0], f"{DIALTEST}-{guide}", key[1]) for key in starts}

        def evaluate(step, items, guide=guide):
            batch = [single_turn_case(by_id[k[0]], k[1], op, text, guide, step) for k, op, text in items]
            scored = score_cases(seeds, batch, orig_answers, sut, cache)
            if progress:
                progress(step, settings.gini_budget, {"stage": f"DialTest: {guide} search, step"})
            return [scored[c.test_case_id] for c in batch]

        for m in search(starts, propose, evaluate, settings.gini_budget, settings.gini_tau, guide, rngs):
            case = single_turn_case(by_id[m.key[0]], m.key[1], m.operator, m.question, guide, m.step)
            if m.kept:
                cases.append(case)
            rows.append(dict(seed_id=m.key[0], source_round=m.key[1], guide=guide, step=m.step,
                             test_case_id=case.test_case_id, operators="+".join(m.operators), question=m.question,
                             answer=m.answer, gini=m.gini, parent_gini=m.parent_gini, kept=m.kept))
    return cases, rows


def make_cases(making: Making) -> Made:
    from mortar.nlp import load_nlp  # spaCy: loaded only when DialTest runs

    settings: DialTestSettings = making.settings
    nlp = load_nlp().nlp
    ops = Operators(settings.operators, nlp, gated=settings.gate != GATE_OFF)
    gate = make_gate(nlp, making.oracle.embeddings, settings.keep_above, settings.gate)
    notes = list(ops.unavailable.values())
    record = {"operators": list(ops.available), "unavailable": sorted(ops.unavailable)}
    if not ops.available:
        return Made([], notes=(*notes, "DialTest: no operator can run"), record=record)
    cases, rows = [], []
    try:
        if settings.gini_budget and making.sut is not None:
            try:
                cases, rows = guided_cases(making, ops, settings, making.progress, gate)
                kept = {g: sum(r["kept"] for r in rows if r["guide"] == g) for g in GUIDES}
                notes.append(f"DialTest: Gini-guided search kept {kept[GINI]} of {sum(r['guide'] == GINI for r in rows)} "
                             f"mutants; the random baseline {kept[RANDOM]} at the same budget")
                record["guided"] = True
            except GiniUnavailable as e:
                notes.append(f"{e}; DialTest ran unguided")
        if not record.get("guided"):
            cases, reverted = unguided_cases(making.seeds, making.run_seed, ops, settings.keep_above,
                                             making.oracle.embeddings, making.sensitivities(), gate)
            filter_ = "the mutation gate" if settings.gate != GATE_OFF else f"unchanged or cosine < {settings.keep_above:g}"
            notes.append(f"DialTest: {len(cases)} test cases ({', '.join(ops.available)}), {reverted} transformed "
                         f"questions reverted ({filter_})")
    finally:
        ops.close()
    notes.append(f"DialTest mutation gate: {gate.summary()}")
    record["mutation_gate"] = gate.rows()
    test_split = sorted(s.id for s in making.seeds if is_nlu(s) and s.source == "test")
    if test_split:
        record["test_split"] = test_split  # the seeds the accuracy table counts
    if ops.failures:
        notes.append(f"DialTest: {ops.failures} back translations failed; those questions were left as they were")
    for note in notes:
        log.info(note)
    return Made(cases, notes=tuple(notes), mutants=tuple(rows), record=record)


def on_answers(judge):
    """A relation of answers in words: none on an intent/slot dataset (its predictions have relations of their own)."""
    return lambda j: [] if is_nlu(j.seed) else judge(j)


register_relation(Relation(
    DT_REF, DIALTEST, DIRECTION, "DT-REF, DialTest: the answer to a transformed question (synonym, back "
    "translation, inserted words) should still match the reference.", on_answers(matches_reference(DT_REF))))
register_relation(Relation(
    DT_INV, DIALTEST, INVARIANCE, "DT-INV, DialTest: the answer to a transformed question should agree with the "
    "SUT's answer to the seed question.", on_answers(same_as_orig(DT_INV, DIALTEST_OPERATORS))))
register_relation(Relation(
    INTENT, DIALTEST, DIRECTION, "INTENT, intent detection: the predicted intent of an utterance (a seed's or a "
    "transformed one) is its gold intent.", intent_references))
register_relation(Relation(
    SLOTS, DIALTEST, DIRECTION, "SLOTS, slot filling: the predicted slots of an utterance (type and words) are its "
    "gold slots.", slot_references))
register_relation(Relation(
    DT_INTENT, DIALTEST, INVARIANCE, "DT-INTENT, DialTest on intents: a transformed utterance gets the intent the "
    "system predicted for the seed utterance.", intent_unchanged))
register_relation(Relation(
    DT_SLOTS, DIALTEST, INVARIANCE, "DT-SLOTS, DialTest on slots: a transformed utterance gets the slot values the "
    "system predicted for the seed utterance (words outside the slots changed only).", slots_unchanged))


def tables(checks, cases, verdicts, unknown, record: dict | None = None) -> list[Table]:
    """Violations per relation and operator; and the mutation gate's table, from the run's stored record
    (``Made.record``) when the report passes it."""
    rows = (record or {}).get("mutation_gate")
    return [Table("dialtest_operators", "DialTest: violations per relation and operator",
                  "; ".join(f"{k}: {v}" for k, v in OPERATOR_TEXT.items()),
                  metrics.per_kind(checks, (*DIALTEST_RELATIONS, DT_INTENT, DT_SLOTS))),
            *([gate_table("dialtest_mutation_gate", DIALTEST, rows)] if rows else []),
            *([Table("dialtest_nlu", "DialTest on intents and slots: accuracy on the seed utterances and on each "
                     "operator's", "Intent accuracy and slot F1 (a slot counts with its type and all its words) "
                     "against the gold labels, as the paper's Table 6" + (", on the dataset's test split" if split else "")
                     + "; intent / slots changed: DT-INTENT and DT-SLOTS violations, against the system's own "
                     "prediction for the seed utterance. A Gini-guided search's kept utterances are left out (its "
                     "random baseline's count).", nlu_rows)]
              if (nlu_rows := accuracy_rows(checks, cases, set(split) if (split := (record or {}).get("test_split"))
                                            else None)) else [])]


def run_key(settings: DialTestSettings, chosen: bool) -> dict:
    """The settings, and the back-translation model when BT runs (another model, other test cases)."""
    if not chosen:
        return {}
    data = {k: v for k, v in asdict(settings).items() if not (k == "gate" and v == GATE_ON)}  # earlier runs' ids
    return {"dialtest": {**data, "bt_model": bt_model() if BT in settings.operators else None}}


def requires(settings: DialTestSettings) -> dict[str, str]:
    return {LOGPROBS: "--gini-budget"} if settings.gini_budget else {}


register_method(TestMethod(
    name=DIALTEST_METHOD, label=DIALTEST, perturbations=DIALTEST_OPERATORS, relations=(*DIALTEST_RELATIONS, INTENT, SLOTS, DT_INTENT, DT_SLOTS),
    text="DialTest: one question at a time transformed by synonym replacement (SR), back translation (BT) or word "
         "insertion (WI), reverted when its meaning drifts; optionally Gini-guided (Algorithm 1).",
    make_cases=make_cases, tables=tables, settings=DialTestSettings, config_key="dialtest", run_key=run_key,
    requires=requires, guided_by_sut=lambda settings: bool(settings.gini_budget)))
