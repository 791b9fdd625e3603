"""The chat client against a real HTTP server on 127.0.0.1 that speaks the chat-completions wire format.

``FakeChatServer`` is also used by tests/test_kg_llm.py.
"""

import json
import logging
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mortar.chat import ChatClient, ChatConfig, ChatConfigError, ChatError, parse_retry_after

KEY = "sk-test-5ecret-d0-not-leak-4242"


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a chat completion with ``content``, or a raw ``body`` with ``status``."""
    content: str | None = None
    status: int = 200
    body: bytes | None = None
    headers: dict = field(default_factory=dict)
    delay_s: float = 0.0  # answer this late (a timeout, when longer than the client's)


def completion(content: str) -> bytes:
    return json.dumps({"id": "c1", "object": "chat.completion",
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": content}}]}).encode()


class FakeChatServer:
    """POST .../chat/completions on an ephemeral port. Queued ``inject``-ed replies go first, one per
    request; after them ``responder(body)`` answers. Every request is recorded (path, headers, body)."""

    def __init__(self, responder=None):
        self.responder = responder or (lambda body: Reply("{}"))
        self.injected: deque[Reply] = deque()
        self.requests: list[dict] = []
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = 1 << 16  # headers and body in one write: no 40 ms Nagle / delayed-ACK stall per request

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw)
                with server.lock:
                    server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    if not self.path.endswith("/chat/completions"):
                        reply = Reply(status=404, body=b'{"error": {"message": "no such route"}}')
                    else:
                        reply = server.injected.popleft() if server.injected else None
                reply = reply or server.responder(body)
                if reply.delay_s:
                    server.stopping.wait(reply.delay_s)
                data = reply.body if reply.body is not None else completion(reply.content)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the timeout tests)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def url(self) -> str:
        return self.root + "/v1"

    def inject(self, *replies: Reply) -> None:
        self.injected.extend(replies)

    def close(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server():
    s = FakeChatServer()
    yield s
    s.close()


class Sleeps(list):
    """An injected sleep: records the pauses instead of taking them."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(server, sleep, **options) -> ChatClient:
    config = ChatConfig(provider=options.pop("provider", "openai"), model="test-model",
                        base_url=options.pop("base_url", server.url), api_key=KEY, **options)
    return ChatClient(config, sleep=sleep)


MESSAGES = [{"role": "user", "content": "Reply with JSON."}]


def test_a_completion_is_the_assistant_content(server):
    server.inject(Reply('{"ok": true}'))
    with client(server, Sleeps()) as chat:
        assert chat.complete(MESSAGES, temperature=0.3) == '{"ok": true}'
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert request["body"]["model"] == "test-model"
    assert request["body"]["messages"] == MESSAGES
    assert request["body"]["temperature"] == 0.3
    assert request["body"]["response_format"] == {"type": "json_object"}


def test_429_waits_as_long_as_retry_after_says(server):
    sleeps = Sleeps()
    server.inject(Reply(status=429, body=b'{"error": {"message": "slow down"}}', headers={"Retry-After": "7"}),
                  Reply("fine"))
    assert client(server, sleeps).complete(MESSAGES) == "fine"
    assert sleeps == [7.0]
    assert len(server.requests) == 2


def test_5xx_backs_off_exponentially_with_jitter(server):
    sleeps = Sleeps()
    server.inject(*[Reply(status=500, body=b"oops")] * 3, Reply("fine"))
    chat = client(server, sleeps, backoff_s=1.0, max_backoff_s=30.0)
    assert chat.complete(MESSAGES) == "fine"
    assert len(sleeps) == 3
    for attempt, pause in enumerate(sleeps):
        step = 2 ** attempt
        assert step / 2 <= pause <= step
    assert len(server.requests) == 4


