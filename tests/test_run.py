"""`mortar run` end to end with a scripted SUT: determinism, resume after SIGKILL, report and export."""

import json
import subprocess
import sys

import duckdb
import pandas as pd
import pytest

from mortar import store
from mortar.cli import main
from mortar.formats import load_dataset
from mortar.pipeline import RunConfig, run
from tests.conftest import ROOT, SAMPLE, kill_after_calls
from tests.scripted_sut import ScriptedSUT

CONFIG = RunConfig(sut="scripted", run_seed=3, limit=2)


def detections(db, run_id):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT detection_id, relation, similarity, bug_level FROM detections "
                           "WHERE run_id = ? ORDER BY detection_id", [run_id]).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    db = tmp_path_factory.mktemp("run") / "a.duckdb"
    result = run(load_dataset(SAMPLE), CONFIG, db=db, sut=ScriptedSUT())
    return db, result


def test_run_produces_rbt_and_mt_detections_and_is_deterministic(finished, tmp_path):
    db, result = finished
    assert result.metrics["RBT"]["detections"] > 0 and result.metrics["MT"]["detections"] > 0
    found = detections(db, result.run_id)
    assert {d[1] for d in found} >= {"RBT", "MR1"}
    again = run(load_dataset(SAMPLE), CONFIG, db=tmp_path / "b.duckdb", sut=ScriptedSUT())
    assert again.run_id == result.run_id and detections(tmp_path / "b.duckdb", again.run_id) == found


def test_rerun_reads_answers_back(finished):
    db, result = finished
    sut = ScriptedSUT()
    again = run(load_dataset(SAMPLE), CONFIG, db=db, sut=sut)
    assert sut.calls == 0 and again.metrics == result.metrics


def test_run_config_records_sut_coreference_and_versions(finished):
    db, result = finished
    with store.connect(db, read_only=True) as con:
        config = store.run_config(con, result.run_id)
        status = con.execute("SELECT status FROM runs WHERE run_id = ?", [result.run_id]).fetchone()[0]
    assert status == "done"
    assert config["sut"]["backend"] == "scripted" and config["oracle"] == "answer" and config["threshold"] == 0.5
    assert "coreferee" in config["kg"]["model"] and "spacy" in config["versions"]


KILL_SCRIPT = """
import sys
from mortar.formats import load_dataset
from mortar.pipeline import RunConfig, run
from tests.scripted_sut import make
run(load_dataset(sys.argv[1]), RunConfig(sut="scripted", run_seed=3, limit=2), db=sys.argv[2],
    sut=make(sys.argv[3], sys.argv[4]))
"""


def test_killed_run_resumes_to_exactly_the_uninterrupted_detections(finished, tmp_path):
    db_done, result = finished
    db, calls = tmp_path / "k.duckdb", tmp_path / "calls.txt"
    args = [sys.executable, "-c", KILL_SCRIPT, str(SAMPLE), str(db)]
    kill_after_calls(args + ["0.05", str(calls)], calls, 40, timeout_s=120)
    asked_before_kill = len(calls.read_text().splitlines())
    con = duckdb.connect(str(db), read_only=True)
    stored = con.execute("SELECT count(*) FROM answers").fetchone()[0]
    con.close()
    assert 0 < stored <= asked_before_kill
    calls.unlink()
    subprocess.run(args + ["0", str(calls)], cwd=ROOT, check=True)
    asked_after = len(calls.read_text().splitlines())
    con = duckdb.connect(str(db), read_only=True)
    total = con.execute("SELECT count(*) FROM answers").fetchone()[0]
    con.close()
    assert asked_after == total - stored  # stored answers were not asked again
    assert detections(db, result.run_id) == detections(db_done, result.run_id)


