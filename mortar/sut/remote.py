"""SUTs behind a chat-completions API: any OpenAI-compatible HTTP endpoint, or Groq through its SDK.

Requests, retries (429, 5xx, timeouts, malformed bodies; a Retry-After header in seconds or as an HTTP
date, else exponential backoff with jitter; bounded) and key hygiene are ``mortar.chat.ChatClient``'s; a
round that still fails becomes a ``SutError`` with the reason in one line, which the executor records as
an errored round. Up to ``lanes`` requests are in flight at once (``--lanes``; 64 and more suit a serving
engine such as vLLM), each on a client (and kept-alive connection) of its own; the executor sends them in
the conversation-prefix tree's order, so a server with prefix caching reuses the story and history they
share. An OpenAI-compatible server that returns prompt log-probabilities (vLLM) also gives the likelihood of a given
reply, for response selection (``ChatSUT.score_replies``).

Environment (the SUT may well be another endpoint than the one the knowledge-graph extractor uses):
- OpenAI-compatible: ``MORTAR_OPENAI_BASE_URL`` (else ``OPENAI_BASE_URL``, else the OpenAI API),
  ``MORTAR_OPENAI_MODEL``, ``MORTAR_OPENAI_API_KEY`` (else ``OPENAI_API_KEY``; may be empty for a local server);
- Groq: ``GROQ_API_KEY``, ``MORTAR_GROQ_MODEL``, optional ``GROQ_BASE_URL``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from urllib.parse import urlsplit, urlunsplit

from mortar.chat import DEFAULT_OPENAI_BASE_URL, GROQ, OPENAI, ChatClient, ChatConfig, ChatError
from mortar.sut.base import LOGPROBS, SCORES, SUT, Conversation, SutError, SutSettings

DEFAULT_CONCURRENCY = 4
# A fresh conversation (``--confirm``) asks the server not to reuse a cached prompt prefix: llama.cpp's field (its
# documentation warns that prompt caching can change results). Servers that do not know it ignore it (vLLM); the
# OpenAI API and Groq refuse unknown fields, so they are not sent it.
NO_PROMPT_CACHE = {"cache_prompt": False}
# A given reply scored as the prompt's end (vLLM's chat-completions extension): the conversation is rendered with the
# reply as the assistant's final message, left open (``continue_final_message``) instead of closed, and no new
# generation prompt after it (``add_generation_prompt``; the two cannot be used together).
CONTINUE_REPLY = {"add_generation_prompt": False, "continue_final_message": True}


class ChatSUT(SUT):
    def __init__(self, config: ChatConfig, settings: SutSettings | None = None,
                 concurrency: int = DEFAULT_CONCURRENCY):
        super().__init__(settings)
        # where the server returns them (asked for; refused in one line otherwise); Groq has no prompt log-probabilities
        self.capabilities = frozenset({LOGPROBS, SCORES} if config.provider == OPENAI else {LOGPROBS})
        self.chat_config = replace(config, json_mode=False)
        self.backend = config.provider
        self.model = config.model
        self.lanes = concurrency
        self._clients: list[ChatClient] = []  # every client made, closed by close()
        self._idle: list[ChatClient] = []  # those no request is using now
        self._lock = threading.Lock()

    def extra_config(self) -> dict:
        return {"base_url": public_url(self.chat_config.base_url)}

    def answer(self, conversation: Conversation) -> str:
        messages = conversation.messages(self.settings.system_prompt)
        extra = NO_PROMPT_CACHE if conversation.fresh and self._takes_cache_field else None
        return self._with_client(lambda client: client.complete(
            messages, temperature=0.0, max_tokens=self.settings.max_new_tokens, extra=extra)).strip()

    @property
    def _takes_cache_field(self) -> bool:
        """Whether requests may carry ``cache_prompt``: a self-hosted OpenAI-compatible server (llama.cpp, vLLM)."""
        url = (self.chat_config.base_url or DEFAULT_OPENAI_BASE_URL).rstrip("/")
        return self.backend == OPENAI and url != DEFAULT_OPENAI_BASE_URL

    def answer_with_logprobs(self, conversation: Conversation) -> tuple[str, list[list[float]]]:
        """The answer and its tokens' top log-probabilities (for Gini guidance); SutError when the service
        gives none."""
        messages = conversation.messages(self.settings.system_prompt)
        text, logprobs = self._with_client(lambda client: client.complete_with_logprobs(
            messages, temperature=0.0, max_tokens=self.settings.max_new_tokens))
        return text.strip(), logprobs

    def score_replies(self, conversation: Conversation, candidates: list[str]) -> list[float]:
        """Each candidate's mean log-probability per token as the assistant's reply after ``conversation``: the
        server's prompt log-probabilities (vLLM's) of the conversation ending in the candidate; SutError when the
        server gives none. The candidates go out concurrently, up to ``lanes`` at once."""
        if SCORES not in self.capabilities:
            raise SutError(f"{self.backend}: gives no prompt log-probabilities; response selection over HTTP needs a "
                           "vLLM-style server")
        if not candidates:
            raise ValueError("no candidates to score")
        messages = conversation.messages(self.settings.system_prompt)

        def tokens(reply: str) -> list[tuple[int, float] | None]:
            return self._with_client(lambda client: client.prompt_logprobs(
                messages + [{"role": "assistant", "content": reply}], extra=CONTINUE_REPLY))

        prefix = tokens("")  # the conversation up to where a reply starts, once for all the candidates
        with ThreadPoolExecutor(max_workers=min(self.lanes, len(candidates)), thread_name_prefix="score") as pool:
            scored = list(pool.map(tokens, candidates))
        scores = []
        for candidate, these in zip(candidates, scored):
            # Recent transformers cut a continued message's rendering right after its text, so the empty reply gives
            # exactly the prefix; older ones keep the turn's closing tokens after an empty message. Either way the
            # reply's own tokens start where its token ids leave the empty reply's.
            own = these[_shared_length(prefix, these):]
            if not own:
                raise SutError(f"{self.extra_config()['base_url']}: candidate {candidate!r} has no tokens of its own")
            scores.append(sum(logprob for _, logprob in own) / len(own))
        return scores

    def _with_client(self, call: Callable[[ChatClient], object]):
        """``call`` on a client that no other request is using. A client per request in flight (rather than one
        shared by all threads) keeps 64 and more concurrent requests off one connection pool's lock; a client
        outlives the thread that made it, keeping its connection alive for the next request."""
        with self._lock:
            client = self._idle.pop() if self._idle else None
        if client is None:
            client = ChatClient(self.chat_config)
            with self._lock:
                self._clients.append(client)
        try:
            return call(client)
        except ChatError as e:
            raise SutError(str(e)) from None
        finally:
            with self._lock:
                self._idle.append(client)

    def close(self) -> None:
        with self._lock:
            for client in self._clients:
                client.close()
            self._clients.clear()
            self._idle.clear()


def public_url(url: str | None) -> str | None:
    """A base URL without its user:password@: what goes into a fingerprint or the store."""
    if not url:
        return url
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.hostname + (f":{parts.port}" if parts.port else "")))


def _shared_length(a: list, b: list) -> int:
    """How many leading prompt tokens two prompt_logprobs lists share (by token id; the first has none in either)."""
    n = 0
    for x, y in zip(a, b):
        if (x and x[0]) != (y and y[0]):
            break
        n += 1
    return n


def openai_sut(model: str | None = None, env: Mapping[str, str] | None = None,
               settings: SutSettings | None = None, concurrency: int = DEFAULT_CONCURRENCY, **chat_options) -> ChatSUT:
    return ChatSUT(openai_config(model, env, **chat_options), settings, concurrency)


def openai_config(model: str | None = None, env: Mapping[str, str] | None = None, kind: str = "openai",
                  **chat_options) -> ChatConfig:
    """The OpenAI-compatible endpoint the ``MORTAR_OPENAI_*`` variables name (``kind``: the spec's, for the errors)."""
    env = os.environ if env is None else env
    model = model or env.get("MORTAR_OPENAI_MODEL")
    if not model:
        raise SutError(f"no model for the OpenAI-compatible SUT: set MORTAR_OPENAI_MODEL or name it ({kind}:MODEL)")
    base_url = env.get("MORTAR_OPENAI_BASE_URL") or env.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_BASE_URL
    key = env.get("MORTAR_OPENAI_API_KEY") or env.get("OPENAI_API_KEY") or ""
    if base_url == DEFAULT_OPENAI_BASE_URL and not key:
        raise SutError("the OpenAI API needs a key: set MORTAR_OPENAI_API_KEY or OPENAI_API_KEY "
                       "(or MORTAR_OPENAI_BASE_URL for another OpenAI-compatible server)")
    return ChatConfig(provider=OPENAI, model=model, base_url=base_url, api_key=key, **chat_options)


def groq_sut(model: str | None = None, env: Mapping[str, str] | None = None,
             settings: SutSettings | None = None, concurrency: int = DEFAULT_CONCURRENCY, **chat_options) -> ChatSUT:
    env = os.environ if env is None else env
    model = model or env.get("MORTAR_GROQ_MODEL")
    if not model:
        raise SutError("no model for the Groq SUT: set MORTAR_GROQ_MODEL or name it (groq:MODEL)")
    key = env.get("GROQ_API_KEY") or ""
    if not key:
        raise SutError("the Groq SUT needs an API key: set GROQ_API_KEY")
    config = ChatConfig(provider=GROQ, model=model, base_url=env.get("GROQ_BASE_URL") or None, api_key=key,
                        **chat_options)
    return ChatSUT(config, settings, concurrency)
