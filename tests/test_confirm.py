"""Confirmed detections (--confirm K): every detection's conversations asked again, afresh; a detection not found
again is flaky and reported apart. Against a real chat server in a separate process on loopback
(tests/flaky_chat.py) that answers one question wrongly the first time a short conversation asks it, and rightly
when the same conversation is asked again."""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest

from mortar import store
from mortar.budgets import gate_run, parse_budgets
from mortar.cli import build_parser, config_from, given_options, read_run_file
from mortar.config import RunConfig, problems
from mortar.formats import load_dataset
from mortar.junit import junit_xml
from mortar.pipeline import run, run_key
from mortar.reports import run_report
from mortar.sut import make_sut
from mortar.vocab import MR1, MR3, RBT
from tests.conftest import ROOT
from tests.scripted_sut import ScriptedSUT

STORY = ("Mia found a small brown puppy in the park. She named the puppy Biscuit. Her father built a wooden house "
         "for Biscuit. The puppy liked to chew red shoes.")
ROUNDS = [("What did Mia find in the park?", "a small brown puppy"), ("What did she name it?", "Biscuit"),
          ("Who built a house for the puppy?", "Her father"), ("What did the puppy like to chew?", "red shoes")]
# the server's answers by keyword: round 3 is always wrong (a detection that reproduces); round 4 is right, except
# the first time a conversation with fewer than 3 earlier turns asks it (detections that do not)
ANSWERS = {"find": "a small brown puppy", "name": "Biscuit", "built": "His uncle", "chew": "red shoes"}
WRONG = "blue socks"
STEADY, FLAKY = 3, 4  # the seed rounds


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("confirm")
    log = folder / "requests.jsonl"
    log.touch()
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "flaky_chat.py"), "--answers", json.dumps(ANSWERS),
                             "--flaky", "chew", "--wrong", WRONG, "--log", str(log)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    assert line.startswith("serving at http://127.0.0.1:"), line
    yield SimpleNamespace(url=line.split(" at ")[1].strip(), log=log, folder=folder)
    proc.terminate()
    proc.wait(timeout=10)


def requests(server) -> list[dict]:
    return [json.loads(line) for line in server.log.read_text().splitlines()]


@pytest.fixture(scope="module")
def runs(server):
    data = {"version": "1.0", "data": [{
        "source": "test", "id": "mia", "filename": "mia.txt", "story": STORY,
        "questions": [{"input_text": q, "turn_id": k} for k, (q, _) in enumerate(ROUNDS, start=1)],
        "answers": [{"input_text": a, "turn_id": k} for k, (_, a) in enumerate(ROUNDS, start=1)]}]}
    path = server.folder / "mia.json"
    path.write_text(json.dumps(data))
    db = server.folder / "store.duckdb"
    sut = make_sut("openai:tiny-chat", env={"MORTAR_OPENAI_BASE_URL": server.url + "/v1"})
    reports = []  # the progress callback's reports: (stage, done, total)
    confirmed = run(load_dataset(path), RunConfig(dataset=str(path), sut="openai:tiny-chat", confirm=1), db=db, sut=sut,
                    progress=lambda done, total, info=None: reports.append(((info or {}).get("stage"), done, total)))
    asked = len(requests(server))
    plain = run(load_dataset(path), RunConfig(dataset=str(path), sut="openai:tiny-chat"), db=db, sut=sut)
    assert len(requests(server)) == asked  # the run without confirmation reads every answer from the store
    with store.connect(db, read_only=True) as con:
        checks, plain_checks = ({c.check_id: c for c in store.read_checks(con, r.run_id)} for r in (confirmed, plain))
    return SimpleNamespace(db=db, path=path, sut=sut, confirmed=confirmed, plain=plain, asked=asked,
                           checks=checks, plain_checks=plain_checks, reports=reports)


def test_a_detection_not_found_again_is_flaky_and_one_found_again_stays(runs):
    checks = runs.checks
    flaky = {k for k, c in checks.items() if c.flaky}
    assert flaky == {k for k, c in checks.items() if c.violated and c.source_round == FLAKY}
    assert {checks[k].relation for k in flaky} == {MR1, MR3}  # an answer against the gold one, and a pair of answers
    steady = [c for c in checks.values() if c.violated and c.source_round == STEADY]
    assert {c.relation for c in steady} >= {RBT, MR1} and not any(c.flaky for c in steady)
    # the same detections as without confirmation; only the mark differs
    assert {k for k, c in runs.plain_checks.items() if c.violated} == {k for k, c in checks.items() if c.violated}
    assert not any(c.flaky for c in runs.plain_checks.values())
    assert runs.confirmed.run_id != runs.plain.run_id
    assert any("flaky" in note and f"{len(flaky)} of" in note for note in runs.confirmed.notes)


