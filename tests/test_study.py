"""Studies: one suite against several systems — tables per system, a study file, adding a system answers only it,
a killed study resumes without asking stored answers again, the report and the exports."""

import subprocess
import sys

import duckdb
import pandas as pd
import pytest

from mortar import store
from mortar.cli import main
from mortar.config import ConfigError, RunConfig
from mortar.errors import InputError
from mortar.study import Study, System, from_suts, load_study_file, run_study, study_problems
from mortar.study_report import study_frame, study_report, wide
from tests.conftest import ROOT, SAMPLE, kill_after_calls
from tests.scripted_sut import SuffixSUT

SUITE = RunConfig(dataset=str(SAMPLE), limit=2, run_seed=1)
NAMES = ("plain", "polite", "loud")


class Counting(SuffixSUT):
    """A scripted system that says something of its own after every answer, and counts what it is asked."""

    def __init__(self, name):
        super().__init__({"plain": "", "polite": "please", "loud": "!!", "fourth": "indeed"}[name], name)


def systems(*names):
    return tuple(System(name=n, sut=f"scripted-{n}") for n in names)


@pytest.fixture(scope="module")
def studied(tmp_path_factory):
    db = tmp_path_factory.mktemp("study") / "s.duckdb"
    suts = {n: Counting(n) for n in NAMES}
    result = run_study(Study(SUITE, systems(*NAMES), "three scripted"), db=db, suts_by_name=suts)
    return db, result, suts


def test_each_system_is_one_run_on_the_same_test_cases(studied):
    db, result, suts = studied
    assert list(result.runs) == list(NAMES) and len(set(result.runs.values())) == 3
    assert all(s.calls > 0 for s in suts.values())
    with store.connect(db, read_only=True) as con:
        cases = {name: sorted(c.test_case_id for c in store.read_cases_and_verdicts(con, run_id)[0])
                 for name, run_id in result.runs.items()}
        frame = store.study_systems(con, result.study_id)
    assert cases["plain"] == cases["polite"] == cases["loud"]
    assert list(frame["system"]) == list(NAMES) and set(frame["status"]) == {"done"}


def test_the_report_has_the_papers_tables_with_one_row_per_system(studied):
    db, result, _ = studied
    with store.connect(db, read_only=True) as con:
        r = study_report(con, result.study_id)
        single = {name: store.read_run_metrics(con, run_id) for name, run_id in result.runs.items()}
    assert [row["system"] for row in r["table_iv"]] == list(NAMES)
    assert {row["system"] for row in r["table_vi"]} == set(NAMES)
    sums = {row["system"]: row for row in r["table_vi"] if row["perturbation"] == "Sum"}
    assert sums["plain"]["test_cases"] == sums["loud"]["test_cases"] > 0  # the same suite
    for row in r["headline"]:  # the study's figures are each run's own
        stored = single[row["system"]].set_index(["method", "metric"])["value"]
        assert row["NBugs"] == stored[(row["method"], "NBugs")]
        assert row["NBugs low"] <= row["NBugs"] <= row["NBugs high"]
    vii = wide(r["table_vii"], "perturbation")
    assert list(vii["system"]) == list(NAMES) and set(vii.columns) >= {"DRS", "DSD"}
    for row in r["robustness"]:
        assert row["robustness drop"] == pytest.approx(row["seed accuracy"] - row["perturbed accuracy"])
        assert row["robustness drop low"] <= row["robustness drop"] <= row["robustness drop high"]


def test_adding_a_system_answers_only_that_system(studied, tmp_path):
    db, result, _ = studied
    suts = {n: Counting(n) for n in (*NAMES, "fourth")}
    again = run_study(Study(SUITE, systems(*NAMES, "fourth"), "three scripted"), db=db, suts_by_name=suts)
    assert again.study_id == result.study_id
    other = run_study(Study(SUITE, systems("plain"), "another name"), db=db, suts_by_name=suts)
    assert other.study_id != result.study_id and suts["plain"].calls == 0  # another study, the same run
    assert [suts[n].calls for n in NAMES] == [0, 0, 0] and suts["fourth"].calls > 0
    assert [n for n, r in again.results.items() if r is not None] == ["fourth"]
    with store.connect(db, read_only=True) as con:
        assert list(store.study_systems(con, result.study_id)["system"]) == [*NAMES, "fourth"]


def test_the_export_is_one_row_per_system_relation_and_perturbation(studied, tmp_path):
    db, result, _ = studied
    with store.connect(db, read_only=True) as con:
        frame = study_frame(con, result.study_id)
    assert not frame.duplicated(["system", "relation", "perturbation"]).any()
    assert {"MR1", "RBT"} <= set(frame["relation"]) and set(frame["system"]) >= set(NAMES)
    out = tmp_path / "study.parquet"
    assert main(["export", result.study_id, "--what", "metrics", "--format", "parquet", "--out", str(out),
                 "--db", str(db)]) == 0
    assert len(pd.read_parquet(out)) == len(frame)


