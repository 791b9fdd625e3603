"""A small chat-completions client: any OpenAI-compatible endpoint over HTTP, or Groq through its SDK.

Each call sends one single-turn request and returns the assistant's text. Transient failures
(429, 408, 5xx, timeouts, dropped connections, unreadable response bodies) are retried a bounded
number of times with exponential backoff and jitter; a Retry-After header takes precedence over
the backoff. The API key goes into the request's Authorization header and nowhere else: it is
left out of repr(), of ``describe()``, of log records and of error messages.

Configuration comes from the environment (or any mapping, e.g. ``{**os.environ, **st.secrets}``):

- OpenAI-compatible HTTP: ``MORTAR_LLM_BASE_URL`` (falls back to ``OPENAI_BASE_URL``, then the
  OpenAI API), ``MORTAR_LLM_API_KEY`` (falls back to ``OPENAI_API_KEY``; may be empty for a local
  server), ``MORTAR_LLM_MODEL``.
- Groq SDK: ``GROQ_API_KEY`` (or ``MORTAR_LLM_API_KEY``), ``MORTAR_LLM_MODEL``, optional ``GROQ_BASE_URL``.
- ``MORTAR_LLM_PROVIDER`` (``openai`` or ``groq``) picks one explicitly; otherwise a base URL or an
  OpenAI-style key means HTTP, and a Groq key alone means Groq.
"""

from __future__ import annotations

import email.utils
import functools
import json
import logging
import os
import random
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime, timezone

import httpx

log = logging.getLogger(__name__)

OPENAI = "openai"
GROQ = "groq"
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
MAX_RETRY_AFTER_S = 120.0  # a server asking for a longer pause is treated as asking for this one
TRANSIENT_STATUS = {408, 409, 425, 429}  # plus every 5xx


class ChatError(RuntimeError):
    """A chat request failed for good (after the retries it deserved).

    ``status`` is the HTTP status when there was one, ``code`` the error code the service gave
    (for example Groq's ``json_validate_failed``), ``transient`` whether retrying might help.
    """

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None,
                 transient: bool = False, retry_after: float | None = None):
        super().__init__(message)
        self.status, self.code, self.transient, self.retry_after = status, code, transient, retry_after


class ChatConfigError(ValueError):
    """The environment does not describe a usable chat endpoint; the message says what to set."""