def test_the_confirmations_are_asked_afresh_and_stored(runs, server):
    bodies = requests(server)[:runs.asked]
    fresh = [b for b in bodies if "cache_prompt" in b]
    assert fresh and all(b["cache_prompt"] is False for b in fresh)
    first = [json.dumps(b["messages"]) for b in bodies if "cache_prompt" not in b]
    # each confirmation is a conversation the run asked before, asked once more; and none was asked with it first
    assert all(json.dumps(b["messages"]) in first for b in fresh)
    assert len({json.dumps(b["messages"]) for b in fresh}) == len(fresh)
    assert all("cache_prompt" not in b for b in bodies[:len(first)])
    with store.connect(runs.db, read_only=True) as con:
        confirmations = store.read_confirmations(con, runs.confirmed.run_id)
        cached = store.stored_answers(con, runs.sut.fingerprint)
    assert len({h for h, _ in confirmations.values()}) == len(fresh)
    # the stage reports its progress through the run's callback, as the other stages do
    confirming = [(done, total) for stage, done, total in runs.reports if stage == "confirming detections"]
    assert confirming[0] == (0, len(fresh)) and confirming[-1] == (len(fresh), len(fresh))
    for c in (c for c in runs.checks.values() if c.violated):
        for tcid, pos in zip(c.test_case_ids, c.positions):  # both (all) conversations of a pair (group) detection
            conversation_hash, output = confirmations[(tcid, pos, 1)]
            assert output == (ANSWERS["built"] if c.source_round == STEADY else ANSWERS["chew"])
            # the answer cache holds the run's answer to that same conversation: it did not serve the confirmation
            if c.flaky and c.relation == MR1:
                assert cached[conversation_hash][0] == WRONG


def test_flaky_detections_are_left_out_of_the_headline_figures(runs):
    with store.connect(runs.db, read_only=True) as con:
        after, before = run_report(con, runs.confirmed.run_id), run_report(con, runs.plain.run_id)
        stored = store.read_run_metrics(con, runs.confirmed.run_id)
        flaky = [c for c in runs.checks.values() if c.flaky]
        mt = before["metrics"]["MT"]["NBugs"]
        assert not any(exceeded for *_, exceeded in gate_run(con, runs.confirmed.run_id,
                                                              parse_budgets([f"NBUGS:MT>={mt}"])))
        assert all(exceeded for *_, exceeded in gate_run(con, runs.plain.run_id, parse_budgets([f"NBUGS:MT>={mt}"])))
    assert after["metrics"]["MT"]["NBugs"] == mt - len(flaky) > 0
    assert after["metrics"][RBT] == before["metrics"][RBT]
    levels = ("L1", "L2", "L3")
    assert sum(after["metrics"]["MT"][lv] for lv in levels) == \
        sum(before["metrics"]["MT"][lv] for lv in levels) - len(flaky)
    rows = {r["relation"]: r for r in after["flaky"]}
    assert {r: rows[r]["detections"] for r in rows} == {MR1: sum(c.relation == MR1 for c in flaky),
                                                        MR3: sum(c.relation == MR3 for c in flaky)}
    assert all(r["seed_questions"] == 1 for r in rows.values())
    assert "flaky" in [t.key for t in after["tables"]] and "flaky" not in before
    assert ((stored["method"] == f"flaky {MR1}") & (stored["metric"] == "detections")).sum() == 1


def test_junit_counts_flaky_detections_apart(runs):
    with store.connect(runs.db, read_only=True) as con:
        questions = store.seed_questions(con, runs.confirmed.run_id)
    root = ET.fromstring(junit_xml(list(runs.checks.values()), questions, runs.confirmed.run_id))
    flaky = [c for c in runs.checks.values() if c.flaky]
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    props = {name: {p.get("name"): p.get("value") for p in s.iter("property")} for name, s in suites.items()}
    assert sum(int(p.get("flaky", 0)) for p in props.values()) == len(flaky)
    assert int(root.get("skipped")) == len({(c.relation, c.source_round) for c in flaky}) == 2
    for relation in (MR1, MR3):
        case = next(t for t in suites[relation].iter("testcase") if f"round {FLAKY}" in t.get("name"))
        assert case.find("failure") is None and "flaky" in case.find("skipped").get("message")
    steady = next(t for t in suites[MR1].iter("testcase") if f"round {STEADY}" in t.get("name"))
    assert steady.find("failure") is not None and steady.find("skipped") is None
    assert props[MR1]["NBugs"] == str(sum(c.violated and not c.flaky for c in runs.checks.values()
                                          if c.relation == MR1))
    plain = ET.fromstring(junit_xml(list(runs.plain_checks.values()), questions, runs.plain.run_id))
    assert plain.get("skipped") == "0" and int(plain.get("failures")) == int(root.get("failures")) + 2


