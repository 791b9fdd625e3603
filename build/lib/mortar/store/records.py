"""Typed access to a stored run configuration (the JSON of ``runs.config``), read in Python, not in SQL."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class StoredConfig:
    """A run's configuration as stored; a key the run did not store reads as None (or empty)."""

    raw: dict[str, Any] = field(default_factory=dict, hash=False)

    @classmethod
    def from_json(cls, text: str | None) -> StoredConfig:
        data = json.loads(text) if text else {}
        return cls(data if isinstance(data, dict) else {})

    def _get(self, *keys: str):
        value = self.raw
        for key in keys:
            if not isinstance(value, Mapping):
                return None
            value = value.get(key)
        return value

    @property
    def sut_model(self) -> str | None:
        """The SUT's model name (None for a generation without a SUT)."""
        return _text(self._get("sut", "model"))

    @property
    def oracle(self) -> str | None:
        return _text(self._get("oracle"))

    @property
    def threshold(self) -> float | None:
        """The similarity threshold ε the run judged with."""
        value = self._get("threshold")
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    @property
    def kg_backend(self) -> str | None:
        return _text(self._get("kg", "backend"))

    @property
    def kg_model(self) -> str | None:
        return _text(self._get("kg", "model"))

    @property
    def method(self) -> str | None:
        return _text(self._get("method"))

    @property
    def run_config(self) -> dict | None:
        """The run configuration the run was started with, as stored JSON (None for generations and runs of earlier
        versions); ``mortar.config.RunConfig.from_json`` builds the configuration from it."""
        stored = self._get("run_config")
        return dict(stored) if isinstance(stored, Mapping) else None

    @property
    def sut_fingerprint(self) -> str | None:
        return _text(self._get("sut_fingerprint"))

    @property
    def failed_seeds(self) -> dict:
        """Seeds whose knowledge-graph extraction failed: seed id → the reason."""
        return dict(self._get("failed_seeds") or {})


def _text(value) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)  # a number or an object, as its JSON text
