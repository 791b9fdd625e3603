"""The persona-centric relations as a test method: their test cases, where the noise goes, their relations in
the run and the report (scripted SUT for the answers; real spaCy, embeddings and WordNet for the cases)."""

import json

import pytest

from mortar.cli import main
from mortar.formats import load_dataset
from mortar.methods import Making, methods
from mortar.methods.persona import PersonaSettings
from mortar.oracle import Oracle
from mortar.pipeline import RunConfig, run
from tests.conftest import SAMPLE
from tests.scripted_sut import ScriptedSUT


@pytest.fixture(scope="module")
def seeds():
    return load_dataset(SAMPLE).seeds


def make(seeds, run_seed=0, **settings):
    config = RunConfig(methods="persona", settings={"persona": PersonaSettings(**settings)})
    return methods()["persona"].make_cases(Making(list(seeds[:2]), run_seed, config, oracle=Oracle("cosine"),
                                                  pool=list(seeds), settings=config.settings_of("persona")))


def differing_words(a: str, b: str) -> int:
    return sum(x != y for x, y in zip(a.split(), b.split()))


def test_noise_goes_where_it_is_asked_and_nowhere_else(seeds):
    made = make(seeds, relations=("P3",))
    by_kind = {}
    for case in made.cases:
        by_kind.setdefault(case.perturbation, []).append(case)
    assert set(by_kind) == {"P3-story", "P3-question", "P3-history", "P3-both", "P3-all"}
    seed = seeds[0]
    for case in (c for c in made.cases if c.seed_id == seed.id):
        noisy = {p for p, _ in case.replaced}
        j = len(case.source_rounds)
        expected = {"P3-story": set(), "P3-question": {j}, "P3-history": set(range(1, j)),
                    "P3-both": set(range(1, j + 1)), "P3-all": set(range(1, j + 1))}[case.perturbation]
        assert noisy == expected, case.test_case_id
        for p in range(1, j + 1):  # a noisy question differs from the seed's; every other is the seed's
            original = seed.round(case.source_rounds[p - 1]).question
            assert (case.question_at(seed, p) != original) == (p in noisy)
        assert (case.story is not None) == (case.perturbation in ("P3-story", "P3-all"))
    story_case = by_kind["P3-story"][0]
    # "all" is the story's noise with the question's and the history's: each the same as where it is alone
    assert {c.story for c in by_kind["P3-all"] if c.seed_id == seed.id} == {story_case.story}
    assert len(story_case.story) == len(seed.story) and differing_words(story_case.story, seed.story) > 20


def test_names_can_be_kept_out_of_the_noise(seeds):
    kept = make(seeds, relations=("P3",), noise_locations=("story",), noise_names=False).cases[0]
    for name in ("Otto", "Felix", "Hetty", "Larkmoor"):
        assert seeds[0].story.count(name) == kept.story.count(name)
    noisy = make(seeds, relations=("P3",), noise_locations=("story",)).cases[0]
    assert noisy.story.count("Felix") < seeds[0].story.count("Felix")


def test_same_run_seed_same_cases_and_another_seed_other_noise(seeds):
    first, again, other = make(seeds), make(seeds), make(seeds, run_seed=1)
    assert first.cases == again.cases
    assert [c.story for c in first.cases] != [c.story for c in other.cases]
    assert {c.perturbation for c in first.cases} >= {"P1", "P2"}
    interference = next(c for c in first.cases if c.perturbation == "P2")
    assert interference.story.startswith(seeds[0].story) and len(interference.story) > len(seeds[0].story)


@pytest.fixture(scope="module")
def persona_run(tmp_path_factory):
    db = tmp_path_factory.mktemp("persona") / "persona.duckdb"
    config = RunConfig(methods="mortar,persona", sut="scripted", limit=1, oracle="cosine")
    return db, run(load_dataset(SAMPLE), config, db=db, sut=ScriptedSUT())


def test_the_inspector_shows_the_story_and_the_questions_asked_differently(persona_run, monkeypatch):
    from mortar import store
    from tests.test_pages import app

    db, result = persona_run
    monkeypatch.setenv("MORTAR_DB", str(db))
    with store.connect(db, read_only=True) as con:
        found = dict(con.execute("SELECT perturbations, min(detection_id) FROM detections WHERE run_id = ? "
                                 "GROUP BY perturbations", [result.run_id]).fetchall())
    story_bug, question_bug = found['["P3-story"]'], found['["P3-both"]']
    at = app("inspector", inspect=(result.run_id, story_bug))
    assert any("Story: the seed" in h.value for h in at.subheader)
    assert any(":green-background[" in m.value for m in at.markdown)  # the swapped words, highlighted
    at = app("inspector", inspect=(result.run_id, question_bug))
    assert any(e.label.startswith("Questions asked differently") for e in at.expander)


def test_a_persona_run_judges_every_version_and_reports_per_location(persona_run, capsys):
    db, result = persona_run
    assert result.metrics["PERSONA"]["detections"] > 0
    assert main(["report", result.run_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "violations per relation and per version" in out
    for version in ("P1", "P2", "P3-story", "P3-question", "P3-history", "P3-both"):
        assert version in out
    assert "MT vs PERSONA (Table V)" in out


def test_persona_options_on_the_command_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MORTAR_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never reached: validation refuses
    bad = ["run", "--dataset", str(SAMPLE), "--method", "persona", "--sut", "tests.echo_bot:reply", "--selection",
           "--db", str(tmp_path / "x.duckdb")]
    assert main(bad) == 2
    assert "needs the likelihood of a given reply" in capsys.readouterr().err


def test_the_metrics_page_shows_violations_per_relation_and_location(persona_run, monkeypatch):
    from tests.test_pages import app

    db, result = persona_run
    monkeypatch.setenv("MORTAR_DB", str(db))
    at = app("metrics")
    versions = next(d.value for d in at.dataframe if "version" in d.value and "relation" in d.value
                    and "P3" in set(d.value["relation"]))
    assert {"P3-story", "P3-question", "P3-history", "P3-both"} <= set(versions["version"])
    assert versions["bugs"].sum() == result.metrics["PERSONA"]["NBugs"]
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert any(t.startswith("Persona relations") for t in titles)
