"""White-box guidance: GRI and WALI on a tiny model and on SmolLM2, targeted operators, prioritisation and APFD."""

import json
import random

import pytest

from mortar.cli import main
from mortar.dataset import Round, Seed, TestCase
from mortar.guide import prioritise as p
from mortar.guide.sensitivity import (GRI, WALI, Sensitivity, answer_nll, gri_scores, round_shares, seed_sensitivities,
                                      wali_alignment, wali_scores)
from mortar.methods.metal import Word, synonym_replacement, word_spans
from mortar.vocab import ORIG


@pytest.fixture(scope="module")
def tiny():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
    return LlamaForCausalLM(config).double().eval()


def test_gri_matches_a_finite_difference_estimate_on_one_token(tiny):
    import torch

    prompt, answer = [3, 17, 8, 29, 4, 11], [21, 5, 9]
    norms = gri_scores(tiny, prompt, answer)
    assert len(norms) == len(prompt) and all(n >= 0 for n in norms)
    token = 3
    x = tiny.get_input_embeddings()(torch.tensor([prompt + answer])).detach()
    # the gradient's norm is the slope of the loss along the gradient's own direction
    x.requires_grad_(True)
    logits = tiny(inputs_embeds=x).logits[0]
    nll = -torch.log_softmax(logits[len(prompt) - 1:-1], -1).gather(1, torch.tensor(answer).unsqueeze(1)).sum()
    nll.backward()
    direction = x.grad[0, token] / x.grad[0, token].norm()
    h = 1e-3  # the model normalises in float32 inside: a smaller step would measure rounding
    plus, minus = x.detach().clone(), x.detach().clone()
    plus[0, token] += h * direction
    minus[0, token] -= h * direction
    slope = (answer_nll(tiny, prompt, answer, plus) - answer_nll(tiny, prompt, answer, minus)) / (2 * h)
    assert norms[token] == pytest.approx(slope, rel=1e-3)
    other = 1
    assert norms[other] != pytest.approx(norms[token])  # a score per token, not one for all


def test_wali_alignment_rows_sum_to_one_after_masking_the_sink(tiny):
    prompt, answer = [3, 17, 8, 29, 4, 11], [21, 5, 9]
    alignment, confidence = wali_alignment(tiny, prompt, answer, layers=2)
    assert tuple(alignment.shape) == (len(answer), len(prompt))
    assert alignment[:, 0].abs().max().item() == 0.0
    assert alignment.sum(dim=1).tolist() == pytest.approx([1.0] * len(answer))
    assert all(0.0 < c < 1.0 for c in confidence.tolist())
    scores = wali_scores(tiny, prompt, answer, layers=2)
    assert scores[0] == 0.0 and sum(scores) == pytest.approx(sum(1 - c for c in confidence.tolist()))


def test_wali_leaves_the_attention_implementation_as_it_was(tiny):
    before = tiny.config._attn_implementation
    wali_alignment(tiny, [1, 2, 3], [4])
    assert tiny.config._attn_implementation == before


SEED = Seed("k", "Tom built a red kite. He flew it on Crow Hill with his sister Ann.", (
    Round(1, "Who built the kite?", "Tom"), Round(2, "Where did he fly it?", "on Crow Hill"),
    Round(3, "Who was with him?", "his sister Ann")))


@pytest.fixture(scope="module")
def smollm2():
    from mortar.sut import make_sut

    return make_sut("smollm2")


@pytest.mark.parametrize("method", [GRI, WALI])
def test_sensitivity_of_a_seed_conversation_grouped_to_rounds_and_words(smollm2, method):
    found = seed_sensitivities(smollm2, SEED, method)
    assert set(found) == {1, 2, 3}
    third = found[3]
    assert set(third.segments) == {"story", "round 1", "round 2", "question"}
    assert sum(third.segments.values()) == pytest.approx(1.0)
    question = SEED.round(3).question
    covered = sorted({c for a, b, _ in third.question_tokens for c in range(a, b)})
    assert covered == list(range(len(question)))  # every character of the question belongs to a token
    words = [(0, 3), (4, 7), (8, 12), (13, 17)]  # Who was with him?
    assert sorted(third.rank_spans(words)) == [0, 1, 2, 3]
    shares, own = round_shares(SEED, found)
    assert shares[1] == {} and set(shares[3]) == {1, 2} and own[3] == third.segments["question"]


def test_targeted_operators_change_the_most_sensitive_word():
    words = [Word("Where", "ADV", "where", " "), Word("did", "AUX", "do", " "), Word("the", "DET", "the", " "),
             Word("boy", "NOUN", "boy", " "), Word("build", "VERB", "build", " "), Word("kites", "NOUN", "kite", ""),
             Word("?", "PUNCT", "?", "")]
    spans = word_spans(words)
    assert spans[3] == (14, 17)
    sensitivity = Sensitivity(GRI, {}, [(a, b, 1.0 if i == 4 else 0.1) for i, (a, b) in enumerate(spans)])
    ranking = sensitivity.rank_spans(spans)
    assert ranking[0] == 4
    for k in range(5):
        out = synonym_replacement(words, random.Random(k), 0.2, ranking)
        # always the sensitive verb
        assert out.startswith("Where did the boy ") and out.endswith(" kites?") and " build " not in out, out


