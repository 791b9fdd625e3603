"""The executor with a scripted, deterministic SUT: prefix sharing, errors, progress, resume after SIGKILL."""

import os
import signal
import subprocess
import sys
import threading
import time

import duckdb
import pytest

from mortar.store import StoreCache
from mortar.dataset import Round, Seed, TestCase
from mortar.formats import load_dataset
from mortar import execute as execute_module
from mortar.execute import build_tree, execute
from mortar.perturb import PerturbationSettings, test_cases_for
from mortar.sut import SUT, Conversation, SutError, Turn
from tests.conftest import ROOT, SAMPLE


class ScriptedSUT(SUT):
    """Answers from the question and the whole history, so a wrong history shows in the answer."""

    backend = "scripted"
    model = "echo"

    def __init__(self, lanes=3, fail_on=(), delay_s=0.0):
        super().__init__()
        self.lanes, self.fail_on, self.delay_s = lanes, set(fail_on), delay_s
        self.calls: list[Conversation] = []
        self.lock = threading.Lock()

    def answer(self, conversation: Conversation) -> str:
        with self.lock:
            self.calls.append(conversation)
        time.sleep(self.delay_s)
        if conversation.question in self.fail_on:
            raise SutError(f"refused {conversation.question}")
        return f"{conversation.question}#{len(conversation.history)}#{conversation.hash[:6]}"


def naive_answers(seeds, cases, sut):
    """Every round of every case asked on its own, with that case's own earlier answers."""
    by_id = {s.id: s for s in seeds}
    out = {}
    for case in cases:
        seed, history = by_id[case.seed_id], []
        for position, turn_id in enumerate(case.source_rounds, start=1):
            conversation = Conversation(seed.story, tuple(history), seed.round(turn_id).question)
            out[case.test_case_id, position] = answer = sut.answer(conversation)
            history.append(Turn(conversation.question, answer))
    return out


def seed_of(n, seed_id="s1"):
    return Seed(seed_id, f"The story of {seed_id}.", tuple(Round(k, f"{seed_id} question {k}?", f"a{k}")
                                                          for k in range(1, n + 1)))


def test_shared_prefixes_are_answered_once(db):
    seed = seed_of(3)
    cases = [TestCase("s1", "ORIG", 1, (1, 2, 3)), TestCase("s1", "DRR", 1, (1, 3)),
             TestCase("s1", "DRD", 1, (1, 2, 2, 3))]
    # distinct prefixes: 1 | 1,2 | 1,3 | 1,2,3 | 1,2,2 | 1,2,2,3
    assert sum(1 for _ in _nodes(build_tree([seed], cases))) == 6
    sut = ScriptedSUT()
    answers = execute([seed], cases, sut, StoreCache(db))
    assert len(sut.calls) == 6
    assert {k: a.text for k, a in answers.items()} == naive_answers([seed], cases, ScriptedSUT())
    assert answers["s1/DRR/1", 1] == answers["s1/ORIG/1", 1]


def _nodes(roots):
    stack = [c for r in roots for c in r.children.values()]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children.values())


@pytest.mark.parametrize("lanes", [1, 4])
def test_answers_equal_asking_every_case_on_its_own(db, lanes):
    dataset = load_dataset(SAMPLE)
    seeds = dataset.seeds[:2]
    cases = [c for s in seeds for c in test_cases_for(s, 11, PerturbationSettings(replicates=2))]
    sut = ScriptedSUT(lanes=lanes)
    answers = execute(seeds, cases, sut, StoreCache(db))
    assert {k: a.text for k, a in answers.items()} == naive_answers(seeds, cases, ScriptedSUT())
    prefixes = {(c.seed_id, c.source_rounds[:p]) for c in cases for p in range(1, len(c.source_rounds) + 1)}
    assert len(sut.calls) == len(prefixes) < len(answers)
    assert len({c.hash for c in sut.calls}) == len(sut.calls)


class _ThreadRecordingSUT(ScriptedSUT):
    """Names the threads it answers on; its third question meets a bug (an exception, not a SutError)."""

    def __init__(self, lanes):
        super().__init__(lanes=lanes)
        self.threads: set[str] = set()

    def answer(self, conversation: Conversation) -> str:
        self.threads.add(threading.current_thread().name)
        if conversation.question == "s1 question 3?":
            raise ValueError("a bug in the system")
        return super().answer(conversation)


@pytest.mark.parametrize("lanes", [1, 2])
def test_one_lane_answers_on_the_callers_thread_and_a_bug_still_surfaces(db, lanes):
    sut = _ThreadRecordingSUT(lanes=lanes)
    seed = seed_of(3)
    with pytest.raises(ValueError, match="a bug in the system"):
        execute([seed], [TestCase("s1", "ORIG", 1, (1, 2, 3))], sut, StoreCache(db))
    on_caller = sut.threads == {threading.current_thread().name}
    assert on_caller == (lanes == 1)
    assert [c.question for c in sut.calls] == ["s1 question 1?", "s1 question 2?"]
    assert len(StoreCache(db).read_answers(sut.fingerprint)) == 2  # what was answered before the bug is kept


