"""MORTAR Studio: multi-turn metamorphic testing of LLM-based dialogue systems.

The Python API (``mortar.api``): ``mortar.run(dataset, sut, **settings)`` tests a system — any function
``messages -> str`` — and stores what it finds; ``mortar.report(result)`` and ``mortar.gate(result, "RATE:MT>0.5")``
read it; ``mortar.load_dataset`` reads every supported format; ``mortar.RunConfig`` is a run's whole
configuration. ``mortar.testing.assert_within_budget`` gates a system in pytest.
"""

from __future__ import annotations

API = ("run", "report", "gate", "load_dataset", "RunConfig", "RunResult", "BudgetExceeded", "ConfigError", "Run")
__all__ = list(API)


def __getattr__(name: str):
    # The API is loaded on first use: `import mortar.vocab` (and `python -m mortar --help`) stays light.
    if name in API:
        from mortar import api  # the engine behind the API: loaded on first use, not by every mortar.* import

        return getattr(api, name)
    raise AttributeError(f"module 'mortar' has no attribute {name!r}")
