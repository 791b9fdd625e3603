"""A Python function as the system under test: ``reply(messages) -> str``, sync or async.

``messages`` is the chat the executor would send an HTTP SUT: the system prompt with the story, the earlier turns
(the function's own earlier answers) and the new question, as ``[{"role", "content"}]``. On the command line,
``--sut module:function`` names one (the current folder is on the import path). Edits to the function's source
change its fingerprint, so its answers are asked again rather than read from the store.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import inspect
import os
import re
import sys
import tokenize
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from mortar.sut.base import SUT, Conversation, SutError, SutSettings

SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")  # module.path:function (or :Class.method)


def is_function_spec(spec: str) -> bool:
    return bool(SPEC.match(spec))


def load_function(spec: str) -> Callable:
    """The callable ``module:attr`` names; SutError in one line when it cannot be found."""
    module_name, _, attr = spec.partition(":")
    if os.getcwd() not in sys.path:  # as `python -m` would: a module in the current folder is found
        sys.path.insert(0, os.getcwd())
    try:
        target = importlib.import_module(module_name)
    except ImportError as e:
        raise SutError(f"--sut {spec}: cannot import {module_name}: {e} (is it on the path? run from its folder "
                       "or set PYTHONPATH)") from None
    for part in attr.split("."):
        if not hasattr(target, part):
            raise SutError(f"--sut {spec}: {module_name} has no {attr}")
        target = getattr(target, part)
    if not callable(target):
        raise SutError(f"--sut {spec}: {attr} is not callable (a function messages -> str)")
    return target


class FunctionSUT(SUT):
    backend = "python"

    def __init__(self, function: Callable, settings: SutSettings | None = None, name: str | None = None,
                 lanes: int = 1):
        super().__init__(settings)
        self.function = function
        self.model = name or f"{getattr(function, '__module__', '?')}:{getattr(function, '__qualname__', '?')}"
        self.lanes = lanes  # calls at once, on threads: 1 unless the function is known to be thread-safe

    def extra_config(self) -> dict:
        try:
            source = inspect.getsource(self.function)
        except (OSError, TypeError, SyntaxError, tokenize.TokenError):  # built in, or made at run time (exec): its
            # name stands for it
            return {}
        return {"source_sha256": hashlib.sha256(source.encode()).hexdigest()[:16]}

    def answer(self, conversation: Conversation) -> str:
        try:
            result = self.function(conversation.messages(self.settings.system_prompt))
            if inspect.isawaitable(result):
                result = _run(result)
        except SutError:
            raise
        except Exception as e:  # the function's own failure is an errored round, with its reason
            raise SutError(f"{self.model} raised {type(e).__name__}: {e}") from None
        if not isinstance(result, str):
            raise SutError(f"{self.model} returned {type(result).__name__}, not text")
        return result.strip()


async def _awaited(awaitable):
    return await awaitable


def _run(awaitable):
    """The awaitable's result, on a loop of its own; in a thread of its own where this one already runs a loop
    (a notebook, an async test)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(awaitable))
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, _awaited(awaitable)).result()
