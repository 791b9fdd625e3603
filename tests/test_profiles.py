"""`--profile paper`: each setting it names is the one the run uses, it is recorded with the run, and the report
says which settings differ from the paper's."""

import pytest

import mortar.methods.mortar as mortar_method
import mortar.pipeline as run_module
from mortar import store
from mortar.cli import main
from mortar.config import RunConfig
from mortar.formats import load_dataset
from mortar.profiles import apply_profile, differences_from_paper, settings_lines
from mortar.pipeline import run
from tests.conftest import SAMPLE
from tests.scripted_sut import ScriptedSUT


def test_the_paper_profile_sets_the_papers_values_and_keeps_what_was_given():
    config, notes = apply_profile(RunConfig(), "paper", env={})
    mortar = config.settings_of("mortar")
    assert (config.oracle, config.threshold, config.profile) == ("cosine", 0.6, "paper")
    assert (mortar.follow_rule, mortar.story_support) == (False, False)
    assert config.kg_backend == "spacy" and "spaCy" in notes[0]  # no LLM endpoint: said in one line
    with_endpoint, notes = apply_profile(RunConfig(), "paper", env={"MORTAR_LLM_BASE_URL": "http://127.0.0.1:9/v1"})
    assert with_endpoint.kg_backend == "llm" and notes == []
    given, _ = apply_profile(RunConfig(oracle="mss", threshold=0.7), "paper", env={})
    assert (given.oracle, given.threshold) == ("mss", 0.7)
    assert differences_from_paper(given.to_json()) == ["oracle: mss (paper: cosine)", "threshold ε: 0.7 (paper: 0.6)",
                                                       "knowledge graphs: spacy (paper: llm)"]


def test_the_defaults_say_how_they_differ_from_the_paper():
    lines = differences_from_paper(RunConfig().to_json())
    assert lines == ["oracle: answer (paper: cosine)", "threshold ε: 0.5 (paper: 0.6)",
                     "context check: follow rule for elliptical questions: on (paper: off)",
                     "MR2/MR4 story-support exemption: on (paper: off)", "knowledge graphs: spacy (paper: llm)"]
    assert settings_lines(None) == []


def test_a_paper_run_uses_each_setting_it_names(tmp_path, monkeypatch):
    used = {"follow_rule": set(), "story_support_asked": 0, "oracles": []}
    check_case = mortar_method.check_case

    def recording_check(graph, case, questions, follow_rule=True):
        used["follow_rule"].add(follow_rule)
        return check_case(graph, case, questions, follow_rule)

    def recording_story(*args):
        used["story_support_asked"] += 1
        return True

    oracle = run_module.Oracle
    monkeypatch.setattr(mortar_method, "check_case", recording_check)
    monkeypatch.setattr(mortar_method, "story_answers", recording_story)
    monkeypatch.setattr(run_module, "Oracle", lambda name: used["oracles"].append(name) or oracle(name))
    config, _ = apply_profile(RunConfig(sut="scripted", limit=1), "paper", env={})
    db = tmp_path / "paper.duckdb"
    result = run(load_dataset(SAMPLE), config, db=db, sut=ScriptedSUT())
    assert used["follow_rule"] == {False} and used["story_support_asked"] == 0
    assert used["oracles"] == ["cosine"] and result.threshold == 0.6
    with store.connect(db, read_only=True) as con:
        stored = store.run_config(con, result.run_id)
    assert stored["run_config"]["profile"] == "paper" and stored["oracle"] == "cosine" and stored["threshold"] == 0.6
    assert stored["perturbations"]["follow_rule"] is False and stored["perturbations"]["story_support"] is False

    used["follow_rule"].clear()
    default = run(load_dataset(SAMPLE), RunConfig(sut="scripted", limit=1), db=db, sut=ScriptedSUT())
    assert used["follow_rule"] == {True} and used["story_support_asked"] > 0 and default.run_id != result.run_id


def test_the_report_prints_the_profile_and_the_differences(tmp_path, capsys, monkeypatch):
    for name in ("MORTAR_LLM_BASE_URL", "MORTAR_LLM_API_KEY", "GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    config, _ = apply_profile(RunConfig(sut="scripted", limit=1), "paper")
    db = tmp_path / "r.duckdb"
    result = run(load_dataset(SAMPLE), config, db=db, sut=ScriptedSUT())
    assert main(["report", result.run_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "profile: paper; settings that differ from the paper's:" in out
    assert "knowledge graphs: spacy (paper: llm)" in out and "oracle: answer" not in out


@pytest.mark.parametrize("argv", [["--profile", "nope"]])
def test_an_unknown_profile_is_refused(argv, capsys):
    with pytest.raises(SystemExit):
        main(["run", "--dataset", str(SAMPLE), *argv])
    assert "invalid choice: 'nope'" in capsys.readouterr().err
