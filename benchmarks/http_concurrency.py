"""The HTTP SUT through the executor against a loopback chat-completions server that answers after a fixed
latency: answers per second at each number of lanes (requests in flight), against the ideal lanes ÷ latency.

The server runs in a process of its own (127.0.0.1, an ephemeral port; no other network). The conversations are
the ORIG test cases of seeds made from the bundled sample: the first ``--rounds`` rounds of each sample
dialogue, the stories copied with a numbered note until there are enough conversations for every lane count
to reach its steady state (``--conversations``, and ``--waves`` per lane: a run of thousands of rounds spends
almost all its time there), so every lane can be busy (a round is asked only once the round before it has
its answer). The store is created before the clock starts, as `mortar run` leaves it before answering.

Baseline, in the same run: the same SUT asked the same number of conversations (the gold answers as
history, all independent) from a plain thread pool of as many threads as lanes — no prefix tree, no
store. Its share of the ideal is what this machine's CPU allows the client and the server;
the executor's ratio to it is the executor's own cost.

    .venv/bin/python benchmarks/http_concurrency.py                     # 200 ms, lanes 1 4 16 64
    .venv/bin/python benchmarks/http_concurrency.py --lanes 64 128 --latency-ms 100
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mortar import store  # noqa: E402
from mortar.dataset import Seed  # noqa: E402
from mortar.formats import load_dataset  # noqa: E402
from mortar.execute import execute  # noqa: E402
from mortar.perturb import original_case  # noqa: E402
from mortar.store import StoreCache  # noqa: E402
from mortar.sut import Conversation, Turn, make_sut  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "sample_coqa.json"
TARGET = 0.8  # share of the ideal throughput expected up to 64 lanes


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # every lane connects at once


class SlowChat:
    """A chat-completions server that answers every request after ``latency_s``; counts requests in flight.

    It runs in a process of its own, as a serving engine does: in the client's process it would compete with
    the client for the interpreter lock, and the benchmark would measure that contention instead of the client.
    ``GET /stats`` reports the counts, ``POST /reset`` clears them."""

    def __init__(self, latency_s: float):
        self.latency_s = latency_s
        self.url = ""
        self._process = None

    def __enter__(self):
        context = multiprocessing.get_context("fork")  # the server is plain standard library: nothing to re-import
        ready = context.Queue()
        self._process = context.Process(target=_serve, args=(self.latency_s, ready), daemon=True)
        self._process.start()
        self.url = f"http://127.0.0.1:{ready.get(timeout=30)}/v1"
        return self

    def __exit__(self, *exc):
        self._process.terminate()
        self._process.join()

    def _call(self, method: str, path: str) -> dict:
        request = urllib.request.Request(f"{self.url}/{path}", method=method, data=b"" if method == "POST" else None)
        with urllib.request.urlopen(request, timeout=30) as reply:
            return json.loads(reply.read())

    def reset(self) -> None:
        self._call("POST", "reset")

    def stats(self) -> dict:
        """requests, max_in_flight, and busy_s: from the first request's arrival to the last reply."""
        return self._call("GET", "stats")


def _serve(latency_s: float, ready) -> None:
    counts = {"requests": 0, "in_flight": 0, "max_in_flight": 0, "first_arrival": 0.0, "last_reply": 0.0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: one connection per client, as a serving engine has
        disable_nagle_algorithm = True  # headers and body go out at once (else a 40 ms delayed-ACK stall)

        def _send(self, doc: dict) -> None:
            payload = json.dumps(doc).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self):
            with lock:
                self._send({"requests": counts["requests"], "max_in_flight": counts["max_in_flight"],
                            "busy_s": counts["last_reply"] - counts["first_arrival"]})

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"] or 0))
            if self.path.endswith("/reset"):
                with lock:
                    counts.update(requests=0, max_in_flight=0, first_arrival=0.0, last_reply=0.0)
                return self._send({})
            question = json.loads(body)["messages"][-1]["content"]
            with lock:
                counts["first_arrival"] = counts["first_arrival"] or time.perf_counter()
                counts["requests"] += 1
                counts["in_flight"] += 1
                counts["max_in_flight"] = max(counts["max_in_flight"], counts["in_flight"])
            try:
                time.sleep(latency_s)
                self._send({"choices": [{"index": 0, "message": {"role": "assistant",
                                                                 "content": f"answer to {question}"}}]})
            finally:
                with lock:
                    counts["in_flight"] -= 1
                    counts["last_reply"] = time.perf_counter()

        def log_message(self, *args):
            pass

    server = _Server(("127.0.0.1", 0), Handler)
    ready.put(server.server_address[1])
    server.serve_forever()


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


