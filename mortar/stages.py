"""Where a run's time goes: seconds per stage (knowledge graphs, test cases, context check, answering, …).

A stage entered inside another is counted apart, not twice: the outer one pauses. A stage entered again adds up.
``current`` names the stage running now (a memory sampler reads it)."""

from __future__ import annotations

import time
from contextlib import contextmanager


class Stages:
    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._open: list[tuple[str, float]] = []  # (stage, when it last started or resumed)

    @property
    def current(self) -> str | None:
        return self._open[-1][0] if self._open else None

    def _stop(self, now: float) -> None:
        name, since = self._open[-1]
        self.seconds[name] = self.seconds.get(name, 0.0) + now - since

    @contextmanager
    def __call__(self, name: str):
        now = time.perf_counter()
        if self._open:
            self._stop(now)
        self._open.append((name, now))
        try:
            yield
        finally:
            now = time.perf_counter()
            self._stop(now)
            self._open.pop()
            if self._open:
                self._open[-1] = (self._open[-1][0], now)
