"""An OpenAI-compatible endpoint as an intent/slot system, asked with tool calls (issue 31), against a real chat
server in a separate process on loopback (tests/toolcall_chat.py): the tool it calls is the intent, its arguments
are the slots, mapped back to BIO tags over the utterance's words."""

import json

import pytest

from mortar import store
from mortar.cli import main
from mortar.config import RunConfig, run_sut_spec
from mortar.formats import load_dataset
from mortar.sut import Conversation, SutError, Turn, make_sut
from mortar.sut.nlu import prediction_of, slot_spans
from mortar.sut.nlu_tools import SYSTEM_MESSAGE, ToolCallNLU, schema_of, tags_of
from mortar.sut.remote import openai_config
from tests.conftest import ROOT
from tests.loopback import started

SAMPLE = ROOT / "data" / "sample_nlu.json"
SCHEMA = schema_of(load_dataset(SAMPLE).seeds)
BOOKING = "could you book a table for two at the red lion in york"
FLIGHT = "fly me from paris back to paris on friday"
SCRIPT = {  # utterance → the tool call the server makes
    BOOKING: ["BookRestaurant", {"party_size": "two", "restaurant_name": "The Red Lion", "city": "York",
                                 "cuisine": "thai"}],  # no thai in the utterance: dropped
    FLIGHT: ["BookFlight", {"from_city": "paris", "to_city": "Paris", "date": "friday"}],
}


def gold_script() -> dict:
    """The gold intent and slots of every utterance of the sample, as tool calls: the server is right on seeds."""
    script = {}
    for seed in load_dataset(SAMPLE).seeds:
        for r in seed.rounds:
            script[r.question] = [r.intent, dict(slot_spans(r.tags, r.question.split()))]
    return script


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("toolcall-chat")
    script = folder / "script.json"
    script.write_text(json.dumps({**gold_script(), **SCRIPT}))
    yield from started(ROOT / "tests" / "toolcall_chat.py", folder / "requests.jsonl", "--script", str(script))


def requests(server) -> list[dict]:
    return [json.loads(line) for line in server.log.read_text().splitlines()]


def system(server, model="stub-model") -> ToolCallNLU:
    env = {"MORTAR_OPENAI_BASE_URL": server.url + "/v1"}
    return ToolCallNLU(openai_config(model, env, json_mode=False, max_retries=0), SCHEMA)


def test_the_schema_holds_every_intent_and_the_slots_its_gold_tags_fill():
    assert SCHEMA["BookFlight"] == ["airline", "class", "date", "from_city", "time", "to_city"]
    assert set(SCHEMA) == {r.intent for seed in load_dataset(SAMPLE).seeds for r in seed.rounds}


def test_the_request_carries_one_tool_per_intent_with_its_slots_and_requires_a_call(server):
    before = len(requests(server))
    system(server).predict(["what is the weather in oslo", "and tomorrow in bergen?"])
    body = requests(server)[before]
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in body["tools"]}
    assert {t["type"] for t in body["tools"]} == {"function"} and set(tools) == set(SCHEMA)
    for intent, parameters in tools.items():
        assert parameters["type"] == "object" and parameters["required"] == []
        assert sorted(parameters["properties"]) == SCHEMA[intent]
        assert all(p["type"] == "string" for p in parameters["properties"].values())
    assert body["tool_choice"] == "required" and body["temperature"] == 0 and "response_format" not in body
    assert body["messages"] == [{"role": "system", "content": SYSTEM_MESSAGE},
                                {"role": "user", "content": "what is the weather in oslo"},
                                {"role": "user", "content": "and tomorrow in bergen?"}]


def test_a_tool_call_becomes_the_intent_and_bio_tags_over_the_words(server):
    nlu = system(server)
    p = nlu.predict([BOOKING])
    assert p.intent == "BookRestaurant"
    assert dict(zip(BOOKING.split(), p.tags)) == {
        **{w: "O" for w in BOOKING.split()}, "two": "B-party_size", "the": "B-restaurant_name",
        "red": "I-restaurant_name", "lion": "I-restaurant_name", "york": "B-city"}
    assert nlu.dropped == 1  # "thai" is not in the utterance
    assert p.probabilities["BookRestaurant"] == 1.0 and sum(p.probabilities.values()) == 1.0
    assert set(p.probabilities) == set(SCHEMA)


