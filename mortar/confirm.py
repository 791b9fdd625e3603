"""Confirmed detections (``--confirm K``): a detection is asked again before it is believed.

Serving engines with prefix caching or batching do not always answer the same conversation the same way (llama.cpp
warns that its prompt cache can change results; vLLM does not promise determinism with prefix caching). After
judging, the conversations behind every detection are asked K more times: the round a direction relation judged
(MR1, MR2, METAL, DT-REF, RBT), both rounds of a relation that compares two answers (every version of MR3's and
MR4's group; the version and ORIG for DT-INV and the persona relations). Each is asked as the run asked it — the
same story, history and question — but afresh: the answer cache is not read, and the SUT reuses no cached prefix
(``Conversation.fresh``: llama.cpp's ``cache_prompt: false``, a local model's whole prompt recomputed).

The relations then judge again with each confirmation's answers in place of the run's, with the same oracle and
threshold. A detection that is not found again on every confirmation is *flaky*: reported apart, as the unstable
detections of ``--orig-repeats``, and counted in no headline figure.
"""

from __future__ import annotations

import time
from dataclasses import replace

from mortar import store
from mortar.dataset import Seed, TestCase
from mortar.execute import STORE_EVERY_S, Answer, ask, conversation_at
from mortar.judge import judge
from mortar.relations import DIRECTION, RELATIONS, Check
from mortar.vocab import ORIG


def conversations_of(check: Check, seed: Seed, orig: TestCase | None) -> list[tuple[str, int]]:
    """The rounds (test_case_id, position) whose answers a check compared: its own, and ORIG's round of the same
    seed question where the check compared an answer with ORIG's (an invariance on one version, or a seed round
    without a gold answer, whose reference is ORIG's answer)."""
    keys = list(dict.fromkeys(zip(check.test_case_ids, check.positions)))
    against_orig = (RELATIONS[check.relation].kind != DIRECTION and len(keys) == 1) or \
        seed.round(check.source_round).answer is None
    if against_orig and orig is not None:
        keys += [(orig.test_case_id, p) for p, source in enumerate(orig.source_rounds, start=1)
                 if source == check.source_round and (orig.test_case_id, p) not in keys]
    return keys


def confirm(seeds: list[Seed], cases: list[TestCase], verdicts: dict, answers: dict, checks: list[Check], sut,
            oracle, threshold: float, times: int, selections: dict | None = None, settings: dict | None = None,
            db=None, run_id: str | None = None, progress=None) -> tuple[list[Check], str]:
    """The checks with every detection that is not found again on each of ``times`` more askings marked flaky, and
    a one-line note. The answers are stored under the run (``confirmations``) as they come; a resumed run reads
    them back instead of asking again."""
    detections = [c for c in checks if c.violated]
    if not times or not detections:
        return checks, "confirmation: no detection to confirm"
    seed_of = {s.id: s for s in seeds}
    case_of = {c.test_case_id: c for c in cases}
    orig_of = {c.seed_id: c for c in cases if c.perturbation == ORIG}
    needs = {c.check_id: conversations_of(c, seed_of[c.seed_id], orig_of.get(c.seed_id)) for c in detections}
    conversations = {}  # (test_case_id, position) → the conversation asked there, to be asked afresh
    for key in dict.fromkeys(k for keys in needs.values() for k in keys):
        case = case_of[key[0]]
        asked = conversation_at(seed_of[case.seed_id], case, key[1], answers)
        if asked is not None:
            conversations[key] = replace(asked, fresh=True)
    got = _ask(conversations, times, sut, db, run_id, progress)

    flaky, unconfirmed = set(), set()
    judged_seeds = [s for s in seeds if s.id in {c.seed_id for c in detections}]
    judged_cases = [c for c in cases if c.seed_id in {s.id for s in judged_seeds}]
    for k in range(1, times + 1):
        again = dict(answers)
        for key, conversation in conversations.items():
            text = got.get((conversation.hash, k))
            if text is not None:
                again[key] = Answer(text, conversation_hash=conversation.hash)
        remade = {c.check_id: c for c in judge(judged_seeds, judged_cases, verdicts, again, oracle, threshold,
                                               selections, None, settings)}
        for c in detections:
            if not all(key in conversations and (conversations[key].hash, k) in got for key in needs[c.check_id]):
                unconfirmed.add(c.check_id)  # the SUT gave no answer: no verdict from this confirmation
            elif c.check_id not in remade or not remade[c.check_id].violated:
                flaky.add(c.check_id)
    note = (f"confirmation: {len(flaky)} of {len(detections)} detections not found again in {times} more "
            f"asking{'s' if times > 1 else ''} of their {len(conversations)} conversations (flaky, reported apart)")
    if unconfirmed - flaky:
        note += f"; {len(unconfirmed - flaky)} could not be confirmed (the SUT gave no answer) and stay detections"
    return [replace(c, flaky=True) if c.check_id in flaky else c for c in checks], note


def _ask(conversations: dict, times: int, sut, db, run_id: str | None, progress) -> dict[tuple[str, int], str]:
    """(conversation hash, confirmation) → the answer: each distinct conversation asked ``times`` times, the
    answers stored under the run (those stored before are read back, not asked again)."""
    with store.connect(db) as con:
        stored = store.read_confirmations(con, run_id) if run_id else {}
    got = {(h, k): text for (tcid, pos, k), (h, text) in stored.items()
           if (tcid, pos) in conversations and conversations[(tcid, pos)].hash == h and k <= times}
    rounds_of: dict[str, list[tuple[str, int]]] = {}  # conversation hash → the rounds that asked it
    for key, conversation in conversations.items():
        rounds_of.setdefault(conversation.hash, []).append(key)
    by_hash = {c.hash: c for c in conversations.values()}
    todo = [(h, k) for h in by_hash for k in range(1, times + 1) if (h, k) not in got]
    unstored: list[dict] = []
    counts = {"computed": 0, "errors": 0, "cached": len(got)}
    started = stored_at = time.monotonic()

    def keep() -> None:
        nonlocal stored_at
        if unstored and run_id:
            with store.connect(db) as con:
                store.write_confirmations(con, run_id, unstored)
        unstored.clear()
        stored_at = time.monotonic()
        if progress:
            done = counts["computed"] + counts["errors"]
            elapsed = time.monotonic() - started
            progress(done, len(todo), {**counts, "sut_calls": done, "elapsed_s": elapsed,
                                       "answers_per_second": counts["computed"] / elapsed if elapsed > 0 else 0.0})

    def done(i: int, completion) -> None:
        h, k = todo[i]
        counts["errors" if completion.error else "computed"] += 1
        if completion.error is None:
            got[(h, k)] = completion.text
        unstored.extend(dict(test_case_id=tcid, position=pos, confirmation=k, conversation_hash=h,
                             output=completion.text, error=completion.error, seconds=completion.seconds)
                        for tcid, pos in rounds_of[h])
        if time.monotonic() - stored_at >= STORE_EVERY_S:
            keep()

    keep()  # the stage's first report
    try:
        ask(sut, [by_hash[h] for h, _ in todo], done)
    finally:
        keep()
    return got