def measure(server: SlowChat, seeds: list[Seed], lanes: int) -> tuple[float, int, int, float]:
    """Seconds to answer every conversation with ``lanes`` requests in flight (a new store: nothing cached,
    from the call to its return), the answers, the most requests the server saw at once, and the seconds from
    the first request's arrival to the last reply."""
    cases = [original_case(s) for s in seeds]
    sut = loopback_sut(server, lanes)
    server.reset()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        with store.connect(db):  # as `mortar run` leaves the store before answering: created, no answer in it
            pass
        start = time.perf_counter()
        answers = execute(seeds, cases, sut, StoreCache(db))
        seconds = time.perf_counter() - start
    sut.close()
    errors = [a.error for a in answers.values() if not a.ok]
    if errors:
        raise SystemExit(f"{len(errors)} rounds errored, e.g. {errors[0]}")
    stats = server.stats()
    return seconds, len(answers), stats["max_in_flight"], stats["busy_s"]


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
    parser.add_argument("--conversations", type=int, default=256,
                        help="conversations per lane count, at least (default 256; see --waves)")
    parser.add_argument("--waves", type=int, default=16,
                        help="… and at least this many per lane (default 16), so every lane count is measured at "
                             "its steady state, as in a run of thousands of rounds, not on its start and end")
    parser.add_argument("--rounds", type=int, default=4, help="rounds per seed dialogue (default 4)")
    parser.add_argument("--latency-ms", type=float, default=200.0, help="the server's latency (default 200)")
    parser.add_argument("--lanes", type=int, nargs="+", default=[1, 4, 16, 64])
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    latency = args.latency_ms / 1000
    print(f"seed dialogues of {args.rounds} rounds, server latency {args.latency_ms:g} ms; conversations per lane "
          f"count: at least {args.conversations} and {args.waves} per lane")
    print("executor: the whole execute() call (store opened and read, answers, the last write); 'asking': from the "
          "first request to the last reply; alone: a plain thread pool, no executor (see the docstring)")
    print(f"{'lanes':>5} {'convs':>6} {'ideal/s':>8} | {'seconds':>8} {'answers/s':>10} {'of ideal':>9} {'asking':>7} "
          f"{'in flight':>9} | {'alone/s':>8} {'of ideal':>9} {'executor ÷ alone':>16}")
    worst = None
    with SlowChat(latency) as server:
        measure(server, seeds_for(8, args.rounds), 2)  # warm-up: first imports and first store of this process
        for lanes in args.lanes:
            seeds = seeds_for(max(args.conversations, args.waves * lanes), args.rounds)
            seconds, answered, in_flight, busy_s = measure(server, seeds, lanes)
            asking = answered / busy_s
            alone = answered / baseline(server, seeds, lanes)
            rate, ideal = answered / seconds, lanes / latency
            share = rate / ideal
            if lanes <= 64:
                worst = share if worst is None else min(worst, share)
            print(f"{lanes:>5} {answered:>6} {ideal:>8.1f} | {seconds:>8.2f} {rate:>10.1f} {share:>9.0%} "
                  f"{asking / ideal:>7.0%} {in_flight:>9} | {alone:>8.1f} {alone / ideal:>9.0%} {rate / alone:>16.2f}")
    if worst is not None:
        print(f"lowest share of the ideal up to 64 lanes: {worst:.0%} (target ≥ {TARGET:.0%}: "
              f"{'met' if worst >= TARGET else 'NOT met'})")


if __name__ == "__main__":
    main()
