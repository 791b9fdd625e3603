"""What every system under test shares: the conversation it is asked, its settings, its fingerprint.

A SUT answers one question given the story and the conversation so far (the earlier questions with
its own earlier answers). The executor talks to a SUT through a ``Session``: it submits
conversations on numbered lanes and waits for answers. A lane is a slot of parallel work — a row of
a batch for a local model, a concurrent request for an HTTP service — and the executor keeps each
lane on one branch of the conversation tree, so a local model can extend the lane's KV cache.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import queue
import time
from abc import ABC, abstractmethod
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass

log = logging.getLogger(__name__)

STORY = "{story}"

# MORTAR §IV-E: the story comes first as reference material; answers are to be concise; a question
# the dialogue system cannot answer gets "Unknown".
DEFAULT_SYSTEM_PROMPT = (
    "Story:\n{story}\n\n"
    "Answer the user's questions about this story. Be concise: reply with a short phrase only. "
    'If a question cannot be answered from the story, reply "Unknown".'
)
# A persona dialogue (the persona paper's setting): the persona is the system prompt, the partner's lines the turns.
PERSONA_SYSTEM_PROMPT = (
    "You are the person described below, chatting with someone you just met.\n"
    "Your persona:\n{story}\n\n"
    "Stay in character and reply as this person in one or two short sentences."
)
DEFAULT_MAX_NEW_TOKENS = 48
# Conversations a local model decodes together. Six answer as fast as eight on two cores once the weights are
# packed, and every lane holds a whole conversation's keys and values (about 45 KB a token for SmolLM2).
LOCAL_LANES = 6


class SutError(RuntimeError):
    """The SUT gave no answer for this conversation; the message says why (never holds a key)."""


@dataclass(frozen=True)
class Turn:
    question: str
    answer: str


@dataclass(frozen=True)
class Conversation:
    """What the SUT sees for one round: the story, the earlier turns, and the new question."""

    story: str
    history: tuple[Turn, ...]
    question: str
    sample: int = 0  # > 0: the same conversation asked again (``--orig-repeats``), stored as an answer of its own
    # asked to confirm a detection (``--confirm``): answered afresh, from no cached prefix (the engine's prompt cache
    # where it allows); the same conversation, so not in the hash
    fresh: bool = False

    @functools.cached_property
    def hash(self) -> str:
        """Identifies the conversation (not the SUT): key of the stored answer together with the fingerprint."""
        doc = [self.story, [[t.question, t.answer] for t in self.history], self.question]
        if self.sample:
            doc.append(self.sample)
        return hashlib.sha256(json.dumps(doc, ensure_ascii=False).encode()).hexdigest()

    def messages(self, system_prompt: str) -> list[dict]:
        messages = [{"role": "system", "content": system_prompt.replace(STORY, self.story)}]
        for turn in self.history:
            messages.append({"role": "user", "content": turn.question})
            messages.append({"role": "assistant", "content": turn.answer})
        messages.append({"role": "user", "content": self.question})
        return messages


@dataclass(frozen=True)
class SutSettings:
    """The settings that change answers; all of them are part of the SUT's fingerprint."""

    system_prompt: str = DEFAULT_SYSTEM_PROMPT  # "{story}" marks where the story goes
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS  # decoding is greedy (temperature 0)

    def __post_init__(self):
        if STORY not in self.system_prompt:
            raise ValueError("the system prompt must contain {story}, where the story goes")
        if self.max_new_tokens < 1:
            raise ValueError("max_new_tokens must be at least 1")


@dataclass(frozen=True)
class Completion:
    """What a session returns for a lane: the answer text, or the error that stands in for it."""

    lane: int
    text: str | None
    error: str | None
    seconds: float
    gini: float | None = None  # DeepGini impurity of the answer's token choices, where the SUT exposes them


# What a SUT can give beyond its answers; a test method or a guide declares which of them it requires.
WEIGHTS = "weights"  # a local model's weights: gradients, attention, the likelihood of any text (GRI, WALI, selection)
LOGPROBS = "logprobs"  # the probabilities behind its own answers: tokens, or a classifier's labels (Gini guidance)
SCORES = "scores"  # the likelihood of a reply it is given (response selection)
CAPABILITY_TEXT = {WEIGHTS: "a local model's gradients, attention and token probabilities (transformers)",
                   LOGPROBS: "the probabilities behind its answers (a local model, an HTTP service that returns "
                             "logprobs, or an intent classifier's probability of every intent)",
                   SCORES: "the likelihood of a given reply (a local model, or an OpenAI-compatible server that returns "
                           "prompt log-probabilities, as vLLM does)"}


