"""DialTest on its own task (issue 31): transformations change only words outside the slots; the bundled recurrent
system answers with its predictions; INTENT / SLOTS compare them with the gold labels and DT-INTENT / DT-SLOTS with
the seed utterance's prediction; the report shows intent accuracy and slot F1 per operator."""

import json
from pathlib import Path

import pytest

from mortar import store
from mortar.cli import main
from mortar.config import RunConfig, run_sut_spec
from mortar.formats import load_dataset
from mortar.guide.gini import gini_impurity
from mortar.methods.dialtest_nlu import keeps_slot_words
from mortar.sut.nlu import answer_json, prediction_of, Prediction

SAMPLE = Path(__file__).parent.parent / "data" / "sample_nlu.json"


def test_a_transformation_may_change_only_words_outside_the_slots():
    original = "what is the weather in oslo tomorrow".split()
    tags = ("O", "O", "O", "O", "O", "B-city", "B-timeRange")
    text = " ".join(original)
    assert keeps_slot_words(text, tags, "what is the forecast in oslo tomorrow")  # an O word replaced
    assert keeps_slot_words(text, tags, "so what is the weather really in oslo tomorrow")  # O words inserted
    assert not keeps_slot_words(text, tags, "what is the weather in bergen tomorrow")  # the city changed
    assert not keeps_slot_words(text, tags, "what is the weather in oslo today")


def test_a_prediction_survives_its_answer_text():
    p = Prediction("GetWeather", ("O", "B-city"), {"GetWeather": 0.9, "PlayMusic": 0.1})
    assert prediction_of(answer_json(p)) == p
    assert prediction_of("Paris, I think") is None and prediction_of(None) is None


def test_the_default_system_of_an_intent_slot_dataset_is_the_bundled_one():
    assert run_sut_spec(RunConfig(dataset=str(SAMPLE))) == f"recurrent:{SAMPLE}"
    assert run_sut_spec(RunConfig(dataset="data/sample_coqa.json")) == "smollm2"
    assert run_sut_spec(RunConfig(dataset=str(SAMPLE), sut="openai:m")) == "openai:m"


@pytest.fixture(scope="module")
def nlu_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nlu")
    db = tmp / "nlu.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MORTAR_MODELS", str(tmp / "models"))
        assert main(["run", "--dataset", str(SAMPLE), "--method", "dialtest", "--limit", "12", "--dialtest-gate",
                     "off", "--db", str(db)]) == 0
    with store.connect(db, read_only=True) as con:
        run_id = con.execute("SELECT run_id FROM runs").fetchone()[0]
        checks = store.read_checks(con, run_id)
    return db, run_id, checks


def test_the_run_judges_predictions_against_gold_and_against_the_seed(nlu_run):
    _, _, checks = nlu_run
    by_relation = {}
    for c in checks:
        by_relation.setdefault(c.relation, []).append(c)
    assert {"RBT", "INTENT", "SLOTS", "DT-INTENT", "DT-SLOTS"} <= set(by_relation)
    assert not {"DT-REF", "DT-INV"} & set(by_relation)  # answers in words are not compared on predictions
    # the seed utterances are RBT's, every one of the 12 dialogues' (not only those that got a transformation)
    utterances = sum(len(d.rounds) for d in load_dataset(SAMPLE).seeds[:12])
    assert len(by_relation["RBT"]) == utterances and {c.perturbations for c in by_relation["RBT"]} == {("ORIG",)}
    for c in by_relation["RBT"]:
        said, gold = json.loads(c.text_a), json.loads(c.text_b)
        assert c.violated == (said != gold) and (c.similarity == 0.0 or said["intent"] == gold["intent"])
    assert all(c.perturbations != ("ORIG",) for name in ("INTENT", "SLOTS") for c in by_relation[name])
    assert all(c.violated == (c.text_a != c.text_b) for c in by_relation["INTENT"])
    for c in by_relation["DT-SLOTS"]:
        assert c.violated == (json.loads(c.text_a) != json.loads(c.text_b))


