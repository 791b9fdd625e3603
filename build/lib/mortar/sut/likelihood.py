"""A local model's likelihood of candidate replies after a conversation: response selection ranks by it,
Gini guidance and WALI read token distributions from it."""

from __future__ import annotations

from mortar.sut.base import SUT, WEIGHTS, Conversation, SutError
from mortar.sut.local import stop_token_ids


def reply_logprobs(sut: SUT, conversation: Conversation, candidates: list[str], session=None, lane: int = 0):
    """(first, logprobs, replies): the next-token log-probabilities after the conversation (which predict every
    reply's first token), then per candidate and reply token t those after token t, and each candidate's
    tokens. The conversation runs through the model once; its keys and values serve every candidate."""
    import torch
    from transformers import DynamicCache

    model, prompt, replies = candidate_tokens(sut, conversation, candidates)
    session = session or sut.session(lanes=1)
    with torch.inference_mode():
        first, kv = session.extend(lane, prompt)
        cache = DynamicCache()
        for layer, (keys, values) in enumerate(kv):
            cache.update(keys, values, layer)
        cache.batch_repeat_interleave(len(replies))  # one copy of the prefix's keys/values per candidate
        # Right padding: under causal attention a real token never sees the padding after it, so the
        # real tokens' logits are exactly what each candidate would get alone; padded positions are ignored.
        width = max(len(r) for r in replies)
        batch = torch.tensor([r + [r[-1]] * (width - len(r)) for r in replies])
        logits = model(input_ids=batch, cache=cache, use_cache=True).logits
        logprobs = torch.log_softmax(logits.float(), dim=-1)
    return first, logprobs, replies


def candidate_tokens(sut: SUT, conversation: Conversation, candidates: list[str]):
    """(model, the prompt's token ids, each candidate's own token ids as the SUT's chat template renders them)."""
    if WEIGHTS not in sut.capabilities:
        raise SutError(f"{sut.model or sut.backend}: response selection needs a local model's token probabilities")
    if not candidates:
        raise ValueError("no candidates to score")
    model, tokenizer = sut.loaded
    model.eval()
    stops = stop_token_ids(model, tokenizer, sut.local.stop_at_newline)
    prompt = sut.prompt_ids(conversation)
    messages = conversation.messages(sut.settings.system_prompt)
    replies = []
    for candidate in candidates:
        ids = list(tokenizer.apply_chat_template(messages + [{"role": "assistant", "content": candidate}],
                                                 tokenize=True, return_dict=False))
        if ids[:len(prompt)] != prompt:
            raise SutError(f"{sut.model}: the chat template renders the conversation before a reply differently "
                           "from its generation prompt; candidates cannot be scored against it")
        reply = ids[len(prompt):]
        # the template closes the turn after the reply (an end-of-turn token, maybe a line break): not the reply's
        for end, token in enumerate(reply):
            if token in stops:
                reply = reply[:end]
                break
        if not reply:
            raise ValueError(f"candidate {candidate!r} has no tokens of its own")
        replies.append(reply)
    return model, prompt, replies
