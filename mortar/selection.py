"""Response selection: the dialogue system picks the right answer out of a set of candidates.

The persona paper measures its dialogue models in the retrieval setting: given the context, the
model chooses a response from a set of candidates, one of them correct, and the test reports the
share of rounds where the correct one is chosen first (hits@1) and the mean reciprocal rank of the
correct one (MRR). Here the context is the story and the conversation so far, the correct response
is the round's gold answer, and the other candidates are gold answers of other rounds, of the same
dialogue and of other dialogues. A generative SUT "chooses" by likelihood: each candidate is scored
by the mean log-probability of its tokens as the SUT's reply, so there is no judge model and no
similarity threshold anywhere. Scoring needs the likelihood of a given reply: a local SUT computes it
from its weights, an OpenAI-compatible server that returns prompt log-probabilities (vLLM) from those
(``ChatSUT.score_replies``); other SUTs cannot take part.

For a local SUT the candidates share the whole conversation as their prefix; it is run through the
model once and its keys and values serve every candidate (``full_pass_scores`` is the plain
reference without that).
"""

from __future__ import annotations

import random

from mortar.dataset import Seed
from mortar.sut.base import CAPABILITY_TEXT, SCORES, SUT, WEIGHTS, Conversation, SutError
from mortar.sut.likelihood import candidate_tokens, reply_logprobs
from mortar.vocab import SEL
from mortar.perturb import case_rng
from mortar.sut.base import Turn


def candidates_for(seed: Seed, turn_id: int, others: list[Seed], k: int, rng: random.Random) -> list[str]:
    """The gold answer of round ``turn_id`` first, then up to ``k`` distractors drawn with ``rng``.

    Where the dataset gives the round's own candidates (PersonaChat's), they are the distractors, all of them in
    the dataset's order (``k`` and ``rng`` unused: the dataset fixes the task). Else distractors are gold answers
    of the seed's other rounds and of the ``others`` seeds. "Unknown" answers, answers equal to the gold
    (ignoring case and spacing) and repeats are left out.
    """
    this = seed.round(turn_id)
    gold = this.answer
    if gold is None or not gold.strip():
        raise ValueError(f"seed {seed.id} round {turn_id} has no gold answer to select")
    seen = {_normalised(gold)}
    pool = []
    if this.candidates:
        texts = list(this.candidates)
    else:
        rounds = [r for r in seed.rounds if r.turn_id != turn_id]
        rounds += [r for other in others if other.id != seed.id for r in other.rounds]
        texts = [r.answer for r in rounds if r.answer is not None and not r.is_unknown]
    for text in texts:
        key = _normalised(text)
        if key and key not in seen:
            seen.add(key)
            pool.append(text.strip())
    return [gold.strip(), *(pool if this.candidates else rng.sample(pool, min(k, len(pool))))]


def _normalised(text: str) -> str:
    return " ".join(text.lower().split())


def score_candidates(sut: SUT, conversation: Conversation, candidates: list[str], session=None,
                     lane: int = 0) -> list[float]:
    """Each candidate's mean token log-probability as the SUT's reply; the shared prefix runs once.

    ``session``: a local SUT's session (the executor's kind): the prefix extends that lane's KV cache, so
    rounds of one conversation scored in order re-read neither the story nor the history. A SUT without weights
    that can score a given reply (an HTTP one) is asked to."""
    if WEIGHTS not in sut.capabilities:
        if SCORES not in sut.capabilities:
            raise SutError(f"{sut.model or sut.backend}: response selection needs {CAPABILITY_TEXT[SCORES]}")
        return sut.score_replies(conversation, candidates)
    first, logprobs, replies = reply_logprobs(sut, conversation, candidates, session, lane)
    scores = []
    for i, reply in enumerate(replies):
        total = first[reply[0]].item()
        # the logits after the reply's token t predict its token t + 1
        total += sum(logprobs[i, t, reply[t + 1]].item() for t in range(len(reply) - 1))
        scores.append(total / len(reply))
    return scores


