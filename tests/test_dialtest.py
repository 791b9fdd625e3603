"""DialTest: its operators (SR, BT, WI), the meaning filter, Gini impurity and the guided search, the
relations in a run, and the augmented-data export."""

import json
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mortar.store import StoreCache
from mortar.cli import main
from mortar.config import RunConfig
from mortar.dataset import Round, Seed
from mortar.formats import load_dataset
from mortar.guide.gini import (GiniUnavailable, Scored, answer_gini, gini_impurity, mean_gini_from_logprobs,
                               score_cases, search)
from mortar.methods.dialtest import DialTestSettings, Operators, single_turn_case, unguided_cases
from mortar.methods.dialtest_operators import NEGATIONS, WH_WORDS, WordInserter, choose_replacement, protected
from mortar.nlp import load_nlp
from mortar.oracle.embeddings import Embeddings
from mortar.pipeline import run
from mortar.sut import Conversation, Turn, make_sut
from mortar.vocab import BT, DT_INV, DT_REF, GINI, RANDOM, SR, WI
from tests.conftest import SAMPLE
from tests.scripted_sut import ScriptedSUT

QUESTIONS = [
    "Who built the big red kite in 1990?", "Where did Tom Baker fly the old kite on Crow Hill?",
    "How many dogs did the three sisters see in Paris?", "Why was the young teacher angry with the students?",
    "What did the farmer sell at the market on Tuesday?", "Which colour did Mrs. Parker paint the small boats?",
    "When did the fishermen leave the harbour?", "What happened to the broken window of the bakery?",
    "Whose bicycle was left near the tall gate?", "How long did the children wait for the late bus?",
]


@pytest.fixture(scope="module")
def nlp():
    return load_nlp().nlp


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(question=st.sampled_from(QUESTIONS), seed=st.integers(0, 10_000))
def test_synonym_replacement_never_touches_entities_numbers_or_wh_words(nlp, question, seed):
    doc = nlp(question)
    choice = choose_replacement(doc, random.Random(seed))
    new = Operators((SR,), nlp).apply(SR, question, random.Random(seed))
    if choice is None:
        assert new == question
        return
    i, word = choice
    assert not protected(doc[i]) and doc[i].pos_ in ("NOUN", "VERB", "ADJ") and word.lower() != doc[i].lower_
    assert new == (doc[:i].text_with_ws + word + doc[i].whitespace_ + doc[i + 1:].text).strip()
    assert [t.text for t in doc if protected(t)] == [t.text for t in nlp(new) if protected(t)] or \
        all(t.text in new for t in doc if protected(t))


def test_synonym_replacement_finds_replacements_in_most_questions(nlp):
    ops = Operators((SR,), nlp)
    changed = sum(ops.apply(SR, q, random.Random(1)) != q for q in QUESTIONS)
    assert changed >= len(QUESTIONS) // 2


@pytest.fixture(scope="module")
def inserter():
    return WordInserter.local()


@pytest.mark.parametrize("question", QUESTIONS[:6])
def test_word_insertion_adds_one_to_three_plain_words_and_keeps_the_question(nlp, inserter, question):
    for seed in range(3):
        new = inserter.insert(nlp(question), random.Random(seed))
        if new == question:
            continue
        old, words = question.split(), new.split()
        added = list(words)
        for word in old:  # the question's words, in order, are all still there
            added = added[added.index(word) + 1:] if word in added else None
            assert added is not None, (question, new)
        extra = [w for w in words if w not in old]
        assert 1 <= len(extra) <= 3, (question, new)
        for word in extra:
            assert word.islower() and word.isalpha() and word not in WH_WORDS and word not in NEGATIONS, new


def test_same_run_seed_same_mutants_and_every_kept_one_passes_the_meaning_filter(nlp, inserter):
    seed = Seed("k", "Tom built a big red kite in 1990 and flew it on Crow Hill with his sister Ann.",
                tuple(Round(i + 1, q, "Tom") for i, q in enumerate(QUESTIONS[:6])))
    ops = Operators((SR, WI), nlp, inserter=inserter)
    embeddings = Embeddings()
    a, reverted = unguided_cases([seed], 3, ops, 0.8, embeddings)
    b, _ = unguided_cases([seed], 3, ops, 0.8, embeddings)
    c, _ = unguided_cases([seed], 4, ops, 0.8, embeddings)
    assert a == b and a != c
    assert len(a) + reverted == 12 and a
    for case in a + c:
        original = seed.round(case.target_round).question
        question = case.replaced[0][1]
        assert question != original and embeddings.cosine(original, question) >= 0.8
        assert case.source_rounds[-1] == case.target_round and case.replaced[0][0] == len(case.source_rounds)
    strict, strict_reverted = unguided_cases([seed], 3, ops, 0.99, embeddings)
    assert strict_reverted > reverted  # a stricter filter reverts more


