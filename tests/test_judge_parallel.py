"""Judging spread over worker processes gives the checks one process gives, in the same order (similarities equal
to six decimals)."""

from dataclasses import asdict

from mortar.dataset import limited
from mortar.formats import load_dataset
from mortar.judge import judge, judge_in_parallel, judging_workers
from mortar.oracle import Oracle, default_threshold
from mortar.pipeline import RunConfig, make_test_cases
from mortar.config import make_extractor
from mortar.execute import execute
from tests.conftest import SAMPLE
from tests.scripted_sut import ScriptedSUT


def test_workers_judge_as_one_process_does(tmp_path):
    dataset = load_dataset(SAMPLE)
    config = RunConfig(methods="mortar,metal", limit=3)
    seeds, cases, verdicts, _, _ = make_test_cases(limited(dataset, 3), config, tmp_path / "s.duckdb",
                                                   make_extractor("spacy"), oracle=Oracle("answer"))
    answers = execute(seeds, cases, ScriptedSUT())
    threshold = default_threshold("answer")
    alone = judge(seeds, cases, verdicts, answers, Oracle("answer"), threshold)
    spread = judge_in_parallel(2, "answer", seeds, cases, verdicts, answers, threshold)
    def row(c):  # MiniLM's vectors differ in the last bits with what else is in their batch
        return {**asdict(c), "similarity": round(c.similarity, 6)}
    assert len(alone) > 100 and [row(c) for c in spread] == [row(c) for c in alone]


def test_only_large_runs_under_the_mortar_command_spread_by_default(monkeypatch):
    monkeypatch.delenv("MORTAR_JUDGE_WORKERS", raising=False)
    assert judging_workers(5000) == 1  # pytest is no `mortar` command: its main module is not ours to import again
    monkeypatch.setenv("MORTAR_JUDGE_WORKERS", "2")
    assert judging_workers(3) == 2