def full_pass_scores(sut: SUT, conversation: Conversation, candidates: list[str]) -> list[float]:
    """The same scores as ``score_candidates`` by one plain forward pass of the whole text per candidate."""
    import torch

    model, prompt, replies = candidate_tokens(sut, conversation, candidates)
    scores = []
    with torch.inference_mode():
        for reply in replies:
            logits = model(input_ids=torch.tensor([prompt + reply])).logits[0]
            # the token at position p is predicted by the logits at position p - 1
            logprobs = torch.log_softmax(logits[len(prompt) - 1:-1].float(), dim=-1)
            total = sum(logprobs[t, token].item() for t, token in enumerate(reply))
            scores.append(total / len(reply))
    return scores


def rank(scores: list[float]) -> list[int]:
    """Candidate indices, best score first; equal scores keep the candidates' order."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def gold_rank(scores: list[float], gold: int = 0) -> int:
    """The 1-based rank of candidate ``gold`` (``candidates_for`` puts the gold answer at index 0)."""
    return rank(scores).index(gold) + 1


def hits_at_1(gold_ranks: list[int]) -> float:
    """Share of rounds whose gold answer is ranked first (NaN for no rounds)."""
    if not gold_ranks:
        return float("nan")
    return sum(r == 1 for r in gold_ranks) / len(gold_ranks)


def mrr(gold_ranks: list[int]) -> float:
    """Mean reciprocal rank of the gold answer (NaN for no rounds)."""
    if not gold_ranks:
        return float("nan")
    return sum(1 / r for r in gold_ranks) / len(gold_ranks)


def select(seeds: list[Seed], cases, answers: dict, sut: SUT, pool: list[Seed], k: int, run_seed: int,
           oracle, threshold: float, progress=None) -> dict[tuple[str, int], dict]:
    """The selection stage of a run: for every judged round of these test cases, the gold answer's rank among
    ``k`` distractors in the conversation the SUT actually had (its story version, its own earlier answers).

    A round gets the same candidates in every version, so a changed top candidate is the model's doing.
    Returns {(test_case_id, position): row}; each row also says whether the answer oracle accepts the SUT's
    generated answer there (``oracle_pass``), for the agreement of the two judgements."""

    by_id = {s.id: s for s in seeds}
    todo = []
    for case in cases:
        seed = by_id[case.seed_id]
        positions = [len(case.source_rounds)] if case.target_round is not None else range(1, len(case.source_rounds) + 1)
        for pos in positions:
            gold = seed.round(case.source_rounds[pos - 1]).answer
            if gold is not None and not seed.round(case.source_rounds[pos - 1]).is_unknown:
                todo.append((case, seed, pos))
    rows = {}
    # a local SUT: one lane walks the cases in order, extending its cache round by round
    session = sut.session(lanes=1) if WEIGHTS in sut.capabilities else None
    for n, (case, seed, pos) in enumerate(todo, start=1):
        history = []
        for p in range(1, pos):
            earlier = answers.get((case.test_case_id, p))
            if earlier is None or earlier.text is None:
                break
            history.append(Turn(case.question_at(seed, p), earlier.text))
        else:
            turn = case.source_rounds[pos - 1]
            candidates = candidates_for(seed, turn, pool, k, case_rng(run_seed, seed.id, SEL, turn))
            conversation = Conversation(case.story_of(seed), tuple(history), case.question_at(seed, pos))
            scores = score_candidates(sut, conversation, candidates, session)
            out = answers.get((case.test_case_id, pos))
            rows[(case.test_case_id, pos)] = {
                "test_case_id": case.test_case_id, "position": pos, "source_round": turn,
                "perturbation": case.perturbation, "gold_rank": gold_rank(scores),
                "top": candidates[rank(scores)[0]], "candidates": len(candidates),
                "oracle_pass": None if out is None or out.text is None else
                oracle.similarity(seed.round(turn).question, candidates[0], out.text) >= threshold}
        if progress:
            progress(n, len(todo), {"stage": "response selection"})
    return rows
