"""The HTTP SUTs against a real chat-completions server on 127.0.0.1, with injected failures."""

import json
import logging
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import duckdb
import pytest

from mortar.store import StoreCache
from mortar.dataset import Round, Seed, TestCase
from mortar.execute import execute
from mortar.sut import Conversation, SutError, SutSettings, Turn, make_sut

KEY = "sk-sut-test-9f8e7d-never-store-me"
FAST = dict(timeout_s=0.3, max_retries=5, backoff_s=0.01, max_backoff_s=0.02)


class LoopbackChat:
    """A chat-completions server on an ephemeral port that stops itself after ``lifetime_s``.

    Each request takes the next behaviour from ``script`` (then ``default``): "ok", "429", "500",
    "timeout" (answers far too late), "not_json" or "no_choices". ``fail_on`` maps a question to a
    behaviour used whenever that question is the last user message.
    """

    def __init__(self, script=(), default="ok", fail_on=None, delay_s=0.0, lifetime_s=60.0):
        self.script, self.default, self.fail_on, self.delay_s = deque(script), default, fail_on or {}, delay_s
        self.requests: list[dict] = []
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        chat = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                question = body["messages"][-1]["content"]
                with chat.lock:
                    chat.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    behaviour = chat.fail_on.get(question) or (chat.script.popleft() if chat.script else chat.default)
                    chat.in_flight += 1
                    chat.max_in_flight = max(chat.max_in_flight, chat.in_flight)
                try:
                    time.sleep(chat.delay_s)
                    self.reply(behaviour, question)
                finally:
                    with chat.lock:
                        chat.in_flight -= 1

            def reply(self, behaviour, question):
                status, payload = 200, None
                if behaviour == "ok":
                    payload = json.dumps({"choices": [{"index": 0, "message": {
                        "role": "assistant", "content": f" answer to {question} "}}]}).encode()
                elif behaviour in ("429", "500"):
                    status, payload = int(behaviour), json.dumps({"error": {"message": "try later"}}).encode()
                elif behaviour == "timeout":
                    time.sleep(FAST["timeout_s"] * 4)
                    payload = b"{}"
                elif behaviour == "not_json":
                    payload = b"<html>bad gateway</html>"
                elif behaviour == "no_choices":
                    payload = b'{"id": "x", "choices": []}'
                elif behaviour == "echo_key_400":
                    status = 400
                    payload = json.dumps({"error": {"message": "bad key " + self.headers["Authorization"]}}).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.stopper = threading.Timer(lifetime_s, self.server.shutdown)
        self.stopper.daemon = True

    def __enter__(self):
        self.thread.start()
        self.stopper.start()
        return self

    def __exit__(self, *exc):
        self.stopper.cancel()
        self.server.shutdown()
        self.server.server_close()


def openai_sut(server, **options):
    env = {"MORTAR_OPENAI_BASE_URL": server.url + "/v1", "MORTAR_OPENAI_API_KEY": KEY}
    return make_sut("openai:tiny-model", env=env, **{**FAST, **options})


CONVERSATION = Conversation("Ann had a red kite.", (Turn("Who had a kite?", "Ann"),), "What colour was it?")


def test_openai_sut_sends_the_conversation_and_returns_the_answer():
    with LoopbackChat() as server:
        sut = openai_sut(server)
        assert sut.answer(CONVERSATION) == "answer to What colour was it?"
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    body = request["body"]
    assert body["model"] == "tiny-model" and body["temperature"] == 0 and body["max_tokens"] == 48
    assert "response_format" not in body
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert body["messages"][0]["content"].startswith("Story:\nAnn had a red kite.")
    assert [m["content"] for m in body["messages"][1:]] == ["Who had a kite?", "Ann", "What colour was it?"]


def test_transient_failures_are_retried_until_an_answer_comes():
    with LoopbackChat(script=["429", "500", "timeout", "not_json", "no_choices"]) as server:
        assert openai_sut(server).answer(CONVERSATION) == "answer to What colour was it?"
    assert len(server.requests) == 6


def test_a_round_that_keeps_failing_is_an_error_with_its_reason():
    with LoopbackChat(default="500") as server:
        with pytest.raises(SutError, match="HTTP 500.*gave up after 3 attempts"):
            openai_sut(server, max_retries=2).answer(CONVERSATION)
    assert len(server.requests) == 3


