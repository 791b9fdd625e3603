"""The HTTP SUT through the executor against a loopback chat-completions server that answers after a fixed
latency: answers per second at each number of lanes (requests in flight), against the ideal lanes ÷ latency.

The server runs in this process (127.0.0.1, an ephemeral port; no other network). The conversations are
the ORIG test cases of seeds made from the bundled sample: the first ``--rounds`` rounds of each sample
dialogue, the stories copied with a numbered note until there are ``--conversations`` conversations, so
every lane can be busy (a round is asked only once the round before it has its answer).

Baseline, in the same run: the same SUT asked the same number of conversations (the gold answers as
history, all independent) from a plain thread pool of as many threads as lanes — no prefix tree, no
store. Its share of the ideal is what this machine's CPU allows the client and the in-process server;
the executor's ratio to it is the executor's own cost.

    .venv/bin/python benchmarks/http_concurrency.py                     # 256 conversations, 200 ms, lanes 1 4 16 64
    .venv/bin/python benchmarks/http_concurrency.py --lanes 64 128 --latency-ms 100
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mortar.dataset import Seed, load_dataset  # noqa: E402
from mortar.execute import execute  # noqa: E402
from mortar.perturb import original_case  # noqa: E402
from mortar.sut import Conversation, Turn, make_sut  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample_coqa.json"
TARGET = 0.8  # share of the ideal throughput expected up to 64 lanes


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # every lane connects at once


class SlowChat:
    """A chat-completions server that answers every request after ``latency_s``; counts requests in flight."""

    def __init__(self, latency_s: float):
        self.latency_s = latency_s
        self.in_flight = self.max_in_flight = self.requests = 0
        self.first_arrival = self.last_reply = 0.0
        self.lock = threading.Lock()
        chat = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: one connection per client, as a serving engine has
            disable_nagle_algorithm = True  # headers and body go out at once (else a 40 ms delayed-ACK stall)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with chat.lock:
                    chat.first_arrival = chat.first_arrival or time.perf_counter()
                    chat.requests += 1
                    chat.in_flight += 1
                    chat.max_in_flight = max(chat.max_in_flight, chat.in_flight)
                try:
                    time.sleep(chat.latency_s)
                    reply = {"choices": [{"index": 0, "message": {
                        "role": "assistant", "content": f"answer to {body['messages'][-1]['content']}"}}]}
                    payload = json.dumps(reply).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                finally:
                    with chat.lock:
                        chat.in_flight -= 1
                        chat.last_reply = time.perf_counter()

            def log_message(self, *args):
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def reset(self) -> None:
        with self.lock:
            self.max_in_flight = self.requests = 0
            self.first_arrival = self.last_reply = 0.0

    def busy_s(self) -> float:
        """From the first request's arrival to the last reply."""
        return self.last_reply - self.first_arrival


def seeds_for(conversations: int, rounds: int) -> list[Seed]:
    """Seeds of ``rounds`` rounds each from the sample dialogues, ``conversations`` rounds in all."""
    sample = [s for s in load_dataset(SAMPLE).seeds if len(s.rounds) >= rounds]
    seeds = []
    for i in range(conversations // rounds):
        base = sample[i % len(sample)]
        copy = i // len(sample)
        story = base.story if copy == 0 else f"{base.story}\n(Copy {copy}.)"
        seeds.append(Seed(f"{base.id}-{copy}", story, base.rounds[:rounds], base.source))
    return seeds


def loopback_sut(server: SlowChat, lanes: int):
    return make_sut("openai:loopback", env={"MORTAR_OPENAI_BASE_URL": server.url}, lanes=lanes, timeout_s=30.0)


def measure(server: SlowChat, seeds: list[Seed], lanes: int) -> tuple[float, int, int]:
    """Seconds to answer every conversation with ``lanes`` requests in flight (fresh store: nothing cached,
    from the call to its return), the answers, and the most requests the server saw at once."""
    cases = [original_case(s) for s in seeds]
    sut = loopback_sut(server, lanes)
    server.reset()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        answers = execute(seeds, cases, sut, db=Path(tmp) / "bench.duckdb")
        seconds = time.perf_counter() - start
    sut.close()
    errors = [a.error for a in answers.values() if not a.ok]
    if errors:
        raise SystemExit(f"{len(errors)} rounds errored, e.g. {errors[0]}")
    return seconds, len(answers), server.max_in_flight


def baseline(server: SlowChat, seeds: list[Seed], lanes: int) -> float:
    """Seconds for a plain pool of ``lanes`` threads to have the SUT answer as many conversations."""
    conversations = [Conversation(s.story, tuple(Turn(r.question, r.answer or "") for r in s.rounds[:k]),
                                  s.rounds[k].question) for s in seeds for k in range(len(s.rounds))]
    sut = loopback_sut(server, lanes)
    with ThreadPoolExecutor(max_workers=lanes) as pool:
        start = time.perf_counter()
        list(pool.map(sut.answer, conversations))
        seconds = time.perf_counter() - start
    sut.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=4, help="rounds per seed dialogue (default 4)")
    parser.add_argument("--latency-ms", type=float, default=200.0, help="the server's latency (default 200)")
    parser.add_argument("--lanes", type=int, nargs="+", default=[1, 4, 16, 64])
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    latency = args.latency_ms / 1000
    seeds = seeds_for(args.conversations, args.rounds)
    print(f"{sum(len(s.rounds) for s in seeds)} conversations ({len(seeds)} seeds × {args.rounds} rounds), "
          f"server latency {args.latency_ms:g} ms")
    print("executor: the whole execute() call (store opened and read, answers, the last write); 'asking': from the "
          "first request to the last reply; alone: a plain thread pool, no executor (see the docstring)")
    print(f"{'lanes':>5} {'ideal/s':>8} | {'seconds':>8} {'answers/s':>10} {'of ideal':>9} {'asking':>7} "
          f"{'in flight':>9} | {'alone/s':>8} {'of ideal':>9}")
    worst = None
    with SlowChat(latency) as server:
        measure(server, seeds[:2], 2)  # warm-up: first imports and first opening of a store in this process
        for lanes in args.lanes:
            seconds, answered, in_flight = measure(server, seeds, lanes)
            asking = answered / server.busy_s()
            alone = answered / baseline(server, seeds, lanes)
            rate, ideal = answered / seconds, lanes / latency
            share = rate / ideal
            if lanes <= 64:
                worst = share if worst is None else min(worst, share)
            print(f"{lanes:>5} {ideal:>8.1f} | {seconds:>8.2f} {rate:>10.1f} {share:>9.0%} {asking / ideal:>7.0%} "
                  f"{in_flight:>9} | {alone:>8.1f} {alone / ideal:>9.0%}")
    if worst is not None:
        print(f"lowest share of the ideal up to 64 lanes: {worst:.0%} (target ≥ {TARGET:.0%}: "
              f"{'met' if worst >= TARGET else 'NOT met'})")


if __name__ == "__main__":
    main()
