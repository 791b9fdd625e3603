"""Response selection for an HTTP SUT that returns prompt log-probabilities (vLLM's chat-completions extension),
against a real chat server in a separate process on loopback (tests/logprob_chat.py): a token's log-probability
there is -0.5 when its word occurs in the system prompt, else -3.0."""

import json

import pytest

from mortar.dataset import Round, Seed
from mortar.execute import Answer
from mortar.perturb import original_case
from mortar.selection import gold_rank, score_candidates, select
from mortar.sut import LOGPROBS, SCORES, WEIGHTS, Conversation, SutError, Turn, make_sut
from mortar.sut.local import LocalSUT
from tests.conftest import ROOT
from tests.loopback import started

STORY = "Maya keeps bees on the roof of her bakery."
CONVERSATION = Conversation(STORY, (Turn("Hi! What do you do?", "I bake bread."),), "Any pets?")
# words of the system prompt (the default one, with the story): "Maya", "keeps", "bees", "the", "roof"
# ("the": "...about this story"); words in none of it: "Ducks", "swim", "north", "leaks"
CANDIDATES = ["Ducks swim north", "Maya keeps bees", "the roof leaks"]
BY_HAND = [-3.0, -0.5, (-0.5 - 0.5 - 3.0) / 3]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    yield from started(ROOT / "tests" / "logprob_chat.py", tmp_path_factory.mktemp("logprob-chat") / "requests.jsonl")


def requests(server) -> list[dict]:
    return [json.loads(line) for line in server.log.read_text().splitlines()]


def http_sut(server, model="vllm-chat", **options):
    return make_sut(f"openai:{model}", env={"MORTAR_OPENAI_BASE_URL": server.url + "/v1"}, max_retries=0, **options)


def test_http_scores_rank_the_candidate_that_shares_the_system_prompts_words_first(server):
    scores = score_candidates(http_sut(server), CONVERSATION, CANDIDATES)
    assert scores == pytest.approx(BY_HAND)
    assert gold_rank(scores, gold=1) == 1 and gold_rank(scores, gold=0) == 3


def test_the_prefix_is_asked_once_per_conversation_with_an_empty_reply(server):
    before = len(requests(server))
    score_candidates(http_sut(server, lanes=2), CONVERSATION, CANDIDATES)
    sent = requests(server)[before:]
    assert len(sent) == len(CANDIDATES) + 1
    replies = sorted(body["messages"][-1]["content"] for body in sent)
    assert replies == sorted(["", *CANDIDATES])
    history = CONVERSATION.messages(http_sut(server).settings.system_prompt)
    for body in sent:
        assert body["messages"][:-1] == history and body["messages"][-1]["role"] == "assistant"
        assert body["add_generation_prompt"] is False and body["continue_final_message"] is True
        assert body["prompt_logprobs"] == 0 and body["max_tokens"] == 1 and body["temperature"] == 0


def test_over_http_the_real_model_scores_the_candidates_as_it_does_locally(server):
    """The stub's smollm2 model renders the request with SmolLM2's chat template (as vLLM does) and returns the
    model's prompt log-probabilities: the HTTP scores equal the local SUT's KV-cached ones."""
    conversation, candidates = CONVERSATION, [*CANDIDATES, "I keep bees on the roof of my bakery"]
    remote = score_candidates(http_sut(server, "smollm2", timeout_s=300), conversation, candidates)
    local = score_candidates(make_sut("smollm2", lanes=1), conversation, candidates)
    assert max(abs(a - b) for a, b in zip(remote, local)) < 1e-4


def test_an_empty_reply_rendered_closed_by_an_older_template_scores_the_same(server):
    """Older transformers keep the turn's closing token after an empty continued message: the prefix is then one
    token longer than the conversation, and the candidates' own tokens still start where they leave it."""
    scores = score_candidates(http_sut(server, "old-template-chat"), CONVERSATION, CANDIDATES)
    assert scores == pytest.approx(BY_HAND)


def test_a_server_without_prompt_logprobs_gives_a_one_line_error_naming_it(server):
    with pytest.raises(SutError) as e:
        score_candidates(http_sut(server, "plain-chat"), CONVERSATION, CANDIDATES)
    message = str(e.value)
    assert "\n" not in message and server.url in message
    assert "returned no prompt_logprobs" in message and "vLLM-style server" in message


def test_a_candidate_with_no_tokens_of_its_own_is_refused(server):
    with pytest.raises(SutError, match="has no tokens of its own"):
        score_candidates(http_sut(server), CONVERSATION, ["Maya keeps bees", ""])


def test_which_suts_can_score_a_given_reply(server):
    groq = make_sut("groq:m", env={"GROQ_API_KEY": "gsk-test-not-a-key"})
    assert LOGPROBS in groq.capabilities and SCORES not in groq.capabilities
    assert SCORES in http_sut(server).capabilities and WEIGHTS not in http_sut(server).capabilities
    assert {WEIGHTS, SCORES} <= LocalSUT.capabilities
    with pytest.raises(SutError, match="response selection needs the likelihood of a given reply"):
        score_candidates(groq, CONVERSATION, CANDIDATES)  # refused before any request


def test_the_selection_stage_over_http_ranks_each_rounds_gold_answer(server):
    from mortar.oracle import Oracle

    seed = Seed("maya", STORY, (Round(1, "Who keeps bees?", "Maya"), Round(2, "What do you bake?", "I bake bread")))
    other = Seed("tom", "Tom sails a red boat to Oslo.", (Round(1, "What does Tom sail?", "a red boat"),
                                                           Round(2, "Where to?", "Oslo")))
    case = original_case(seed)
    answers = {(case.test_case_id, 1): Answer("Maya"), (case.test_case_id, 2): Answer("Oslo")}
    before = len(requests(server))
    rows = select([seed], [case], answers, http_sut(server), [seed, other], 3, 0, Oracle("cosine"), 0.6)
    assert set(rows) == {(case.test_case_id, 1), (case.test_case_id, 2)}
    first, second = rows[(case.test_case_id, 1)], rows[(case.test_case_id, 2)]
    assert first["candidates"] == second["candidates"] == 4  # the gold and the 3 other answers
    # round 1: "Maya" -0.5 beats "a red boat" (-13/6: "a" is in the prompt), "I bake bread" and "Oslo" (-3.0)
    assert first["gold_rank"] == 1 and first["top"] == "Maya"
    # round 2: "I bake bread" (-3.0) after "Maya" and "a red boat", before "Oslo" (-3.0: a tie keeps the gold first)
    assert second["gold_rank"] == 3 and second["top"] == "Maya"
    assert first["oracle_pass"] and second["oracle_pass"] is False
    assert len(requests(server)) - before == 2 * (4 + 1)  # per round: the prefix once, then each candidate
