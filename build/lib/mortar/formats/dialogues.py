"""MORTAR's JSONL dialogues: ``{"id", "story" (optional), "rounds": [{"question", "answer" (optional)}]}`` a line;
and reading JSON lines with their line numbers, for every line-based format."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from mortar.dataset import DatasetError, Round, Seed, Where


def json_lines(path: Path, text: str) -> Iterator[tuple[int, object]]:
    """(line number, record) of every non-blank line; invalid JSON is a DatasetError naming the line."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as e:
            raise DatasetError(f"{path}: line {lineno}: invalid JSON at column {e.colno}: {e.msg}") from None


def load(path: Path, text: str, grounding_field: str | None = None) -> list[Seed]:
    seeds = []
    for lineno, rec in json_lines(path, text):
        where = Where(path, lineno - 1, rec, unit="line")
        rounds = []
        for k, r in enumerate(where.list_field("rounds")):
            question = where.item_field(r, "rounds", k, "question", str)
            answer = where.item_field(r, "rounds", k, "answer", str, required=False)
            rounds.append(Round(turn_id=k + 1, question=question, answer=answer))
        seeds.append(where.seed(rounds, story_required=False))
    return seeds
