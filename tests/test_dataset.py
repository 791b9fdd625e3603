import json
import re

import pytest

from mortar.dataset import DatasetError
from mortar.formats import load_dataset
from tests.conftest import SAMPLE, coqa_record


def test_coqa_loader_reads_official_shape_and_ignores_unknown_fields(write_coqa):
    path = write_coqa([coqa_record("a", 3), coqa_record("b", 2)])
    ds = load_dataset(path)
    assert [s.id for s in ds.seeds] == ["a", "b"]
    a = ds.seeds[0]
    assert a.story.startswith("Ann had")
    assert [(r.turn_id, r.question, r.answer) for r in a.rounds] == [
        (1, "Question 1?", "answer 1"), (2, "Question 2?", "answer 2"), (3, "Question 3?", "answer 3")]
    assert len(ds.sha256) == 64


def test_jsonl_loader_with_optional_story_and_answers(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(
        json.dumps({"id": "x", "story": "S.", "rounds": [{"question": "Who?", "answer": "Ann"}, {"question": "Why?"}]}) + "\n"
        + "\n"
        + json.dumps({"id": "y", "rounds": [{"question": "Where is the bank?"}]}) + "\n")
    ds = load_dataset(path)
    x, y = ds.seeds
    assert [(r.turn_id, r.answer) for r in x.rounds] == [(1, "Ann"), (2, None)]
    assert y.story == "" and y.rounds[0].question == "Where is the bank?"


def test_unknown_answers_are_flagged(write_coqa):
    rec = coqa_record("a", 2)
    rec["answers"][1]["input_text"] = "Unknown"
    ds = load_dataset(write_coqa([rec]))
    assert [r.is_unknown for r in ds.seeds[0].rounds] == [False, True]


def _bad_inputs(tmp_path, write_coqa):
    missing_story = coqa_record("m", 2)
    del missing_story["story"]
    missing_q_text = coqa_record("q", 2)
    del missing_q_text["questions"][1]["input_text"]
    unequal = coqa_record("u", 3)
    unequal["answers"].pop()
    empty = coqa_record("e", 1)
    empty["questions"], empty["answers"] = [], []
    not_json = tmp_path / "broken.json"
    not_json.write_text('{"data": [ {"id": "a",, } ]}')
    bad_jsonl = tmp_path / "broken.jsonl"
    bad_jsonl.write_text(json.dumps({"id": "a", "rounds": [{"question": "Hi?"}]}) + "\n{not json\n")
    jsonl_missing = tmp_path / "missing.jsonl"
    jsonl_missing.write_text(json.dumps({"id": "a", "rounds": [{"answer": "x"}]}) + "\n")
    return {
        "invalid JSON": (not_json, r"broken\.json: invalid JSON at line 1 column \d+"),
        "invalid JSONL line": (bad_jsonl, r"broken\.jsonl: line 2: invalid JSON"),
        "missing story": (write_coqa([missing_story], "ms.json"), r"ms\.json: record 1 \(id 'm'\): field 'story': missing"),
        "missing question text": (write_coqa([missing_q_text], "mq.json"),
                                  r"record 1 \(id 'q'\): field 'questions\[1\]\.input_text': missing"),
        "missing JSONL question": (jsonl_missing, r"missing\.jsonl: line 1 \(id 'a'\): field 'rounds\[0\]\.question': missing"),
        "unequal counts": (write_coqa([unequal], "uq.json"), r"record 1 \(id 'u'\): field 'questions/answers': 3 questions but 2 answers"),
        "empty dialogue": (write_coqa([empty], "em.json"), r"record 1 \(id 'e'\): field 'questions': empty dialogue"),
        "duplicate ids": (write_coqa([coqa_record("d", 2), coqa_record("d", 3)], "dup.json"),
                          r"record 2 \(id 'd'\): field 'id': duplicate of record 1"),
        "no file": (tmp_path / "nowhere.json", r"nowhere\.json: file not found"),
    }


@pytest.mark.parametrize("kind", ["invalid JSON", "invalid JSONL line", "missing story", "missing question text",
                                  "missing JSONL question", "unequal counts", "empty dialogue", "duplicate ids", "no file"])
def test_bad_input_gives_one_line_error_naming_file_record_and_field(kind, tmp_path, write_coqa):
    path, pattern = _bad_inputs(tmp_path, write_coqa)[kind]
    with pytest.raises(DatasetError) as err:
        load_dataset(path)
    message = str(err.value)
    assert "\n" not in message
    assert re.search(pattern, message), message


def test_sample_dataset_meets_its_brief():
    ds = load_dataset(SAMPLE)
    assert len(ds.seeds) >= 30
    domains = {s.source for s in ds.seeds}
    assert {"children_story", "news", "history", "science", "literature", "exam"} <= domains
    for s in ds.seeds:
        assert 10 <= len(s.rounds) <= 16, s.id
        assert 150 <= len(s.story.split()) <= 300, s.id
    questions = [r.question.lower() for s in ds.seeds for r in s.rounds]
    assert sum(r.is_unknown for s in ds.seeds for r in s.rounds) >= 3
    assert any(q.split()[0].strip("?") in ("why", "how") and len(q.split()) == 1 for q in questions)
    for pronoun in ("he", "she", "it", "they", "there", "then"):
        assert any(pronoun in re.findall(r"[a-z]+", q) for q in questions), pronoun