def test_the_key_never_reaches_errors_logs_or_the_store(db, caplog):
    seed = Seed("s1", "Ann had a red kite.", (Round(1, "Q1?", "a"), Round(2, "Q2?", "b")))
    caplog.set_level(logging.DEBUG)
    with LoopbackChat(fail_on={"Q1?": "echo_key_400"}) as server:
        sut = openai_sut(server)
        answers = execute([seed], [TestCase("s1", "ORIG", 1, (1, 2))], sut, StoreCache(db))
    error = answers["s1/ORIG/1", 1].error
    assert "HTTP 400" in error and "***" in error and KEY not in error
    assert answers["s1/ORIG/1", 2].error.startswith("not asked")
    assert KEY not in repr(sut) and KEY not in json.dumps(sut.config())
    assert all(KEY not in r.getMessage() for r in caplog.records)
    con = duckdb.connect(str(db), read_only=True)
    try:
        stored = con.execute("SELECT * FROM suts").fetchall() + con.execute("SELECT * FROM answers").fetchall()
    finally:
        con.close()
    assert stored and KEY not in repr(stored)


def seeds_and_cases(n_seeds=3, n_rounds=3):
    seeds = [Seed(f"s{i}", f"Story {i}.", tuple(Round(k, f"S{i} Q{k}?", "x") for k in range(1, n_rounds + 1)))
             for i in range(n_seeds)]
    cases = [TestCase(s.id, "ORIG", 1, tuple(range(1, n_rounds + 1))) for s in seeds]
    cases += [TestCase(s.id, "DRS", 1, tuple(range(n_rounds, 0, -1))) for s in seeds]
    return seeds, cases


def test_execute_over_http_bounds_concurrency_and_records_errored_rounds(db):
    seeds, cases = seeds_and_cases()
    with LoopbackChat(delay_s=0.05, fail_on={"S1 Q1?": "500"}) as server:
        answers = execute(seeds, cases, openai_sut(server, max_retries=1), StoreCache(db))
        assert 2 <= server.max_in_flight <= 4  # the default concurrency is 4

        # the server recovers; a second run asks only what has no stored answer, two at a time
        server.fail_on.clear()
        server.requests.clear()
        server.max_in_flight = 0
        again = execute(seeds, cases, openai_sut(server, concurrency=2), StoreCache(db))
    assert answers["s1/ORIG/1", 1].error.startswith("HTTP 500") and answers["s1/ORIG/1", 1].text is None
    assert answers["s1/ORIG/1", 3].error.startswith("not asked")
    assert answers["s1/DRS/1", 3].error.startswith("HTTP 500")  # the same question, later in another case
    assert answers["s1/DRS/1", 1].text == "answer to S1 Q3?"
    assert answers["s0/ORIG/1", 2].text == "answer to S0 Q2?"
    ok = [a for a in answers.values() if a.ok]
    assert len(ok) == 18 - 3 - 1  # 18 rounds; s1/ORIG loses all 3, s1/DRS its last one

    asked = [r["body"]["messages"][-1]["content"] for r in server.requests]
    assert sorted(asked) == ["S1 Q1?", "S1 Q1?", "S1 Q2?", "S1 Q3?"]
    assert server.max_in_flight <= 2
    assert all(a.ok for a in again.values())
    assert sum(a.cached for a in again.values()) == len(ok)


def test_groq_sut_goes_through_the_sdk_with_retries():
    with LoopbackChat(script=["429", "500"]) as server:
        env = {"GROQ_API_KEY": KEY, "GROQ_BASE_URL": server.url}
        sut = make_sut("groq:llama-test", SutSettings(max_new_tokens=16), env=env, **FAST)
        assert sut.answer(CONVERSATION) == "answer to What colour was it?"
        assert sut.backend == "groq" and sut.config()["max_new_tokens"] == 16
    assert [r["path"] for r in server.requests] == ["/openai/v1/chat/completions"] * 3
    assert server.requests[-1]["body"]["max_tokens"] == 16


def test_missing_configuration_is_a_clear_error():
    with pytest.raises(SutError, match="MORTAR_OPENAI_MODEL"):
        make_sut("openai", env={})
    with pytest.raises(SutError, match="GROQ_API_KEY"):
        make_sut("groq:some-model", env={})
    with pytest.raises(SutError, match="unknown SUT 'nope'"):
        make_sut("nope")
