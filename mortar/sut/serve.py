"""`mortar serve`: a bundled local model behind an OpenAI-compatible chat-completions endpoint.

For a study of endpoints without a GPU server at hand, or to hand the bundled models to another tool. It serves
``POST /v1/chat/completions`` (greedy: the request's temperature must be 0 or absent; ``max_tokens`` is honoured)
and ``GET /v1/models``, one request at a time, on loopback unless told otherwise. The chat's system message is
passed through as it is, so a conversation asked over HTTP gets the answer the same model gives in process.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mortar.sut.base import DEFAULT_MAX_NEW_TOKENS, STORY, Conversation, SutError, SutSettings, Turn


def conversation_of(messages: list[dict]) -> Conversation:
    """The conversation of a chat request: the system message as the grounding, user/assistant pairs as the history,
    the last user message as the question (ValueError when the messages are not in that shape)."""
    if not messages or messages[-1].get("role") != "user":
        raise ValueError("the last message must be the user's")
    system = messages[0]["content"] if messages[0].get("role") == "system" else ""
    turns = messages[1:-1] if messages[0].get("role") == "system" else messages[:-1]
    if len(turns) % 2 or any(m.get("role") != role for m, role in zip(turns, ["user", "assistant"] * len(turns))):
        raise ValueError("the history must alternate user and assistant messages")
    history = tuple(Turn(q["content"], a["content"]) for q, a in zip(turns[::2], turns[1::2]))
    return Conversation(system, history, messages[-1]["content"])


class ModelServer:
    """One local model answering chat requests; a SUT per ``max_tokens`` asked, all on the same loaded weights."""

    def __init__(self, spec: str, make_sut):
        self.spec, self.make_sut = spec, make_sut
        self.suts: dict[int, object] = {}
        self.lock = threading.Lock()
        self.name = make_sut(spec).model

    def complete(self, body: dict) -> tuple[int, dict]:
        if body.get("temperature") not in (None, 0, 0.0):
            return 400, _error("this server decodes greedily: send temperature 0")
        try:
            conversation = conversation_of(body.get("messages") or [])
            max_tokens = int(body.get("max_tokens") or DEFAULT_MAX_NEW_TOKENS)
        except (ValueError, KeyError, TypeError) as e:
            return 400, _error(str(e))
        with self.lock:  # one request at a time: greedy answers equal the in-process ones
            sut = self.suts.get(max_tokens)
            if sut is None:
                sut = self.suts[max_tokens] = self.make_sut(self.spec, SutSettings(STORY, max_tokens))
            try:
                text = sut.answer(conversation)
            except SutError as e:
                return 500, _error(str(e))
        return 200, {"id": f"chatcmpl-{time.time_ns()}", "object": "chat.completion", "created": int(time.time()),
                     "model": self.name, "choices": [{"index": 0, "finish_reason": "stop",
                                                      "message": {"role": "assistant", "content": text}}]}


def _error(message: str) -> dict:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def send_json(handler: BaseHTTPRequestHandler, status: int, doc: dict) -> None:
    """Answer a request with ``doc`` as JSON."""
    data = json.dumps(doc).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def serve(spec: str, make_sut, host: str = "127.0.0.1", port: int = 8000, ready=None) -> None:
    """Serve the model until interrupted; ``ready(url)`` is called once it listens."""
    model = ModelServer(spec, make_sut)

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, doc: dict) -> None:
            send_json(self, status, doc)

        def do_GET(self):
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {"object": "list", "data": [{"id": model.name, "object": "model"}]})
            else:
                self._send(404, _error(f"no route {self.path}"))

        def do_POST(self):
            if not self.path.rstrip("/").endswith("/chat/completions"):
                return self._send(404, _error(f"no route {self.path}"))
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            except json.JSONDecodeError as e:
                return self._send(400, _error(f"not JSON: {e}"))
            self._send(*model.complete(body))

        def log_message(self, *args):  # one line per request would drown the answers' progress
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    if ready:
        ready(f"http://{host}:{server.server_address[1]}/v1")
    try:
        server.serve_forever()
    finally:
        server.server_close()
