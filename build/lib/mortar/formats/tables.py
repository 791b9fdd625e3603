"""Parquet and Arrow files with Hugging Face's CoQA columns (``story``, ``questions``, ``answers.input_text``) or
QuAC's (``context``, ``questions``, ``orig_answers.texts`` or else the first of ``answers.texts``), read with
pyarrow, no network. QuAC's "CANNOTANSWER" is the gold answer "unknown"."""

from __future__ import annotations

from pathlib import Path

from mortar.dataset import UNKNOWN, DatasetError, Round, Seed

PARQUET_MAGIC, ARROW_MAGIC = b"PAR1", b"ARROW1"
ARROW_STREAM = b"\xff\xff\xff\xff"  # an Arrow IPC stream's first message (Hugging Face's save_to_disk files)
QUAC_NO_ANSWER = "CANNOTANSWER"


def is_table(raw: bytes) -> bool:
    return raw[:4] == PARQUET_MAGIC or raw[:6] == ARROW_MAGIC or raw[:4] == ARROW_STREAM


def load(path: Path, raw: bytes, grounding_field: str | None = None) -> list[Seed]:
    rows = _rows(path, raw)
    if not rows:
        return []
    columns = set(rows[0])
    if {"story", "questions", "answers"} <= columns:
        return [_coqa(path, i, row) for i, row in enumerate(rows, start=1)]
    if {"context", "questions"} <= columns and columns & {"orig_answers", "answers"}:
        return [_quac(path, i, row) for i, row in enumerate(rows, start=1)]
    raise DatasetError(f"{path}: columns {', '.join(sorted(columns))}: neither Hugging Face's CoQA (story, "
                       "questions, answers) nor QuAC (context, questions, orig_answers or answers)")


def _rows(path: Path, raw: bytes) -> list[dict]:
    import pyarrow as pa  # heavy: pyarrow, only for table files
    import pyarrow.ipc
    import pyarrow.parquet

    try:
        if raw[:4] == PARQUET_MAGIC:
            table = pa.parquet.read_table(pa.BufferReader(raw))
        elif raw[:6] == ARROW_MAGIC:
            table = pa.ipc.open_file(pa.BufferReader(raw)).read_all()
        else:
            table = pa.ipc.open_stream(pa.BufferReader(raw)).read_all()
    except (pa.ArrowInvalid, OSError) as e:
        raise DatasetError(f"{path}: not a readable Parquet or Arrow file: {str(e).splitlines()[0]}") from None
    return table.to_pylist()


def _texts(path: Path, i: int, row: dict, name: str) -> list[str]:
    value = row.get(name)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DatasetError(f"{path}: row {i}: column '{name}': not a list of strings")
    return value


def _rounds(path: Path, i: int, questions: list[str], answers: list[str | None]) -> tuple[Round, ...]:
    if len(questions) != len(answers):
        raise DatasetError(f"{path}: row {i}: {len(questions)} questions but {len(answers)} answers")
    if not questions:
        raise DatasetError(f"{path}: row {i}: no questions (an empty dialogue)")
    for k, q in enumerate(questions):
        if not q.strip():
            raise DatasetError(f"{path}: row {i}: questions[{k}]: empty")
    return tuple(Round(k, q, a) for k, (q, a) in enumerate(zip(questions, answers), start=1))


def _coqa(path: Path, i: int, row: dict) -> Seed:
    answers = row.get("answers")
    if not isinstance(answers, dict):
        raise DatasetError(f"{path}: row {i}: column 'answers': not a struct with input_text")
    story = row.get("story")
    if not isinstance(story, str):
        raise DatasetError(f"{path}: row {i}: column 'story': not text")
    rounds = _rounds(path, i, _texts(path, i, row, "questions"), _texts(path, i, answers, "input_text"))
    seed_id = row.get("id") or f"{path.stem}-{i}"
    return Seed(str(seed_id), story, rounds, str(row.get("source") or ""))


def _quac(path: Path, i: int, row: dict) -> Seed:
    context = row.get("context")
    if not isinstance(context, str):
        raise DatasetError(f"{path}: row {i}: column 'context': not text")
    questions = _texts(path, i, row, "questions")
    orig = row.get("orig_answers")
    if isinstance(orig, dict) and isinstance(orig.get("texts"), list):
        golds = orig["texts"]
    elif isinstance(row.get("answers"), dict) and isinstance(row["answers"].get("texts"), list):
        golds = [t[0] if isinstance(t, list) and t else None for t in row["answers"]["texts"]]
    else:
        raise DatasetError(f"{path}: row {i}: neither orig_answers.texts nor answers.texts is a list")
    golds = [UNKNOWN if g == QUAC_NO_ANSWER else g for g in golds]
    story = context.removesuffix(f" {QUAC_NO_ANSWER}")  # QuAC appends it to the context for span models
    background = row.get("background")
    if isinstance(background, str) and background.strip():
        story = f"{background.strip()}\n\n{story}"
    seed_id = row.get("dialogue_id") or f"{path.stem}-{i}"
    return Seed(str(seed_id), story, _rounds(path, i, questions, golds), str(row.get("wikipedia_page_title") or ""))
