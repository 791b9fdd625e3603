"""A method and a relation registered from this file alone reach the run, the report, the metrics export
and the Metrics page: no edit to the engine, the SQL, the glossary or the pages."""

import pandas as pd
import pytest

from mortar.cli import main
from mortar.dataset import TestCase, load_dataset
from mortar.methods import METHODS, Made, TestMethod, parse_methods, register_method
from mortar.relations import INVARIANCE, RELATIONS, Check, Relation, register_relation
from mortar.run import RunConfig, run
from tests.conftest import SAMPLE
from tests.scripted_sut import ScriptedSUT

TOY, ASK_AGAIN, SAME_AGAIN = "toy", "AGAIN", "SAME"


def ask_again(making):
    """For round j: the seed's rounds 1…j, then question j once more."""
    cases = []
    for seed in making.seeds:
        order = tuple(r.turn_id for r in seed.rounds)
        for j in range(1, len(order) + 1):
            cases.append(TestCase(seed.id, ASK_AGAIN, j, order[:j] + (order[j - 1],)))
    return Made(cases)


def same_again(j):
    """Asked twice in a row, the question should get the same answer."""
    checks = []
    for case in j.cases:
        first, second = j.answer(case, len(case.source_rounds) - 1), j.answer(case, len(case.source_rounds))
        if first is None or second is None:
            continue
        source = case.source_rounds[-1]
        sim = j.oracle.agreement(j.question(source), first, second)
        checks.append(Check(f"{SAME_AGAIN}/{case.test_case_id}", SAME_AGAIN, j.seed.id, source, (ASK_AGAIN,),
                            (case.test_case_id,), (len(case.source_rounds),), second, first, sim, None,
                            sim < j.threshold))
    return checks


@pytest.fixture(scope="module")
def toy():
    register_relation(Relation(SAME_AGAIN, "TOY", INVARIANCE, "Asked twice, a question gets the same answer.",
                               same_again))
    method = register_method(TestMethod(TOY, "TOY", (ASK_AGAIN,), (SAME_AGAIN,), "Ask every question twice.",
                                        ask_again))
    yield method
    METHODS.pop(TOY)
    RELATIONS.pop(SAME_AGAIN)


@pytest.fixture(scope="module")
def toy_run(toy, tmp_path_factory):
    db = tmp_path_factory.mktemp("toy") / "toy.duckdb"
    config = RunConfig(methods="mortar,toy", sut="scripted", limit=1, oracle="cosine")
    return db, run(load_dataset(SAMPLE), config, db=db, sut=ScriptedSUT())


def test_method_names_parse_from_the_registry(toy):
    assert parse_methods("all") == ("mortar", "metal", "dialtest", "persona", TOY)
    assert parse_methods("toy,mortar") == ("mortar", TOY)
    with pytest.raises(ValueError, match="unknown method nope"):
        parse_methods("mortar,nope")


def test_a_registered_method_runs_and_is_judged_by_its_relation(toy_run):
    db, result = toy_run
    assert result.metrics["TOY"]["test_cases"] == len(load_dataset(SAMPLE).seeds[0].rounds)
    assert result.metrics["TOY"]["detections"] > 0  # every asked-again round was checked
    assert {"RBT", "MT", "TOY"} == set(result.metrics)


def test_report_and_metrics_export_show_the_registered_method(toy_run, tmp_path, capsys):
    db, result = toy_run
    assert main(["report", result.run_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "RBT vs MT vs TOY" in out and "MT vs TOY (Table V)" in out
    exported = tmp_path / "metrics.csv"
    assert main(["export", result.run_id, "--what", "metrics", "--format", "csv", "--out", str(exported),
                 "--db", str(db)]) == 0
    frame = pd.read_csv(exported)
    toy_rows = frame[frame["method"] == "TOY"].set_index("metric")["value"]
    assert toy_rows["NBugs"] == result.metrics["TOY"]["NBugs"] and "unique" in toy_rows
    parts = set(frame[frame["metric"] == "seed_questions_with_bugs"]["method"])
    assert parts == {"MT only", "both", "TOY only"}


def test_metrics_page_shows_the_registered_method(toy_run, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT

    db, result = toy_run
    monkeypatch.setenv("MORTAR_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/metrics.py").run()
    assert not at.exception
    headline = at.dataframe[0].value.set_index("method")
    assert headline.loc["TOY", "NBugs"] == result.metrics["TOY"]["NBugs"]
    unique = next(d.value for d in at.dataframe if "unique_share" in d.value)
    assert list(unique["method"]) == ["MT", "TOY"]
    assert any(h.value == "MT vs TOY" for h in at.header)
