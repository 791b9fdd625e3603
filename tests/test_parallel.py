"""Work spread over worker processes (``mortar.parallel``) gives what one process gives: the same checks in the
same order (similarities equal to six decimals), the same knowledge graphs."""

from dataclasses import asdict, replace

import pytest

from mortar.dataset import limited
from mortar.formats import load_dataset
from mortar.judge import judge, judge_in_parallel, load_oracle
from mortar.parallel import workers_for
from mortar.oracle import Embeddings, Oracle, default_threshold, embedding_model
from mortar.pipeline import RunConfig, make_test_cases
from mortar.config import make_extractor
from mortar.execute import execute
from tests.conftest import SAMPLE
from tests.scripted_sut import ScriptedSUT


@pytest.fixture(scope="module")
def answered(tmp_path_factory):
    """Three sample seeds' MORTAR and METAL test cases, answered by the scripted SUT: (seeds, cases, verdicts,
    answers)."""
    config = RunConfig(methods="mortar,metal", limit=3)
    seeds, cases, verdicts, _, _ = make_test_cases(limited(load_dataset(SAMPLE), 3), config,
                                                   tmp_path_factory.mktemp("judging") / "s.duckdb",
                                                   make_extractor("spacy"), oracle=Oracle("answer"))
    return seeds, cases, verdicts, execute(seeds, cases, ScriptedSUT())


def row(c):  # MiniLM's vectors differ in the last bits with what else is in their batch
    return {**asdict(c), "similarity": round(c.similarity, 6)}


def test_workers_judge_as_one_process_does(answered):
    threshold = default_threshold("answer")
    alone = judge(*answered, Oracle("answer"), threshold)
    spread = judge_in_parallel(2, "answer", *answered, threshold)
    assert len(alone) > 100 and [row(c) for c in spread] == [row(c) for c in alone]


class CountedEncodes:
    """MiniLM, counting its ``encode`` calls."""

    def __init__(self):
        self.model, self.calls = embedding_model(), 0

    def encode(self, *args, **kwargs):
        self.calls += 1
        return self.model.encode(*args, **kwargs)


def test_asking_the_oracle_ahead_gives_the_same_checks_with_fewer_encodes(answered, monkeypatch):
    import mortar.judge

    def judged():
        model = CountedEncodes()
        checks = judge(*answered, Oracle("answer", Embeddings(model)), default_threshold("answer"))
        return [row(c) for c in checks], model.calls

    ahead, ahead_calls = judged()
    monkeypatch.setattr(mortar.judge, "ask_ahead", lambda *args: None)
    one_by_one, one_by_one_calls = judged()
    assert len(ahead) > 100 and ahead == one_by_one
    assert ahead_calls * 3 <= one_by_one_calls, (ahead_calls, one_by_one_calls)


def test_the_relations_find_the_agreements_already_read(answered, monkeypatch):
    from mortar.oracle.agreement import AgreementJudge

    read, compare_all = [], AgreementJudge._compare_all
    monkeypatch.setattr(AgreementJudge, "_compare_all",
                        lambda self, items: read.extend(items) or compare_all(self, items))
    checks = judge(*answered, Oracle("answer"), default_threshold("answer"))
    compared = [c for c in checks if c.relation in ("MR3", "MR4")]
    assert compared and read and len(read) == len(set(read))  # every pair of answers read once, however often asked


def test_only_large_runs_under_the_mortar_command_spread_by_default(monkeypatch):
    monkeypatch.delenv("MORTAR_WORKERS", raising=False)
    assert workers_for(5000) == 1  # pytest is no `mortar` command: its main module is not ours to import again
    monkeypatch.setenv("MORTAR_WORKERS", "2")
    assert workers_for(3) == 2


def test_workers_extract_the_graphs_one_process_extracts(tmp_path, monkeypatch):
    from mortar.pipeline import knowledge_graphs

    dataset = limited(load_dataset(SAMPLE), 4)
    alone, _ = knowledge_graphs(dataset, make_extractor("spacy"), tmp_path / "one.duckdb")
    monkeypatch.setenv("MORTAR_WORKERS", "2")
    spread, _ = knowledge_graphs(dataset, make_extractor("spacy"), tmp_path / "two.duckdb")
    assert list(spread) == list(alone) and all(spread[k].to_json() == alone[k].to_json() for k in alone)


def test_a_story_parsed_for_its_graph_is_read_back_for_judging_not_parsed_again(monkeypatch):
    import mortar.nlp
    from mortar.kg.spacy_backend import SpacyExtractor

    seed = limited(load_dataset(SAMPLE), 1).seeds[0]
    SpacyExtractor().extract_many([seed])
    real = mortar.nlp.load_nlp()

    class Counted:  # the pipeline, counting what it is asked to parse
        vocab, parsed = real.nlp.vocab, []

        def __call__(self, text):
            self.parsed.append(text)
            return real.nlp(text)
    counted = Counted()
    monkeypatch.setattr(mortar.nlp, "load_nlp", lambda: replace(real, nlp=counted))
    mortar.nlp.parsed_story.cache_clear()
    handed = mortar.nlp.parsed_story(seed.story)
    mortar.nlp.parsed_story.cache_clear()
    again = mortar.nlp.parsed_story(seed.story)  # handed on once: a second reading parses
    assert counted.parsed == [seed.story]
    assert [(t.text, t.tag_, t.dep_, t.head.i, t.lemma_, t.ent_type_) for t in handed] == \
        [(t.text, t.tag_, t.dep_, t.head.i, t.lemma_, t.ent_type_) for t in again]


def worker_pid() -> int:
    import os

    return os.getpid()


def stories_handed_on() -> int:
    import mortar.nlp

    return len(mortar.nlp._handed_on)


def oracles_loaded() -> list[str]:
    import mortar.judge

    return list(mortar.judge._worker_oracles)


def test_a_run_s_workers_judge_the_seeds_whose_graphs_they_extracted(answered, tmp_path):
    from mortar.parallel import Workers
    from mortar.pipeline import knowledge_graphs

    seeds, cases, verdicts, answers = answered
    dataset = limited(load_dataset(SAMPLE), 3)
    with Workers(2) as workers:
        first = workers.run(worker_pid, [(), ()])
        assert workers.run(worker_pid, [(), ()]) == first and len(set(first)) == 2  # the k-th job in the k-th process
        knowledge_graphs(dataset, make_extractor("spacy"), tmp_path / "s.duckdb", workers=workers)
        assert workers.run(stories_handed_on, [(), ()]) == [2, 1]  # the seeds' shares: two and one
        workers.start_ahead(load_oracle, "answer")  # as a run does while its system answers
        assert workers.run(oracles_loaded, [(), ()]) == [["answer"], ["answer"]]
        checks = judge_in_parallel(workers, "answer", seeds, cases, verdicts, answers, default_threshold("answer"))
        assert workers.run(stories_handed_on, [(), ()]) == [0, 0]  # each share's stories read back where parsed
        with pytest.raises(ValueError):
            workers.run(worker_pid, [(), (), ()])
        workers.start_ahead(load_oracle, "no-such-oracle")
        with pytest.raises(ValueError, match="unknown oracle"):  # what failed ahead is told at the next run
            workers.run(worker_pid, [(), ()])
    alone = judge(seeds, cases, verdicts, answers, Oracle("answer"), default_threshold("answer"))
    assert [row(c) for c in checks] == [row(c) for c in alone]
