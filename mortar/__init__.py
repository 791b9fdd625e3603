"""MORTAR Studio: multi-turn metamorphic testing of LLM-based dialogue systems.

The Python API (``mortar.api``): ``mortar.run(dataset, sut, **settings)`` tests a system — any function
``messages -> str`` — and stores what it finds; ``mortar.report(result)`` and ``mortar.gate(result, "RATE:MT>0.5")``
read it; ``mortar.load_dataset`` reads every supported format; ``mortar.RunConfig`` is a run's whole
configuration. ``mortar.testing.assert_within_budget`` gates a system in pytest.
"""

from __future__ import annotations

import importlib

API = ("run", "report", "gate", "load_dataset", "RunConfig", "RunResult", "BudgetExceeded", "ConfigError", "Run")
__all__ = list(API)


def __getattr__(name: str):
    # PEP 562: the API module is imported on first use of one of its names, by name, so that importing any
    # mortar.* module (each imports this package first) neither loads the engine nor makes the package depend on it.
    if name in API:
        return getattr(importlib.import_module("mortar.api"), name)
    raise AttributeError(f"module 'mortar' has no attribute {name!r}")
