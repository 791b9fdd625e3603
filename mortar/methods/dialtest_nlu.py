"""DialTest on its own task: intent detection and slot filling (the seeds of an intent/slot dataset).

The operators change only words outside the slots (the paper's rule: a transformed utterance that changed a slot
word is reverted; back translation keeps only the intent), so the gold intent and slot values of a transformed
utterance are those of its seed. The system answers with its prediction (``mortar.sut.nlu``). Relations:

- RBT, on the seed utterances (``reference_checks``, plain reference-based testing as on any dataset): the predicted
  intent and slots are the gold ones;
- INTENT and SLOTS (references, as the paper's Intent Acc and Slot Acc) on the transformed utterances: the predicted
  intent is the gold one; the predicted slots (type and words) are the gold ones;
- DT-INTENT and DT-SLOTS (DialTest's metamorphic relation): the transformed utterance's intent and slot values
  are those the system predicted for the seed utterance.
"""

from __future__ import annotations

import difflib
import json

from mortar.relations import Check, Judging, round_check
from mortar.sut.nlu import prediction_of, slot_f1, slot_spans
from mortar.vocab import BT, DT_INTENT, DT_SLOTS, GINI, INTENT, ORIG, RBT, SLOTS


def is_nlu(seed) -> bool:
    return any(r.intent for r in seed.rounds)


def keeps_slot_words(original: str, tags: tuple[str, ...], mutated: str) -> bool:
    """Whether a transformation left every slot word as it was, each slot's words still side by side."""
    return aligned_tags(original, tags, mutated) is not None


def aligned_tags(original: str, tags: tuple[str, ...], mutated: str) -> tuple[str, ...] | None:
    """The seed's tags carried to the transformed words that match them (``O`` on the words it brought in); None
    when a slot word did not stay, or a word came in between the words of one slot."""
    before, after = original.split(), mutated.split()
    moved, where = ["O"] * len(after), {}
    for block in difflib.SequenceMatcher(a=[w.lower() for w in before], b=[w.lower() for w in after],
                                         autojunk=False).get_matching_blocks():
        for k in range(block.size):
            moved[block.b + k] = tags[block.a + k]
            where[block.a + k] = block.b + k
    for k, tag in enumerate(tags):
        if tag != "O" and (k not in where or (tag.startswith("I-") and k > 0 and tags[k - 1] != "O"
                                              and where.get(k - 1) != where[k] - 1)):
            return None
    return tuple(moved)


def _spans(text: str, tags) -> list[list[str]]:
    return sorted([slot, value] for slot, value in slot_spans(tuple(tags), text.split()))


def _asked(j: Judging):
    """(case, position, the gold round, the prediction there) of the transformed utterances."""
    for case in j.cases:
        pos = len(case.source_rounds)
        gold = j.seed.round(case.source_rounds[pos - 1])
        predicted = prediction_of(j.answer(case, pos))
        if predicted is not None and gold.intent:
            yield case, pos, gold, predicted


def reference_checks(j: Judging) -> list[Check]:
    """RBT on an intent/slot seed (``j.cases``: its ORIG case): each utterance's predicted intent and slots against
    the gold ones. The output and reference are ``{"intent", "slots"}`` as JSON; the similarity is the slot F1 where
    the intent is right, else 0."""
    checks = []
    for case in j.cases:
        for pos, source in enumerate(case.source_rounds, start=1):
            gold, predicted = j.seed.round(source), prediction_of(j.answer(case, pos))
            if predicted is None or not gold.intent:
                continue
            mine, theirs = _spans(gold.question, predicted.tags), _spans(gold.question, gold.tags)
            score = _f1(theirs, mine) if predicted.intent == gold.intent else 0.0
            checks.append(round_check(RBT, j.seed.id, source, case, pos,
                                      json.dumps({"intent": predicted.intent, "slots": mine}),
                                      json.dumps({"intent": gold.intent, "slots": theirs}), score, True,
                                      predicted.intent != gold.intent or mine != theirs, perturbation=ORIG))
    return checks


def intent_references(j: Judging) -> list[Check]:
    """INTENT on every transformed utterance (the seed utterances' are RBT's: ``reference_checks``)."""
    if not is_nlu(j.seed):
        return []
    return [round_check(INTENT, j.seed.id, gold.turn_id, case, pos, predicted.intent, gold.intent,
                        float(predicted.intent == gold.intent), None, predicted.intent != gold.intent)
            for case, pos, gold, predicted in _asked(j)]


