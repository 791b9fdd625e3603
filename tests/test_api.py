"""The Python API and the pytest helper: the README's examples run as written, a function (sync or async) is the
SUT, `--sut module:function` finds one on the path or says in one line why not, the in-memory store."""

import re
import subprocess
import sys

import pytest

import mortar
from mortar.cli import main
from mortar.sut import SutError, make_sut
from mortar.sut.base import Conversation, Turn
from mortar.testing import assert_within_budget
from tests import echo_bot
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def example(name: str) -> str:
    blocks = re.findall(r"```python\n(# example: " + re.escape(name) + r"\n.*?)```", README, re.S)
    assert len(blocks) == 1, f"the README has no single '# example: {name}' block"
    return blocks[0]


def test_the_readme_python_example_runs_against_a_plain_function_in_memory(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(example("python-api"), "README example", "exec"), {})
    out = capsys.readouterr().out
    assert re.search(r"run-\w{12} \d+ RBT bugs, \d+ MT bugs", out) and "Table VI" in out
    assert not list(tmp_path.iterdir())  # nothing written: the store was in memory


def test_the_readme_pytest_example_gates_a_system(tmp_path):
    test_file = tmp_path / "test_gate_example.py"
    test_file.write_text(example("pytest"))
    passing = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
                             cwd=ROOT, capture_output=True, text=True)
    assert passing.returncode == 0, passing.stdout[-2000:]
    test_file.write_text(example("pytest").replace("RATE:MT>0.95", "RATE:MT>0.05"))
    failing = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
                             cwd=ROOT, capture_output=True, text=True)
    assert failing.returncode == 1
    assert "budget exceeded: RATE:MT = " in failing.stdout and "violated checks; the first" in failing.stdout
    assert re.search(r"- MR\d on sg-\w+ round \d+ \(DRS\): '.+\?'\nE? +answer: ", failing.stdout)


def test_a_failing_gate_lists_the_violated_checks_with_both_answers():
    with pytest.raises(AssertionError) as failed:
        assert_within_budget(str(ROOT / "data/sample_chat.jsonl"), echo_bot.reply, "NBUGS>0", limit=1,
                             mortar={"perturbations": ["DRS"]})
    message = str(failed.value)
    assert message.startswith("budget exceeded: NBUGS = ") and "answer: " in message and "against: " in message
    kept = assert_within_budget(str(ROOT / "data/sample_chat.jsonl"), echo_bot.reply, "NBUGS>10000", limit=1,
                                mortar={"perturbations": ["DRS"]})
    assert mortar.report(kept)["metrics"]["RBT"]["detections"] > 0  # read back from the in-memory store


def test_an_async_function_answers_like_its_sync_twin():
    conversation = Conversation("Ann had a red kite. Tom had a boat.", (Turn("Who had a kite?", "Ann"),),
                                "Who had a boat?")
    sync, late = make_sut(echo_bot.reply), make_sut("tests.echo_bot:reply_later")
    assert late.answer(conversation) == sync.answer(conversation) == "Tom had a boat."
    assert sync.config()["backend"] == "python" and sync.fingerprint != late.fingerprint


def test_an_async_function_answers_inside_a_running_event_loop_too():
    import asyncio

    conversation = Conversation("Ann had a red kite. Tom had a boat.", (), "Who had a boat?")

    async def in_a_notebook():  # a running loop in this thread, as in Jupyter or an async test
        return make_sut("tests.echo_bot:reply_later").answer(conversation)

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:  # a thread of its own: pytest's may already run a loop (playwright's)
        assert pool.submit(asyncio.run, in_a_notebook()).result() == "Tom had a boat."


@pytest.mark.parametrize("spec, message", [
    ("tests.no_such_bot:reply", "cannot import tests.no_such_bot"),
    ("tests.echo_bot:respond", "tests.echo_bot has no respond"),
    ("tests.echo_bot:not_a_function", "not_a_function is not callable"),
])
def test_a_wrong_function_name_is_one_line_and_exit_2(spec, message, capsys, tmp_path):
    with pytest.raises(SutError, match=message):
        make_sut(spec)
    assert main(["run", "--dataset", str(ROOT / "data/sample_chat.jsonl"), "--sut", spec, "--limit", "1",
                 "--db", str(tmp_path / "x.duckdb")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and err.count("\n") == 0


def test_a_function_that_raises_gives_errored_rounds_not_bugs():
    def broken(messages):
        raise RuntimeError("model offline")

    result = mortar.run(str(ROOT / "data/sample_chat.jsonl"), broken, limit=1, db=":memory:",
                        mortar={"perturbations": ["DRS"]})
    assert result.errored_rounds > 0 and result.metrics["RBT"]["NBugs"] == 0


def test_unknown_settings_are_refused_in_one_line():
    with pytest.raises(mortar.ConfigError, match="unknown setting colour"):
        mortar.run(str(ROOT / "data/sample_chat.jsonl"), echo_bot.reply, colour="red")


def test_import_mortar_stays_light():
    code = "import sys, mortar, mortar.vocab; print('mortar.pipeline' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert out == ["False", "False"]