def test_the_report_shows_accuracy_and_f1_per_operator(nlu_run, capsys):
    db, run_id, _ = nlu_run
    assert main(["report", run_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "DialTest on intents and slots" in out and "intent accuracy" in out and "slot F1" in out
    assert "SUT recurrent-" in out


def test_the_run_orders_its_test_cases_by_the_seed_utterance_s_impurity(nlu_run, capsys, tmp_path):
    """The classifier's answers carry their intent distributions, so the plain run stores DialTest's Gini order
    (no SUT call) and the report compares it with random orders."""
    db, run_id, _ = nlu_run
    with store.connect(db, read_only=True) as con:
        cases, _ = store.read_cases_and_verdicts(con, run_id)
        gini_order = con.execute("SELECT test_case_id, score FROM priorities WHERE run_id = ? AND order_by = 'gini' "
                                 "ORDER BY rank", [run_id]).fetchall()
        orig = {c.seed_id: c.test_case_id for c in cases if c.perturbation == "ORIG"}
        seed_answers = {seed: list(store.case_rounds(con, run_id, tcid)["sut_answer"]) for seed, tcid in orig.items()}
    transformed = [c for c in cases if c.perturbation != "ORIG"]
    assert sorted(t for t, _ in gini_order) == sorted(c.test_case_id for c in transformed)
    scores = [score for _, score in gini_order]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]
    by_id = {c.test_case_id: c for c in transformed}
    for tcid, score in gini_order:  # the impurity of the system's prediction for the seed utterance transformed
        case = by_id[tcid]
        answer = seed_answers[case.seed_id][case.target_round - 1]
        assert score == pytest.approx(gini_impurity(list(prediction_of(answer).probabilities.values())))
    assert main(["report", run_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out.split("Test prioritisation")[1]
    assert "gini" in out and "random" in out and "bugs_found_by_25%_run" in out
    page = tmp_path / "report.html"
    assert main(["export", run_id, "--format", "html", "--out", str(page), "--db", str(db)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "Test prioritisation" in html and "<td>gini</td>" in html
    # `mortar prioritise --by gini` reads the same distributions: no model is loaded
    assert main(["prioritise", run_id, "--by", "gini", "--db", str(db)]) == 0
    assert "ordered by gini" in capsys.readouterr().out


def test_gini_guidance_reads_the_classifier_s_intent_distribution(tmp_path, monkeypatch):
    """DialTest's DeepGini on its own task: the impurity of the intent probabilities the system answers with, and
    the guided search compared with random transformation at the same budget."""
    monkeypatch.setenv("MORTAR_MODELS", str(tmp_path / "models"))
    db = tmp_path / "gini.duckdb"
    assert main(["run", "--dataset", str(SAMPLE), "--method", "dialtest", "--limit", "6", "--gini-budget", "3",
                 "--db", str(db)]) == 0
    with store.connect(db, read_only=True) as con:
        run_id = con.execute("SELECT run_id FROM runs").fetchone()[0]
        mutants = store.read_mutants(con, run_id)
    assert {m["guide"] for m in mutants} == {"gini", "random"}
    for m in mutants:
        expected = gini_impurity(list(prediction_of(m["answer"]).probabilities.values()))
        assert m["gini"] == pytest.approx(expected, abs=1e-5)
    # a kept Gini mutant's impurity rose above its parent's by more than τ (0 by default)
    assert all(m["gini"] > m["parent_gini"] for m in mutants if m["guide"] == "gini" and m["kept"])
    seeds = {s.id: s for s in load_dataset(SAMPLE).seeds}
    for m in mutants:  # no mutant changed a slot word
        r = seeds[m["seed_id"]].round(m["source_round"])
        assert keeps_slot_words(r.question, r.tags, m["question"])