def _case(perturbation, rounds, target=None, replicate=1):
    return TestCase("k", perturbation, replicate, tuple(rounds), target_round=target)


def test_exposure_counts_the_rounds_a_perturbation_takes_from_before_a_question():
    shares = {1: {}, 2: {1: 0.3}, 3: {1: 0.1, 2: 0.5}}
    own = {1: 0.4, 2: 0.2, 3: 0.3}
    dropped = _case("DRR", (1, 3))  # round 2, which round 3 leans on, is gone; round 1 is now right before it
    assert p.exposure(dropped, SEED, shares, own) == pytest.approx(0.5 + 0.5 * 0.1)
    swapped = _case("DRS", (3, 1, 2))  # round 3 first: rounds 1 and 2 are no longer before it
    assert p.exposure(swapped, SEED, shares, own) == pytest.approx(0.6)
    moved = _case("DRS", (2, 1, 3))  # round 2 still before 3, but farther back; round 1 is gone from before 2
    assert p.exposure(moved, SEED, shares, own) == pytest.approx(0.3)
    assert p.exposure(_case("SYN", (1, 2), target=2), SEED, shares, own) == 0.2


def test_apfd_curve_and_the_ideal_order():
    faults = [frozenset({"b"}), frozenset({"b"}), frozenset({"c", "d"})]
    assert p.apfd(["b", "c", "d", "a"], faults) == pytest.approx(1 - (1 + 1 + 3) / 12 + 1 / 8)
    assert p.apfd(["a", "d", "c", "b"], faults) == pytest.approx(1 - (4 + 4 + 3) / 12 + 1 / 8)
    assert p.curve(["b", "c", "d", "a"], faults) == [(0, 0), (0.25, 2 / 3), (0.5, 2 / 3), (0.75, 1), (1, 1)]
    cases = [_case("DRS", (1,), replicate=i) for i in range(4)]
    ids = [c.test_case_id for c in cases]
    faults = [frozenset({ids[2]}), frozenset({ids[2]}), frozenset({ids[3], ids[1]})]
    ideal = [c.test_case_id for c in p.ideal_order(cases, faults)]
    measured = p.measure({"given": ids}, faults, ids)
    assert ideal[0] == ids[2] and measured["given"]["apfd"] <= p.apfd(ideal, faults)
    assert measured["random"]["apfd"] <= p.apfd(ideal, faults) and measured["random"]["sd"] > 0


def test_orders_compared_at_equal_calls_count_the_bugs_each_found():
    faults = [frozenset({"b"}), frozenset({"b"}), frozenset({"c", "d"}), frozenset({"x"})]
    rows, curves = p.at_equal_calls({"guided": ["b", "c", "d"], "random": ["a", "d", "e"]}, faults,
                                    {"b": 2, "c": 1, "d": 3, "a": 1, "e": 1})
    guided, random_ = rows
    assert (guided["bugs"], guided["sut_calls"], guided["test_cases"]) == (3, 6, 3)
    assert guided["bugs_per_test_case"] == pytest.approx(1.0) and guided["bugs_per_sut_call"] == pytest.approx(0.5)
    assert guided["APFD"] == pytest.approx(1 - (1 + 1 + 3) / 9 + 1 / 6)
    assert (random_["bugs"], random_["sut_calls"]) == (0, 5) and random_["APFD"] != random_["APFD"]  # nan: none
    assert curves == {"guided": [(0, 0), (1, 2), (2, 2), (3, 3)], "random": [(0, 0), (1, 0), (2, 0), (3, 0)]}


