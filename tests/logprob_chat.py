"""A tiny OpenAI-compatible chat server that returns vLLM's prompt log-probabilities, for
tests/test_selection_http.py (never a result), standard library only.

A prompt is the whitespace words of the rendered messages: each message is ``<role>``, its words, ``</s>``; a final
message continued (``continue_final_message``) is left open, and ``add_generation_prompt`` (on unless the request
says otherwise) ends the prompt with ``<assistant>``. A token's id is its word's CRC-32; its log-probability is -0.5
when the word occurs in the system prompt, else -3.0 (the first token has none, as in vLLM). The model picks the
server's behaviour:

- ``vllm-chat``: ``prompt_logprobs`` as vLLM with recent transformers returns them;
- ``old-template-chat``: the same, rendering an empty continued message as older transformers did (closed: the
  cut is made after the message's text, and an empty text is found at the very end);
- ``plain-chat``: a server that ignores the field and returns no ``prompt_logprobs``;
- ``smollm2``: the real SmolLM2 (loaded on first use): its chat template renders the messages as vLLM has
  transformers render them, and the log-probabilities are the model's.

Every request body is appended to ``--log`` as one JSON line. It prints ``serving at URL`` once it listens.

    python tests/logprob_chat.py --log requests.jsonl
"""

import argparse
import functools
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from loopback import read_logged, send_json, serve  # a sibling module: the server runs as a script

MODELS = ("vllm-chat", "old-template-chat", "plain-chat", "smollm2")
IN_SYSTEM, ELSEWHERE = -0.5, -3.0


def prompt_words(body: dict) -> list[str]:
    messages = body["messages"]
    continued = body.get("continue_final_message", False)
    words = []
    for k, message in enumerate(messages):
        words += [f"<{message['role']}>", *message["content"].split()]
        last_left_open = continued and k == len(messages) - 1
        if last_left_open and body["model"] == "old-template-chat" and not message["content"]:
            last_left_open = False
        if not last_left_open:
            words.append("</s>")
    if body.get("add_generation_prompt", True):
        words.append("<assistant>")
    return words


def prompt_logprobs(body: dict) -> list[dict | None]:
    system = set(body["messages"][0]["content"].split()) if body["messages"][0]["role"] == "system" else set()
    entries = [None]
    for word in prompt_words(body)[1:]:
        logprob = IN_SYSTEM if word in system else ELSEWHERE
        entries.append({str(zlib.crc32(word.encode())): {"logprob": logprob, "rank": 1 if word in system else 9,
                                                         "decoded_token": word}})
    return entries


@functools.cache
def smollm2():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from mortar.sut import make_sut

    return make_sut("smollm2").loaded  # (model, tokenizer)


def model_prompt_logprobs(body: dict) -> list[dict | None]:
    import torch

    model, tokenizer = smollm2()
    ids = list(tokenizer.apply_chat_template(
        body["messages"], tokenize=True, return_dict=False, add_generation_prompt=body.get("add_generation_prompt", True),
        continue_final_message=body.get("continue_final_message", False)))
    with torch.inference_mode():
        logprobs = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0].float(), dim=-1)
    entries = [None]
    for i in range(1, len(ids)):  # the logits at position i - 1 predict token i
        logprob = logprobs[i - 1, ids[i]].item()
        entries.append({str(ids[i]): {"logprob": logprob, "rank": int((logprobs[i - 1] > logprob).sum()) + 1,
                                      "decoded_token": tokenizer.decode([ids[i]])}})
    return entries


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            if self.path.rstrip("/") != "/v1/models":
                return self.send(404, {"error": {"message": f"no route {self.path}"}})
            self.send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in MODELS]})

        def do_POST(self):
            body = read_logged(self, args.log, lock)
            if self.path != "/v1/chat/completions":
                return self.send(404, {"error": {"message": f"no route {self.path}"}})
            if body.get("model") not in MODELS:
                return self.send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist."}})
            if body.get("continue_final_message") and body.get("add_generation_prompt", True):
                return self.send(400, {"error": {"message": "Cannot set both `continue_final_message` and "
                                                            "`add_generation_prompt` to True."}})
            reply = {"id": "chatcmpl-stub", "object": "chat.completion", "model": body["model"],
                     "choices": [{"index": 0, "finish_reason": "length",
                                  "message": {"role": "assistant", "content": "Hello"}}]}
            if "prompt_logprobs" in body and body["model"] == "smollm2":
                with lock:  # one forward pass at a time
                    reply["prompt_logprobs"] = model_prompt_logprobs(body)
            elif "prompt_logprobs" in body and body["model"] != "plain-chat":
                reply["prompt_logprobs"] = prompt_logprobs(body)
            self.send(200, reply)

        def send(self, status: int, doc: dict):
            send_json(self, status, doc)

        def log_message(self, *a):
            pass

    serve(Handler)


if __name__ == "__main__":
    main()
