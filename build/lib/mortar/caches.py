"""What the engines keep between runs, as small protocols (model layer): the executor keeps the SUT's answers,
white-box guidance its sensitivity scores. The store implements both (``mortar.store.StoreCache``); an engine
given no cache keeps nothing.
"""

from __future__ import annotations

from typing import Protocol


class AnswerCache(Protocol):
    def write_sut(self, sut_fingerprint: str, sut_config: dict) -> None:
        """Record the SUT whose answers follow (its readable configuration; never a key)."""

    def read_answers(self, sut_fingerprint: str) -> dict[str, tuple]:
        """conversation hash → (answer, seconds, gini) of every answer kept for this SUT."""

    def write_answers(self, sut_fingerprint: str, rows: list[dict]) -> None:
        """Keep answers: rows of conversation_hash, answer, error, seconds, created_at (gini optional)."""


class ScoreCache(Protocol):
    def read_sensitivities(self, sut_fingerprint: str, dataset_id: str, method: str, target: str) -> list[dict]:
        """Rows of seed_id, turn_id, segments, question_tokens, seconds."""

    def write_sensitivities(self, sut_fingerprint: str, dataset_id: str, method: str, target: str,
                            rows: list[dict]) -> None: ...


class NoCache:
    """Keeps nothing: every answer and score is computed again."""

    def write_sut(self, sut_fingerprint: str, sut_config: dict) -> None:
        pass

    def read_answers(self, sut_fingerprint: str) -> dict[str, tuple]:
        return {}

    def write_answers(self, sut_fingerprint: str, rows: list[dict]) -> None:
        pass

    def read_sensitivities(self, sut_fingerprint, dataset_id, method, target) -> list[dict]:
        return []

    def write_sensitivities(self, sut_fingerprint, dataset_id, method, target, rows) -> None:
        pass