def test_an_errored_round_is_recorded_and_asked_again_next_run(db):
    seed = seed_of(4)
    cases = [TestCase("s1", "ORIG", 1, (1, 2, 3, 4)), TestCase("s1", "DRS", 1, (4, 3, 2, 1))]
    answers = execute([seed], cases, ScriptedSUT(fail_on={"s1 question 2?"}), StoreCache(db))
    assert answers["s1/ORIG/1", 2].text is None and answers["s1/ORIG/1", 2].error == "refused s1 question 2?"
    assert answers["s1/ORIG/1", 3].error.startswith("not asked") and answers["s1/ORIG/1", 4].text is None
    assert answers["s1/DRS/1", 3].error == "refused s1 question 2?" and answers["s1/DRS/1", 4].text is None
    assert answers["s1/DRS/1", 2].ok and answers["s1/ORIG/1", 1].ok
    con = duckdb.connect(str(db), read_only=True)
    try:
        stored = con.execute("SELECT answer IS NULL, error FROM answers ORDER BY error NULLS FIRST").fetchall()
    finally:
        con.close()
    assert sorted(stored, key=str) == sorted([(False, None)] * 3 + [(True, "refused s1 question 2?")] * 2, key=str)

    healthy = ScriptedSUT()
    again = execute([seed], cases, healthy, StoreCache(db))
    assert len(healthy.calls) == 3 + 2  # the errored rounds and the rounds after them
    assert all(a.ok for a in again.values())
    assert sum(a.cached for a in again.values()) == 3


def test_progress_counts_up_to_the_number_of_conversations(db):
    seed = seed_of(5)
    cases = [TestCase("s1", "ORIG", 1, (1, 2, 3, 4, 5)), TestCase("s1", "DRS", 1, (5, 4, 3, 2, 1))]
    calls = []
    execute([seed], cases, ScriptedSUT(lanes=2), StoreCache(db), progress=lambda d, t, info: calls.append((d, t, info)))
    assert calls[0][0] == 0 and calls[-1][0] == calls[-1][1] == 10
    assert [d for d, _, _ in calls] == sorted(d for d, _, _ in calls)
    last = calls[-1][2]
    assert last["computed"] == last["sut_calls"] == 10 and last["test_rounds"] == 10
    assert last["answers_per_second"] > 0

    calls.clear()
    execute([seed], cases, ScriptedSUT(lanes=2), StoreCache(db), progress=lambda d, t, info: calls.append((d, t, info)))
    assert calls[-1][0] == 10 and calls[-1][2]["cached"] == 10 and calls[-1][2]["sut_calls"] == 0


def test_another_sut_setting_is_another_fingerprint(db):
    seed = seed_of(2)
    cases = [TestCase("s1", "ORIG", 1, (1, 2))]
    execute([seed], cases, ScriptedSUT(), StoreCache(db))
    other = ScriptedSUT()
    other.model = "echo-2"
    execute([seed], cases, other, StoreCache(db))
    assert len(other.calls) == 2


class ReaderCheckingSUT(ScriptedSUT):
    """Before its fourth answer, has another process read the store (as the dashboard does during a run)."""

    def __init__(self, db):
        super().__init__(lanes=1)
        self.db, self.reader = db, None

    def answer(self, conversation: Conversation) -> str:
        if len(self.calls) == 3:
            self.reader = subprocess.run(
                [sys.executable, "-c", "import duckdb, sys; con = duckdb.connect(sys.argv[1], read_only=True); "
                 "print(con.execute('SELECT count(*) FROM answers').fetchone()[0])", str(self.db)],
                capture_output=True, text=True, timeout=60)
        return super().answer(conversation)


def test_another_process_can_read_the_store_while_the_sut_answers(db, monkeypatch):
    monkeypatch.setattr(execute_module, "STORE_EVERY_S", 0.0)  # store every answer at once
    sut = ReaderCheckingSUT(db)
    execute([seed_of(5)], [TestCase("s1", "ORIG", 1, (1, 2, 3, 4, 5))], sut, StoreCache(db))
    assert sut.reader.returncode == 0, sut.reader.stderr
    assert sut.reader.stdout.split() == ["3"]  # the answers so far were stored and visible


CHILD = """
import sys
from pathlib import Path
from mortar.formats import load_dataset
from mortar.execute import execute
from mortar.store import StoreCache
from mortar.perturb import PerturbationSettings, test_cases_for
from tests.test_execute import ScriptedSUT

seeds = load_dataset(sys.argv[1]).seeds[:2]
cases = [c for s in seeds for c in test_cases_for(s, 5, PerturbationSettings())]
log = Path(sys.argv[3])

def progress(done, total, info):
    with log.open("a") as f:
        f.write(f"{info['computed']}\\n")

execute(seeds, cases, ScriptedSUT(lanes=2, delay_s=0.05), StoreCache(sys.argv[2]), progress=progress)
"""


def test_a_killed_run_resumes_without_recomputing_stored_answers(db, tmp_path):
    log = tmp_path / "progress.log"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(SAMPLE), str(db), str(log)], cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and child.poll() is None:
            lines = log.read_text().split() if log.exists() else []
            if lines and int(lines[-1]) >= 30:
                break
            time.sleep(0.01)
        assert child.poll() is None, "the run finished before it could be killed"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    reported = int(log.read_text().split()[-1])
    con = duckdb.connect(str(db), read_only=True)
    try:
        stored = con.execute("SELECT count(*) FROM answers WHERE answer IS NOT NULL").fetchone()[0]
    finally:
        con.close()
    assert stored >= reported >= 30  # everything reported was stored first

    seeds = load_dataset(SAMPLE).seeds[:2]
    cases = [c for s in seeds for c in test_cases_for(s, 5, PerturbationSettings())]
    total = sum(1 for _ in _nodes(build_tree(seeds, cases)))
    assert stored < total
    resumed = ScriptedSUT()
    answers = execute(seeds, cases, resumed, StoreCache(db))
    assert len(resumed.calls) == total - stored
    assert sum(a.cached for a in answers.values()) > 0
    assert {k: a.text for k, a in answers.items()} == naive_answers(seeds, cases, ScriptedSUT())
