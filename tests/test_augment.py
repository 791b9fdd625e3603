"""DialTest's augmentation on an intent/slot dataset (issue 31, the paper's Table 7): the transformed utterances are
exported labelled, in the dataset's own format, and load back; the retraining check trains the bundled model with
and without them and measures both on the test dialogues."""

import json
from pathlib import Path

import pytest

from mortar import store
from mortar.cli import main
from mortar.formats import load_dataset
from mortar.formats.nlu import write
from mortar.methods.dialtest_nlu import aligned_tags
from mortar.sut.nlu import slot_spans

SAMPLE = Path(__file__).parent.parent / "data" / "sample_nlu.json"


def test_tags_follow_the_words_a_transformation_kept():
    tags = ("O", "O", "O", "B-city", "B-timeRange", "I-timeRange")
    original = "weather in the oslo on friday"
    assert aligned_tags(original, tags, "weather really in the oslo on friday") == \
        ("O", "O", "O", "O", "B-city", "B-timeRange", "I-timeRange")
    assert aligned_tags(original, tags, "forecast in the Oslo on friday") == tags
    assert aligned_tags(original, tags, "weather in the bergen on friday") is None  # a slot word changed
    assert aligned_tags(original, tags, "weather in the oslo on this friday") is None  # a word inside a slot


@pytest.mark.parametrize("fmt", ["nlu", "snips", "atis"])
def test_labelled_utterances_load_back_in_each_format(tmp_path, fmt):
    records = [{"text": "play some jazz by miles davis", "tags": ["O", "O", "B-genre", "O", "B-artist", "I-artist"],
                "intent": "PlayMusic", "dialogue": "d1", "turn": 1, "split": "train"},
               {"text": "and in the kitchen", "tags": ["O", "O", "O", "B-room"], "intent": "PlayMusic",
                "dialogue": "d1", "turn": 2, "split": "train"}]
    out = tmp_path / ("export" if fmt == "atis" else "export.json")
    write(records, out, fmt)
    seeds = load_dataset(out).seeds
    rounds = [r for s in seeds for r in s.rounds]
    assert [(r.question, list(r.tags), r.intent) for r in rounds] == [(x["text"], x["tags"], x["intent"])
                                                                     for x in records]
    if fmt == "nlu":  # the dialogue and its split survive
        assert len(seeds) == 1 and seeds[0].source == "train"


@pytest.fixture(scope="module")
def small_nlu_run(tmp_path_factory):
    """DialTest on 24 training and 10 test dialogues of the sample (the mutation gate off: seconds, no LM)."""
    tmp = tmp_path_factory.mktemp("augment")
    records = json.loads(SAMPLE.read_text())
    dialogues = {split: list(dict.fromkeys(r["dialogue"] for r in records if r["split"] == split))
                 for split in ("train", "test")}
    chosen = set(dialogues["train"][:24]) | set(dialogues["test"][:10])
    dataset = tmp / "small_nlu.json"
    dataset.write_text(json.dumps([r for r in records if r["dialogue"] in chosen]))
    db = tmp / "augment.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MORTAR_MODELS", str(tmp / "models"))
        assert main(["run", "--dataset", str(dataset), "--method", "dialtest", "--dialtest-gate", "off",
                     "--db", str(db)]) == 0
        with store.connect(db, read_only=True) as con:
            run_id = con.execute("SELECT run_id FROM runs").fetchone()[0]
        yield tmp, dataset, db, run_id


def test_the_export_is_the_dataset_format_with_the_seed_labels(small_nlu_run, capsys):
    tmp, dataset, db, run_id = small_nlu_run
    out = tmp / "augmented.json"
    assert main(["export", run_id, "--what", "transformed", "--out", str(out), "--db", str(db)]) == 0
    assert "(nlu, the dataset's format" in capsys.readouterr().out
    gold = {(s.id, r.turn_id): r for s in load_dataset(dataset).seeds for r in s.rounds}
    exported = load_dataset(out).seeds
    assert exported
    for seed in exported:
        original_id = seed.id.split("#")[0]
        last = seed.rounds[-1]
        source = gold[(original_id, last.turn_id)]
        assert last.intent == source.intent and last.question != source.question
        # the slot values are the seed's, word for word
        assert slot_spans(last.tags, last.question.split()) == slot_spans(source.tags, source.question.split())


def test_the_retraining_check_measures_both_models_on_the_test_dialogues(small_nlu_run, capsys, monkeypatch):
    tmp, _, db, run_id = small_nlu_run
    monkeypatch.setenv("MORTAR_MODELS", str(tmp / "models"))
    assert main(["retrain", run_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.strip().startswith(("before", "after"))]
    assert len(lines) == 2
    n_before, n_after = (int(line.split(":")[1].split()[0]) for line in lines)
    assert n_after > n_before
    figures = [float(x) for line in lines for x in line.split("utterances")[1].split()]
    assert len(figures) == 8 and all(0.0 <= x <= 1.0 for x in figures)


def test_the_retraining_check_needs_an_intent_slot_run(tmp_path, capsys):
    db = tmp_path / "none.duckdb"
    assert main(["run", "--dataset", "data/sample_chat.jsonl", "--limit", "1", "--sut", "tests.echo_bot:reply",
                 "--db", str(db)]) == 0
    capsys.readouterr()
    assert main(["retrain", "latest", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "not on an intent/slot dataset" in err and len(err.strip().splitlines()) == 1


def test_the_metrics_page_offers_the_labelled_utterances(small_nlu_run, monkeypatch):
    from mortar.augment import augmented_records
    from tests.test_pages import app

    tmp, _, db, run_id = small_nlu_run
    monkeypatch.setenv("MORTAR_DB", str(db))
    with store.connect(db, read_only=True) as con:
        n = sum(r["transformed"] for r in augmented_records(con, run_id))
    at = app("metrics", current_run=run_id)
    labels = [b.proto.label for b in at.get("download_button")]
    assert n and f"Transformed utterances, labelled ({n}, nlu JSON)" in labels
