"""An OpenAI-compatible endpoint as an intent/slot system, asked with tool calls: the tool it calls is the intent,
the tool's arguments are the slots.

The spec ``openai-tools:MODEL`` names the endpoint as ``openai:MODEL`` does (``MORTAR_OPENAI_BASE_URL``,
``MORTAR_OPENAI_MODEL``, ``MORTAR_OPENAI_API_KEY``). The tools are a dataset's intents and slots: by default the
bundled sample's (``data/sample_nlu.json``); ``openai-tools:MODEL@FILE`` takes those of the dataset in FILE (a run
on an intent/slot dataset that names ``openai-tools:MODEL`` gets its own dataset's).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from pathlib import Path

from mortar.chat import ChatClient, ChatConfig, ChatError
from mortar.dataset import DatasetError
from mortar.sut.base import SutError, SutSettings
from mortar.sut.nlu import SAMPLE_NLU, TOOLS, NLUSUT, NLUSystem, Prediction
from mortar.sut.remote import DEFAULT_CONCURRENCY, openai_config, public_url

log = logging.getLogger(__name__)

SYSTEM_MESSAGE = ("Call the one tool that matches the user's last request, with the words of the request as argument "
                  "values.")


def schema_of(seeds) -> dict[str, list[str]]:
    """Every intent of the seeds' utterances and, per intent, the sorted names of the slots its gold tags fill."""
    schema: dict[str, set[str]] = {}
    for seed in seeds:
        for r in seed.rounds:
            if r.intent:
                schema.setdefault(r.intent, set()).update(tag[2:] for tag in r.tags if tag != "O")
    return {intent: sorted(slots) for intent, slots in schema.items()}