@dataclass(frozen=True)
class ChatConfig:
    provider: str  # OPENAI (any OpenAI-compatible HTTP endpoint) or GROQ (the Groq SDK)
    model: str
    base_url: str | None = None  # OPENAI: ".../v1"; GROQ: None for the SDK's default
    api_key: str = field(default="", repr=False)
    timeout_s: float = 60.0
    max_retries: int = 4  # retries after the first attempt, transient failures only
    backoff_s: float = 1.0  # pause before the first retry; doubles with each further one
    max_backoff_s: float = 30.0
    json_mode: bool = True  # ask the service for a JSON object (response_format)

    def __post_init__(self):
        if self.provider not in (OPENAI, GROQ):
            raise ChatConfigError(f"unknown LLM provider {self.provider!r}: use {OPENAI!r} or {GROQ!r}")
        if not self.model:
            raise ChatConfigError("no LLM model given: set MORTAR_LLM_MODEL to the model's name")
        if self.provider == OPENAI and not self.base_url:
            raise ChatConfigError("no base URL for the OpenAI-compatible endpoint: set MORTAR_LLM_BASE_URL")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides) -> "ChatConfig":
        env = os.environ if env is None else env
        provider = (overrides.pop("provider", None) or env.get("MORTAR_LLM_PROVIDER") or "").strip().lower()
        model = overrides.pop("model", None) or env.get("MORTAR_LLM_MODEL", "")
        http_url = env.get("MORTAR_LLM_BASE_URL") or env.get("OPENAI_BASE_URL")
        http_key = env.get("MORTAR_LLM_API_KEY") or env.get("OPENAI_API_KEY")
        if not provider:
            if http_url or http_key:
                provider = OPENAI
            elif env.get("GROQ_API_KEY"):
                provider = GROQ
            else:
                raise ChatConfigError(
                    "no LLM endpoint configured: set MORTAR_LLM_BASE_URL (and MORTAR_LLM_API_KEY if the server "
                    "needs one) for an OpenAI-compatible server, or GROQ_API_KEY for Groq; and MORTAR_LLM_MODEL")
        if provider == GROQ:
            key = env.get("MORTAR_LLM_API_KEY") or env.get("GROQ_API_KEY") or ""
            if not key:
                raise ChatConfigError("the Groq provider needs an API key: set GROQ_API_KEY")
            settings = {"base_url": env.get("GROQ_BASE_URL") or None, "api_key": key}
        else:
            base_url = http_url or DEFAULT_OPENAI_BASE_URL
            if base_url == DEFAULT_OPENAI_BASE_URL and not http_key:
                raise ChatConfigError("the OpenAI API needs a key: set MORTAR_LLM_API_KEY or OPENAI_API_KEY "
                                      "(or MORTAR_LLM_BASE_URL for another OpenAI-compatible server)")
            settings = {"base_url": base_url, "api_key": http_key or ""}
        settings.update(overrides)
        return cls(provider=provider, model=model, **settings)

    def describe(self) -> dict:
        """The settings without the key: safe to log, store or show."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "api_key"}


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every HTTP client of the process: making one reads the CA bundle (~50 ms), too
    slow to repeat for each of the dozens of clients a concurrent HTTP SUT opens."""
    return httpx.create_ssl_context()