def slot_references(j: Judging) -> list[Check]:
    """SLOTS on every transformed utterance but back translations (they rewrite slot words: only the intent is
    kept)."""
    if not is_nlu(j.seed):
        return []
    checks = []
    for case, pos, gold, predicted in _asked(j):
        if case.perturbation != BT:
            mine, theirs = _spans(case.question_at(j.seed, pos), predicted.tags), _spans(gold.question, gold.tags)
            checks.append(round_check(SLOTS, j.seed.id, gold.turn_id, case, pos, json.dumps(mine), json.dumps(theirs),
                                      _f1(theirs, mine), None, mine != theirs))
    return checks


def _f1(gold: list, predicted: list) -> float:
    return slot_f1([{tuple(s) for s in gold}], [{tuple(s) for s in predicted}])


def _seed_predictions(j: Judging) -> dict:
    orig = j.orig_cases[0]
    return {source: prediction_of(j.answer(orig, pos)) for pos, source in enumerate(orig.source_rounds, start=1)}


def intent_unchanged(j: Judging) -> list[Check]:
    """DT-INTENT: a transformed utterance's intent is the one the system predicted for the seed utterance."""
    if not is_nlu(j.seed) or not j.orig_cases:
        return []
    seed_said, checks = _seed_predictions(j), []
    for case, pos, gold, after in _asked(j):
        before = seed_said.get(gold.turn_id)
        if before is not None:
            checks.append(round_check(DT_INTENT, j.seed.id, gold.turn_id, case, pos, after.intent, before.intent,
                                      float(after.intent == before.intent), None, after.intent != before.intent))
    return checks


def slots_unchanged(j: Judging) -> list[Check]:
    """DT-SLOTS: a transformed utterance's slot values are those the system predicted for the seed utterance."""
    if not is_nlu(j.seed) or not j.orig_cases:
        return []
    seed_said, checks = _seed_predictions(j), []
    for case, pos, gold, after in _asked(j):
        before = seed_said.get(gold.turn_id)
        if before is not None and case.perturbation != BT:
            mine, seed_slots = _spans(case.question_at(j.seed, pos), after.tags), _spans(gold.question, before.tags)
            checks.append(round_check(DT_SLOTS, j.seed.id, gold.turn_id, case, pos, json.dumps(mine),
                                      json.dumps(seed_slots), _f1(seed_slots, mine), None, mine != seed_slots))
    return checks


def accuracy_rows(checks, cases=(), seeds: set[str] | None = None) -> list[dict]:
    """Per version (the seed utterances, each operator's): utterances, intent accuracy and slot F1 against the gold
    labels (the paper's Table 6), and the violations of DialTest's relation. ``seeds``: the seeds counted (a
    dataset's test split); the Gini-guided search's kept mutants are left out (chosen to be hard, they are no
    sample of an operator's utterances; its random baseline's are)."""
    guided = {c.test_case_id for c in cases if c.guide == GINI}
    mine = [c for c in checks if (seeds is None or c.seed_id in seeds) and not guided & set(c.test_case_ids)]
    rows = []
    seed_checks = [c for c in mine if c.relation == RBT and c.text_a.startswith('{"intent"')]
    if seed_checks:
        said = [json.loads(c.text_a) for c in seed_checks]
        gold = [json.loads(c.text_b) for c in seed_checks]
        rows.append(_row(ORIG, sum(a["intent"] == b["intent"] for a, b in zip(said, gold)), len(said),
                         [{tuple(s) for s in b["slots"]} for b in gold], [{tuple(s) for s in a["slots"]} for a in said]))
    for version in sorted({c.perturbations[0] for c in mine if c.relation in (INTENT, SLOTS)}):
        intents = [c for c in mine if c.relation == INTENT and c.perturbations[0] == version]
        slots = [c for c in mine if c.relation == SLOTS and c.perturbations[0] == version]
        changed = [c for c in mine if c.relation in (DT_INTENT, DT_SLOTS) and c.perturbations[0] == version]
        rows.append(_row(version, sum(not c.violated for c in intents), len(intents),
                         [{tuple(s) for s in json.loads(c.text_b)} for c in slots],
                         [{tuple(s) for s in json.loads(c.text_a)} for c in slots],
                         sum(c.violated for c in changed if c.relation == DT_INTENT),
                         sum(c.violated for c in changed if c.relation == DT_SLOTS)))
    return rows


def _row(version: str, right: int, n: int, gold: list, predicted: list, intent_changed=float("nan"),
         slots_changed=float("nan")):
    return {"version": version, "utterances": n, "intent accuracy": right / n if n else float("nan"),
            "slot F1": slot_f1(gold, predicted) if gold or predicted else float("nan"),
            "intent changed": intent_changed, "slots changed": slots_changed}