def test_white_box_options_need_a_local_model(tmp_path, capsys, monkeypatch):
    from tests.conftest import SAMPLE

    monkeypatch.setenv("MORTAR_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never reached: validation refuses
    for extra in (["--targets", "gri"], ["--budget", "5", "--order", "wali"]):
        code = main(["run", "--dataset", str(SAMPLE), "--method", "mortar,metal", "--sut", "openai:m", *extra,
                     "--db", str(tmp_path / "x.duckdb")])
        err = capsys.readouterr().err.strip()
        assert code == 2 and "needs a local model" in err and len(err.splitlines()) == 1


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    from mortar.config import RunConfig
    from mortar.pipeline import run

    folder = tmp_path_factory.mktemp("prio")
    rounds = [{"question": r.question, "answer": r.answer} for r in SEED.rounds]
    (folder / "k.jsonl").write_text(json.dumps({"id": "k", "story": SEED.story, "rounds": rounds}) + "\n")
    db = folder / "store.duckdb"
    config = RunConfig(dataset=str(folder / "k.jsonl"), methods=("mortar", "metal"), oracle="cosine")
    return run(None, config, db=db), db, config


def test_prioritise_a_completed_run_and_measure_it(small_run, capsys):
    from mortar import store

    result, db, _ = small_run
    for by in ("gri", "gini", "random"):
        assert main(["prioritise", result.run_id, "--by", by, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "ordered by gri" in out and "s per seed" in out
    with store.connect(db, read_only=True) as con:
        orders = store.read_priorities(con, result.run_id)
        cases, _ = store.read_cases_and_verdicts(con, result.run_id)
    ordered_ids = sorted(c.test_case_id for c in cases if c.perturbation != ORIG)
    assert set(orders) == {"gri", "gini", "random"}
    assert all(sorted(order) == ordered_ids for order in orders.values())
    apfds = {line.split(":")[0].strip(): float(line.split(":")[1].split()[0])
             for line in out.splitlines() if line.startswith("  ") and ":" in line and "/" not in line}
    assert set(apfds) >= {"initial", "gri", "gini", "random", "ideal"}
    assert all(0.0 <= v <= 1.0 for v in apfds.values())
    assert apfds["ideal"] >= max(v for k, v in apfds.items() if k != "ideal")


def test_a_run_with_a_budget_executes_the_first_cases_in_the_order(small_run, tmp_path):
    from dataclasses import replace

    from mortar import reports, store
    from mortar.guide.prioritise import faults_of
    from mortar.pipeline import run

    def store_checks(db, run_id):
        with store.connect(db, read_only=True) as con:
            return store.read_checks(con, run_id)

    first, db, config = small_run
    assert main(["prioritise", first.run_id, "--by", "gri", "--db", str(db)]) == 0
    budgeted = run(None, replace(config, budget=4, order="gri"), db=db)
    with store.connect(db, read_only=True) as con:
        cases, _ = store.read_cases_and_verdicts(con, budgeted.run_id)
        gri_order = store.read_priorities(con, small_run[0].run_id)["gri"]
        ran = store.read_priorities(con, budgeted.run_id)
        report = reports.run_report(con, budgeted.run_id)
    chosen = {c.test_case_id for c in cases if c.perturbation != ORIG}
    assert any(c.perturbation == ORIG for c in cases)
    assert ran["gri"] == gri_order[:4]  # the same scores, stored for the SUT, give the same order
    # the random baseline's first 4 ran too: both orders are compared at equal calls
    assert set(ran) == {"gri", "random"} and len(ran["random"]) == 4 and chosen == set(ran["gri"]) | set(ran["random"])
    assert any("budget: the first 4" in n and "random order" in n for n in budgeted.notes)
    rows = {row["order"]: row for row in report["budget_orders"]}
    faults = [f for f in faults_of(store_checks(db, budgeted.run_id), cases)]
    for name, order in ran.items():
        found = [f for f in faults if f <= set(order)]
        assert rows[name]["test_cases"] == 4 and rows[name]["bugs"] == len(found)
        assert report["order_curves"][name][-1] == (4, len(found))


def test_the_dashboard_plots_the_orders_and_shows_what_an_answer_leans_on(small_run, monkeypatch):
    from mortar import store
    from tests.test_pages import app

    result, db, _ = small_run
    assert main(["prioritise", result.run_id, "--by", "wali", "--db", str(db)]) == 0
    monkeypatch.setenv("MORTAR_DB", str(db))
    at = app("metrics", current_run=result.run_id)  # the store also holds a later run (the budgeted one)
    apfd = next(d.value for d in at.dataframe if "APFD" in d.value)
    assert {"initial", "wali", "random", "ideal"} <= set(apfd["order"])
    figures = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    curves = next(f for f in figures if f["layout"]["title"]["text"].startswith("Bugs found as the suite runs"))
    assert {t["name"] for t in curves["data"]} >= {"initial", "wali", "random", "ideal"}
    with store.connect(db, read_only=True) as con:
        detection = con.execute("SELECT min(detection_id) FROM detections WHERE run_id = ? AND relation = 'MR1' "
                                "AND source_round = 3", [result.run_id]).fetchone()[0]
    at = app("inspector", inspect=(result.run_id, detection))
    strip = next(json.loads(c.proto.spec) for c in at.get("plotly_chart")
                 if "sensitivity" in json.loads(c.proto.spec)["layout"]["title"]["text"])
    heat = strip["data"][0]
    assert heat["type"] == "heatmap" and len(heat["x"]) == 4 and sum(heat["z"][0]) == pytest.approx(1.0)


def test_prioritising_an_http_run_by_gradients_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    from mortar import store
    from mortar.config import RunConfig

    db = tmp_path / "h.duckdb"
    with store.connect(db) as con:
        con.execute("INSERT INTO datasets VALUES ('ds', 'd', 'none', 1)")
        config = {"sut_fingerprint": "f", "run_config": RunConfig(dataset=str(tmp_path / "none.json"),
                                                                  sut="openai:m").to_json()}
        con.execute("INSERT INTO runs VALUES ('run-h', 'run', 'ds', 0, ?, 'done', now(), now())", [json.dumps(config)])
    monkeypatch.setenv("MORTAR_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    (tmp_path / "none.json").write_text(json.dumps({"version": "1.0", "data": []}))
    assert main(["prioritise", "run-h", "--by", "gri", "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert "needs a local model" in err and len(err.splitlines()) == 1
