"""CoQA v1.0 JSON: ``{"data": [{"id", "story", "questions": [{"input_text", "turn_id"}], "answers": [...]}]}``."""

from __future__ import annotations

import json
from pathlib import Path

from mortar.dataset import DatasetError, Round, Seed, Where


def load(path: Path, text: str, grounding_field: str | None = None) -> list[Seed]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise DatasetError(f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise DatasetError(f"{path}: field 'data': missing or not a list (expected CoQA v1.0 JSON)")
    seeds = []
    for i, rec in enumerate(doc["data"]):
        where = Where(path, i, rec)
        questions = where.list_field("questions")
        answers = where.list_field("answers")
        if len(questions) != len(answers):
            where.fail("questions/answers", f"{len(questions)} questions but {len(answers)} answers")
        rounds = []
        for k, (q, a) in enumerate(zip(questions, answers)):
            turn_id = where.item_field(q, "questions", k, "turn_id", int)
            a_turn = where.item_field(a, "answers", k, "turn_id", int)
            if a_turn != turn_id:
                where.fail(f"answers[{k}].turn_id", f"is {a_turn}, question {k + 1} has turn_id {turn_id}")
            question = where.item_field(q, "questions", k, "input_text", str)
            answer = where.item_field(a, "answers", k, "input_text", str)
            rounds.append(Round(turn_id=turn_id, question=question, answer=answer))
        seeds.append(where.seed(rounds, story_required=True))
    return seeds
