"""Gating a dialogue system in pytest: run a suite against it and fail with a readable list of what it broke.

    from mortar.testing import assert_within_budget

    def test_my_bot_stays_robust_in_multi_turn_use():
        assert_within_budget("data/sample_chat.jsonl", my_bot.reply, "RATE:MT>0.6", methods="mortar", limit=2)

The failure message names each budget exceeded and lists the violated checks: the relation, the seed question,
and the two answers it compared (the system's answer and the reference, or its two answers).
"""

from __future__ import annotations

import json

from mortar import api, store
from mortar.budgets import BudgetExceeded
from mortar.store import MEMORY

SHOWN = 10  # violated checks listed in a failure message


def assert_within_budget(dataset, sut, *budgets: str, db=MEMORY, shown: int = SHOWN, **settings) -> api.Run:
    """Run ``dataset`` against ``sut`` (see :func:`mortar.run`) and check the ``--fail-on`` budgets; on a budget
    exceeded, fail the test (AssertionError) with the budgets and the first ``shown`` violated checks. The store
    is in memory unless ``db`` names a file. Returns the run."""
    result = api.run(dataset, sut, db=db, **settings)
    try:
        api.gate(result, *budgets)
    except BudgetExceeded as e:
        raise AssertionError(failure_message(result, str(e), shown)) from None
    return result


def failure_message(result: api.Run, exceeded: str, shown: int = SHOWN) -> str:
    with store.connect(result.db, read_only=True) as con:
        found = store.detections_export(con, result.run_id)
        questions = store.seed_questions(con, result.run_id)
    lines = [f"budget exceeded: {exceeded}", f"run {result.run_id}: {len(found)} violated checks; the first "
             f"{min(shown, len(found))}:"]
    for row in found.head(shown).itertuples():
        question = questions.get((row.seed_id, int(row.source_round)), "?")
        versions = json.loads(row.perturbations) if isinstance(row.perturbations, str) else list(row.perturbations)
        lines.append(f"- {row.relation} on {row.seed_id} round {row.source_round} ({', '.join(versions)}): "
                     f"{question!r}\n    answer: {row.text_a!r}\n    against: {row.text_b!r} "
                     f"(similarity {row.similarity:.2f})")
    return "\n".join(lines)