class SUT(ABC):
    """A dialogue system under test. Subclasses set ``backend``, ``model``, ``lanes`` and ``capabilities``."""

    backend: str = ""
    model: str = ""
    lanes: int = 1  # how many conversations the executor may keep in progress at once
    capabilities: frozenset[str] = frozenset()  # WEIGHTS, LOGPROBS, SCORES

    def __init__(self, settings: SutSettings | None = None):
        self.settings = settings or SutSettings()

    def config(self) -> dict:
        """Everything that determines the answers, readable; never holds a key."""
        return {"backend": self.backend, "model": self.model, "decoding": "greedy", **asdict(self.settings),
                **self.extra_config()}

    def extra_config(self) -> dict:
        return {}

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.config(), sort_keys=True).encode()).hexdigest()[:32]

    @abstractmethod
    def answer(self, conversation: Conversation) -> str:
        """The answer text; raises SutError when there is none."""

    def session(self) -> "Session":
        return ThreadedSession(self)

    def close(self) -> None:
        """Release connections; loaded weights stay cached for the process."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(backend={self.backend!r}, model={self.model!r})"


class Session(ABC):
    """Conversations in progress on lanes 0 … lanes-1; at most one per lane."""

    lanes: int
    # A lane keeps what it last answered (a local model's KV cache): the executor goes on with that branch
    # on the same lane. Without (HTTP), it sends ready conversations in the prefix tree's order instead.
    lane_cache: bool = True

    @abstractmethod
    def submit(self, lane: int, conversation: Conversation) -> None:
        """Start answering ``conversation`` on a free lane."""

    @abstractmethod
    def wait(self) -> list[Completion]:
        """Block until at least one submitted conversation is answered; return every finished one."""

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ThreadedSession(Session):
    """Calls ``sut.answer`` on a pool of ``sut.lanes`` threads: bounded concurrency for HTTP services.

    Finished requests are handed over through a queue, so waiting costs the same with 64 lanes as with one.
    With one lane there is no pool: a conversation is answered when submitted, on the caller's thread (handing
    each one to a thread and back cost more than a fast system's answer: a quarter of a millisecond).
    """

    lane_cache = False  # any thread may take any conversation; the service keeps (or not) its own prefix cache

    def __init__(self, sut: SUT):
        self.sut = sut
        self.lanes = max(1, sut.lanes)
        self._pool = ThreadPoolExecutor(max_workers=self.lanes, thread_name_prefix="sut") if self.lanes > 1 else None
        self._busy: set[int] = set()
        self._finished: queue.Queue[tuple[int, Future]] = queue.Queue()

    def submit(self, lane: int, conversation: Conversation) -> None:
        if lane in self._busy:
            raise ValueError(f"lane {lane} is busy")
        self._busy.add(lane)
        if self._pool is None:
            future: Future = Future()
            try:
                future.set_result(self._timed(conversation))
            except Exception as e:  # raised by wait(), as from a thread
                future.set_exception(e)
            self._finished.put((lane, future))
            return
        future = self._pool.submit(self._timed, conversation)
        future.add_done_callback(lambda done: self._finished.put((lane, done)))

    def _timed(self, conversation: Conversation) -> tuple[str | None, str | None, float]:
        start = time.perf_counter()
        try:
            text, error = self.sut.answer(conversation), None
        except SutError as e:
            text, error = None, str(e)
            log.warning("SUT %s gave no answer: %s", self.sut.model, error)
        return text, error, time.perf_counter() - start

    def wait(self) -> list[Completion]:
        if not self._busy:
            return []
        done = [self._finished.get()]
        while not self._finished.empty():
            done.append(self._finished.get())
        finished = []
        for lane, future in done:
            self._busy.discard(lane)
            text, error, seconds = future.result()  # anything but SutError is a bug: let it surface
            finished.append(Completion(lane, text, error, seconds))
        return finished

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._busy.clear()
