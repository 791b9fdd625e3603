"""Persona dialogues, the persona paper's own setting (issue 30): the PersonaChat-style loader, the persona as the
system prompt, P1 with the revised persona, P2 as the partner's persona with the expectation reversed where the
reply states a persona fact, P3 by location, response selection on the dataset's own candidates, and the table
the paper reports."""

import json
from pathlib import Path

import pytest

from mortar import store
from mortar.api import run
from mortar.cli import main
from mortar.config import RunConfig, sut_settings
from mortar.dataset import DatasetError
from mortar.formats import detect_format, load_dataset
from mortar.selection import candidates_for
from mortar.sut import PERSONA_SYSTEM_PROMPT

SAMPLE = Path(__file__).parent.parent / "data" / "sample_persona.jsonl"
PERSONA = ["I have two dogs.", "I work nights as a nurse."]
PARTNER = ["I teach maths at a school.", "I live in Oslo."]


def dialogue(**fields) -> dict:
    record = {"id": "d1", "personality": PERSONA, "revised_personality": ["My two pups are my world.",
                                                                           "I am a night-shift nurse."],
              "partner_personality": PARTNER,
              "utterances": [{"history": ["hi! do you have any pets?"],
                              "candidates": ["I love jazz.", "I am from Lima.", "yes, two dogs!"]},
                             {"history": ["hi! do you have any pets?", "yes, two dogs!", "have a nice day!"],
                              "candidates": ["I drive a bus.", "thanks, you too"]}]}
    record.update(fields)
    return record


