"""The noise floor (--orig-repeats): ORIG answered again; detections on questions whose ORIG answers disagree
are marked unstable and reported apart. Scripted SUTs only (the behaviour under test is the pipeline's)."""

import subprocess
import sys

import pytest

from mortar import store
from mortar.config import RunConfig, problems
from mortar.formats import load_dataset
from mortar.reports import run_report
from mortar.perturb import original_case
from mortar.pipeline import run
from mortar.vocab import RBT
from tests.conftest import ROOT, SAMPLE
from tests.scripted_sut import ScriptedSUT

ORIG_ID = original_case(load_dataset(SAMPLE).seeds[0]).test_case_id
# another answer, of every kind a question may ask for (a number, a name, a place, a day): a non-answer would not
# disagree with the first answer, only give nothing
NOISY = "Seven, said Anna Berg in Vienna on Monday"


class NoisySUT(ScriptedSUT):
    """Answers as the scripted SUT, except that a repeated ORIG conversation (sample > 0) gets another answer to
    one chosen question: a SUT that does not answer that question the same way every time."""

    model = "keyword-overlap-v1-noisy"

    def __init__(self, noisy_question: str | None = None):
        super().__init__()
        self.noisy_question = noisy_question

    def answer(self, conversation) -> str:
        if conversation.sample and conversation.question == self.noisy_question:
            return NOISY
        return super().answer(conversation)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    db = tmp_path_factory.mktemp("noise") / "store.duckdb"
    dataset = load_dataset(SAMPLE)
    once = run(dataset, RunConfig(sut="scripted", limit=1), db=db, sut=NoisySUT())
    with store.connect(db, read_only=True) as con:
        checks = store.read_checks(con, once.run_id)
    # the noisy question: one with a detection of a relation other than RBT when ORIG is answered once
    chosen = next(c for c in checks if c.violated and c.relation != RBT)
    question = dataset.seeds[0].round(chosen.source_round).question
    twice = run(dataset, RunConfig(sut="scripted", limit=1, orig_repeats=2), db=db, sut=NoisySUT(question))
    return db, once, twice, chosen


def test_one_repeat_is_the_run_as_before(runs):
    path, once, _, _ = runs
    assert run(load_dataset(SAMPLE), RunConfig(sut="scripted", limit=1, orig_repeats=1), db=path,
               sut=NoisySUT()).run_id == once.run_id
    with store.connect(path, read_only=True) as con:
        assert not any(c.unstable for c in store.read_checks(con, once.run_id))
        assert store.read_orig_samples(con, once.run_id, ORIG_ID) == {}


def test_detections_on_a_question_with_disagreeing_orig_answers_are_unstable(runs):
    path, once, twice, chosen = runs
    assert twice.run_id != once.run_id
    with store.connect(path, read_only=True) as con:
        before = {c.check_id: c for c in store.read_checks(con, once.run_id)}
        after = {c.check_id: c for c in store.read_checks(con, twice.run_id)}
        samples = store.read_orig_samples(con, twice.run_id, ORIG_ID)
    assert set(after) == set(before)  # the same checks, the same verdicts: only the marking is new
    assert all(after[k].violated == before[k].violated for k in before)
    unstable = {k for k, c in after.items() if c.unstable}
    assert chosen.check_id in unstable
    assert unstable == {k for k, c in after.items() if c.violated and c.source_round == chosen.source_round}
    # the repeated answers are stored, the noisy one at the chosen question's position
    position = chosen.source_round  # ORIG asks the seed's rounds in order
    assert samples[position] == [NOISY]
    assert len(samples) == max(samples) and all(len(v) == 1 for v in samples.values())


def test_unstable_detections_are_reported_apart(runs):
    path, once, twice, chosen = runs
    with store.connect(path, read_only=True) as con:
        before, after = run_report(con, once.run_id), run_report(con, twice.run_id)
        unstable = [c for c in store.read_checks(con, twice.run_id) if c.unstable]
        stable_page, stable_total = store.find_detections(con, store.DetectionFilter(run_ids=(twice.run_id,),
                                                                                     stable_only=True))
        _, total = store.find_detections(con, store.DetectionFilter(run_ids=(twice.run_id,)))
    rows = {r["relation"]: r for r in after["unstable"]}
    assert sum(r["detections"] for r in rows.values()) == len(unstable)
    assert rows[chosen.relation]["seed_questions"] == 1
    assert "unstable" not in before
    # the headline bug counts leave them out
    nbugs = lambda report: sum(v.get("NBugs", 0) for v in report["metrics"].values())  # noqa: E731
    assert nbugs(before) - nbugs(after) == len(unstable)
    assert "unstable" in [t.key for t in after["tables"]]
    assert total - stable_total == len(unstable)
    assert not stable_page["unstable"].any()


def test_a_deterministic_sut_has_no_noise_floor(tmp_path):
    sut = ScriptedSUT()
    result = run(load_dataset(SAMPLE), RunConfig(sut="scripted", limit=1, orig_repeats=3), db=tmp_path / "s.duckdb",
                 sut=sut)
    seed = load_dataset(SAMPLE).seeds[0]
    with store.connect(tmp_path / "s.duckdb", read_only=True) as con:
        assert not any(c.unstable for c in store.read_checks(con, result.run_id))
        samples = store.read_orig_samples(con, result.run_id, ORIG_ID)
        assert "unstable" not in run_report(con, result.run_id)
    assert len(samples) == len(seed.rounds) and all(len(v) == 2 for v in samples.values())
    # each repeat is asked, not read back from the first answers: ORIG's rounds twice more, at least
    assert sut.calls >= 2 * len(seed.rounds)


def test_bad_repeats_are_refused():
    assert any("ORIG repeats" in p for p in problems(RunConfig(dataset=str(SAMPLE), orig_repeats=0), False))
    out = subprocess.run([sys.executable, "-m", "mortar", "run", "--dataset", str(SAMPLE), "--orig-repeats", "0"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and "--orig-repeats" in out.stderr


def test_the_inspector_and_the_violations_page_show_the_noise_floor(runs, monkeypatch):
    from tests.test_pages import app, by_label

    path, _, twice, chosen = runs
    monkeypatch.setenv("MORTAR_DB", str(path))
    at = app("inspector", inspect=(twice.run_id, chosen.check_id))
    warning = " ".join(w.value for w in at.warning)
    assert "Unstable" in warning and NOISY in warning

    at = app("violations", current_run=twice.run_id)
    question = load_dataset(SAMPLE).seeds[0].round(chosen.source_round).question
    by_label(at.text_input, "Search the question").set_value(question).run()
    shown = at.dataframe[0].value
    assert chosen.check_id in set(shown["detection_id"]) and shown["unstable"].all()
    by_label(at.toggle, "Stable only").set_value(True).run()
    assert not at.exception
    left = at.dataframe[0].value if len(at.dataframe) else None
    if left is None:
        assert any(i.value.startswith("No detection matches") for i in at.info)
    else:
        assert chosen.check_id not in set(left["detection_id"]) and not left["unstable"].any()
