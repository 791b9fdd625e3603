"""A tiny OpenAI-compatible chat server for tests/test_confirm.py (never a result), standard library only.

It answers a question by the first keyword of ``--answers`` (a JSON object keyword → answer) that the question
contains, else "Unknown". A question with the ``--flaky`` keyword is answered ``--wrong`` the first time a
conversation is asked when the conversation has fewer than ``--history-below`` earlier turns, and rightly on every
later asking: a server whose answer to the same conversation changes (as prompt caching or batching can make it).
Every request body is appended to ``--log`` as one JSON line. It prints ``serving at URL`` once it listens.

    python tests/flaky_chat.py --answers '{"chew": "red shoes"}' --flaky chew --wrong "blue socks" --log requests.jsonl
"""

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler

from loopback import read_logged, send_json, serve  # a sibling module: the server runs as a script


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", required=True)
    parser.add_argument("--flaky", required=True)
    parser.add_argument("--wrong", required=True)
    parser.add_argument("--history-below", type=int, default=3)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    answers = json.loads(args.answers)
    asked: dict[str, int] = {}  # the conversation (its messages) → how many times it was asked
    lock = threading.Lock()

    def reply(messages: list[dict]) -> str:
        question = messages[-1]["content"].lower()
        earlier_turns = sum(m["role"] == "user" for m in messages) - 1
        with lock:
            key = json.dumps(messages, sort_keys=True)
            asked[key] = asked.get(key, 0) + 1
            first = asked[key] == 1
        if args.flaky in question and first and earlier_turns < args.history_below:
            return args.wrong
        return next((answer for word, answer in answers.items() if word in question), "Unknown")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = read_logged(self, args.log, lock)
            send_json(self, 200, {"choices": [{"index": 0, "message": {
                "role": "assistant", "content": reply(body["messages"])}}]})

        def log_message(self, *a):
            pass

    serve(Handler)


if __name__ == "__main__":
    main()