def test_retries_are_bounded(server, caplog):
    sleeps = Sleeps()
    server.responder = lambda body: Reply(status=503, body=b'{"error": {"message": "overloaded"}}')
    with caplog.at_level(logging.WARNING, logger="mortar.chat"), pytest.raises(ChatError) as err:
        client(server, sleeps, max_retries=2).complete(MESSAGES)
    assert len(server.requests) == 3
    assert len(sleeps) == 2
    assert err.value.status == 503 and err.value.transient
    assert "gave up after 3 attempts" in str(err.value)
    assert "overloaded" in str(err.value)
    assert sum("retry" in r.getMessage() for r in caplog.records) == 2


def test_a_timeout_is_retried(server):
    sleeps = Sleeps()
    server.inject(Reply("too late", delay_s=2.0), Reply("in time"))
    assert client(server, sleeps, timeout_s=0.2, max_retries=1).complete(MESSAGES) == "in time"
    assert len(sleeps) == 1


def test_a_timeout_that_persists_fails_with_a_clear_reason(server):
    server.responder = lambda body: Reply("too late", delay_s=2.0)
    with pytest.raises(ChatError, match="no answer from .* within 0.2 s"):
        client(server, Sleeps(), timeout_s=0.2, max_retries=1).complete(MESSAGES)
    assert len(server.requests) == 2


@pytest.mark.parametrize("body", [b"<html>bad gateway</html>", b'{"choices": []}',
                                  b'{"choices": [{"message": {"role": "assistant", "content": null}}]}'])
def test_a_malformed_body_is_retried(server, body):
    sleeps = Sleeps()
    server.inject(Reply(body=body), Reply("fine"))
    assert client(server, sleeps).complete(MESSAGES) == "fine"
    assert len(sleeps) == 1


def test_connection_refused_is_retried_then_reported(server):
    root = server.root
    server.close()  # nothing listens on the port any more
    sleeps = Sleeps()
    with pytest.raises(ChatError, match="cannot reach"):
        client(server, sleeps, base_url=root + "/v1", max_retries=2).complete(MESSAGES)
    assert len(sleeps) == 2


def test_a_client_error_is_not_retried(server):
    sleeps = Sleeps()
    server.responder = lambda body: Reply(status=400, body=b'{"error": {"message": "bad", "code": "json_validate_failed"}}')
    with pytest.raises(ChatError) as err:
        client(server, sleeps).complete(MESSAGES)
    assert (err.value.status, err.value.code, err.value.transient) == (400, "json_validate_failed", False)
    assert sleeps == [] and len(server.requests) == 1


def test_the_key_never_reaches_logs_errors_or_descriptions(server, caplog):
    # a server that echoes the request's key back in its error messages
    echo = json.dumps({"error": {"message": f"invalid key {KEY}"}}).encode()
    server.inject(Reply(status=500, body=echo), Reply(status=429, body=echo, headers={"Retry-After": "1"}))
    server.responder = lambda body: Reply(status=401, body=echo)
    chat = client(server, Sleeps())
    with caplog.at_level(logging.DEBUG), pytest.raises(ChatError) as err:
        chat.complete(MESSAGES)
    assert len(server.requests) == 3
    assert "invalid key ***" in str(err.value)
    assert KEY not in str(err.value) and KEY not in repr(err.value)
    assert caplog.records, "the retries are logged"
    for record in caplog.records:
        assert KEY not in record.getMessage()
    assert KEY not in repr(chat) and KEY not in repr(chat.config)
    assert KEY not in json.dumps(chat.config.describe())


def test_one_client_serves_several_threads(server):
    server.responder = lambda body: Reply(body["messages"][0]["content"])
    with client(server, Sleeps()) as chat:
        with ThreadPoolExecutor(max_workers=8) as pool:
            replies = list(pool.map(lambda n: chat.complete([{"role": "user", "content": f"json {n}"}]), range(24)))
    assert replies == [f"json {n}" for n in range(24)]


