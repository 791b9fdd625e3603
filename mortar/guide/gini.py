"""DeepGini impurity of an answer, and DialTest's Gini-guided generation (its Algorithm 1).

DeepGini measures how unsure a model is of its output: 1 − Σ p² over the output distribution, 0 when
one token has all the mass. A generative SUT outputs one distribution per answer token, so an answer's
impurity is the mean over the distributions that chose its tokens (and the end of the answer).

- Local SUTs: the impurity is measured while the answer is decoded (``LocalSession``: the logits of every
  step are there anyway) and stored with the answer, so the run reuses both; an answer stored without it
  is scored in one teacher-forced pass (``answer_gini``).
- HTTP SUTs: from the ``logprobs`` the service returns with the answer (its ``top_logprobs`` most likely
  tokens per place; the rest of the mass is unseen, so the impurity is slightly overestimated); a
  service that returns none makes the guidance unavailable.
- Intent/slot systems (``mortar.sut.nlu``): the impurity of the intent distribution the classifier answers with,
  DeepGini exactly as DialTest uses it.

Algorithm 1 (DialTest): start from the seed question; apply a random transformation to the current
test; keep the mutant, and continue from it, when its impurity rises above the current one's by more
than τ. Here every question gets a budget of SUT calls (one per evaluated mutant), and all questions
take their steps together so each step's answers are batched. The random baseline spends the same
budget on random transformations of the seed question, keeping every one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone

from mortar.caches import AnswerCache, NoCache
from mortar.dataset import Seed, TestCase
from mortar.execute import execute
from mortar.errors import InputError
from mortar.sut.base import LOGPROBS, SUT, WEIGHTS, Conversation, SutError, Turn
from mortar.sut.likelihood import reply_logprobs
from mortar.sut.nlu import NLUSUT, prediction_of
from mortar.vocab import GINI, RANDOM


class GiniUnavailable(InputError):
    """The SUT gives no token probabilities: Gini guidance cannot run on it."""


def gini_impurity(probabilities) -> float:
    """1 − Σ p² of one distribution (a sequence or a tensor of probabilities)."""
    if hasattr(probabilities, "pow"):
        return 1.0 - float(probabilities.pow(2).sum())
    return 1.0 - sum(p * p for p in probabilities)


def carried_gini(answer: str | None) -> float | None:
    """The impurity an intent/slot system's stored answer carries (its intent distribution); None for any other
    answer: a generative one must be scored by the model (``answer_gini``)."""
    predicted = prediction_of(answer)
    return gini_impurity(list(predicted.probabilities.values())) if predicted and predicted.probabilities else None


def mean_gini_from_logprobs(top_logprobs: list[list[float]]) -> float | None:
    """An answer's impurity from an HTTP service's top log-probabilities per answer token."""
    if not top_logprobs:
        return None
    return sum(gini_impurity([math.exp(lp) for lp in token]) for token in top_logprobs) / len(top_logprobs)


def answer_gini(sut, conversation: Conversation, answer: str, session=None) -> float:
    """The local SUT's mean impurity over the distributions that produce ``answer`` (and then end it)."""
    import torch


    session = session or sut.session(lanes=1)
    if not answer.strip():
        first, _ = session.extend(0, sut.prompt_ids(conversation))
        return gini_impurity(first.exp())
    first, logprobs, replies = reply_logprobs(sut, conversation, [answer], session)
    with torch.inference_mode():
        # ``first`` chose the answer's first token; the logits after token t chose token t + 1, and after
        # the last token, the end of the answer
        ginis = [gini_impurity(first.exp())] + [gini_impurity(logprobs[0, t].exp()) for t in range(len(replies[0]))]
    return sum(ginis) / len(ginis)


@dataclass(frozen=True)
class Scored:
    answer: str | None
    gini: float | None
    error: str | None = None


def score_cases(seeds: list[Seed], cases: list[TestCase], orig_answers: dict, sut: SUT,
                cache: AnswerCache | None = None, progress=None) -> dict[str, Scored]:
    """The answer to each single-turn case's last question and its Gini impurity: test_case_id → Scored.

    ``orig_answers``: (seed_id, position) → the SUT's answer to the seed's question there (its ORIG case),
    which give every case its history."""
    cache = cache or NoCache()
    if isinstance(sut, NLUSUT):  # a classifier: DeepGini of its intent distribution, as DialTest defines it
        return _score_classifier(seeds, cases, sut, cache, progress)
    if WEIGHTS in sut.capabilities:  # the executor measures the impurity while decoding
        return _score_local(seeds, cases, sut, cache, progress)
    if LOGPROBS in sut.capabilities:
        return _score_http(seeds, cases, orig_answers, sut, cache)
    raise GiniUnavailable(f"Gini guidance needs a local model's or an HTTP service's token probabilities; "
                          f"{sut.backend or type(sut).__name__} gives none")


def _score_classifier(seeds, cases, sut, cache, progress) -> dict[str, Scored]:
    answers = execute(seeds, cases, sut, cache, progress=progress)
    scored = {}
    for case in cases:
        out = answers.get((case.test_case_id, len(case.source_rounds)))
        predicted = prediction_of(out.text) if out is not None else None
        scored[case.test_case_id] = Scored(None, None, out.error if out else "not asked") if predicted is None else \
            Scored(out.text, carried_gini(out.text))
    return scored


