"""The LLM extraction pipeline end to end, against a real HTTP chat-completions server on 127.0.0.1.

The fake server answers each pipeline step with scripted JSON, chosen by the ``Step: <name>`` line
that begins every prompt of mortar.kg.prompts.
"""

import json
import logging
from collections import Counter

import pytest
from tests.test_chat import KEY, FakeChatServer, Reply, Sleeps

from mortar.chat import ChatClient, ChatConfig, ChatError
from mortar.dataset import Round, Seed
from mortar.kg import DialogueGraph, ExtractionError
from mortar.kg import prompts
from mortar.kg.llm import LlmExtractor, canonical

SEED = Seed("kite", "Ann had a red kite. She flew it on the hill with her brother Tom. The wind was strong.", (
    Round(1, "What did Ann have?", "a red kite"),
    Round(2, "Where did she fly it?", "on the hill"),
    Round(3, "With whom?", "her brother Tom"),
    Round(4, "Was it windy?", "yes, the wind was strong"),
    Round(5, "Were the children happy?", "yes"),
))


def part(entities=(), relations=()):
    return {"entities": list(entities), "relations": list(relations)}


ANSWERS = {
    "declarative information extraction": {
        "Round 1": "Ann had a red kite.", "Round 2": "Ann flew the red kite on the hill.",
        "Round 3": "Ann flew the kite with her brother Tom.", "Round 4": "The wind was strong when Ann flew the kite.",
        "Round 5": "Ann and Tom were happy."},
    "topic extraction": {"topic": "Ann flies a kite"},
    "entity type extraction": {"entity_types": ["Person", "Object", "Place"]},
    "graph extraction": {
        "entities": [{"name": "Ann", "type": "person", "description": "a girl with a kite"},
                     {"name": "the kite", "type": "object", "description": "red, flown on the hill"},
                     {"name": "hill", "type": "place", "description": "where the kite flies"},
                     {"name": "Tom", "type": "person", "description": "Ann's brother"}],
        "relations": [{"source": "ann", "target": "kite", "relation": "flies", "description": "she flies it"},
                      # the paper's spelling of the keys is accepted too
                      {"source_entity": "tom", "target_entity": "ann", "relationship": "brother of"}]},
    "question decontextualisation": {
        "Round 1": {"question": "What did Ann have?", "anaphors": [], "elliptical": False, "story_resolved": False},
        "Round 2": {"question": "Where did Ann fly the kite?", "anaphors": ["she", "it"], "elliptical": False,
                    "story_resolved": True},
        "Round 3": {"question": "With whom did Ann fly the kite on the hill?", "anaphors": [], "elliptical": True,
                    "story_resolved": False},
        "Round 4": {"question": "Was it windy when Ann flew the kite?", "anaphors": [], "elliptical": "false",
                    "story_resolved": False},
        "Round 5": {"question": "Were Ann and Tom happy?", "anaphors": [], "elliptical": False,
                    "story_resolved": False}},
    "dialogue round graph": {
        "Round 1": {"question": part(["ann"]), "answer": part(["the red kite"]), "decontextualised": part(["ann"])},
        "Round 2": {"question": part(), "answer": part(["hill"]),
                    "decontextualised": part(["Ann", "the kite"], [{"source": "ann", "target": "kite",
                                                                     "relation": "flies"}])},
        "Round 3": {"question": part(), "answer": part(["tom"]), "decontextualised": part(["ann", "kite", "hill"])},
        "Round 4": {"question": part(), "answer": part(["wind"]), "decontextualised": part(["ann", "kite"])},
        "Round 5": {"question": part(["the children"]), "answer": part(),
                    "decontextualised": part(["ann", "tom"])}},
    "canonicalisation": {
        "red kite": {"is_subset": True, "members": [{"name": "kite", "type": "object"}]},
        "wind": {"is_subset": False, "members": [{"name": "wind", "type": "weather"}]},
        "the children": {"is_subset": 1, "members": [{"name": "ann", "type": "person"},
                                                     {"name": "tom", "type": "person"}]}},
}


def step_of(body: dict) -> str:
    first_line = body["messages"][-1]["content"].splitlines()[0]
    assert first_line.startswith("Step: ")
    return first_line.removeprefix("Step: ")


class Script:
    """Scripted answers per step; ``faults[step]`` = replies to give (in order) before the scripted one."""

    def __init__(self, answers=ANSWERS, faults=None):
        self.answers = answers
        self.faults = {step: list(replies) for step, replies in (faults or {}).items()}
        self.seen: list[tuple[str, float, str]] = []  # (step, temperature, prompt)

    def __call__(self, body: dict) -> Reply:
        step = step_of(body)
        self.seen.append((step, body["temperature"], body["messages"][-1]["content"]))
        if self.faults.get(step):
            return self.faults[step].pop(0)
        return Reply(json.dumps(self.answers[step]))

    def temperatures(self, step: str) -> list[float]:
        return [t for s, t, _ in self.seen if s == step]

    def steps(self) -> Counter:
        return Counter(s for s, _, _ in self.seen)


MALFORMED = Reply('{"entities": [{"name": "ann", "type": ')  # cut off mid-answer


