"""A tiny OpenAI-compatible chat server that answers with tool calls, for tests/test_nlu_tools.py (never a result),
standard library only.

Given a request's ``tools``, it calls the tool that ``--script`` (a JSON file: utterance → [tool, arguments]) names
for the last user message; else the tool whose name shares the most words with the message (the first on a tie),
with no arguments. The reply is ``choices[0].message.tool_calls`` with the arguments as a JSON string, as the
OpenAI API sends them. The model picks a misbehaving server instead:

- ``plain-chat``: answers in text, with no tool call;
- ``unknown-tool``: calls a tool it was not given;
- ``bad-arguments``: gives arguments that are not JSON.

Every request body is appended to ``--log`` as one JSON line. It prints ``serving at URL`` once it listens.

    python tests/toolcall_chat.py --log requests.jsonl --script script.json
"""

import argparse
import json
import re
import threading
from http.server import BaseHTTPRequestHandler

from loopback import read_logged, send_json, serve  # a sibling module: the server runs as a script


def name_words(name: str) -> set[str]:
    return set(re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").lower().split())


def choose(tools: list[dict], utterance: str, script: dict) -> tuple[str, dict]:
    if utterance in script:
        tool, arguments = script[utterance]
        return tool, arguments
    words = set(utterance.lower().split())
    names = [tool["function"]["name"] for tool in tools]
    return max(names, key=lambda name: len(name_words(name) & words)), {}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--script", help="a JSON file: utterance → [tool, arguments]")
    args = parser.parse_args()
    script = json.loads(open(args.script, encoding="utf-8").read()) if args.script else {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = read_logged(self, args.log, lock)
            if self.path != "/v1/chat/completions":
                return send_json(self, 404, {"error": {"message": f"no route {self.path}"}})
            utterance = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
            message = {"role": "assistant", "content": None}
            if body["model"] == "plain-chat" or not body.get("tools"):
                message["content"] = "Sure, I can help with that."
            else:
                tool, arguments = choose(body["tools"], utterance, script)
                arguments = json.dumps(arguments)
                if body["model"] == "unknown-tool":
                    tool = "OrderPizza"
                elif body["model"] == "bad-arguments":
                    arguments = arguments[:-1]  # cut short: not JSON
                message["tool_calls"] = [{"id": "call_1", "type": "function",
                                          "function": {"name": tool, "arguments": arguments}}]
            send_json(self, 200, {"id": "chatcmpl-stub", "object": "chat.completion", "model": body["model"],
                                  "choices": [{"index": 0, "message": message,
                                               "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}]})

        def log_message(self, *a):
            pass

    serve(Handler)


if __name__ == "__main__":
    main()