def test_groq_sdk_speaks_to_the_same_wire_format(server):
    sleeps = Sleeps()
    server.inject(Reply(status=429, body=b'{"error": {"message": "rate"}}', headers={"Retry-After": "3"}),
                  Reply(body=b"not json"), Reply('{"ok": 1}'))
    chat = client(server, sleeps, provider="groq", base_url=server.root)
    assert chat.complete(MESSAGES) == '{"ok": 1}'
    assert sleeps[0] == 3.0 and len(sleeps) == 2
    assert server.requests[-1]["path"] == "/openai/v1/chat/completions"
    assert server.requests[-1]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert server.requests[-1]["body"]["temperature"] == 0.0


def test_groq_timeout_and_client_errors(server):
    server.inject(Reply("late", delay_s=2.0))
    server.responder = lambda body: Reply(status=401, body=b'{"error": {"message": "bad key"}}')
    sleeps = Sleeps()
    with pytest.raises(ChatError) as err:
        client(server, sleeps, provider="groq", base_url=server.root, timeout_s=0.2).complete(MESSAGES)
    assert err.value.status == 401 and "bad key" in str(err.value)
    assert len(sleeps) == 1  # the timeout was retried, the 401 was not


def test_config_from_env_prefers_mortar_settings():
    config = ChatConfig.from_env({"MORTAR_LLM_BASE_URL": "http://llm:8000/v1", "OPENAI_BASE_URL": "http://other/v1",
                                  "MORTAR_LLM_API_KEY": "k1", "OPENAI_API_KEY": "k2", "MORTAR_LLM_MODEL": "m"})
    assert (config.provider, config.base_url, config.api_key, config.model) == ("openai", "http://llm:8000/v1", "k1", "m")


def test_config_from_env_falls_back_to_openai_settings():
    config = ChatConfig.from_env({"OPENAI_BASE_URL": "http://other/v1", "OPENAI_API_KEY": "k2",
                                  "MORTAR_LLM_MODEL": "m"}, timeout_s=5)
    assert (config.provider, config.base_url, config.api_key, config.timeout_s) == ("openai", "http://other/v1", "k2", 5)
    config = ChatConfig.from_env({"OPENAI_API_KEY": "k2", "MORTAR_LLM_MODEL": "m"})
    assert config.base_url == "https://api.openai.com/v1"
    local = ChatConfig.from_env({"MORTAR_LLM_BASE_URL": "http://localhost:8080/v1", "MORTAR_LLM_MODEL": "m"})
    assert local.api_key == ""  # a local server may need no key


def test_config_from_env_groq():
    config = ChatConfig.from_env({"GROQ_API_KEY": "gk", "MORTAR_LLM_MODEL": "llama"})
    assert (config.provider, config.api_key, config.base_url, config.model) == ("groq", "gk", None, "llama")
    explicit = ChatConfig.from_env({"MORTAR_LLM_PROVIDER": "groq", "GROQ_API_KEY": "gk", "OPENAI_API_KEY": "ok",
                                    "MORTAR_LLM_MODEL": "llama"})
    assert explicit.provider == "groq" and explicit.api_key == "gk"


@pytest.mark.parametrize("env, problem", [
    ({}, "no LLM endpoint configured"),
    ({"GROQ_API_KEY": "gk"}, "MORTAR_LLM_MODEL"),
    ({"MORTAR_LLM_PROVIDER": "groq", "MORTAR_LLM_MODEL": "m"}, "GROQ_API_KEY"),
    ({"MORTAR_LLM_PROVIDER": "bard", "MORTAR_LLM_MODEL": "m", "OPENAI_API_KEY": "k"}, "unknown LLM provider"),
])
def test_config_errors_say_what_to_set(env, problem):
    with pytest.raises(ChatConfigError, match=problem):
        ChatConfig.from_env(env)


def test_retry_after_accepts_seconds_and_http_dates():
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert parse_retry_after("2.5") == 2.5
    assert parse_retry_after("Wed, 01 Jan 2025 12:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Wed, 01 Jan 2025 11:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
