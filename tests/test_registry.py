"""A method with a setting of its own and its relation, written in this file and installed as a package of its
own (an entry point in the ``mortar.methods`` group), reach `mortar run --help`, validation, the run id, the
Launch form, the run, the report, the metrics export and the Metrics page: no edit to the engine, the SQL, the
glossary or the pages."""

import pandas as pd
import pytest

from mortar.cli import main
from mortar.formats import load_dataset
from mortar.methods import METHODS, parse_methods, register_method
from mortar.relations import RELATIONS, register_relation
from mortar.pipeline import RunConfig, run
from tests.conftest import SAMPLE
from tests.scripted_sut import ScriptedSUT

TOY, ASK_AGAIN, SAME_AGAIN = "toy", "AGAIN", "SAME"

# The plug-in: a package of its own, installed (a module and its dist-info with an entry point in the
# ``mortar.methods`` group) on sys.path, so mortar finds it as it finds any installed package's methods.
PLUGIN = '''
from dataclasses import dataclass

from mortar.dataset import TestCase
from mortar.methods import Made, TestMethod, register_method
from mortar.relations import INVARIANCE, Relation, round_check, register_relation
from mortar.settings import setting


@dataclass(frozen=True)
class ToySettings:
    repeats: int = setting(1, "how many times question j is asked again", label="toy repeats", flag="--toy-repeats",
                           minimum=1)


def ask_again(making):
    """For round j: the seed's rounds 1…j, then question j asked again ``repeats`` times."""
    cases = []
    for seed in making.seeds:
        order = tuple(r.turn_id for r in seed.rounds)
        for j in range(1, len(order) + 1):
            cases.append(TestCase(seed.id, "AGAIN", j, order[:j] + (order[j - 1],) * making.settings.repeats))
    return Made(cases)


def same_again(j):
    """Asked again, the question should get the same answer."""
    checks = []
    for case in j.cases:
        n = len(case.source_rounds)
        first, second = j.answer(case, n - 1), j.answer(case, n)
        if first is None or second is None:
            continue
        source = case.source_rounds[-1]
        sim = j.oracle.agreement(j.question(source), first, second)
        checks.append(round_check("SAME", j.seed.id, source, case, n, second, first, sim, None, sim < j.threshold,
                                  check_id=f"SAME/{case.test_case_id}"))
    return checks


register_relation(Relation("SAME", "TOY", INVARIANCE, "Asked again, a question gets the same answer.", same_again))
register_method(TestMethod("toy", "TOY", ("AGAIN",), ("SAME",), "Ask every question again.", ask_again,
                           settings=ToySettings))
'''


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The toy plug-in installed where Python finds packages; mortar's registry loads it from its entry point."""
    import importlib
    import sys

    import mortar.methods as registry

    site = tmp_path_factory.mktemp("site-packages")
    (site / "toy_mortar_method.py").write_text(PLUGIN)
    info = site / "toy_mortar_method-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-mortar-method\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[mortar.methods]\ntoy = toy_mortar_method\n")
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    registry._loaded = False  # as in a new process: the built-ins, then the installed plug-ins
    method = registry.methods()[TOY]
    yield method
    METHODS.pop(TOY)
    RELATIONS.pop(SAME_AGAIN)
    sys.path.remove(str(site))
    sys.modules.pop("toy_mortar_method", None)


def test_the_plug_in_registers_through_its_entry_point(toy):
    assert toy.settings.__module__ == "toy_mortar_method" and toy.relations == (SAME_AGAIN,)
    assert list(METHODS).index(TOY) > list(METHODS).index("persona")  # after the built-ins


def test_a_second_registration_of_a_name_is_refused(toy):
    from mortar.methods import DuplicateName

    with pytest.raises(DuplicateName, match="toy"):
        register_method(toy)
    with pytest.raises(ValueError, match="SAME"):
        register_relation(RELATIONS[SAME_AGAIN])
    from mortar.oracle import ORACLES, register_oracle

    with pytest.raises(ValueError, match="cosine"):
        register_oracle(ORACLES["cosine"])


def test_its_setting_is_an_option_of_mortar_run_and_enters_the_run_id(toy, capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = capsys.readouterr().out
    assert "TOY (toy) settings" in help_text and "--toy-repeats" in help_text
    assert "how many times question j is asked again" in " ".join(help_text.split())
    from mortar.cli import config_from, build_parser

    args = build_parser().parse_args(["run", "--dataset", str(SAMPLE), "--method", "mortar,toy", "--toy-repeats", "3"])
    config = config_from(args)
    assert config.settings_of(TOY).repeats == 3
    assert RunConfig.from_json(config.to_json()) == config and config.to_json()["toy"] == {"repeats": 3}

    from mortar.pipeline import run_key

    from tests.test_run_ids import EXTRACTOR
    sut = ScriptedSUT()
    keys = [run_key(c, EXTRACTOR, sut, 0.6) for c in (config, config.with_settings(TOY, repeats=1))]
    assert keys[0]["toy"] == {"repeats": 3} and keys[1]["toy"] == {"repeats": 1}
    # a run without the method keeps the run key it had before the method was installed
    assert "toy" not in run_key(RunConfig(dataset=str(SAMPLE)), EXTRACTOR, sut, 0.6)


def test_a_bad_setting_is_refused_in_one_line_with_exit_2(toy, capsys):
    assert main(["run", "--dataset", str(SAMPLE), "--method", "toy", "--toy-repeats", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "mortar: error: toy repeats 0 is not a positive integer"


def test_the_launch_form_offers_its_setting(toy, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from mortar import jobs
    from tests.conftest import ROOT

    started = []
    monkeypatch.setattr(jobs, "start", lambda config, db=None: started.append(config) or "job-1")
    monkeypatch.setenv("MORTAR_DB", str(tmp_path / "launch.duckdb"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/launch.py").run()
    assert not at.exception
    next(w for w in at.multiselect if w.label == "Methods").set_value(["mortar", TOY])
    next(w for w in at.number_input if w.label == "Toy repeats").set_value(2)
    next(b for b in at.button if b.label == "Start run").click().run()
    assert not at.exception and not at.error
    config, = started
    assert config.methods == ("mortar", TOY) and config.settings_of(TOY).repeats == 2


@pytest.fixture(scope="module")
def toy_run(toy, tmp_path_factory):
    db = tmp_path_factory.mktemp("toy") / "toy.duckdb"
    config = RunConfig(methods="mortar,toy", sut="scripted", limit=1, oracle="cosine").with_settings(TOY, repeats=2)
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