def test_the_same_value_twice_takes_two_runs_of_words_first_match_first(server):
    p = system(server).predict([FLIGHT])
    assert p.intent == "BookFlight"
    assert p.tags == ("O", "O", "O", "B-from_city", "O", "O", "B-to_city", "O", "B-date")


def test_values_are_found_as_whole_runs_of_words_or_dropped():
    words = "play new york new york by frank".split()
    tags, dropped = tags_of(words, {"song": "New York, New York", "artist": "frank sinatra", "genre": ""})
    assert tags == ("O", "B-song", "I-song", "I-song", "I-song", "O", "O") and dropped == 1  # "frank sinatra"
    assert tags_of(["york"], {"city": "new york"}) == (("O",), 1)
    assert tags_of(["newyork"], {"city": "york"}) == (("O",), 1)  # a word is matched whole


@pytest.mark.parametrize("model, reason", [("plain-chat", "answered without a tool call"),
                                           ("unknown-tool", "called a tool it was not given: 'OrderPizza'"),
                                           ("bad-arguments", "are not JSON")])
def test_a_reply_that_is_not_a_good_tool_call_is_a_one_line_error_naming_the_endpoint(server, model, reason):
    with pytest.raises(SutError) as e:
        system(server, model).predict([BOOKING])
    assert server.url + "/v1/chat/completions" in str(e.value) and reason in str(e.value)
    assert "\n" not in str(e.value)


def test_the_spec_makes_a_sut_whose_answers_prediction_of_reads(server, monkeypatch):
    monkeypatch.setenv("MORTAR_OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("MORTAR_OPENAI_API_KEY", "sk-never-in-the-config")
    sut = make_sut("openai-tools:m", lanes=2)
    assert sut.model == "m" and sut.lanes == 2
    conversation = Conversation("", (Turn("book a table at the red lion", '{"intent": "BookRestaurant"}'),),
                                "then play some music by dj orbit")
    before = len(requests(server))
    prediction = prediction_of(sut.answer(conversation))
    sut.close()
    assert prediction.intent == "PlayMusic" and len(prediction.tags) == 7  # the unscripted server: name words
    users = [m["content"] for m in requests(server)[before]["messages"] if m["role"] == "user"]
    assert users == ["book a table at the red lion", "then play some music by dj orbit"]
    config = json.dumps(sut.config())
    assert "sk-never-in-the-config" not in config and server.url + "/v1" in config


def test_the_tools_come_from_the_named_dataset_or_the_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("MORTAR_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    data = tmp_path / "alarms.json"
    data.write_text(json.dumps([{"text": "wake me at six", "tags": "O O O B-time", "intent": "SetAlarm"}]))
    assert make_sut(f"openai-tools:m@{data}").schema == {"SetAlarm": ["time"]}
    assert make_sut("openai-tools:m").schema == SCHEMA
    assert make_sut("openai-tools:m").fingerprint != make_sut(f"openai-tools:m@{data}").fingerprint
    with pytest.raises(SutError, match="openai-tools: .*missing.json: file not found"):
        make_sut(f"openai-tools:m@{tmp_path / 'missing.json'}")
    assert run_sut_spec(RunConfig(dataset=str(SAMPLE), sut="openai-tools:m")) == f"openai-tools:m@{SAMPLE}"
    assert run_sut_spec(RunConfig(dataset=str(SAMPLE), sut=f"openai-tools:m@{data}")) == f"openai-tools:m@{data}"


def test_a_dialtest_run_against_the_endpoint_stores_intent_checks(server, tmp_path, monkeypatch):
    monkeypatch.setenv("MORTAR_OPENAI_BASE_URL", server.url + "/v1")
    db = tmp_path / "tools.duckdb"
    before = len(requests(server))
    assert main(["run", "--dataset", str(SAMPLE), "--method", "dialtest", "--limit", "3", "--sut",
                 "openai-tools:stub-model", "--dialtest-gate", "off", "--db", str(db)]) == 0
    with store.connect(db, read_only=True) as con:
        run_id = con.execute("SELECT run_id FROM runs").fetchone()[0]
        checks = store.read_checks(con, run_id)
    seeds = [json.loads(c.text_a)["intent"] == json.loads(c.text_b)["intent"] for c in checks if c.relation == "RBT"]
    assert seeds and all(seeds)  # the server calls the gold tool on the seed utterances (RBT's)
    assert [c for c in checks if c.relation == "INTENT"]  # and transformed utterances were asked too
    sent = requests(server)[before:]
    assert sent and all(body["model"] == "stub-model" and body["tool_choice"] == "required" for body in sent)
