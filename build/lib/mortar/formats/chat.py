"""Chat logs: OpenAI chat JSONL (``{"messages": [{"role", "content"}]}`` a line) and ShareGPT (``{"conversations":
[{"from", "value"}]}``, a JSON array or JSONL). A conversation becomes a seed: its system message is the grounding
(the story), each user turn a question and the assistant turn after it that question's gold answer (none when the
log ends on the user)."""

from __future__ import annotations

import json
from pathlib import Path

from mortar.dataset import DatasetError, Round, Seed
from mortar.formats.dialogues import json_lines

SHAREGPT_ROLES = {"system": "system", "human": "user", "user": "user", "gpt": "assistant", "assistant": "assistant",
                  "chatgpt": "assistant", "bing": "assistant", "bard": "assistant"}


def load_openai(path: Path, text: str, grounding_field: str | None = None) -> list[Seed]:
    seeds = []
    for lineno, rec in json_lines(path, text):
        where = f"{path}: line {lineno}"
        messages = _list_field(rec, "messages", where)
        turns = []
        for k, m in enumerate(messages):
            if not isinstance(m, dict) or "role" not in m:
                raise DatasetError(f"{where}: messages[{k}]: not an object with a role")
            turns.append((m["role"], _content(m.get("content"), f"{where}: messages[{k}].content")))
        seeds.append(_seed(rec, turns, where, f"{path.stem}-{lineno}", grounding_field, "messages"))
    return seeds


def load_sharegpt(path: Path, text: str, grounding_field: str | None = None) -> list[Seed]:
    if text.lstrip().startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as e:
            raise DatasetError(f"{path}: invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
        numbered = [(f"{path}: record {i}", i, rec) for i, rec in enumerate(records, start=1)]
    else:
        numbered = [(f"{path}: line {n}", n, rec) for n, rec in json_lines(path, text)]
    seeds = []
    for where, n, rec in numbered:
        turns = []
        for k, m in enumerate(_list_field(rec, "conversations", where)):
            if not isinstance(m, dict) or "from" not in m:
                raise DatasetError(f"{where}: conversations[{k}]: not an object with 'from'")
            role = SHAREGPT_ROLES.get(str(m["from"]).lower())
            if role is None:
                raise DatasetError(f"{where}: conversations[{k}].from: {m['from']!r} is none of human, gpt, system")
            turns.append((role, _content(m.get("value"), f"{where}: conversations[{k}].value")))
        seeds.append(_seed(rec, turns, where, f"{path.stem}-{n}", None, "conversations"))
    return seeds


def _list_field(rec, name: str, where: str) -> list:
    if not isinstance(rec, dict):
        raise DatasetError(f"{where}: not a JSON object")
    if not isinstance(rec.get(name), list):
        raise DatasetError(f"{where}: field '{name}': missing or not a list")
    return rec[name]


def _content(value, where: str) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if isinstance(value, list):
        value = "\n".join(part.get("text", "") for part in value if isinstance(part, dict) and part.get("type") == "text")
    if not isinstance(value, str):
        raise DatasetError(f"{where}: not text")
    return value


def _seed(rec: dict, turns: list[tuple[str, str]], where: str, default_id: str, grounding_field: str | None,
          field: str) -> Seed:
    system = [text for role, text in turns if role == "system"]
    if grounding_field:
        if not isinstance(rec.get(grounding_field), str):
            raise DatasetError(f"{where}: field '{grounding_field}' (the grounding): missing or not text")
        story = rec[grounding_field]
    else:
        story = "\n\n".join(system)
    rounds: list[Round] = []
    expecting_answer = False
    for k, (role, text) in enumerate(turns):
        if role == "system":
            continue
        if role == "user":
            if not text.strip():
                raise DatasetError(f"{where}: {field}[{k}]: an empty user message")
            if expecting_answer:
                raise DatasetError(f"{where}: {field}[{k}]: two user messages in a row (round {len(rounds)} has "
                                   "no assistant reply)")
            rounds.append(Round(len(rounds) + 1, text, None))
            expecting_answer = True
        elif role == "assistant":
            if not expecting_answer:
                raise DatasetError(f"{where}: {field}[{k}]: an assistant message with no user message before it")
            rounds[-1] = Round(rounds[-1].turn_id, rounds[-1].question, text)
            expecting_answer = False
        else:
            raise DatasetError(f"{where}: {field}[{k}]: role {role!r} is none of system, user, assistant")
    if not rounds:
        raise DatasetError(f"{where}: no user message (an empty dialogue)")
    seed_id = rec.get("id", default_id)
    if not isinstance(seed_id, (str, int)) or isinstance(seed_id, bool) or not str(seed_id).strip():
        raise DatasetError(f"{where}: field 'id': not a string")
    return Seed(id=str(seed_id), story=story, rounds=tuple(rounds), source=str(rec.get("source") or ""))
