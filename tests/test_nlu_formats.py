"""Intent/slot datasets (issue 31): the nlu JSON, Snips' JSON and the ATIS-style seq.in / seq.out / label folder
read into dialogues of utterances with their intent and BIO tags; malformed input is one line naming the place."""

import json
from pathlib import Path

import pytest

from mortar import store
from mortar.dataset import DatasetError
from mortar.formats import detect_format, load_dataset

DATA = Path(__file__).parent.parent / "data"


def test_the_sample_reads_as_dialogues_with_intents_and_tags():
    seeds = load_dataset(DATA / "sample_nlu.json").seeds
    rounds = [r for s in seeds for r in s.rounds]
    assert len(rounds) >= 300 and len({r.intent for r in rounds}) >= 6
    assert all(len(r.tags) == len(r.question.split()) for r in rounds)
    assert sum(len(s.rounds) > 1 for s in seeds) >= 30  # multi-turn: a later utterance leans on an earlier one
    assert {s.source for s in seeds} == {"train", "test"}
    assert all(r.answer is None for r in rounds)


def test_the_atis_triple_folder_reads_line_by_line():
    seeds = load_dataset(DATA / "sample_nlu_atis").seeds
    lines = (DATA / "sample_nlu_atis" / "seq.in").read_text().splitlines()
    assert [s.rounds[0].question for s in seeds] == [" ".join(line.split()) for line in lines]
    assert all(s.rounds[0].intent.startswith("atis_") for s in seeds)


def test_snips_json_chunks_become_bio_tags(tmp_path):
    path = tmp_path / "train_BookRestaurant.json"
    path.write_text(json.dumps({"BookRestaurant": [{"data": [
        {"text": "book a table in "}, {"text": "new york", "entity": "city"}, {"text": " for "},
        {"text": "two", "entity": "party_size"}]}]}))
    assert detect_format(path, path.read_bytes()) == "snips"
    r = load_dataset(path).seeds[0].rounds[0]
    assert (r.question, r.intent) == ("book a table in new york for two", "BookRestaurant")
    assert r.tags == ("O", "O", "O", "O", "B-city", "I-city", "O", "B-party_size")


def utterance(**fields):
    return {"text": "play some jazz", "tags": "O O B-genre", "intent": "PlayMusic", **fields}


@pytest.mark.parametrize("bad, message", [
    (utterance(tags="O B-genre"), "record 2: field 'tags': 2 tags for 3 words"),
    (utterance(tags="O O genre"), "'genre' is not a BIO tag"),
    (utterance(intent=""), "field 'intent': missing or not a non-empty string"),
    (utterance(text=""), "field 'text': empty utterance"),
    (utterance(dialogue="d1", turn=3), "dialogue 'd1' has turns [1, 3]"),
])
def test_a_malformed_utterance_is_one_line(tmp_path, bad, message):
    path = tmp_path / "nlu.json"
    path.write_text(json.dumps([utterance(dialogue="d1"), bad]))
    with pytest.raises(DatasetError) as e:
        load_dataset(path)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_triple_with_uneven_files_says_which(tmp_path):
    for name, text in (("seq.in", "a b\nc d\n"), ("seq.out", "O O\n"), ("label", "x\ny\n")):
        (tmp_path / name).write_text(text)
    with pytest.raises(DatasetError, match=r"different line counts \(seq.in 2, seq.out 1, label 2\)"):
        load_dataset(tmp_path)


def test_intents_and_tags_survive_the_store(tmp_path):
    dataset = load_dataset(DATA / "sample_nlu.json")
    with store.connect(tmp_path / "s.duckdb") as con:
        store.write_dataset(con, dataset)
        assert store.stored_seeds(con, dataset.sha256) == sorted(dataset.seeds, key=lambda s: s.id)