# -- back translation through a loopback OpenAI-compatible server ----------------------------------------------

class Translator:
    """A chat-completions server on 127.0.0.1 that "translates": into another language it tags the text, back
    into English it rewrites it; with ``logprobs`` it also returns token log-probabilities."""

    def __init__(self, logprobs=True):
        self.requests = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                system, text = body["messages"][0]["content"], body["messages"][-1]["content"]
                if "into English" in system:
                    content = text.split("] ", 1)[1].replace("How old", "What age")
                elif "Translate" in system:
                    content = f"[{system.split('into ')[1].split('.')[0]}] {text}"
                else:
                    content = "Tom"
                choice = {"index": 0, "message": {"role": "assistant", "content": content}}
                if logprobs and body.get("logprobs"):
                    choice["logprobs"] = {"content": [
                        {"token": "Tom", "logprob": -0.1,
                         "top_logprobs": [{"token": "Tom", "logprob": -0.1}, {"token": "Ann", "logprob": -2.4}]},
                        {"token": ".", "logprob": -0.7,
                         "top_logprobs": [{"token": ".", "logprob": -0.7}, {"token": "!", "logprob": -0.7}]}]}
                payload = json.dumps({"choices": [choice]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def test_back_translation_goes_through_the_configured_endpoint_and_back(nlp, monkeypatch):
    with Translator() as server:
        monkeypatch.setenv("MORTAR_LLM_BASE_URL", server.url)
        monkeypatch.setenv("MORTAR_LLM_MODEL", "translator")
        ops = Operators((BT,), nlp)
        assert ops.available == (BT,) and not ops.unavailable
        new = ops.apply(BT, "How old was he?", random.Random(0))
        again = ops.apply(BT, "How old was he?", random.Random(0))
        ops.close()
    assert new == again == "What age was he?"
    languages = [r["messages"][0]["content"] for r in server.requests]
    assert len(server.requests) == 2  # the second time came from the translations already made
    assert any(x in languages[0] for x in ("Chinese", "French", "Spanish")) and "into English" in languages[1]
    assert all(r["temperature"] == 0.0 and "response_format" not in r for r in server.requests)


def test_without_an_endpoint_bt_is_unavailable_in_one_line_and_the_others_run(nlp, monkeypatch):
    for name in ("MORTAR_LLM_BASE_URL", "OPENAI_BASE_URL", "MORTAR_LLM_API_KEY", "OPENAI_API_KEY", "GROQ_API_KEY",
                 "MORTAR_LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    ops = Operators((SR, BT, WI), nlp)
    assert ops.available == (SR, WI)
    assert "BT unavailable" in ops.unavailable[BT] and "\n" not in ops.unavailable[BT]


# -- Gini impurity and the guided search ----------------------------------------------------------------------

def test_gini_impurity():
    assert gini_impurity([1.0, 0.0]) == 0.0
    assert gini_impurity([0.5, 0.5]) == pytest.approx(0.5)
    assert gini_impurity([0.25] * 4) == pytest.approx(0.75)
    assert mean_gini_from_logprobs([[0.0], [-0.6931, -0.6931]]) == pytest.approx(0.25, abs=1e-3)
    assert mean_gini_from_logprobs([]) is None


def test_answer_gini_of_a_local_model_matches_a_plain_forward_pass():
    import torch

    sut = make_sut("smollm2")
    conversation = Conversation("Tom built a red kite. He flew it on Crow Hill.", (), "Where did Tom fly the kite?")
    answer = sut.answer(conversation)
    fast = answer_gini(sut, conversation, answer)
    # the reference: the whole text once through the model, the distributions at the answer's places
    model, tokenizer = sut.loaded
    prompt = sut.prompt_ids(conversation)
    from mortar.sut.likelihood import candidate_tokens

    _, _, (reply,) = candidate_tokens(sut, conversation, [answer])
    with torch.inference_mode():
        probs = torch.softmax(model(input_ids=torch.tensor([prompt + reply])).logits[0].float(), dim=-1)
    places = range(len(prompt) - 1, len(prompt) + len(reply))
    slow = sum(1 - float(probs[p].pow(2).sum()) for p in places) / len(places)
    assert 0.0 <= fast <= 1.0 and fast == pytest.approx(slow, abs=1e-4)


def test_the_impurity_measured_while_decoding_is_the_teacher_forced_one(tmp_path):
    from mortar.execute import execute

    sut = make_sut("smollm2", lanes=2)
    seed = Seed("k", "Tom built a red kite. He flew it on Crow Hill with his sister Ann.",
                (Round(1, "Who built the kite?", "Tom"), Round(2, "Where did he fly it?", "on Crow Hill")))
    case = single_turn_case(seed, 2, SR, "Where did he fly it?")
    answers = execute([seed], [case], sut, StoreCache(tmp_path / "a.duckdb"))
    first, second = answers[(case.test_case_id, 1)], answers[(case.test_case_id, 2)]
    conversation = Conversation(seed.story, ((Turn(seed.round(1).question, first.text)),), seed.round(2).question)
    assert second.gini == pytest.approx(answer_gini(sut, conversation, second.text), abs=1e-3)
    again = execute([seed], [case], sut, StoreCache(tmp_path / "a.duckdb"))[(case.test_case_id, 2)]
    assert again.cached and again.gini == pytest.approx(second.gini)  # stored with the answer


def _scored(ginis):
    """An evaluate() whose answers' impurities come from ``ginis`` (question text → impurity)."""
    calls = []

    def evaluate(step, items):
        calls.append((step, items))
        return [Scored(f"answer to {text}", ginis(text)) for _, _, text in items]
    return evaluate, calls


def test_gini_search_keeps_mutants_whose_impurity_rises_by_more_than_tau_and_goes_on_from_them():
    starts = {("s", 1): ("q", 0.30), ("s", 2): ("r", 0.50)}
    counter = {"n": 0}

    def propose(key, parent, rng):
        counter["n"] += 1
        return SR, f"{parent}+{counter['n']}"

    # a mutant's impurity: 0.1 higher per "+" for question q, lower for question r
    evaluate, calls = _scored(lambda text: (0.30 + 0.1 * text.count("+")) if text.startswith("q")
                              else 0.40)
    mutants = search(starts, propose, evaluate, budget=3, tau=0.05, guide=GINI, rngs={k: None for k in starts})
    assert len(calls) == 3 and all(len(items) == 2 for _, items in calls)  # all questions step together
    q = [m for m in mutants if m.key == ("s", 1)]
    assert [m.kept for m in q] == [True, True, True]
    assert q[1].question.startswith(q[0].question) and q[2].operators == (SR, SR, SR)  # chained from the kept one
    r = [m for m in mutants if m.key == ("s", 2)]
    assert [m.kept for m in r] == [False, False, False] and all(m.question.count("+") == 1 for m in r)
    random_mutants = search(starts, propose, evaluate, budget=3, tau=0.05, guide=RANDOM, rngs={k: None for k in starts})
    assert all(m.kept and m.question.count("+") == 1 for m in random_mutants)  # from the seed question, all kept
    assert len(random_mutants) == len(mutants) == 6  # the same budget


def test_search_spends_no_call_on_a_mutant_seen_before():
    evaluate, calls = _scored(lambda text: 0.9)
    mutants = search({("s", 1): ("q", 0.1)}, lambda key, parent, rng: (WI, "q!"), evaluate, budget=4, tau=0.0,
                     guide=RANDOM, rngs={("s", 1): None})
    assert len(mutants) == 1 and len(calls) == 1


def test_gini_guidance_needs_token_probabilities():
    seed = Seed("k", "Tom built a kite.", (Round(1, "Who built it?", "Tom"),))
    with pytest.raises(GiniUnavailable):
        score_cases([seed], [single_turn_case(seed, 1, SR, "Who constructed it?")], {}, ScriptedSUT())


def test_http_gini_from_logprobs_and_unavailable_without_them(monkeypatch, tmp_path):
    seed = Seed("k", "Tom built a kite.", (Round(1, "Who built it?", "Tom"), Round(2, "What did he build?", "a kite")))
    case = single_turn_case(seed, 2, SR, "What did he construct?")
    history = {("k", 1): type("A", (), {"text": "Tom"})()}
    with Translator() as server:
        monkeypatch.setenv("MORTAR_OPENAI_BASE_URL", server.url)
        sut = make_sut("openai:loopback")
        scored = score_cases([seed], [case], history, sut, StoreCache(tmp_path / "g.duckdb"))[case.test_case_id]
    assert scored.answer == "Tom"
    expected = ((1 - (0.9048 ** 2 + 0.0907 ** 2)) + (1 - 2 * 0.4966 ** 2)) / 2
    assert scored.gini == pytest.approx(expected, abs=1e-3)
    sent = server.requests[0]
    assert sent["logprobs"] is True and sent["messages"][-2]["content"] == "Tom"  # the history's answer
    with Translator(logprobs=False) as server:
        monkeypatch.setenv("MORTAR_OPENAI_BASE_URL", server.url)
        with pytest.raises(GiniUnavailable, match="log-probabilities"):
            score_cases([seed], [case], history, make_sut("openai:loopback"), StoreCache(tmp_path / "g.duckdb"))


# -- in a run -------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dialtest_run(tmp_path_factory):
    db = tmp_path_factory.mktemp("dialtest") / "store.duckdb"
    config = RunConfig(dataset=str(SAMPLE), methods=("mortar", "dialtest"), oracle="cosine", limit=2,
                       settings={"dialtest": DialTestSettings(operators=(SR, WI))})
    return run(None, config, db=db, sut=ScriptedSUT()), db


def test_a_run_judges_dialtest_cases_with_both_relations_and_compares_the_methods(dialtest_run, capsys):
    result, db = dialtest_run
    from mortar import store
    from mortar.reports import run_report

    with store.connect(db, read_only=True) as con:
        checks = store.read_checks(con, result.run_id)
        report = run_report(con, result.run_id)
        config = store.run_config(con, result.run_id)
    mine = [c for c in checks if c.relation in (DT_REF, DT_INV)]
    assert {c.relation for c in mine} == {DT_REF, DT_INV}
    assert {c.perturbations[0] for c in mine} <= {SR, WI}
    assert all(c.bug_level for c in mine if c.violated)
    assert [row["method"] for row in report["uniqueness"]] == ["MT", "DialTest"]
    assert any(t.key == "dialtest_operators" and t.rows for t in report["tables"])
    assert config["made"]["dialtest"]["operators"] == [SR, WI]
    assert main(["report", result.run_id, "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "dialtest operators that ran: SR, WI" in out and "MT vs DialTest (Table V)" in out


def test_export_transformed_writes_a_coqa_dataset_with_the_gold_answers(dialtest_run, tmp_path, capsys):
    result, db = dialtest_run
    out = tmp_path / "augmented.json"
    assert main(["export", result.run_id, "--what", "transformed", "--out", str(out), "--db", str(db)]) == 0
    augmented = load_dataset(out)
    sample = {s.id: s for s in load_dataset(SAMPLE).seeds}
    assert augmented.seeds
    for dialogue in augmented.seeds:
        seed = sample[dialogue.id.split("#")[0]]
        last = dialogue.rounds[-1]
        original = seed.rounds[len(dialogue.rounds) - 1]
        assert dialogue.story == seed.story and last.answer == original.answer and last.question != original.question
        assert [r.question for r in dialogue.rounds[:-1]] == [r.question for r in seed.rounds[:len(dialogue.rounds) - 1]]
    assert main(["export", result.run_id, "--what", "transformed", "--format", "csv", "--out", str(out),
                 "--db", str(db)]) == 2


def test_bad_dialtest_options_exit_2_in_one_line(capsys):
    for bad in (["--dialtest-operators", "SR,XX"], ["--gini-budget", "-1"]):
        assert main(["run", "--dataset", str(SAMPLE), "--method", "dialtest", *bad]) == 2
    err = capsys.readouterr().err
    assert "unknown DialTest operator XX; choose from SR, BT, WI" in err and "Gini budget -1 is negative" in err
    assert len(err.strip().splitlines()) == 2  # one line each
    config = RunConfig(dataset=str(SAMPLE), methods=("dialtest",), settings={"dialtest": DialTestSettings(operators=())})
    assert main(["run", "--config", _write(config)]) == 2
    assert "choose at least one DialTest operator" in capsys.readouterr().err


def _write(config) -> str:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(config.to_json(), f)
    return f.name


# -- a Gini-guided run with the local model -------------------------------------------------------------------

@pytest.fixture(scope="module")
def guided_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("guided")
    dialogue = {"id": "kite", "story": "Tom built a big red kite with his sister Ann. On Saturday they flew it on "
                                       "Crow Hill until the string broke and the kite landed in an old oak tree.",
                "rounds": [{"question": "Who built the kite?", "answer": "Tom and Ann"},
                           {"question": "Where did they fly it?", "answer": "on Crow Hill"},
                           {"question": "What broke?", "answer": "the string"},
                           {"question": "Where did the kite land?", "answer": "in an old oak tree"}]}
    (folder / "kite.jsonl").write_text(json.dumps(dialogue) + "\n")
    config = RunConfig(dataset=str(folder / "kite.jsonl"), methods=("dialtest",), oracle="cosine",
                       settings={"dialtest": DialTestSettings(operators=(SR, WI), gini_budget=2)})
    db = folder / "store.duckdb"
    return run(None, config, db=db), db


def test_a_guided_run_compares_gini_with_random_at_the_same_budget(guided_run):
    from mortar import store
    from mortar.reports import run_report

    result, db = guided_run
    with store.connect(db, read_only=True) as con:
        mutants = store.read_mutants(con, result.run_id)
        report = run_report(con, result.run_id)
        cases, _ = store.read_cases_and_verdicts(con, result.run_id)
    assert result.errored_rounds == 0 and any("Gini-guided search kept" in n for n in result.notes)
    guidance = {row["guide"]: row for row in report["guidance"]}
    assert set(guidance) == {GINI, RANDOM}
    for guide, row in guidance.items():
        mine = [m for m in mutants if m["guide"] == guide]
        assert row["sut_calls"] == len(mine) <= 2 * 4  # at most the budget per question
        assert row["kept"] == sum(m["kept"] for m in mine)
    assert guidance[RANDOM]["kept"] == guidance[RANDOM]["sut_calls"]
    questions = {r["turn_id"]: r["question"] for r in ({"turn_id": i + 1, "question": q} for i, q in enumerate(
        ["Who built the kite?", "Where did they fly it?", "What broke?", "Where did the kite land?"]))}
    embeddings = Embeddings()
    for m in mutants:
        assert 0.0 <= m["gini"] <= 1.0 and m["answer"]
        assert embeddings.cosine(questions[m["source_round"]], m["question"]) >= 0.8  # the meaning filter
        if m["guide"] == GINI:
            assert m["kept"] == (m["gini"] - m["parent_gini"] > 0.0)
    kept = {c.test_case_id for c in cases if c.guide}
    assert kept == {m["test_case_id"] for m in mutants if m["kept"]}


def test_the_dashboard_shows_the_guidance_and_a_mutants_search_record(guided_run, monkeypatch):
    from mortar import store
    from tests.test_pages import app

    result, db = guided_run
    monkeypatch.setenv("MORTAR_DB", str(db))
    at = app("metrics")
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert any(t.startswith("Gini-guided search against random") for t in titles)
    assert any(t.startswith("DialTest: share of violated checks per operator") for t in titles)
    guidance = next(d.value for d in at.dataframe if "bugs_per_call" in d.value)
    assert set(guidance["guide"]) == {GINI, RANDOM}
    with store.connect(db, read_only=True) as con:
        detection = con.execute("SELECT d.detection_id FROM detections d JOIN mutants m ON m.run_id = d.run_id "
                                "AND list_contains(CAST(d.test_case_ids AS VARCHAR[]), m.test_case_id) "
                                "WHERE d.run_id = ? ORDER BY 1 LIMIT 1", [result.run_id]).fetchone()[0]
    at = app("inspector", inspect=(result.run_id, detection))
    captions = " ".join(c.value for c in at.caption)
    assert "search at step" in captions and "Gini impurity of the answer" in captions
