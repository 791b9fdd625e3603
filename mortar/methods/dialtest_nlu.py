"""DialTest on its own task: intent detection and slot filling (the seeds of an intent/slot dataset).

The operators change only words outside the slots (the paper's rule: a transformed utterance that changed a slot
word is reverted; back translation keeps only the intent), so the gold intent and slot values of a transformed
utterance are those of its seed. The system answers with its prediction (``mortar.sut.nlu``). Relations:

- INTENT and SLOTS (references, as the paper's Intent Acc and Slot Acc): the predicted intent is the gold one; the
  predicted slots (type and words) are the gold ones — on the seed's utterances and on the transformed ones;
- DT-INTENT and DT-SLOTS (DialTest's metamorphic relation): the transformed utterance's intent and slot values
  are those the system predicted for the seed utterance.
"""

from __future__ import annotations

import difflib
import json

from mortar.relations import Check, Judging, round_check
from mortar.sut.nlu import prediction_of, slot_f1, slot_spans
from mortar.vocab import BT, DT_INTENT, DT_SLOTS, INTENT, ORIG, SLOTS


def is_nlu(seed) -> bool:
    return any(r.intent for r in seed.rounds)


def keeps_slot_words(original: str, tags: tuple[str, ...], mutated: str) -> bool:
    """Whether a transformation left every slot word as it was, in place among the words around it."""
    before, after = original.split(), mutated.split()
    kept = set()
    for block in difflib.SequenceMatcher(a=[w.lower() for w in before], b=[w.lower() for w in after],
                                         autojunk=False).get_matching_blocks():
        kept.update(range(block.a, block.a + block.size))
    return all(k in kept for k, tag in enumerate(tags) if tag != "O")


def _spans(text: str, tags) -> list[list[str]]:
    return sorted([slot, value] for slot, value in slot_spans(tuple(tags), text.split()))


def _asked(j: Judging, every_orig_round: bool):
    """(case, position, the gold round, the prediction there) of the seed's utterances and the transformed ones."""
    cases = [*j.orig_cases, *j.cases] if every_orig_round else j.cases
    for case in cases:
        positions = range(1, len(case.source_rounds) + 1) if case.perturbation == ORIG else [len(case.source_rounds)]
        for pos in positions:
            gold = j.seed.round(case.source_rounds[pos - 1])
            predicted = prediction_of(j.answer(case, pos))
            if predicted is not None and gold.intent:
                yield case, pos, gold, predicted


def intent_references(j: Judging) -> list[Check]:
    """INTENT on every asked utterance: the seed's (ORIG) and the transformed ones."""
    if not is_nlu(j.seed):
        return []
    return [round_check(INTENT, j.seed.id, gold.turn_id, case, pos, predicted.intent, gold.intent,
                        float(predicted.intent == gold.intent), None, predicted.intent != gold.intent)
            for case, pos, gold, predicted in _asked(j, True)]


def slot_references(j: Judging) -> list[Check]:
    """SLOTS on every asked utterance but back translations (they rewrite slot words: only the intent is kept)."""
    if not is_nlu(j.seed):
        return []
    checks = []
    for case, pos, gold, predicted in _asked(j, True):
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
    for case, pos, gold, after in _asked(j, False):
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
    for case, pos, gold, after in _asked(j, False):
        before = seed_said.get(gold.turn_id)
        if before is not None and case.perturbation != BT:
            mine, seed_slots = _spans(case.question_at(j.seed, pos), after.tags), _spans(gold.question, before.tags)
            checks.append(round_check(DT_SLOTS, j.seed.id, gold.turn_id, case, pos, json.dumps(mine),
                                      json.dumps(seed_slots), _f1(seed_slots, mine), None, mine != seed_slots))
    return checks


def accuracy_rows(checks) -> list[dict]:
    """Per version (the seed's utterances, each operator's): utterances, intent accuracy and slot F1 against the
    gold labels (the paper's Table 6), and the violations of DialTest's relation."""
    versions = sorted({c.perturbations[0] for c in checks if c.relation in (INTENT, SLOTS)}, key=lambda v: (v != ORIG, v))
    rows = []
    for version in versions:
        intents = [c for c in checks if c.relation == INTENT and c.perturbations[0] == version]
        slots = [c for c in checks if c.relation == SLOTS and c.perturbations[0] == version]
        gold = [{tuple(s) for s in json.loads(c.text_b)} for c in slots]
        predicted = [{tuple(s) for s in json.loads(c.text_a)} for c in slots]
        changed = [c for c in checks if c.relation in (DT_INTENT, DT_SLOTS) and c.perturbations[0] == version]
        rows.append({"version": version, "utterances": len(intents),
                     "intent accuracy": sum(not c.violated for c in intents) / len(intents) if intents else float("nan"),
                     "slot F1": slot_f1(gold, predicted) if slots else float("nan"),
                     "intent changed": sum(c.violated for c in changed if c.relation == DT_INTENT),
                     "slots changed": sum(c.violated for c in changed if c.relation == DT_SLOTS)})
    return rows