class ChatClient:
    """Single-turn chat completions with bounded retries. Use as a context manager or call close().
    One client may serve several threads (the connection pool is shared)."""

    def __init__(self, config: ChatConfig, *, sleep: Callable[[float], None] = time.sleep,
                 rng: random.Random | None = None):
        self.config = config
        self._sleep = sleep  # injectable, so tests never wait for real backoff
        self._rng = rng or random.Random()
        self._http: httpx.Client | None = None
        self._groq = None
        self._lock = threading.Lock()  # guards the lazy creation of the connection

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, sleep: Callable[[float], None] = time.sleep,
                 **overrides) -> "ChatClient":
        return cls(ChatConfig.from_env(env, **overrides), sleep=sleep)

    @property
    def model(self) -> str:
        return self.config.model

    def __repr__(self) -> str:
        return f"ChatClient({self.config!r})"

    def __enter__(self) -> "ChatClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None
            if self._groq is not None:
                self._groq.close()
                self._groq = None

    def complete(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int | None = None,
                 extra: dict | None = None) -> str:
        """The assistant's reply to ``messages``; raises ChatError when the request fails for good. ``extra``: more
        fields of the request body (a server's own, such as llama.cpp's ``cache_prompt``)."""
        return self._call({**self._body(messages, temperature, max_tokens), **(extra or {})}, self._content)

    def complete_with_logprobs(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int | None = None,
                               top_logprobs: int = 20) -> tuple[str, list[list[float]]]:
        """The reply and, per reply token, the log-probabilities of the service's ``top_logprobs`` most likely
        tokens at that place; ChatError (not transient) when the service returns none."""
        body = {**self._body(messages, temperature, max_tokens), "logprobs": True, "top_logprobs": top_logprobs}

        def parse(where: str, data) -> tuple[str, list[list[float]]]:
            content = self._content(where, data)
            try:
                tokens = data["choices"][0]["logprobs"]["content"]
                return content, [[float(t["logprob"]) for t in token["top_logprobs"]] for token in tokens]
            except (KeyError, IndexError, TypeError, ValueError):
                raise ChatError(f"{where} returned no token log-probabilities (logprobs)") from None
        return self._call(body, parse)

    def call_tool(self, messages: list[dict], tools: list[dict], *, tool_choice: str = "required",
                  temperature: float = 0.0, max_tokens: int | None = None) -> tuple[str, dict]:
        """The function tool the assistant calls in reply to ``messages`` (the first, if it calls several) and its
        arguments. ChatError (not transient) when the reply calls none, calls a tool it was not given, or gives
        arguments that are not a JSON object."""
        body = {**self._body(messages, temperature, max_tokens), "tools": tools, "tool_choice": tool_choice}
        names = {tool["function"]["name"] for tool in tools}

        def parse(where: str, data) -> tuple[str, dict]:
            try:
                message = data["choices"][0]["message"]
                calls = message.get("tool_calls")
            except (KeyError, IndexError, TypeError, AttributeError):
                raise ChatError(f"malformed response body from {where}: no choices[0].message", transient=True) from None
            if not calls or not isinstance(calls, list) or not isinstance(calls[0], dict):
                text = " ".join(self._redact(str(message.get("content") or "")).split())[:80]
                raise ChatError(f"{where} answered without a tool call" + (f" ({text!r})" if text else ""))
            function = calls[0].get("function") if isinstance(calls[0].get("function"), dict) else {}
            name = function.get("name")
            if name not in names:
                raise ChatError(f"{where} called a tool it was not given: {str(name)[:60]!r}")
            arguments = function.get("arguments") or {}
            if isinstance(arguments, str):  # the OpenAI API's form; some servers send the object itself
                try:
                    arguments = json.loads(arguments) if arguments.strip() else {}
                except ValueError:
                    raise ChatError(f"{where}: the arguments of the tool call {name!r} are not JSON") from None
            if not isinstance(arguments, dict):
                raise ChatError(f"{where}: the arguments of the tool call {name!r} are not a JSON object")
            return name, arguments
        return self._call(body, parse)

    def prompt_logprobs(self, messages: list[dict], extra: dict | None = None) -> list[tuple[int, float] | None]:
        """Per token of the prompt ``messages`` render to, its id and its log-probability given the tokens before it
        (None for the first token, which nothing predicts): vLLM's ``prompt_logprobs`` extension of chat
        completions. ``extra``: more fields of the request (vLLM's ``continue_final_message`` …). ChatError (not
        transient) when the server returns none."""
        body = {**self._body(messages, 0.0, 1), "prompt_logprobs": 0, **(extra or {})}

        def parse(where: str, data) -> list[tuple[int, float] | None]:
            # vLLM's ChatCompletionResponse.prompt_logprobs: list[dict[int, Logprob] | None], one entry per prompt
            # token, null for the first; each dict holds the prompt's own token first (then the top
            # ``prompt_logprobs`` others: none for 0), keyed by token id (a string in JSON), a Logprob being
            # {"logprob", "rank", "decoded_token"}
            entries = data.get("prompt_logprobs") if isinstance(data, dict) else None
            try:
                if not entries:
                    raise ValueError
                return [None if entry is None else _own_token(entry) for entry in entries]
            except (AttributeError, KeyError, TypeError, ValueError, StopIteration):
                raise ChatError(f"{where}: the server returned no prompt_logprobs; response selection over HTTP "
                                "needs a vLLM-style server") from None
        return self._call(body, parse)

    def _body(self, messages: list[dict], temperature: float, max_tokens: int | None) -> dict:
        body: dict = {"model": self.config.model, "messages": messages, "temperature": temperature}
        if self.config.json_mode:
            body["response_format"] = {"type": "json_object"}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        return body

    def _call(self, body: dict, parse):
        """Send ``body`` and ``parse(where, data)`` the response, retrying transient failures."""
        send = self._send_groq if self.config.provider == GROQ else self._send_http
        attempt = 0
        while True:
            try:
                return parse(*send(body))
            except ChatError as e:
                if not e.transient:
                    raise
                if attempt >= self.config.max_retries:
                    raise ChatError(f"{e} (gave up after {attempt + 1} attempts)", status=e.status, code=e.code,
                                    transient=True) from None
                delay = self._delay(attempt, e.retry_after)
                attempt += 1
                log.warning("%s; retry %d of %d in %.1f s", e, attempt, self.config.max_retries, delay)
                self._sleep(delay)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, MAX_RETRY_AFTER_S)
        step = min(self.config.max_backoff_s, self.config.backoff_s * 2 ** attempt)
        # half fixed, half random: clients that failed together do not all come back together
        return step / 2 + self._rng.uniform(0, step / 2)

    # -- OpenAI-compatible HTTP -----------------------------------------------------------
    def _send_http(self, body: dict) -> tuple[str, object]:
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        with self._lock:
            if self._http is None:
                headers = {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}
                self._http = httpx.Client(timeout=self.config.timeout_s, headers=headers, verify=_tls_context())
            http = self._http
        try:
            response = http.post(url, json=body)
        except httpx.TimeoutException:
            raise ChatError(f"no answer from {url} within {self.config.timeout_s:g} s", transient=True) from None
        except httpx.TransportError as e:
            raise ChatError(f"cannot reach {url} ({type(e).__name__})", transient=True) from None
        if response.status_code != 200:
            raise self._status_error(url, response.status_code, response.headers, response.text)
        try:
            data = response.json()
        except ValueError:
            raise ChatError(f"malformed response body from {url}: not JSON", transient=True) from None
        return url, data

    # -- Groq SDK -------------------------------------------------------------------------
    def _send_groq(self, body: dict) -> tuple[str, object]:
        import groq  # only needed for this provider

        where = "Groq"
        with self._lock:
            if self._groq is None:
                # the SDK's own retries are off: one retry policy, ours, for both providers
                self._groq = groq.Groq(api_key=self.config.api_key, base_url=self.config.base_url,
                                       timeout=self.config.timeout_s, max_retries=0)
            client = self._groq
        try:
            response = client.chat.completions.with_raw_response.create(**body)
        except groq.APITimeoutError:
            raise ChatError(f"no answer from {where} within {self.config.timeout_s:g} s", transient=True) from None
        except groq.APIConnectionError as e:
            raise ChatError(f"cannot reach {where} ({type(e).__name__})", transient=True) from None
        except groq.APIStatusError as e:
            raise self._status_error(where, e.status_code, e.response.headers, e.response.text) from None
        try:
            data = json.loads(response.http_response.text)
        except ValueError:
            raise ChatError(f"malformed response body from {where}: not JSON", transient=True) from None
        return where, data

    # -- shared ---------------------------------------------------------------------------
    def _content(self, where: str, data) -> str:
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise ChatError(f"malformed response body from {where}: no choices[0].message.content", transient=True)
        return content

    def _status_error(self, where: str, status: int, headers, text: str) -> ChatError:
        message, code = _error_detail(text)
        transient = status in TRANSIENT_STATUS or status >= 500
        detail = " ".join(self._redact(message).split())[:300]  # one line: it ends up in logs and the store
        detail = f": {detail}" if detail else ""
        return ChatError(f"HTTP {status} from {where}{detail}", status=status, code=code, transient=transient,
                         retry_after=parse_retry_after(headers.get("retry-after")))

    def _redact(self, text: str) -> str:
        # a misbehaving server may echo the request back; the key must not reach logs or the store
        key = self.config.api_key
        return text.replace(key, "***") if key else text


def _own_token(entry: dict) -> tuple[int, float]:
    token, logprob = next(iter(entry.items()))
    return int(token), float(logprob["logprob"])


def _error_detail(text: str) -> tuple[str, str | None]:
    """The message and code of an error body ({"error": {"message", "code"}}), or its raw text."""
    try:
        error = json.loads(text).get("error")
    except (ValueError, AttributeError):
        return text.strip(), None
    if isinstance(error, dict):
        code = error.get("code") or error.get("type")
        return str(error.get("message") or ""), str(code) if code else None
    return (str(error) if error else text.strip()), None


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date; None when absent or invalid."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())