def test_report_prints_metrics_and_tables(finished, capsys):
    db, result = finished
    assert main(["report", "latest", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    for part in ("RBT vs MT", "NBugs", "Rate+", "RETC", "BPTC", "CV", "Table VI", "Table VII", "Table VIII",
                 "Table IX", "MR1", "MR2", "MR3", "MR4", "DSD"):
        assert part in out, part


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_export_rounds_detections_metrics(finished, tmp_path, fmt):
    db, result = finished
    frames = {}
    for what in ("rounds", "detections", "metrics"):
        out = tmp_path / f"{what}.{fmt}"
        assert main(["export", result.run_id, "--what", what, "--format", fmt, "--out", str(out), "--db", str(db)]) == 0
        frames[what] = {"csv": pd.read_csv, "parquet": pd.read_parquet,
                        "jsonl": lambda p: pd.read_json(p, lines=True)}[fmt](out)
    rounds = frames["rounds"]
    assert {"run_id", "seed_id", "test_case_id", "perturbation", "position", "source_round", "question", "output",
            "reference", "similarity", "ec_equivalent", "ec_semantic", "ec_ontology", "ec_story", "errored"} <= set(rounds)
    assert rounds["output"].notna().all()
    dets = frames["detections"]
    assert {"detection_id", "relation", "perturbations", "seed_id", "source_round", "test_case_ids", "text_a",
            "text_b", "similarity", "bug_level"} <= set(dets)
    assert len(dets) == len(detections(db, result.run_id))
    methods = set(frames["metrics"]["method"])
    assert {"RBT", "MT"} <= methods
    # besides the methods, only the counts reported apart (two non-answers, unstable or flaky detections)
    assert all(m.startswith(("no answer ", "unstable ", "flaky ")) for m in methods - {"RBT", "MT"})


def test_unknown_run_id_is_a_user_error(finished, capsys):
    db, _ = finished
    assert main(["report", "nope", "--db", str(db)]) == 2
    assert "nope" in capsys.readouterr().err


def test_the_stored_configuration_is_the_run_config_itself(finished):
    db, result = finished
    with store.connect(db, read_only=True) as con:
        stored = store.stored_config(con, result.run_id)
    assert RunConfig.from_json(stored.run_config) == CONFIG and stored.sut_model == "keyword-overlap-v1"


def test_an_engine_bug_keeps_its_traceback_instead_of_posing_as_bad_input(finished, monkeypatch):
    db, _ = finished

    def broken(con, run_id):
        return {}["missing"]  # a KeyError from inside the engine

    monkeypatch.setattr(store, "read_checks", broken)
    with pytest.raises(KeyError):  # not "mortar: error: 'missing'" with exit 2
        main(["report", "latest", "--db", str(db)])


def test_bad_run_options_are_all_named_in_one_line_with_exit_2(tmp_path, capsys):
    from mortar.config import RunConfig, problems

    assert main(["run", "--dataset", str(SAMPLE), "--method", "mortar,nope", "--db", str(tmp_path / "x.duckdb")]) == 2
    assert "unknown method nope" in capsys.readouterr().err
    found = problems(RunConfig(dataset=str(tmp_path / "none.json"), threshold=1.5, oracle="judge"),
                     check_services=False)
    assert len(found) == 3 and "no such dataset file" in found[0]
    assert any("threshold 1.5" in p for p in found) and any("unknown oracle 'judge'" in p for p in found)
    assert problems(RunConfig(dataset=str(SAMPLE)), check_services=False) == []
    assert not (tmp_path / "x.duckdb").exists()  # nothing written


def test_run_config_round_trips_through_json_and_a_config_file(tmp_path, capsys):
    from mortar.config import RunConfig

    config = RunConfig(dataset=str(SAMPLE), methods="metal,mortar", run_seed=4, limit=1, threshold=0.7)
    assert config.methods == ("mortar", "metal")  # registry order, whatever order was typed
    assert RunConfig.from_json(json.dumps(config.to_json())) == config
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**config.to_json(), "oracle": "judge"}))
    assert main(["run", "--config", str(path), "--db", str(tmp_path / "y.duckdb")]) == 2
    assert "unknown oracle 'judge'" in capsys.readouterr().err


def test_score_answers_cli_calibrates_an_oracle(tmp_path, capsys):
    pairs = tmp_path / "pairs.jsonl"
    rows = [{"question": "Did Ann fly the kite?", "gold": "yes", "candidate": "Yes, she did.", "acceptable": True},
            {"question": "Did Ann fly the kite?", "gold": "yes", "candidate": "No, she didn't.", "acceptable": False},
            {"question": "Who built it?", "gold": "Tom", "candidate": "It was built by Tom.", "acceptable": True,
             "id": 7}]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "scored.jsonl"
    assert main(["score-answers", str(pairs), "--oracle", "answer", "--out", str(out)]) == 0
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["pass"] for r in scored] == [True, False, True] and scored[2]["id"] == 7 and scored[0]["reason"]
    printed = capsys.readouterr().out.lower()
    assert "accuracy" in printed and "threshold" in printed
