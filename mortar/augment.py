"""DialTest's augmentation on an intent/slot dataset (the paper's Table 7): the transformed utterances of a run,
labelled for training, and whether adding them to the training data makes the bundled model more robust.

A transformed utterance keeps its seed's intent (DialTest's relation); its slot tags are the seed's, carried word
by word to the words the transformation kept (SR and WI change only words outside the slots), and ``O`` for the
words it brought in. Back translation rewrites the words, so its utterances carry no tags and are left out.

The retraining check trains the bundled recurrent model twice on the dataset's training split — as it is, and with
the transformed utterances of the training dialogues added — and measures both on the test dialogues' utterances,
as they are and as transformed.
"""

from __future__ import annotations

from mortar import store
from mortar.config import RunConfig, dataset_of
from mortar.dataset import DatasetError
from mortar.errors import InputError
from mortar.methods import methods
from mortar.methods.dialtest_nlu import aligned_tags
from mortar.sut.nlu import bundled, models_folder, train_recurrent, training_pairs, understanding, utterances_of
from mortar.vocab import BT, DIALTEST_METHOD


def augmented_utterances(con, run_id: str) -> tuple[list[dict], int, list]:
    """The run's DialTest test cases on intent/slot dialogues as labelled utterances (a new dialogue per test case:
    the seed's earlier utterances, then the transformed one), the test cases left out (back translations, slot
    words lost), and the dataset's seeds."""
    config = stored_run_config(con, run_id)
    try:
        seeds = {s.id: s for s in dataset_of(config).seeds}
    except DatasetError as e:
        raise InputError(f"run {run_id}: its dataset cannot be read: {e}") from None
    if not any(r.intent for s in seeds.values() for r in s.rounds):
        raise InputError(f"run {run_id} is not on an intent/slot dataset (formats nlu, snips, atis)")
    frame = store.transformed_rounds(con, run_id, methods()[DIALTEST_METHOD].perturbations)
    records, left_out = [], 0
    for tcid, rounds in frame.groupby("test_case_id", sort=False):
        rounds = rounds.sort_values("position")
        last = rounds.iloc[-1]
        seed = seeds[last["seed_id"]]
        gold = seed.round(int(last["source_round"]))
        tags = None if last["perturbation"] == BT else aligned_tags(gold.question, gold.tags, last["question"])
        if tags is None:
            left_out += 1
            continue
        dialogue = f"{seed.id}#{last['perturbation']}-{tcid[-8:]}"
        for r in rounds.itertuples():
            said = seed.round(int(r.source_round))
            records.append({"text": r.question, "tags": list(tags if r.position == last["position"] else said.tags),
                            "intent": said.intent, "dialogue": dialogue, "turn": int(r.position),
                            "split": seed.source or "", "operator": last["perturbation"],
                            "transformed": bool(r.position == last["position"])})
    return records, left_out, list(seeds.values())


def augmented_records(con, run_id: str) -> list[dict]:
    """The run's transformed utterances labelled (``augmented_utterances``), or none when its dataset is gone."""
    try:
        return augmented_utterances(con, run_id)[0]
    except InputError:
        return []


def stored_run_config(con, run_id: str) -> RunConfig:
    stored = store.stored_config(con, run_id)
    config = RunConfig.from_json(stored.run_config) if stored.run_config else None
    if config is None or config.dataset is None:
        raise InputError(f"run {run_id} was made before runs stored their configuration; run it again")
    return config


def _pairs(records: list[dict], split: str) -> list[tuple[list[str], str, tuple[str, ...]]]:
    """(utterances so far, intent, tags) of the transformed utterances of one split's dialogues."""
    by_dialogue: dict[str, list[dict]] = {}
    for r in records:
        by_dialogue.setdefault(r["dialogue"], []).append(r)
    return [([u["text"] for u in turns], turns[-1]["intent"], tuple(turns[-1]["tags"]))
            for turns in (sorted(d, key=lambda u: u["turn"]) for d in by_dialogue.values())
            if turns[-1]["split"] == split and turns[-1]["transformed"]]


def retraining_check(con, run_id: str) -> list[dict]:
    """The paper's Table 7 for the bundled model: intent accuracy and slot F1 on the test dialogues' utterances
    (as they are, and as the run transformed them), trained on the training split, then on it and the training
    dialogues' transformed utterances."""
    records, _, seeds = augmented_utterances(con, run_id)
    if not {"train", "test"} <= {s.source for s in seeds}:
        raise InputError(f"run {run_id}: the retraining check needs a dataset split into train and test dialogues")
    added, transformed_test = _pairs(records, "train"), _pairs(records, "test")
    if not added or not transformed_test:
        raise InputError(f"run {run_id} transformed no utterance of the {'training' if not added else 'test'} "
                         "dialogues (run DialTest without --limit)")
    original_test = [(utterances_of(s, k), r.intent, r.tags) for s in seeds if s.source == "test"
                     for k, r in enumerate(s.rounds, start=1) if r.intent]
    training = training_pairs(seeds, "train")
    before, after = bundled(seeds, models_folder()), train_recurrent(training + added)
    rows = []
    for name, model, n_train in (("before", before, len(training)), ("after", after, len(training) + len(added))):
        seed_acc, seed_f1 = understanding(model, original_test)
        moved_acc, moved_f1 = understanding(model, transformed_test)
        rows.append({"training": f"{name}: {n_train} utterances", "intent accuracy (test)": seed_acc,
                     "slot F1 (test)": seed_f1, "intent accuracy (transformed test)": moved_acc,
                     "slot F1 (transformed test)": moved_f1})
    return rows
