"""The store as the engines' cache (``mortar.caches``): answers by SUT fingerprint, sensitivities by SUT and dataset."""

from __future__ import annotations

from mortar.store.connection import connect
from mortar.store.reads import read_sensitivities, stored_answers
from mortar.store.writes import write_answers, write_sensitivities, write_sut


class StoreCache:
    """Implements ``AnswerCache`` and ``ScoreCache`` on a store file (``db``: a path, or None for the default)."""

    def __init__(self, db=None):
        self.db = db

    def write_sut(self, sut_fingerprint: str, sut_config: dict) -> None:
        with connect(self.db) as con:
            write_sut(con, sut_fingerprint, sut_config)

    def read_answers(self, sut_fingerprint: str) -> dict[str, tuple]:
        with connect(self.db) as con:
            return stored_answers(con, sut_fingerprint)

    def write_answers(self, sut_fingerprint: str, rows: list[dict]) -> None:
        if rows:
            with connect(self.db) as con:
                write_answers(con, sut_fingerprint, rows)

    def read_sensitivities(self, sut_fingerprint, dataset_id, method, target) -> list[dict]:
        with connect(self.db) as con:
            return read_sensitivities(con, sut_fingerprint, dataset_id, method, target)

    def write_sensitivities(self, sut_fingerprint, dataset_id, method, target, rows) -> None:
        with connect(self.db) as con:
            write_sensitivities(con, sut_fingerprint, dataset_id, method, target, rows)
