"""Answering at scale: an HTTP SUT with many requests in flight against loopback servers (Retry-After,
bounded retries, concurrency, the prefix tree's order), progress lines without a terminal, and the
--lanes / --max-new-tokens settings (lanes never changes the run id; another max-new-tokens does)."""

import email.utils
import io
import json
import re
import threading
import time
from collections import deque
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest

from mortar.store import StoreCache
from mortar import jobs
from mortar.cli import ProgressBar, main
from mortar.config import ConfigError, RunConfig, make_run_sut, validate
from mortar.dataset import Round, Seed
from mortar.formats import load_dataset
from mortar.execute import execute
from mortar.perturb import PerturbationSettings, original_case, perturbed_cases
from mortar.pipeline import run, run_id_for, run_key
from mortar.sut import DEFAULT_MAX_NEW_TOKENS, Conversation, SutError, ThreadedSession, make_sut
from tests.conftest import ROOT, SAMPLE
from tests.scripted_sut import ScriptedSUT


class Server:
    """A chat-completions server on 127.0.0.1 that answers after ``latency_s``.

    ``script`` gives the first responses as (status, headers, body text); then every request gets 200.
    It records each request's messages in arrival order and the most requests it held at once.
    """

    def __init__(self, script=(), latency_s=0.0):
        self.script, self.latency_s = deque(script), latency_s
        self.requests: list[list[dict]] = []
        self.arrived: list[float] = []
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body["messages"])
                    server.arrived.append(time.monotonic())
                    status, headers, text = server.script.popleft() if server.script else (200, {}, None)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    time.sleep(server.latency_s)
                    if text is None:
                        text = json.dumps({"choices": [{"message": {
                            "role": "assistant", "content": f"answer to {body['messages'][-1]['content']}"}}]})
                    payload = text.encode()
                    self.send_response(status)
                    for name, value in {"Content-Type": "application/json", **headers}.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.env = {"MORTAR_OPENAI_BASE_URL": f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"}

    def __enter__(self):
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def sut(self, lanes=None, **options):
        return make_sut("openai:loopback", env=self.env, lanes=lanes, **{"timeout_s": 10.0, **options})


CONVERSATION = Conversation("Ann had a red kite.", (), "What did Ann have?")
BUSY = json.dumps({"error": {"message": "slow down,\nplease\n  come back later"}})


def seeds_of(n_seeds, n_rounds):
    return [Seed(f"s{i}", f"Story number {i}. Ann had {i} kites.",
                 tuple(Round(k, f"Question {k} about story {i}?", None) for k in range(1, n_rounds + 1)))
            for i in range(n_seeds)]


# -- retries ----------------------------------------------------------------------------------------

def test_429_waits_as_long_as_retry_after_says_then_answers():
    with Server([(429, {"Retry-After": "1"}, BUSY)]) as server:
        answer = server.sut(backoff_s=0.01, max_retries=3).answer(CONVERSATION)
    assert answer == "answer to What did Ann have?"
    assert len(server.requests) == 2  # one retry, not the three allowed
    assert server.arrived[1] - server.arrived[0] >= 0.95  # the server's second, not the 10 ms backoff


def test_retry_after_as_an_http_date_is_honoured():
    when = email.utils.formatdate(time.time() + 2, usegmt=True)  # whole seconds: between 1 and 2 s from now
    with Server([(503, {"Retry-After": when}, BUSY)]) as server:
        assert server.sut(backoff_s=0.01).answer(CONVERSATION).startswith("answer to")
    assert len(server.requests) == 2
    assert server.arrived[1] - server.arrived[0] >= 0.9  # waited for the date, not the 10 ms backoff


def test_exhausted_retries_are_one_line_and_the_round_is_recorded_as_errored(db):
    script = [(503, {"Retry-After": "0"}, BUSY)] * 3
    with Server(script) as server:
        with pytest.raises(SutError) as raised:
            server.sut(max_retries=2, backoff_s=0.01).answer(CONVERSATION)
    message = str(raised.value)
    assert "\n" not in message and "HTTP 503" in message and "gave up after 3 attempts" in message
    assert "slow down, please come back later" in message
    assert len(server.requests) == 3  # bounded: the first try and two retries

    with Server(script * 3) as server:  # the default: at most 4 retries after the first attempt
        with pytest.raises(SutError):
            server.sut(backoff_s=0.01).answer(CONVERSATION)
    assert len(server.requests) == 5

    seed = seeds_of(1, 2)[0]
    with Server([(429, {}, BUSY)] * 2) as server:  # no Retry-After: exponential backoff with jitter
        answers = execute([seed], [original_case(seed)], server.sut(max_retries=1, backoff_s=0.01), StoreCache(db))
    case_id = original_case(seed).test_case_id
    first, second = answers[(case_id, 1)], answers[(case_id, 2)]
    assert first.text is None and "HTTP 429" in first.error and "\n" not in first.error
    assert second.text is None and second.error.startswith("not asked")


# -- concurrency and order ----------------------------------------------------------------------------

def test_lanes_requests_are_in_flight_at_once(db):
    """How many answers a second that makes: benchmarks/http_concurrency.py."""
    seeds = seeds_of(16, 2)
    with Server(latency_s=0.3) as server:
        answers = execute(seeds, [original_case(s) for s in seeds], server.sut(lanes=8), StoreCache(db))
    assert all(a.ok for a in answers.values()) and len(server.requests) == 32
    assert server.max_in_flight == 8  # the server saw 8 requests overlap: as many as the lanes, never more
    with Server(latency_s=0.05) as server:
        execute(seeds, [original_case(s) for s in seeds], server.sut(lanes=1), StoreCache(db.with_name("one.db")))
    assert server.max_in_flight == 1


def _tree_cases(seeds):
    settings = PerturbationSettings(perturbations=("DRS", "DRR", "DRD"))
    return [c for s in seeds for c in [original_case(s), *perturbed_cases(s, 7, settings)]]


def _submitted(monkeypatch) -> list[tuple]:
    """Records each conversation the executor submits, as its path in the prefix tree: the story, then the
    questions asked so far (arrival order at the server may differ by a thread switch)."""
    paths = []
    submit = ThreadedSession.submit

    def recording(session, lane, conversation):
        paths.append((conversation.story, *(t.question for t in conversation.history), conversation.question))
        submit(session, lane, conversation)

    monkeypatch.setattr(ThreadedSession, "submit", recording)
    return paths


def test_requests_follow_the_prefix_tree_depth_first(db, monkeypatch):
    seeds = seeds_of(3, 4)
    cases = _tree_cases(seeds)
    paths = _submitted(monkeypatch)
    with Server() as server:
        execute(seeds, cases, server.sut(lanes=1), StoreCache(db))
    assert len(paths) == len(set(paths)) == len(server.requests)  # each shared prefix asked once
    # depth first: the requests under any prefix (a story, a story and its first questions …) are adjacent
    for prefix in {p[:k] for p in paths for k in range(1, len(p) + 1)}:
        under = [i for i, p in enumerate(paths) if p[:len(prefix)] == prefix]
        assert under == list(range(under[0], under[-1] + 1)), prefix
    assert list(dict.fromkeys(p[0] for p in paths)) == [s.story for s in seeds]  # seed by seed


def test_with_many_lanes_stories_are_started_in_the_tree_order(db, monkeypatch):
    seeds = seeds_of(6, 4)
    paths = _submitted(monkeypatch)
    with Server(latency_s=0.02) as server:
        execute(seeds, _tree_cases(seeds), server.sut(lanes=4), StoreCache(db))
    assert server.max_in_flight == 4
    assert list(dict.fromkeys(p[0] for p in paths)) == [s.story for s in seeds]


# -- progress without a terminal -----------------------------------------------------------------------

LINE = re.compile(r"^\d\d:\d\d:\d\d (?P<stage>[^:]+): (?P<done>\d+)/(?P<total>\d+) (?P<unit>\w+) done \(\d+%\), "
                  r"(?P<rate>[\d.]+) (?P=unit)/s, ETA (?P<eta>[\d:]+|unknown)$")


def test_progress_lines_come_at_least_every_interval_even_without_reports():
    out = io.StringIO()  # not a terminal
    with ProgressBar(log_every_s=0.05, stream=out) as bar:
        bar(0, 10, {"stage": "answering", "answers_per_second": 0.0})
        time.sleep(0.3)  # nothing reported meanwhile: the line is repeated
        bar(4, 10, {"stage": "answering", "answers_per_second": 2.0})
        time.sleep(0.12)
    lines = out.getvalue().splitlines()
    assert all(LINE.match(line) for line in lines), lines
    assert sum("answering: 0/10 answers" in line for line in lines) >= 3
    assert lines[-1].endswith("answering: 4/10 answers done (40%), 2.00 answers/s, ETA 0:03")
    assert "\r" not in out.getvalue()


def test_mortar_run_without_a_terminal_logs_progress_and_records_its_lanes(tmp_path, capsys, monkeypatch):
    import mortar.cli
    import mortar.pipeline
    from mortar import store

    def scripted(config):
        sut = ScriptedSUT(delay_s=0.05)
        sut.lanes = config.lanes
        return sut

    monkeypatch.setattr(mortar.cli, "PROGRESS_LOG_EVERY_S", 0.2)
    monkeypatch.setattr(mortar.pipeline, "make_run_sut", scripted)
    db = tmp_path / "p.duckdb"
    assert main(["run", "--dataset", str(SAMPLE), "--limit", "1", "--perturbations", "DRS", "DRD", "--lanes", "2",
                 "--db", str(db)]) == 0
    err = capsys.readouterr().err
    lines = [m for m in map(LINE.match, err.splitlines()) if m]
    answering = [m for m in lines if m["stage"] == "answering"]
    assert len(answering) >= 3, err  # its start, at least one line per interval, its end
    assert {m["unit"] for m in answering} == {"answers"}
    last = answering[-1]
    assert last["done"] == last["total"] and int(last["total"]) > 10
    assert any(float(m["rate"]) > 0 and m["eta"] != "unknown" for m in answering)
    assert {"knowledge graph", "judging"} <= {m["stage"] for m in lines}
    assert not re.search(r"\[[#.]{30}\]", err)  # no progress bar
    # the lanes are kept with the run, and the same run without them is the same run (it resumes)
    with store.connect(db, read_only=True) as con:
        run_id = store.resolve_run_id(con, "latest")
        config = RunConfig.from_json(store.stored_config(con, run_id).run_config)
    assert config.lanes == 2
    assert run(None, replace(config, lanes=None), db=db, sut=ScriptedSUT()).run_id == run_id


# -- the settings -----------------------------------------------------------------------------------

def _run_id(config, monkeypatch):
    monkeypatch.setenv("MORTAR_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never contacted
    extractor = SimpleNamespace(backend="spacy", model="en_core_web_sm")
    dataset = load_dataset(SAMPLE)
    return run_id_for("run", dataset, config.run_seed, run_key(config, extractor, make_run_sut(config), 0.5))


def test_lanes_leave_the_run_id_alone_and_another_max_new_tokens_changes_it(monkeypatch):
    base = RunConfig(dataset=str(SAMPLE), sut="openai:m")
    same = _run_id(base, monkeypatch)
    assert _run_id(RunConfig(dataset=str(SAMPLE), sut="openai:m", lanes=64), monkeypatch) == same
    assert _run_id(RunConfig(dataset=str(SAMPLE), sut="openai:m", max_new_tokens=DEFAULT_MAX_NEW_TOKENS),
                   monkeypatch) == same
    assert _run_id(RunConfig(dataset=str(SAMPLE), sut="openai:m", max_new_tokens=16), monkeypatch) != same
    # the default settings make exactly the SUT (and so the run key) runs had before they were settings
    extractor = SimpleNamespace(backend="spacy", model="en_core_web_sm")
    assert run_key(base, extractor, make_run_sut(base), 0.5) == run_key(base, extractor, make_sut("openai:m"), 0.5)
    sut = make_run_sut(RunConfig(sut="openai:m", lanes=64, max_new_tokens=16))
    assert sut.lanes == 64 and sut.settings.max_new_tokens == 16


def test_bad_lanes_and_max_new_tokens_are_one_line_input_errors(tmp_path, capsys):
    with pytest.raises(ConfigError) as raised:
        validate(RunConfig(dataset=str(SAMPLE), lanes=0, max_new_tokens=0), check_services=False)
    message = str(raised.value)
    assert "\n" not in message and "lanes 0" in message and "max new tokens 0" in message
    db = tmp_path / "x.duckdb"
    assert main(["run", "--dataset", str(SAMPLE), "--lanes", "0", "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "mortar: error: lanes 0 is not a positive integer"
    assert main(["run", "--dataset", str(SAMPLE), "--max-new-tokens", "-3", "--db", str(db)]) == 2
    assert capsys.readouterr().err.strip() == "mortar: error: max new tokens -3 is not a positive integer"
    assert not db.exists()


def test_launch_page_hands_lanes_and_max_new_tokens_to_the_run(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("MORTAR_DB", str(tmp_path / "launch.duckdb"))
    started = []
    monkeypatch.setattr(jobs, "start", lambda config, db=None: started.append(config) or "job-1")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.run()
    at.switch_page("pages/launch.py").run()
    next(w for w in at.number_input if w.label == "Lanes").set_value(64)
    next(w for w in at.number_input if w.label == "Max new tokens").set_value(32)
    next(b for b in at.button if b.label == "Start run").click().run()
    assert not at.exception and not at.error
    (config,) = started
    assert config.lanes == 64 and config.max_new_tokens == 32
    assert RunConfig.from_json(config.to_json()) == config
