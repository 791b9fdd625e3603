"""White-box sensitivity of a local SUT's answer to the tokens of its conversation (the GRI/WALI thesis).

- GRI: the L2 norm of the gradient of the answer's negative log-likelihood with respect to each input
  token's embedding. A token whose embedding moves the loss most is the one whose replacement most
  likely changes the answer.
- WALI: each answer token's probability is the model's confidence in it; attention (the mean over the
  heads of the last layers, the attention sink — the first token — left out and each row renormalised)
  aligns every answer token with the input tokens it read. An input token's score is the attention it
  gets from the answer tokens weighted by their doubt (1 − confidence): tokens aligned to the least
  confident answer tokens come first.

The answer is the SUT's own greedy one or the gold answer (``target``). Token scores are grouped back to
the segments of the conversation — the story, each earlier round, the question — and, inside the
question, to characters, so any tokenizer of the question's words (spaCy's, whitespace) can be scored.
One forward and backward pass per round of the seed conversation (with its gold history) is the cost.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from mortar.errors import InputError
from mortar.caches import NoCache, ScoreCache
from mortar.sut.base import WEIGHTS, Conversation, Turn
from mortar.sut.likelihood import candidate_tokens

from mortar.vocab import GRI, SENSITIVITIES, WALI  # noqa: F401  (SENSITIVITIES: this module's choices)
WALI_LAYERS = 4  # the last layers whose attention aligns answer tokens with input tokens
QUESTION_SEGMENT = "question"
STORY_SEGMENT = "story"


def gri_scores(model, prompt: list[int], answer: list[int]) -> list[float]:
    """Per prompt token: ‖∂ NLL(answer | prompt) / ∂ embedding‖₂."""
    import torch

    if not answer:
        raise ValueError("GRI needs at least one answer token")
    embeddings = model.get_input_embeddings()
    ids = torch.tensor([prompt + answer])
    x = embeddings(ids).detach().requires_grad_(True)
    logits = _full_precision(model(inputs_embeds=x).logits[0])
    # the logits at position p predict the token at p + 1
    logprobs = torch.log_softmax(logits[len(prompt) - 1:len(prompt) + len(answer) - 1], dim=-1)
    nll = -logprobs.gather(1, torch.tensor(answer).unsqueeze(1)).sum()
    nll.backward()
    return x.grad[0, :len(prompt)].norm(dim=-1).tolist()


def _full_precision(tensor):
    """Half-precision logits in float32; float32 and float64 as they are."""
    import torch

    return tensor.float() if tensor.dtype in (torch.float16, torch.bfloat16) else tensor


def answer_nll(model, prompt: list[int], answer: list[int], inputs_embeds=None) -> float:
    """The answer's negative log-likelihood after the prompt (``inputs_embeds``: the whole text's embeddings)."""
    import torch

    with torch.no_grad():
        if inputs_embeds is None:
            inputs_embeds = model.get_input_embeddings()(torch.tensor([prompt + answer]))
        logits = _full_precision(model(inputs_embeds=inputs_embeds).logits[0])
        logprobs = torch.log_softmax(logits[len(prompt) - 1:len(prompt) + len(answer) - 1], dim=-1)
        return float(-logprobs.gather(1, torch.tensor(answer).unsqueeze(1)).sum())


def wali_alignment(model, prompt: list[int], answer: list[int], layers: int = WALI_LAYERS):
    """(alignment, confidence): per answer token, its attention over the prompt tokens (the mean over heads of
    the last ``layers`` layers, the first token masked out, each row summing to one), and its probability."""
    import torch

    previous = model.config._attn_implementation
    model.set_attn_implementation("eager")  # the fused kernels return no attention weights
    try:
        with torch.no_grad():
            out = model(input_ids=torch.tensor([prompt + answer]), output_attentions=True)
    finally:
        model.set_attn_implementation(previous)
    rows = range(len(prompt) - 1, len(prompt) + len(answer) - 1)  # the places that predict each answer token
    attention = torch.stack(out.attentions[-layers:]).mean(dim=(0, 2))[0]  # (tokens, tokens)
    alignment = attention[list(rows)][:, :len(prompt)].float().clone()
    alignment[:, 0] = 0.0  # the attention sink
    alignment = alignment / alignment.sum(dim=1, keepdim=True).clamp_min(1e-12)
    probs = torch.softmax(out.logits[0, list(rows)].float(), dim=-1)
    confidence = probs.gather(1, torch.tensor(answer).unsqueeze(1)).squeeze(1)
    return alignment, confidence


def wali_scores(model, prompt: list[int], answer: list[int], layers: int = WALI_LAYERS) -> list[float]:
    """Per prompt token: Σ over answer tokens of its alignment × (1 − that token's confidence)."""
    alignment, confidence = wali_alignment(model, prompt, answer, layers)
    return ((1.0 - confidence).unsqueeze(1) * alignment).sum(dim=0).tolist()


@dataclass(frozen=True)
class Sensitivity:
    """A conversation's token scores, grouped: per segment (story, round 1 … j−1, question) the share of the
    total, and per question token its characters and score."""

    method: str
    segments: dict[str, float]  # segment → share of the scores (sums to one)
    question_tokens: list[tuple[int, int, float]] = field(default_factory=list)  # (start, end) in the question

    def span_score(self, start: int, end: int) -> float:
        """The score of the question's characters [start, end): the tokens overlapping them, summed."""
        return sum(s for a, b, s in self.question_tokens if a < end and b > start)

    def rank_spans(self, spans: list[tuple[int, int]]) -> list[int]:
        """Indices of ``spans`` (e.g. the question's words), most sensitive first."""
        return sorted(range(len(spans)), key=lambda i: -self.span_score(*spans[i]))


def round_segment(k: int) -> str:
    return f"round {k}"


def segments_of(tokenizer, messages: list[dict]) -> list[tuple[str, int, int]]:
    """(segment, first token, end token) of the rendered conversation: the story (system message), each earlier
    round (its question and answer), the question (with the generation prompt)."""
    bounds = [0]
    for k in range(1, len(messages) + 1):
        bounds.append(len(tokenizer.apply_chat_template(messages[:k], tokenize=True, return_dict=False,
                                                        add_generation_prompt=k == len(messages))))
    segments = [(STORY_SEGMENT, bounds[0], bounds[1])]
    for r in range(1, (len(messages) - 1) // 2 + 1):
        segments.append((round_segment(r), bounds[2 * r - 1], bounds[2 * r + 1]))
    segments.append((QUESTION_SEGMENT, bounds[-2], bounds[-1]))
    return segments


def sensitivity(sut, conversation: Conversation, answer: str, method: str = GRI) -> Sensitivity:
    """The local SUT's sensitivity to the conversation's tokens when it gives ``answer``."""

    model, tokenizer = sut.white_box  # gradients and attention: the layers as loaded, not packed for answering
    _, prompt, (reply,) = candidate_tokens(sut, conversation, [answer])
    scores = (gri_scores if method == GRI else wali_scores)(model, prompt, reply)
    messages = conversation.messages(sut.settings.system_prompt)
    segments = segments_of(tokenizer, messages)
    if segments[-1][2] != len(prompt):
        raise ValueError("the chat template does not render the conversation message by message")
    total = sum(scores) or 1.0
    shares = {name: sum(scores[a:b]) / total for name, a, b in segments}
    # the question's own tokens: find the question's text in the last segment, token by token
    _, first, end = segments[-1]
    pieces = [tokenizer.decode([t]) for t in prompt[first:end]]
    text = "".join(pieces)
    offset = text.find(conversation.question)
    tokens, at = [], 0
    for piece, score in zip(pieces, scores[first:end]):
        start, at = at - offset, at + len(piece)
        a, b = max(0, start), min(len(conversation.question), at - offset)
        if offset >= 0 and b > a:
            tokens.append((a, b, score))
    return Sensitivity(method, shares, tokens)


GOLD, SUT_ANSWER = "gold", "sut"
TARGETS = (GOLD, SUT_ANSWER)  # which answer's likelihood the scores explain


def seed_sensitivities(sut, seed, method: str, target: str = GOLD) -> dict[int, Sensitivity]:
    """Per round of the seed conversation (the story, the earlier questions with their gold answers), the
    sensitivity of the answer to round j: the gold answer ("Unknown" for an unknown or missing one), or the
    SUT's own greedy answer (``target`` = "sut", which then also stands in the history)."""
    found, history = {}, []
    for r in seed.rounds:
        conversation = Conversation(seed.story, tuple(history), r.question)
        if target == SUT_ANSWER:
            answer = sut.answer(conversation) or "Unknown"
        else:
            answer = "Unknown" if r.answer is None or r.is_unknown else r.answer
        found[r.turn_id] = sensitivity(sut, conversation, answer, method)
        history.append(Turn(r.question, answer if target == SUT_ANSWER else (r.answer or answer)))
    return found


def round_shares(seed, found: dict[int, Sensitivity]) -> tuple[dict[int, dict[int, float]], dict[int, float]]:
    """(shares[j][k], question_share[j]): how much of round j's sensitivity lies on earlier round k, and on its
    own question."""
    turns = [r.turn_id for r in seed.rounds]
    shares, own = {}, {}
    for j, s in found.items():
        shares[j] = {turns[i - 1]: s.segments.get(round_segment(i), 0.0) for i in range(1, turns.index(j) + 1)}
        own[j] = s.segments.get(QUESTION_SEGMENT, 0.0)
    return shares, own


class NeedsLocalModel(InputError):
    """White-box guidance asked of a SUT whose internals cannot be read (an HTTP endpoint)."""


def require_local(sut, what: str) -> None:
    if WEIGHTS not in sut.capabilities:
        raise NeedsLocalModel(f"{what} needs a local model's gradients and attention (transformers); the SUT "
                              f"{sut.model or sut.backend} is a {sut.backend} endpoint")


def dataset_sensitivities(sut, dataset_id: str, seeds, method: str, target: str = GOLD,
                          cache: ScoreCache | None = None, progress=None
                          ) -> tuple[dict[tuple[str, int], Sensitivity], dict[str, float]]:
    """Sensitivities of every seed round, read from the store when computed before for this SUT; and the
    seconds each seed took (stored with its rounds). ``progress(done, total, info)`` per seed."""
    cache = cache or NoCache()
    require_local(sut, f"--{method}")
    rows = cache.read_sensitivities(sut.fingerprint, dataset_id, method, target)
    found = {(r["seed_id"], r["turn_id"]): Sensitivity(method, r["segments"], r["question_tokens"]) for r in rows}
    seconds: dict[str, float] = {}
    for r in rows:
        seconds[r["seed_id"]] = seconds.get(r["seed_id"], 0.0) + (r["seconds"] or 0.0)
    todo = [s for s in seeds if any((s.id, r.turn_id) not in found for r in s.rounds)]
    for n, seed in enumerate(todo, start=1):
        start = time.perf_counter()
        scored = seed_sensitivities(sut, seed, method, target)
        took = time.perf_counter() - start
        seconds[seed.id] = took
        found.update({(seed.id, turn): s for turn, s in scored.items()})
        cache.write_sensitivities(sut.fingerprint, dataset_id, method, target, [
            dict(seed_id=seed.id, turn_id=turn, segments=s.segments, question_tokens=s.question_tokens,
                 seconds=took / len(scored)) for turn, s in scored.items()])
        if progress:
            progress(n, len(todo), {"stage": f"{method} sensitivity"})
    return found, seconds