def write(tmp_path, records, name="persona.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def test_the_sample_is_persona_chat_shaped():
    seeds = load_dataset(SAMPLE).seeds
    assert len(seeds) >= 20
    for seed in seeds:
        assert seed.persona.revised and seed.persona.partner
        assert seed.story == "\n".join(seed.persona.sentences)
        for r in seed.rounds:
            assert len(r.candidates) >= 10 and r.candidates[-1] == r.answer


def test_a_persona_dialogue_reads_as_rounds_of_partner_lines_and_gold_replies(tmp_path):
    path = write(tmp_path, [dialogue()])
    assert detect_format(path, path.read_bytes()) == "persona"
    seed = load_dataset(path).seeds[0]
    assert [(r.question, r.answer) for r in seed.rounds] == [("hi! do you have any pets?", "yes, two dogs!"),
                                                           ("have a nice day!", "thanks, you too")]
    assert seed.rounds[0].candidates == ("I love jazz.", "I am from Lima.", "yes, two dogs!")
    assert seed.persona.partner == tuple(PARTNER)


def test_parlai_splits_in_one_json_document_read_too(tmp_path):
    without_ids = {k: v for k, v in dialogue().items() if k != "id"}
    path = tmp_path / "personachat.json"
    path.write_text(json.dumps({"train": [without_ids, without_ids], "valid": [without_ids]}, indent=1))
    seeds = load_dataset(path).seeds
    assert [s.id for s in seeds] == ["train-1", "train-2", "valid-1"]


@pytest.mark.parametrize("change, message", [
    ({"personality": []}, "line 1 (id 'd1'): field 'personality': empty persona"),
    ({"personality": "I have dogs."}, "field 'personality': not a list of sentences"),
    ({"utterances": [{"history": ["hi"]}]}, "field 'utterances[0].candidates': missing"),
    ({"utterances": [{"history": [], "candidates": ["x"]}]}, "field 'utterances[0].history': empty"),
    ({"utterances": []}, "field 'utterances': empty dialogue"),
])
def test_a_malformed_persona_dialogue_is_one_line_naming_the_field(tmp_path, change, message):
    path = write(tmp_path, [dialogue(), dialogue(id="d2", **change)])
    with pytest.raises(DatasetError) as e:
        load_dataset(path, "persona")
    text = str(e.value).replace("line 2 (id 'd2')", "line 1 (id 'd1')")
    assert message in text and "\n" not in text


def test_persona_and_candidates_survive_the_store(tmp_path):
    dataset = load_dataset(write(tmp_path, [dialogue()]))
    with store.connect(tmp_path / "s.duckdb") as con:
        store.write_dataset(con, dataset)
        assert store.stored_seeds(con, dataset.sha256) == list(dataset.seeds)


def test_the_persona_is_the_system_prompt_of_a_persona_dataset(tmp_path):
    path = write(tmp_path, [dialogue()])
    assert sut_settings(RunConfig(dataset=str(path))).system_prompt == PERSONA_SYSTEM_PROMPT
    assert sut_settings(RunConfig(dataset="data/sample_coqa.json")).system_prompt != PERSONA_SYSTEM_PROMPT
    mine = "You are {story}. Be brief."
    assert sut_settings(RunConfig(dataset=str(path), system_prompt=mine)).system_prompt == mine


def test_selection_ranks_the_datasets_own_candidates(tmp_path):
    import random

    seed = load_dataset(write(tmp_path, [dialogue()])).seeds[0]
    picked = candidates_for(seed, 1, [], 9, random.Random(0))
    assert picked == ["yes, two dogs!", "I love jazz.", "I am from Lima."]  # gold first, then the dataset's others


# -- P2 on a persona dialogue: the partner's persona, the expectation reversed where the reply states a fact ----

def persona_of(messages) -> str:
    return messages[0]["content"]


def stubborn(messages) -> str:
    """Ignores its persona: the same replies whatever it is given."""
    return "yes, I have two dogs!" if "pets" in messages[-1]["content"] else "haha thanks, you too!"


def faithful(messages) -> str:
    """Replies from its persona, and says something else to the goodbye under the partner's persona."""
    if "pets" in messages[-1]["content"]:
        return "yes, I have two dogs!" if "dogs" in persona_of(messages) else "no pets, I am too busy marking tests"
    return "haha thanks, you too!" if "dogs" in persona_of(messages) else "oh cool, what kind of music?"


@pytest.fixture(scope="module")
def p2_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("p2")
    path = write(tmp, [dialogue()])
    settings = {"methods": "persona", "persona": {"relations": ["P2"]}, "oracle": "answer"}
    found = {}
    for name, sut in (("stubborn", stubborn), ("faithful", faithful)):
        db = tmp / f"{name}.duckdb"
        result = run(str(path), sut=sut, db=db, **settings)
        with store.connect(db, read_only=True) as con:
            found[name] = {(c.relation, c.source_round): c for c in store.read_checks(con, result.run_id)}
    return found


def test_p2_swaps_in_the_partners_persona(tmp_path):
    from mortar.methods import methods, Making
    from mortar.oracle import Oracle

    seeds = list(load_dataset(write(tmp_path, [dialogue()])).seeds)
    config = RunConfig(methods="persona", settings={})
    made = methods()["persona"].make_cases(Making(seeds, 0, config, oracle=Oracle("cosine"), pool=seeds,
                                                  settings=config.settings_of("persona")))
    stories = {c.perturbation: c.story for c in made.cases}
    assert stories["P2"] == "\n".join(PARTNER)  # substituted, not appended
    assert stories["P1"] == "My two pups are my world.\nI am a night-shift nurse."  # the dataset's revised persona


def test_a_reply_that_states_a_persona_fact_should_change_under_the_partners_persona(p2_runs):
    stubborn_checks, faithful_checks = p2_runs["stubborn"], p2_runs["faithful"]
    # round 1's reply states "I have two dogs": judged by P2-change, the reversed expectation
    assert ("P2-change", 1) in stubborn_checks and ("P2", 1) not in stubborn_checks
    assert stubborn_checks[("P2-change", 1)].violated  # still two dogs under the partner's persona
    assert not faithful_checks[("P2-change", 1)].violated  # the reply changed with the persona


def test_a_reply_that_states_no_persona_fact_should_stay(p2_runs):
    stubborn_checks, faithful_checks = p2_runs["stubborn"], p2_runs["faithful"]
    # round 2's reply is small talk: P2 as the paper's invariance
    assert ("P2", 2) in stubborn_checks and ("P2-change", 2) not in stubborn_checks
    assert not stubborn_checks[("P2", 2)].violated
    assert faithful_checks[("P2", 2)].violated


def test_the_report_shows_the_papers_table(p2_runs, tmp_path, capsys):
    path = write(tmp_path, [dialogue()])
    db = tmp_path / "r.duckdb"
    result = run(str(path), sut=faithful, db=db, methods="persona")
    assert main(["report", result.run_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "as the persona paper reports them" in out
    for version in ("P1", "P2", "P3-story", "P3-all"):
        assert version in out
