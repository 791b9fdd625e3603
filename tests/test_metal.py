"""The METAL baseline: its perturbations, the revert rule, unknown handling, and a run with both methods."""

import random

import pandas as pd
import pytest

from mortar import labels, store
from mortar.cli import main
from mortar.dataset import Round, Seed
from mortar.formats import load_dataset
from mortar.methods.metal import (MetalSettings, Word, add_random_word, convert_to_leet, introduce_typos,
                                  metal_test_cases, synonym_replacement)
from mortar.nlp import load_nlp
from mortar.oracle import Oracle
from mortar.judge import judge
from mortar.pipeline import RunConfig, run
from mortar.wordnet import synonyms
from tests.conftest import SAMPLE
from tests.scripted_sut import ScriptedSUT


@pytest.fixture(scope="module")
def words():
    doc = load_nlp().nlp("Where did the tall boy build his big kite quickly?")
    return [Word(t.text, t.pos_, t.lemma_, t.whitespace_) for t in doc]


def test_wordnet_synonyms_are_read_offline():
    assert "large" in synonyms("big", "ADJ")
    assert "construct" in synonyms("build", "VERB")
    assert synonyms("big", "PRON") == ()


@pytest.mark.parametrize("fn", [synonym_replacement, add_random_word, introduce_typos, convert_to_leet])
def test_each_perturbation_is_deterministic_under_a_seed_and_changes_the_question(fn, words):
    a = fn(words, random.Random(5), 0.2)
    assert a == fn(words, random.Random(5), 0.2)
    assert a != "Where did the tall boy build his big kite quickly?"
    assert {fn(words, random.Random(k), 0.2) for k in range(6)} != {a}  # other seeds, other questions


def test_perturbation_kinds(words):
    syn = synonym_replacement(words, random.Random(1), 0.2).split()
    assert len(syn) >= 9 and syn[0] == "Where"
    assert len(add_random_word(words, random.Random(1), 0.2).split()) > 10
    assert any(ch.isdigit() for ch in convert_to_leet(words, random.Random(1), 0.2))
    typo = introduce_typos(words, random.Random(1), 0.2)
    assert len(typo.split()) == 10 and typo != "Where did the tall boy build his big kite quickly?"


SEED = Seed("k", "Tom built a big red kite in 1990 and flew it on Crow Hill.", (
    Round(1, "Who built the big red kite?", "Tom"), Round(2, "Where did Tom fly the kite?", "Crow Hill"),
    Round(3, "What was the name of Tom's dog?", "unknown")))


def test_meaning_changing_perturbations_are_reverted():
    oracle = Oracle("cosine")
    cases, reverted = metal_test_cases([SEED], 1, MetalSettings(rate=0.2), load_nlp().nlp, oracle)
    for case in cases:
        new = case.replaced[0][1]
        assert oracle.embeddings.cosine(new, SEED.round(case.source_rounds[-1]).question) >= 0.8
        assert case.source_rounds == tuple(range(1, case.source_rounds[-1] + 1))  # seed prefix up to round j
    strict, reverted_all = metal_test_cases([SEED], 1, MetalSettings(rate=1.0), load_nlp().nlp, oracle)
    assert reverted_all > reverted and len(strict) < len(cases)  # changing every word loses the meaning more often


def test_unknown_gold_expects_unknown_and_levels_follow_rbt():
    class Exact:
        def prepare(self, texts, questions=()):
            pass

        def similarity(self, question, reference, candidate):
            return float(reference.lower() == candidate.lower())

    from mortar.dataset import TestCase
    from mortar.execute import Answer
    from mortar.perturb import original_case

    cases = [TestCase("k", "TYPO", j, tuple(range(1, j + 1)), replaced=((j, "Whree ...?"),)) for j in (1, 2, 3)]
    outputs = {(c.test_case_id, len(c.source_rounds)): Answer({1: "Tom", 2: "the beach", 3: "Unknown"}[c.source_rounds[-1]])
               for c in cases}
    orig = original_case(SEED)  # RBT: round 2 answered wrongly
    outputs.update({(orig.test_case_id, p): Answer(a) for p, a in ((1, "Tom"), (2, "x"), (3, "Unknown"))})
    checks = judge([SEED], [orig, *cases], {}, outputs, Exact(), 0.6)
    assert {c.relation for c in checks} == {"RBT", "METAL"}
    metal = {c.source_round: c for c in checks if c.relation == "METAL"}
    assert metal[3].text_b == "Unknown" and not metal[3].violated
    assert metal[2].violated and metal[2].bug_level == "L1"
    assert not metal[1].violated
    assert all(c.ec_equivalent is None for c in metal.values())  # no context check applies to METAL


def test_run_with_both_methods_reports_them_side_by_side(tmp_path, capsys):
    db = tmp_path / "both.duckdb"
    result = run(load_dataset(SAMPLE), RunConfig(methods="mortar,metal", sut="scripted", limit=2), db=db, sut=ScriptedSUT())
    assert result.metrics["METAL"]["test_cases"] > 0 and result.metrics["MT"]["test_cases"] > 0
    assert main(["report", result.run_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "METAL" in out and "unique" in out and "Table V" in out and "Seed questions with bugs" in out
    assert "METAL: mutations proposed, kept and rejected per constraint" in out  # the gate's counts, from the record
    assert "PPD" not in out  # nothing labelled yet

    with store.connect(db, read_only=True) as con:
        found = dict(con.execute("SELECT relation, min(detection_id) FROM detections WHERE run_id = ? "
                                 "GROUP BY relation", [result.run_id]).fetchall())
    assert "METAL" in found
    labels.save_label(result.run_id, found["METAL"], "ann", 2, db=db)
    labels.save_label(result.run_id, found["METAL"], "bob", 9, db=db)
    assert main(["report", "latest", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "PPD" in out and "ann vs bob" in out

    exported = tmp_path / "metrics.csv"
    assert main(["export", "latest", "--what", "metrics", "--format", "csv", "--out", str(exported), "--db", str(db)]) == 0
    frame = pd.read_csv(exported)
    assert {"unique", "unique_L1", "seed_questions_with_bugs"} <= set(frame["metric"])
    assert set(frame[frame["metric"] == "seed_questions_with_bugs"]["method"]) == {"MT only", "both", "METAL only"}