@pytest.fixture
def server():
    s = FakeChatServer()
    yield s
    s.close()


@pytest.fixture
def sleeps():
    return Sleeps()


def extractor(server, sleeps, script: Script, **options) -> LlmExtractor:
    server.responder = script
    config = ChatConfig(provider="openai", model="llama-test", base_url=server.url, api_key=KEY, **options)
    return LlmExtractor(ChatClient(config, sleep=sleeps))


def test_a_pronoun_question_needs_what_its_pronouns_stand_for(server, sleeps):
    script = Script()
    dg = extractor(server, sleeps, script).extract(SEED)
    assert (dg.seed_id, dg.backend, dg.model) == ("kite", "llm", "llama-test")
    r2 = dg.round(2)
    assert r2.question.names == frozenset()
    assert r2.needed == {"ann", "kite"}  # Ḡ_2: "she" and "it"
    assert r2.decontextualised_question == "Where did Ann fly the kite?"
    assert r2.anaphors == ("she", "it")
    assert r2.story_resolved and not r2.elliptical
    assert r2.answer.names == {"hill"}
    assert [(r.source, r.target, r.name) for r in r2.decontextualised.relations] == [("ann", "kite", "flies")]
    assert dg.round(1).needed == frozenset()  # "What did Ann have?" stands alone
    assert dg.round(5).needed == frozenset()  # "the children" are named in the question itself


def test_an_elliptical_question_continues_the_round_before(server, sleeps):
    dg = extractor(server, sleeps, Script()).extract(SEED)
    r3 = dg.round(3)
    assert r3.elliptical and r3.continues == 2
    assert r3.needed == {"ann", "kite", "hill"}
    assert not r3.story_resolved
    r4 = dg.round(4)
    assert not r4.elliptical and r4.continues is None  # "false" as a string is still false


def test_canonicalisation_maps_aliases_groups_and_new_entities(server, sleeps):
    script = Script()
    dg = extractor(server, sleeps, script).extract(SEED)
    assert dg.graph.names == {"ann", "kite", "hill", "tom", "wind"}
    assert dg.round(1).answer.names == {"kite"}  # "the red kite" is an alias of "kite"
    assert dg.round(5).question.names == {"ann", "tom"}  # "the children" is the group of both
    assert {e.name: e.type for e in dg.round(4).answer.entities} == {"wind": "weather"}  # an omitted entity, added
    assert ("tom", "ann", "brother of") in {(r.source, r.target, r.name) for r in dg.graph.relations}
    [(_, _, prompt)] = [s for s in script.seen if s[0] == "canonicalisation"]
    assert prompt.split("New names:\n")[1].splitlines() == ["- red kite", "- wind", "- children"]


def test_one_call_per_step_per_dialogue_at_temperature_zero(server, sleeps):
    script = Script()
    extractor(server, sleeps, script).extract(SEED)
    assert script.steps() == Counter({p.step: 1 for p in prompts.STEPS})
    assert {t for _, t, _ in script.seen} == {0.0}
    request = server.requests[0]["body"]
    assert request["messages"][0]["role"] == "system" and request["response_format"] == {"type": "json_object"}


def test_the_graph_survives_the_store_round_trip(server, sleeps):
    dg = extractor(server, sleeps, Script()).extract(SEED)
    assert DialogueGraph.from_json(dg.to_json()) == dg


def test_no_canonicalisation_call_when_every_name_is_known(server, sleeps):
    answers = dict(ANSWERS)
    answers["dialogue round graph"] = {f"Round {t}": {"question": part(), "answer": part(["ann"]),
                                                      "decontextualised": part(["ann"])} for t in range(1, 6)}
    script = Script(answers)
    dg = extractor(server, sleeps, script).extract(SEED)
    assert "canonicalisation" not in script.steps()
    assert dg.round(2).needed == {"ann"}


def test_malformed_json_is_asked_again_at_a_higher_temperature(server, sleeps, caplog):
    script = Script(faults={"graph extraction": [MALFORMED]})
    with caplog.at_level(logging.WARNING, logger="mortar.kg.llm"):
        dg = extractor(server, sleeps, script).extract(SEED)
    assert script.temperatures("graph extraction") == [0.0, 0.3]
    assert dg.round(2).needed == {"ann", "kite"}
    assert any("graph extraction" in r.getMessage() and "temperature 0.3" in r.getMessage() for r in caplog.records)


def test_an_answer_of_the_wrong_shape_counts_as_malformed(server, sleeps):
    incomplete = dict(ANSWERS["declarative information extraction"])
    del incomplete["Round 3"]
    script = Script(faults={"declarative information extraction": [Reply(json.dumps(incomplete)),
                                                                   Reply('["a list, not an object"]')]})
    extractor(server, sleeps, script).extract(SEED)
    assert script.temperatures("declarative information extraction") == [0.0, 0.3, 0.6]


def test_fenced_json_is_accepted(server, sleeps):
    fenced = Reply("```json\n" + json.dumps(ANSWERS["topic extraction"]) + "\n```")
    script = Script(faults={"topic extraction": [fenced]})
    extractor(server, sleeps, script).extract(SEED)
    assert script.temperatures("topic extraction") == [0.0]