def test_mortar_report_prints_the_study(studied, capsys):
    db, result, _ = studied
    assert main(["report", result.study_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    for title in ("Table IV", "Table VI", "Table VII", "Table VIII", "Robustness drop"):
        assert title in out
    assert "settings that differ from the paper's" in out and out.count("loud") >= 5


STUDY_FILE = """
name: endpoints
dataset: {dataset}
limit: 1
perturbation: {{perturbations: [DRS, DRR]}}
systems:
  - {{name: a, sut: "openai:model-a", base_url: "http://127.0.0.1:9001/v1", api_key_env: A_KEY}}
  - {{name: b, sut: "openai:model-b", base_url: "http://127.0.0.1:9002/v1"}}
  - {{name: terse, sut: smollm2, system_prompt: "Story: {{story}} Answer in three words.", max_new_tokens: 12}}
"""


def test_a_study_file_names_each_systems_endpoint_and_the_variable_of_its_key(tmp_path):
    path = tmp_path / "study.yaml"
    path.write_text(STUDY_FILE.format(dataset=SAMPLE))
    study, _ = load_study_file(path, env={})
    assert study.name == "endpoints" and [s.name for s in study.systems] == ["a", "b", "terse"]
    assert study.suite.settings_of("mortar").perturbations == ("DRS", "DRR") and study.suite.limit == 1
    a, b, terse = study.systems
    env = a.environment({"A_KEY": "sk-secret"})
    assert env["MORTAR_OPENAI_BASE_URL"] == "http://127.0.0.1:9001/v1" and env["MORTAR_OPENAI_API_KEY"] == "sk-secret"
    assert "sk-secret" not in str(a.spec()) and a.spec()["api_key_env"] == "A_KEY"
    assert a.make_sut(study.suite, {"A_KEY": "k"}).config()["base_url"] == "http://127.0.0.1:9001/v1"
    assert terse.config(study.suite).max_new_tokens == 12 and "three words" in terse.config(study.suite).system_prompt
    assert study_problems(study, env={}) == ["a: the environment variable A_KEY (its key) is not set"]
    assert study_problems(study, env={"A_KEY": "k"}) == []


@pytest.mark.parametrize("text, message", [
    ("dataset: x.json\n", "'systems' must list at least one system"),
    ("dataset: x.json\nsystems: [{name: a, sut: smollm2}, {name: a, sut: gemma3-270m}]\n", "given twice: a"),
    ("dataset: x.json\ncolour: red\nsystems: [smollm2]\n", "unknown setting colour"),
    ("dataset: x.json\nsystems: [{name: a, sut: smollm2, key: abc}]\n", "system 'a': unknown field key"),
    ("systems: [smollm2\n", "not YAML"),
])
def test_a_bad_study_file_is_one_clear_line(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=message):
        load_study_file(path)


def test_a_local_system_with_an_endpoint_is_refused():
    study = Study(SUITE, (System(name="x", sut="smollm2", base_url="http://127.0.0.1:1/v1"),))
    assert "x: base_url and api_key_env are for openai:MODEL or groq:MODEL systems" in study_problems(study)
    with pytest.raises(ConfigError):
        run_study(Study(SUITE, ()))


def test_the_command_line_runs_a_study_of_repeated_suts(tmp_path, monkeypatch, capsys):
    import mortar.sut as suts

    made = []
    monkeypatch.setattr(suts, "make_sut", lambda spec, *a, **k: made.append(spec) or Counting(spec.split("-")[1]))
    db = tmp_path / "cli.duckdb"
    argv = ["study", "--dataset", str(SAMPLE), "--limit", "1", "--sut", "scripted-plain", "--sut", "scripted-loud",
            "--perturbations", "DRS", "--db", str(db)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "2 systems, 2 run now (scripted-plain, scripted-loud)" in out and "Table VII" in out
    assert main(argv) == 0
    assert "every system's run was already done" in capsys.readouterr().out


KILL_SCRIPT = """
import sys
from mortar.config import RunConfig
from mortar.study import Study, System, run_study
from tests.scripted_sut import make
suite = RunConfig(dataset=sys.argv[1], limit=2, run_seed=1)
sut = make(sys.argv[3], sys.argv[4])
sut.model = "keyword-overlap-slow"
run_study(Study(suite, (System("plain", "scripted-plain"), System("slow", "scripted-slow"))), db=sys.argv[2],
          suts_by_name={"plain": make(0), "slow": sut})
"""


def test_a_killed_study_resumes_without_asking_stored_answers_again(tmp_path):
    db, calls = tmp_path / "k.duckdb", tmp_path / "calls.txt"
    args = [sys.executable, "-c", KILL_SCRIPT, str(SAMPLE), str(db)]
    kill_after_calls(args + ["0.05", str(calls)], calls, 30)
    con = duckdb.connect(str(db), read_only=True)
    stored = con.execute("SELECT count(*) FROM answers a JOIN suts s USING (sut_fingerprint) "
                         "WHERE s.config->>'model' = 'keyword-overlap-slow'").fetchone()[0]
    status = dict(con.execute("SELECT y.system, r.status FROM study_systems y JOIN runs r USING (run_id)").fetchall())
    con.close()
    assert stored > 0 and status == {"plain": "done", "slow": "running"}
    calls.unlink()
    subprocess.run(args + ["0", str(calls)], cwd=ROOT, check=True)
    con = duckdb.connect(str(db), read_only=True)
    total = con.execute("SELECT count(*) FROM answers a JOIN suts s USING (sut_fingerprint) "
                        "WHERE s.config->>'model' = 'keyword-overlap-slow'").fetchone()[0]
    status = dict(con.execute("SELECT y.system, r.status FROM study_systems y JOIN runs r USING (run_id)").fetchall())
    con.close()
    assert len(calls.read_text().splitlines()) == total - stored  # stored answers were not asked again
    assert status == {"plain": "done", "slow": "done"}


def test_from_suts_names_each_system_by_its_spec():
    study = from_suts(SUITE, ["smollm2", "gemma3-270m", "smollm2"])
    assert [s.name for s in study.systems] == ["smollm2", "gemma3-270m"]


def test_the_html_report_of_a_study_has_every_system_and_the_papers_tables(studied, tmp_path):
    db, result, _ = studied
    out = tmp_path / "study.html"
    assert main(["export", result.study_id, "--format", "html", "--out", str(out), "--db", str(db)]) == 0
    page = out.read_text()
    for text in ("Table IV", "Table VI", "Table VII", "Table VIII", "fig-heatmap", "fig-robustness",
                 "settings that differ from the paper&#x27;s", *NAMES):
        assert text in page
    assert "<script src=" not in page  # plotly.js is inline: it opens offline


def test_the_study_page_shows_the_systems_side_by_side_and_links_to_their_detections(studied, monkeypatch):
    from tests.test_pages import app

    db, result, _ = studied
    monkeypatch.setenv("MORTAR_DB", str(db))
    at = app("study", **{"s-study": result.study_id})
    titles = [c.proto.spec for c in at.get("plotly_chart")]
    assert any("Systems side by side" in t for t in titles) and any("Robustness drop" in t for t in titles)
    viii = next(d.value for d in at.dataframe if "MR1" in d.value.columns)
    assert list(viii["system"])[:3] == list(NAMES)  # (and the fourth system, where that test ran first)
    answers = at.dataframe[-1].value
    assert {"version", "question as asked", *NAMES} <= set(answers.columns) and "ORIG" in set(answers["version"])
    at.selectbox(key="s-cell-system").set_value("loud")
    at.selectbox(key="s-cell-relation").set_value("MR1").run()
    expected = next(m for m in at.metric if m.label == "Detections").value
    at.button(key="s-open").click().run()
    assert not at.exception
    assert at.session_state["v-runs"] == [result.runs["loud"]] and at.session_state["v-relations"] == ["MR1"]
    assert next(m for m in at.metric if m.label == "Matching detections").value == expected  # the cell's detections


def test_a_study_job_hands_the_study_to_its_process_unchanged(tmp_path):
    from pathlib import Path

    from mortar import jobs
    from mortar.profiles import apply_profile
    from mortar.study import from_document, study_document

    suite, _ = apply_profile(SUITE, "paper", env={})
    study = Study(suite, (System("a", "smollm2"), System("b", "openai:m", base_url="http://127.0.0.1:9/v1",
                                                          api_key_env="B_KEY", max_new_tokens=16)), "mine")
    back, _ = from_document(study_document(study), Path("job.json"), env={})
    assert back == study
    line = jobs.describe_job({"study": study_document(study)})
    assert line.startswith("study mine: 2 systems (a, b) · ") and "sample_coqa.json (first 2 seeds)" in line


def test_ppd_per_system_once_its_detections_are_labelled(studied):
    from mortar import labels

    db, result, _ = studied
    run_id = result.runs["polite"]
    with store.connect(db, read_only=True) as con:
        first, second = [d for d, *_ in store.run_detections(con, run_id)][:2]
    labels.save_label(run_id, first, "ann", 2, db=db)  # a true positive (score below 6)
    labels.save_label(run_id, second, "ann", 9, db=db)  # a false positive
    with store.connect(db, read_only=True) as con:
        precision = {row["system"]: row for row in study_report(con, result.study_id)["precision"]}
    assert list(precision) == ["polite"] and precision["polite"]["labelled"] == 2
    assert precision["polite"]["PPD"] == 0.5
