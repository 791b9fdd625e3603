"""`mortar serve`: a bundled model behind an OpenAI-compatible endpoint, in a real separate process on loopback,
answers as the same model does in process."""

import json
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from mortar.sut import make_sut
from mortar.sut.base import Conversation, Turn
from mortar.sut.serve import conversation_of
from tests.conftest import ROOT

STORY = "Ann had a red kite. She flew it on the hill with her brother Tom."


def test_a_chat_request_becomes_the_conversation_it_was_made_from():
    conversation = Conversation(STORY, (Turn("Who had a kite?", "Ann"),), "What colour was it?")
    messages = conversation.messages("Story:\n{story}\n\nAnswer briefly.")
    back = conversation_of(messages)
    assert back.history == conversation.history and back.question == conversation.question
    assert back.messages("{story}") == messages  # the system message passes through as it is
    with pytest.raises(ValueError, match="alternate"):
        conversation_of([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}])
    with pytest.raises(ValueError, match="last message"):
        conversation_of([{"role": "system", "content": "s"}])


@pytest.fixture(scope="module")
def server():
    proc = subprocess.Popen([sys.executable, "-m", "mortar", "serve", "--sut", "smollm2", "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    assert line.startswith("serving smollm2 at http://127.0.0.1:"), line
    yield line.split(" at ")[1].split(" ")[0]
    proc.terminate()
    proc.wait(timeout=10)


def test_the_served_model_answers_as_it_does_in_process(server):
    conversation = Conversation(STORY, (Turn("Who had a kite?", "Ann"),), "Who did she fly it with?")
    over_http = make_sut("openai:smollm2", env={"MORTAR_OPENAI_BASE_URL": server}).answer(conversation)
    assert over_http == make_sut("smollm2").answer(conversation) and over_http.strip()


def test_the_server_refuses_sampling_and_names_its_model(server):
    request = urllib.request.Request(f"{server}/chat/completions", method="POST", data=json.dumps(
        {"messages": [{"role": "user", "content": "hi"}], "temperature": 0.7}).encode())
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(request, timeout=30)
    assert e.value.code == 400 and "greedily" in json.loads(e.value.read())["error"]["message"]
    with urllib.request.urlopen(f"{server}/models", timeout=30) as r:
        assert json.loads(r.read())["data"][0]["id"] == "smollm2"
