"""Dialogue systems under test: local transformers models, OpenAI-compatible endpoints, Groq.

``make_sut(spec)`` is the one way in:

- ``smollm2`` (default), ``gemma3-270m``: local presets;
- a path to a Hugging Face model folder;
- ``openai`` or ``openai:MODEL``: an OpenAI-compatible endpoint (see ``mortar.sut.remote``);
- ``groq`` or ``groq:MODEL``: Groq;
- ``module:function`` (or the function itself): a Python function ``messages -> str``, sync or async;
- ``recurrent[:FILE]``: the bundled intent/slot model; ``openai-tools[:MODEL][@FILE]``: an OpenAI-compatible endpoint
  as an intent/slot system, asked with tool calls (``mortar.sut.nlu``, ``mortar.sut.nlu_tools``);
  ``hf-nlu:INTENT_FOLDER[+SLOT_FOLDER]``: Hugging Face sequence- and token-classification folders as an intent/slot
  system (``mortar.sut.nlu_hf``).
"""

from __future__ import annotations

from pathlib import Path

from mortar.sut.function import FunctionSUT, is_function_spec, load_function
from mortar.sut.nlu import RECURRENT, TOOLS, make_recurrent
from mortar.sut.nlu_hf import HF_NLU, make_hf_sut
from mortar.sut.base import (CAPABILITY_TEXT, LOGPROBS, SCORES, WEIGHTS, DEFAULT_MAX_NEW_TOKENS, DEFAULT_SYSTEM_PROMPT, PERSONA_SYSTEM_PROMPT, LOCAL_LANES, STORY, SUT, Completion, Conversation, Session,
                             SutError, SutSettings, ThreadedSession, Turn)

DEFAULT_SUT = "smollm2"

__all__ = ["CAPABILITY_TEXT", "LOGPROBS", "SCORES", "WEIGHTS", "DEFAULT_MAX_NEW_TOKENS", "DEFAULT_SUT", "DEFAULT_SYSTEM_PROMPT", "PERSONA_SYSTEM_PROMPT", "LOCAL_LANES", "STORY", "SUT", "Completion", "Conversation",
           "Session", "SutError", "SutSettings", "ThreadedSession", "Turn", "make_sut", "sut_choices"]


def sut_choices() -> list[str]:
    from mortar.sut.local import PRESETS  # loaded when a SUT is named (the HTTP kinds bring httpx)

    return [*PRESETS, "openai[:MODEL]", "groq[:MODEL]", "PATH (a Hugging Face model folder)",
            "module:function (a Python function messages -> str)",
            "recurrent[:FILE] (the bundled intent/slot model, trained on FILE or the NLU sample)",
            "openai-tools[:MODEL][@FILE] (an OpenAI-compatible endpoint as an intent/slot system, asked with tool "
            "calls; the intents and slots of FILE or the NLU sample)",
            "hf-nlu:INTENT_FOLDER[+SLOT_FOLDER] (Hugging Face sequence- and token-classification folders as an "
            "intent/slot system; the slots optional)"]


def make_sut(spec=DEFAULT_SUT, settings: SutSettings | None = None, *, lanes: int | None = None,
             **options) -> SUT:
    """The SUT named by ``spec``; nothing heavy is loaded until it answers. Raises SutError for a bad spec.

    ``lanes``: batch size of a local model, concurrent requests of an HTTP one. Further ``options`` go to
    the HTTP client (``timeout_s``, ``max_retries``, ``backoff_s``) or, with ``env``, replace os.environ.
    """
    from mortar.sut import local, remote  # loaded when a SUT is named (the HTTP kinds bring httpx)

    if callable(spec):  # a Python function: messages -> str
        return FunctionSUT(spec, settings, lanes=lanes or 1)
    kind, _, model = spec.partition(":")
    if kind == RECURRENT:
        return make_recurrent(spec, settings)
    if kind == TOOLS:
        from mortar.sut.nlu_tools import make_tools_sut  # brings httpx

        return make_tools_sut(spec, settings, lanes, **options)
    if kind == HF_NLU:
        return make_hf_sut(spec, settings)
    if spec in local.PRESETS:
        return local.LocalSUT(local.PRESETS[spec](), settings, **({"lanes": lanes} if lanes else {}))
    if kind in ("openai", "groq"):
        factory = remote.openai_sut if kind == "openai" else remote.groq_sut
        if lanes:
            options["concurrency"] = lanes
        return factory(model or None, settings=settings, **options)
    if Path(spec).is_dir():
        return local.LocalSUT(local.folder_model(spec), settings, **({"lanes": lanes} if lanes else {}))
    if is_function_spec(spec):
        return FunctionSUT(load_function(spec), settings, name=spec, lanes=lanes or 1)
    raise SutError(f"unknown SUT {spec!r}: choose one of {', '.join(sut_choices())}")