def test_a_permanently_malformed_seed_fails_with_the_reason(server, sleeps):
    script = Script(faults={"graph extraction": [MALFORMED] * 10})
    with pytest.raises(ExtractionError) as err:
        extractor(server, sleeps, script).extract(SEED)
    message = str(err.value)
    assert "seed kite" in message and "graph extraction" in message and "after 3 tries" in message
    assert "not JSON" in message
    assert script.temperatures("graph extraction") == [0.0, 0.3, 0.6]  # bounded
    assert "question decontextualisation" not in script.steps()  # the pipeline stops at the failed step


def test_service_json_validation_failure_counts_as_malformed(server, sleeps):
    # Groq's JSON mode answers 400 json_validate_failed when the model's output is not JSON
    rejected = Reply(status=400, body=b'{"error": {"message": "Failed to generate JSON", "code": "json_validate_failed"}}')
    script = Script(faults={"topic extraction": [rejected]})
    extractor(server, sleeps, script).extract(SEED)
    assert script.temperatures("topic extraction") == [0.0, 0.3]


def test_a_request_refused_for_its_content_fails_the_seed(server, sleeps):
    too_long = Reply(status=400, body=b'{"error": {"message": "context length exceeded", "code": "context_length_exceeded"}}')
    script = Script(faults={"question decontextualisation": [too_long]})
    with pytest.raises(ExtractionError, match="question decontextualisation: request refused: HTTP 400 .*context length"):
        extractor(server, sleeps, script).extract(SEED)
    assert script.temperatures("question decontextualisation") == [0.0]


def test_transient_failures_are_retried_by_the_client(server, sleeps):
    script = Script(faults={"topic extraction": [Reply(status=500, body=b"oops")],
                            "graph extraction": [Reply(status=429, body=b"{}", headers={"Retry-After": "4"})],
                            "canonicalisation": [Reply("late", delay_s=2.0)]})
    dg = extractor(server, sleeps, script, timeout_s=0.2).extract(SEED)
    assert dg.round(2).needed == {"ann", "kite"}
    assert len(sleeps) == 3 and sleeps[1] == 4.0
    assert script.temperatures("graph extraction") == [0.0, 0.0]  # a transport retry is the same request


def test_a_service_failure_is_not_blamed_on_the_seed(server, sleeps):
    script = Script(faults={"topic extraction": [Reply(status=401, body=b'{"error": {"message": "invalid key"}}')]})
    ex = extractor(server, sleeps, script)
    with pytest.raises(ChatError) as err:
        ex.extract_many([SEED])
    assert not isinstance(err.value, ExtractionError) and err.value.status == 401


def test_extract_many_returns_the_error_of_a_failed_seed_in_its_place(server, sleeps):
    other = Seed("bob", "Bob baked bread.", (Round(1, "What did Bob bake?", "bread"),))

    class TwoSeeds(Script):
        def __call__(self, body):
            if "Bob" in body["messages"][-1]["content"] and step_of(body) == "declarative information extraction":
                self.seen.append(("declarative (bob)", body["temperature"], ""))
                return MALFORMED
            return super().__call__(body)

    calls = []
    results = extractor(server, sleeps, TwoSeeds()).extract_many(
        [SEED, other], progress=lambda n, total, info: calls.append((n, total, info["seed"], info["failed"])))
    assert isinstance(results[0], DialogueGraph) and results[0].seed_id == "kite"
    assert isinstance(results[1], ExtractionError) and "seed bob: declarative information extraction" in str(results[1])
    assert calls == [(1, 2, "kite", False), (2, 2, "bob", True)]


def test_the_key_never_reaches_logs_or_errors(server, sleeps, caplog):
    echo = json.dumps({"error": {"message": f"bad request from {KEY}"}}).encode()
    script = Script(faults={"topic extraction": [Reply(status=503, body=echo), MALFORMED, MALFORMED, MALFORMED]})
    with caplog.at_level(logging.DEBUG), pytest.raises(ExtractionError) as err:
        extractor(server, sleeps, script).extract(SEED)
    assert len(sleeps) == 1
    assert caplog.records
    for record in caplog.records:
        assert KEY not in record.getMessage()
    assert KEY not in str(err.value)
    assert server.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"  # it was used, only where it belongs


def test_from_env_builds_the_extractor_on_the_configured_endpoint(server, sleeps):
    server.responder = Script()
    ex = LlmExtractor.from_env({"MORTAR_LLM_BASE_URL": server.url, "MORTAR_LLM_MODEL": "local-model"}, sleep=sleeps)
    assert (ex.backend, ex.model) == ("llm", "local-model")
    assert ex.extract(SEED).round(2).needed == {"ann", "kite"}
    assert "Authorization" not in server.requests[0]["headers"]  # no key configured, none sent
    ex.close()


@pytest.mark.parametrize("raw, name", [("The Old Barn.", "old barn"), ("  a   kite ", "kite"), ("Her brother", "brother"),
                                       ("Tom", "tom"), ("1990", "1990"), ("the", "")])
def test_canonical_names(raw, name):
    assert canonical(raw) == name