def test_the_violations_page_filters_flaky_detections(runs, monkeypatch):
    from tests.test_pages import app, by_label

    with store.connect(runs.db, read_only=True) as con:
        every, total = store.find_detections(con, store.DetectionFilter(run_ids=(runs.confirmed.run_id,)))
        kept, left = store.find_detections(con, store.DetectionFilter(run_ids=(runs.confirmed.run_id,),
                                                                      confirmed_only=True))
    assert total - left == sum(c.flaky for c in runs.checks.values()) and not kept["flaky"].any()
    monkeypatch.setenv("MORTAR_DB", str(runs.db))
    at = app("violations", current_run=runs.confirmed.run_id)
    by_label(at.text_input, "Search the question").set_value("chew").run()
    shown = at.dataframe[0].value
    assert len(shown) and shown["flaky"].all()
    by_label(at.toggle, "Confirmed only").set_value(True).run()
    assert not at.exception and any(i.value.startswith("No detection matches") for i in at.info)


def test_a_rerun_reads_its_confirmations_back(runs, server):
    before = len(requests(server))
    again = run(load_dataset(runs.path), RunConfig(dataset=str(runs.path), sut="openai:tiny-chat", confirm=1),
                db=runs.db, sut=runs.sut)
    assert again.run_id == runs.confirmed.run_id and len(requests(server)) == before
    with store.connect(runs.db, read_only=True) as con:
        assert {k for k, c in runs.checks.items() if c.flaky} == \
            {c.check_id for c in store.read_checks(con, again.run_id) if c.flaky}


def test_confirm_zero_leaves_the_run_id_and_the_stored_configuration_alone():
    extractor = SimpleNamespace(backend="spacy", model="m")
    sut = ScriptedSUT()
    assert "confirm" not in RunConfig().to_json()
    assert run_key(RunConfig(confirm=0), extractor, sut, 0.5) == run_key(RunConfig(), extractor, sut, 0.5)
    assert "confirm" not in run_key(RunConfig(), extractor, sut, 0.5)
    assert run_key(RunConfig(confirm=2), extractor, sut, 0.5)["confirm"] == 2
    stored = RunConfig(confirm=2).to_json()
    assert stored["confirm"] == 2 and RunConfig.from_json(stored).confirm == 2


def test_confirm_on_the_command_line_and_in_a_run_file(tmp_path, write_coqa):
    from tests.conftest import coqa_record

    dataset = write_coqa([coqa_record()])
    argv = ["run", "--dataset", str(dataset), "--confirm", "2"]
    args = build_parser().parse_args(argv)
    args.given = given_options(build_parser(), argv)
    assert config_from(args).confirm == 2
    run_file = tmp_path / "run.yaml"
    run_file.write_text(f"dataset: {dataset}\nconfirm: 3\n")
    assert read_run_file(str(run_file)).confirm == 3
    assert any("confirm" in p for p in problems(RunConfig(dataset=str(dataset), confirm=-1), False))
    assert not any("confirm" in p for p in problems(RunConfig(dataset=str(dataset), confirm=0), False))
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--dataset", str(dataset), "--confirm", "-1"])


def test_a_local_model_answers_a_fresh_conversation_from_no_cached_prefix():
    from dataclasses import replace

    from mortar.sut import Conversation, Turn

    sut = make_sut("smollm2", lanes=1)
    conversation = Conversation(STORY, (Turn(ROUNDS[0][0], "a puppy"),), ROUNDS[1][0])
    session = sut.session()
    answers = []
    for asked in (conversation, conversation, replace(conversation, fresh=True)):
        before = session.prefilled_tokens
        session.submit(0, asked)
        done = []
        while not done:
            done = session.wait()
        answers.append((done[0].text, session.prefilled_tokens - before))
    prompt = len(sut.prompt_ids(conversation))
    assert answers[1][1] == 1 and answers[2][1] == prompt  # asked again: the cached prompt; fresh: all of it
    assert answers[0][0] == answers[1][0] == answers[2][0]


def test_the_inspector_shows_a_flaky_detections_answers_on_asking_again(runs, monkeypatch):
    from tests.test_pages import app

    flaky = sorted(k for k, c in runs.checks.items() if c.flaky and c.relation == MR1)[0]
    check = runs.checks[flaky]
    monkeypatch.setenv("MORTAR_DB", str(runs.db))
    at = app("inspector", inspect=(runs.confirmed.run_id, flaky))
    assert not at.exception
    assert any("Flaky" in w.value for w in at.warning)
    again = at.dataframe[0].value
    assert list(again["test case"]) == [check.test_case_ids[0]] and list(again["asking"]) == [1]
    assert again["answer"].iloc[0] != check.text_a  # asked again, the system answered otherwise