def _score_local(seeds, cases, sut, cache, progress) -> dict[str, Scored]:
    """The executor answers (and measures the impurity while decoding); an answer stored before impurities
    were is scored by a teacher-forced pass."""
    answers = execute(seeds, cases, sut, cache, progress=progress)
    by_id = {s.id: s for s in seeds}
    session = None
    scored = {}
    for case in sorted(cases, key=lambda c: (c.seed_id, c.source_rounds)):
        n = len(case.source_rounds)
        out = answers.get((case.test_case_id, n))
        if out is None or out.text is None:
            scored[case.test_case_id] = Scored(None, None, out.error if out else "not asked")
            continue
        gini = out.gini
        if gini is None:
            session = session or sut.session(lanes=1)
            gini = answer_gini(sut, _conversation(by_id[case.seed_id], case, answers), out.text, session)
        scored[case.test_case_id] = Scored(out.text, gini)
    return scored


def _conversation(seed: Seed, case: TestCase, answers: dict) -> Conversation:
    """What the SUT saw for the case's last question: the story, the earlier rounds with their answers."""
    n = len(case.source_rounds)
    history = tuple(Turn(case.question_at(seed, p), answers[(case.test_case_id, p)].text) for p in range(1, n))
    return Conversation(case.story_of(seed), history, case.question_at(seed, n))


def _score_http(seeds, cases, orig_answers, sut, cache) -> dict[str, Scored]:
    by_id = {s.id: s for s in seeds}
    todo = []
    for case in cases:
        seed = by_id[case.seed_id]
        n = len(case.source_rounds)
        earlier = [orig_answers.get((seed.id, p)) for p in range(1, n)]
        if any(a is None or a.text is None for a in earlier):
            continue  # an earlier round got no answer: this question is never asked (as in the executor)
        history = tuple(Turn(case.question_at(seed, p), earlier[p - 1].text) for p in range(1, n))
        todo.append((case, Conversation(case.story_of(seed), history, case.question_at(seed, n))))

    def ask(item):
        case, conversation = item
        try:
            text, logprobs = sut.answer_with_logprobs(conversation)
        except SutError as e:
            if "log-probabilities" in str(e):
                raise GiniUnavailable(f"Gini guidance unavailable: {e}") from None
            return case, conversation, Scored(None, None, str(e))
        return case, conversation, Scored(text, mean_gini_from_logprobs(logprobs))

    with ThreadPoolExecutor(max_workers=max(1, sut.lanes)) as pool:
        results = list(pool.map(ask, todo))
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    cache.write_sut(sut.fingerprint, sut.config())  # the run's executor reads these answers back instead of asking
    cache.write_answers(sut.fingerprint, [
        dict(conversation_hash=conv.hash, answer=s.answer, error=s.error, seconds=0.0, created_at=now)
        for _, conv, s in results if s.answer is not None])
    return {case.test_case_id: s for case, _, s in results}


@dataclass(frozen=True)
class Mutant:
    """A transformed question evaluated by the search: kept ones become test cases."""

    key: tuple[str, int]  # (seed_id, turn_id)
    guide: str  # GINI or RANDOM
    step: int  # 1 … budget
    operator: str  # the transformation that made it (from its parent)
    operators: tuple[str, ...]  # every transformation from the seed question to it
    question: str
    gini: float | None
    parent_gini: float | None
    kept: bool
    answer: str | None


Propose = Callable[[tuple[str, int], str, object], tuple[str, str] | None]  # (key, parent, rng) → (op, text)
Evaluate = Callable[[int, list[tuple[tuple[str, int], str, str]]], list[Scored]]  # (step, [(key, op, text)])


def search(starts: dict[tuple[str, int], tuple[str, float | None]], propose: Propose, evaluate: Evaluate,
           budget: int, tau: float, guide: str, rngs: dict) -> list[Mutant]:
    """Algorithm 1 at ``budget`` evaluated mutants per question; ``starts``: key → (seed question, its impurity).

    GINI: each step transforms the current test of a question (the seed question, then the last kept
    mutant) and keeps the mutant when its impurity exceeds the current one's by more than ``tau``.
    RANDOM: each step transforms the seed question and keeps every mutant."""
    if guide not in (GINI, RANDOM):
        raise ValueError(f"unknown guide {guide!r}")
    current = {k: (question, gini, ()) for k, (question, gini) in starts.items()}
    seen = {k: {question} for k, (question, _) in starts.items()}
    mutants: list[Mutant] = []
    for step in range(1, budget + 1):
        batch = []
        for key in starts:
            parent, parent_gini, operators = current[key] if guide == GINI else (*starts[key], ())
            proposal = propose(key, parent, rngs[key])
            if proposal is None or proposal[1] in seen[key]:
                continue  # nothing new to ask: no SUT call spent
            seen[key].add(proposal[1])
            batch.append((key, *proposal, parent_gini, operators))
        if not batch:
            break
        scores = evaluate(step, [(key, op, text) for key, op, text, _, _ in batch])
        for (key, op, text, parent_gini, operators), scored in zip(batch, scores):
            rose = scored.gini is not None and parent_gini is not None and scored.gini - parent_gini > tau
            kept = scored.answer is not None and (guide == RANDOM or rose)
            mutants.append(Mutant(key, guide, step, op, (*operators, op), text, scored.gini, parent_gini, kept,
                                  scored.answer))
            if kept and guide == GINI:
                current[key] = (text, scored.gini, (*operators, op))
    return mutants