def name_words(name: str) -> str:
    """A CamelCase or snake_case name in words: "BookRestaurant" → "book restaurant", "party_size" → "party size"."""
    return " ".join(re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").replace(".", " ").lower().split())


def tools_of(schema: dict[str, list[str]]) -> tuple[list[dict], dict[str, str]]:
    """One function tool per intent (its slots as optional string parameters), and tool name → intent. A tool's name
    is the intent with what the API refuses in a name (outside ``[A-Za-z0-9_-]``, past 64 characters) replaced."""
    tools, intent_of = [], {}
    for intent, slots in schema.items():
        name = re.sub(r"[^A-Za-z0-9_-]", "_", intent)[:64]
        while name in intent_of:  # two intents that read the same once cleaned
            name = name[:60] + f"_{len(intent_of)}"
        intent_of[name] = intent
        properties = {slot: {"type": "string", "description": name_words(slot)} for slot in slots}
        tools.append({"type": "function", "function": {
            "name": name, "description": name_words(intent),
            "parameters": {"type": "object", "properties": properties, "required": []}}})
    return tools, intent_of


def _plain(word: str) -> str:
    return word.lower().strip(".,!?;:\"'")


def tags_of(words: list[str], arguments: dict) -> tuple[tuple[str, ...], int]:
    """BIO tags over ``words`` from a tool call's arguments, and how many argument values were dropped: a value is
    found as a run of the utterance's words (lower-cased, outer punctuation aside), the first run no earlier value
    took; a value not in the utterance is dropped."""
    plain = [_plain(w) for w in words]
    tags, dropped = ["O"] * len(words), 0
    for slot, value in arguments.items():
        if value is None or value == "":  # a slot the tool call leaves empty
            continue
        scalar = isinstance(value, (str, int, float))  # a list or an object is no run of words
        wanted = [w for w in (_plain(v) for v in str(value).split()) if w] if scalar else []
        n = len(wanted)
        start = next((i for i in range(len(words) - n + 1)
                      if plain[i:i + n] == wanted and all(t == "O" for t in tags[i:i + n])), None) if n else None
        if start is None:
            dropped += 1
            continue
        tags[start:start + len(wanted)] = [f"B-{slot}"] + [f"I-{slot}"] * (len(wanted) - 1)
    return tuple(tags), dropped


class ToolCallNLU(NLUSystem):
    """A chat endpoint that understands an utterance by calling one of the tools it is given (one per intent, the
    intent's slots as the tool's parameters; ``tool_choice`` "required", temperature 0). The earlier utterances go
    before the understood one as user messages. The tool called is the intent; each argument value becomes the
    slot's B-/I- tags where its words occur in the utterance (values that do not occur are dropped, and counted in
    ``dropped``).

    ``probabilities`` is 1.0 for the called intent and 0.0 for the others: a tool call gives no distribution over
    the tools, so Gini guidance (DeepGini over these probabilities) cannot tell one utterance from another here.
    A reply without a tool call, calling a tool it was not given, or with arguments that are not a JSON object is a
    SutError naming the endpoint."""

    name = TOOLS

    def __init__(self, config: ChatConfig, schema: dict[str, list[str]]):
        if not schema:
            raise SutError(f"{TOOLS}: no intents to make tools of")
        self.schema = schema
        self.tools, self.intent_of = tools_of(schema)
        self.client = ChatClient(config)  # retries, key hygiene; thread-safe, so lanes may share it
        self.dropped = 0  # argument values not found in their utterance
        self._lock = threading.Lock()

    def predict(self, utterances: list[str]) -> Prediction:
        messages = [{"role": "system", "content": SYSTEM_MESSAGE}, *({"role": "user", "content": u} for u in utterances)]
        try:
            name, arguments = self.client.call_tool(messages, self.tools, temperature=0.0)
        except ChatError as e:
            raise SutError(str(e)) from None
        intent = self.intent_of[name]
        tags, dropped = tags_of(utterances[-1].split(), arguments)
        if dropped:
            with self._lock:
                self.dropped += dropped
            log.debug("%s: %d argument value(s) of %s not in %r", TOOLS, dropped, name, utterances[-1])
        return Prediction(intent, tags, {i: float(i == intent) for i in self.schema})

    def close(self) -> None:
        self.client.close()


class ToolCallSUT(NLUSUT):
    """``NLUSUT`` over a ``ToolCallNLU``: its configuration names the endpoint (never the key) and the tools."""

    backend = TOOLS

    def __init__(self, config: ChatConfig, schema: dict[str, list[str]], settings: SutSettings | None = None,
                 lanes: int = DEFAULT_CONCURRENCY):
        super().__init__(config.model, lambda: ToolCallNLU(config, schema), settings)
        self.chat_config, self.schema, self.lanes = config, schema, lanes

    def extra_config(self) -> dict:
        tools = json.dumps(tools_of(self.schema)[0], sort_keys=True)
        return {"base_url": public_url(self.chat_config.base_url),
                "tools": hashlib.sha256(tools.encode()).hexdigest()[:12]}

    def close(self) -> None:
        if self._system is not None:
            self._system.close()


def make_tools_sut(spec: str, settings: SutSettings | None = None, lanes: int | None = None, env=None,
                   **chat_options) -> ToolCallSUT:
    """``openai-tools[:MODEL][@FILE]``: the endpoint of the ``MORTAR_OPENAI_*`` variables (MODEL, else
    ``MORTAR_OPENAI_MODEL``), with the intents and slots of FILE's dataset (else the bundled sample's)."""
    from mortar.formats import load_dataset  # the schema is read when the SUT is named

    _, _, rest = spec.partition(":")
    model, _, path = rest.partition("@")
    config = openai_config(model or None, env, kind=TOOLS, json_mode=False, **chat_options)
    try:
        seeds = load_dataset(Path(path) if path else SAMPLE_NLU).seeds
    except DatasetError as e:
        raise SutError(f"{TOOLS}: {e}") from None
    schema = schema_of(seeds)
    if not schema:
        raise SutError(f"{TOOLS}: {path or SAMPLE_NLU} has no utterances with an intent to make tools of")
    return ToolCallSUT(config, schema, settings, lanes or DEFAULT_CONCURRENCY)
