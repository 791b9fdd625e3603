"""Runs a run's test cases against a SUT as one conversation-prefix tree, with a resumable answer store.

Decoding is greedy, so the answer to a conversation prefix is the same in every test case that shares
it: the test cases of a seed (ORIG included) form a tree whose root is the story and whose nodes are
questions, and each node is answered once. The SUT's lanes walk the tree depth-first: after answering
a node a lane goes on with one of that node's children, so a local model extends the lane's KV cache
by one turn instead of re-reading the story and the history; other children wait in a ready list
for free lanes. Memory stays bounded by one conversation per lane.

An HTTP SUT has no lane cache of its own; the service may have a prefix cache (vLLM's automatic prefix
caching, llama.cpp's prompt cache). Its lanes (concurrent requests) take the ready conversations in the
tree's depth-first order: seed by seed, and within a seed subtree by subtree, ORIG first. Conversations
that share the story and the history are thus sent close together, while the service still holds
that prefix.

Every answer is written to the store within a second of being produced, keyed by (SUT fingerprint,
conversation hash); a run that is killed loses only the answers of that last second, and running it again
reads the stored answers back instead of asking the SUT. A round the SUT could not answer is
stored with its error and asked again by the next run; the rounds after it in the same test case
are not asked at all.
"""

from __future__ import annotations

import heapq
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from mortar.caches import AnswerCache, NoCache
from mortar.dataset import Seed, TestCase
from mortar.sut.base import SUT, Completion, Conversation, Turn

log = logging.getLogger(__name__)

Progress = Callable[[int, int, dict], None]

# The store is opened for each write, never held for the whole execution: DuckDB lets one process hold
# the file, and the dashboard must read (progress, earlier runs) while the SUT works. Opening it costs
# ~35 ms, so answers are written at most once a second; a killed run loses at most that second's answers.
STORE_EVERY_S = 1.0


@dataclass(frozen=True)
class Answer:
    """The SUT's answer in one round of one test case; ``text`` is None when it errored."""

    text: str | None
    error: str | None = None
    cached: bool = False  # read back from the store (or produced for an identical conversation this run)
    seconds: float = 0.0  # how long the SUT took (as stored for a cached answer)
    conversation_hash: str | None = None  # None for a round that was never asked
    gini: float | None = None  # DeepGini impurity of the SUT's token choices (local SUTs; mortar.guide.gini)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(eq=False)
class _Node:
    """A conversation prefix: the story (root) or the story plus the questions on the path to this node."""

    seed: Seed
    story: str  # the grounding the SUT is given: the seed's story, or a test case's version of it
    parent: _Node | None = None
    question: str | None = None
    depth: int = 0
    children: dict[str, _Node] = field(default_factory=dict)
    rounds: list[tuple[str, int]] = field(default_factory=list)  # (test_case_id, position) asked here
    height: int = 0  # the longest path below this node, in rounds
    rank: int = 0  # place in the tree's depth-first order (all seeds), the order an HTTP SUT is asked in
    conversation: Conversation | None = None
    answer: Answer | None = None


def execute(seeds: Iterable[Seed], cases: Iterable[TestCase], sut: SUT, cache: AnswerCache | None = None,
            progress: Progress | None = None, sample: int = 0) -> dict[tuple[str, int], Answer]:
    """Answer every round of every test case; returns {(test_case_id, position): Answer}.

    ``cache`` keeps the answers (the store's ``StoreCache``; None: nothing is kept). ``progress(done, total,
    info)`` is called as answers come in; ``done``/``total`` count distinct conversations, ``info`` holds ``computed``,
    ``cached``, ``errors``, ``not_asked``, ``sut_calls``, ``test_rounds``, ``answers_per_second``, ``elapsed_s``.
    ``sample`` > 0 asks every conversation again as a sample of its own (its answers are stored apart): the
    noise floor of a SUT that does not answer the same conversation the same way every time.
    """
    return _Execution(seeds, cases, sut, cache or NoCache(), progress, sample).run()


def conversation_at(seed: Seed, case: TestCase, position: int, answers: dict) -> Conversation | None:
    """The conversation the executor asked at this round of a test case (the same hash): the case's story, its
    earlier questions with the SUT's answers to them, and the question. None when an earlier round got no answer."""
    history = []
    for p in range(1, position):
        earlier = answers.get((case.test_case_id, p))
        if earlier is None or earlier.text is None:
            return None
        history.append(Turn(case.question_at(seed, p), earlier.text))
    return Conversation(case.story_of(seed), tuple(history), case.question_at(seed, position))


def ask(sut: SUT, conversations: list[Conversation], done: Callable[[int, Completion], None]) -> None:
    """Ask each conversation once, as it is, on the SUT's lanes: no answer cache, no prefix tree (confirming
    detections). ``done(i, completion)`` is called as the answer to ``conversations[i]`` comes in."""
    todo = list(reversed(range(len(conversations))))
    session = sut.session()
    try:
        on_lane: dict[int, int] = {}
        while todo or on_lane:
            for lane in range(session.lanes):
                if lane not in on_lane and todo:
                    on_lane[lane] = todo.pop()
                    session.submit(lane, conversations[on_lane[lane]])
            for completion in session.wait():
                done(on_lane.pop(completion.lane), completion)
    finally:
        session.close()


def build_tree(seeds: Iterable[Seed], cases: Iterable[TestCase]) -> list[_Node]:
    """One root per seed and story; test cases asking the same questions in the same order share their nodes."""
    by_id = {s.id: s for s in seeds}
    roots: dict[tuple[str, str], _Node] = {}
    for case in cases:
        seed = by_id[case.seed_id]
        story = case.story_of(seed)
        node = roots.setdefault((seed.id, story), _Node(seed, story))
        for position in range(1, len(case.source_rounds) + 1):
            question = case.question_at(seed, position)
            if question not in node.children:
                node.children[question] = _Node(seed, story, node, question, node.depth + 1)
            node = node.children[question]
            node.rounds.append((case.test_case_id, position))
    for root in roots.values():
        _set_heights(root)
    return list(roots.values())


def _set_heights(root: _Node) -> None:
    order, stack = [], [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(node.children.values())
    for node in reversed(order):
        node.height = max((c.height + 1 for c in node.children.values()), default=0)


def _walk(node: _Node):
    """The nodes below ``node`` depth-first, children in the order the test cases added them."""
    stack = list(reversed(node.children.values()))
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children.values()))


class _Execution:
    def __init__(self, seeds, cases, sut: SUT, cache: AnswerCache, progress: Progress | None, sample: int = 0):
        self.sut, self.cache, self.progress, self.sample = sut, cache, progress, sample
        self.roots = build_tree(seeds, cases)
        self.nodes = [n for root in self.roots for n in _walk(root)]
        for rank, node in enumerate(self.nodes):
            node.rank = rank
        self.test_rounds = sum(len(n.rounds) for n in self.nodes)
        self.ready: list[_Node] = []
        self.queue: list[tuple[int, _Node]] = []  # ready nodes by rank (sessions without lane caches)
        self.known: dict[str, tuple[str, float, float | None]] = {}  # conversation hash -> (answer, seconds, gini)
        self.counts = dict(computed=0, cached=0, errors=0, not_asked=0, sut_calls=0)
        self.started = time.perf_counter()
        self.unstored: list[dict] = []  # answers given since the last write to the store
        self.stored_at = time.monotonic()

    def run(self) -> dict[tuple[str, int], Answer]:
        fingerprint = self.sut.fingerprint
        self.cache.write_sut(fingerprint, self.sut.config())
        stored = self.cache.read_answers(fingerprint)
        self.known = {h: (a, s or 0.0, g) for h, (a, s, g) in stored.items()}
        for root in self.roots:
            for child in root.children.values():
                self._reached(child)
        self._report()
        if self.ready:
            self._answer_ready(fingerprint)
        return {r: n.answer for n in self.nodes for r in n.rounds}

    def _answer_ready(self, fingerprint: str) -> None:
        session = self.sut.session()
        pick = self._pick if session.lane_cache else self._pick_in_tree_order
        # HTTP with several lanes: answers are stored on a thread of their own, so free lanes are refilled while
        # the store is written (opening it takes tens of milliseconds, long enough to idle dozens of lanes)
        writer = None if session.lane_cache or session.lanes == 1 else \
            _Writer(lambda rows, report: self._write(fingerprint, rows, report))
        try:
            on_lane: dict[int, _Node] = {}
            last: dict[int, _Node] = {}
            while self.ready or self.queue or on_lane:
                for lane in range(session.lanes):
                    if lane not in on_lane and (self.ready or self.queue):
                        node = pick(last.get(lane))
                        session.submit(lane, node.conversation)
                        on_lane[lane] = node
                        self.counts["sut_calls"] += 1
                for completion in session.wait():
                    node = last[completion.lane] = on_lane.pop(completion.lane)
                    self.unstored.append(self._answered(node, completion))
                if time.monotonic() - self.stored_at >= STORE_EVERY_S:
                    self._store(fingerprint, writer)
        finally:
            try:
                self._store(fingerprint, writer)
            finally:
                session.close()
                if writer is not None:
                    writer.close()  # waits until every answer is stored

    def _pick(self, last: _Node | None) -> _Node:
        """The ready node that shares most of ``last``'s conversation (its KV cache), then the deepest work.

        Ties go to the most recently readied node, which keeps each lane's walk depth-first.
        """
        ancestors = {}
        node = last
        while node is not None:
            ancestors[id(node)] = node.depth + 1  # the root (the story alone) is shared too
            node = node.parent
        best, best_score = 0, None
        for i in range(len(self.ready) - 1, -1, -1):
            node = self.ready[i].parent
            while node is not None and id(node) not in ancestors:
                node = node.parent
            score = (ancestors[id(node)] if node is not None else 0, self.ready[i].height)
            if best_score is None or score > best_score:
                best, best_score = i, score
        return self.ready.pop(best)

    def _pick_in_tree_order(self, last: _Node | None) -> _Node:
        """The ready node first in the tree's depth-first order (``last`` is no cache to extend here)."""
        for node in self.ready:
            heapq.heappush(self.queue, (node.rank, node))
        self.ready.clear()
        return heapq.heappop(self.queue)[1]

    def _reached(self, node: _Node) -> None:
        """``node``'s parent has its answer: answer ``node`` from what is known, or make it ready."""
        parent = node.parent
        history = () if parent.conversation is None else (
            *parent.conversation.history, Turn(parent.question, parent.answer.text))
        node.conversation = Conversation(node.story, history, node.question, self.sample)
        known = self.known.get(node.conversation.hash)
        if known is None:
            self.ready.append(node)
            return
        node.answer = Answer(known[0], cached=True, seconds=known[1], conversation_hash=node.conversation.hash,
                             gini=known[2])
        self.counts["cached"] += 1
        for child in node.children.values():
            self._reached(child)

    def _answered(self, node: _Node, completion: Completion) -> dict:
        conversation_hash = node.conversation.hash
        node.answer = Answer(completion.text, completion.error, False, completion.seconds, conversation_hash,
                             completion.gini)
        if completion.error is None:
            self.counts["computed"] += 1
            self.known[conversation_hash] = (completion.text, completion.seconds, completion.gini)
            for child in node.children.values():
                self._reached(child)
        else:
            self.counts["errors"] += 1
            for below in _walk(node):
                below.answer = Answer(None, f"not asked: round {node.depth} of this conversation got no answer")
                self.counts["not_asked"] += 1
        return dict(conversation_hash=conversation_hash, answer=completion.text, error=completion.error,
                    seconds=completion.seconds, created_at=datetime.now(timezone.utc).replace(tzinfo=None),
                    gini=completion.gini)

    def _store(self, fingerprint: str, writer: _Writer | None = None) -> None:
        """Write the answers not yet stored, then report progress (so whatever was reported is stored); with
        a ``writer``, on its thread."""
        rows, report = self.unstored, self._counted()
        self.unstored = []
        self.stored_at = time.monotonic()
        if writer is None:
            self._write(fingerprint, rows, report)
        else:
            writer.put(rows, report)

    def _write(self, fingerprint: str, rows: list[dict], report: tuple[int, int, dict]) -> None:
        if rows:
            self.cache.write_answers(fingerprint, rows)
        if self.progress is not None:
            self.progress(*report)

    def _report(self) -> None:
        if self.progress is not None:
            self.progress(*self._counted())

    def _counted(self) -> tuple[int, int, dict]:
        """The progress report now: (done, total, info)."""
        elapsed = time.perf_counter() - self.started
        c = self.counts
        info = dict(c, test_rounds=self.test_rounds, elapsed_s=elapsed,
                    answers_per_second=c["computed"] / elapsed if elapsed > 0 else 0.0)
        done = c["computed"] + c["cached"] + c["errors"] + c["not_asked"]
        log.debug("answers %d/%d %s", done, len(self.nodes), info)
        return done, len(self.nodes), info


class _Writer:
    """Runs ``write(rows, report)`` calls in order on a thread of its own; the first error is raised to the
    caller by the next ``put`` or by ``close``."""

    def __init__(self, write):
        self._write = write
        self._jobs: queue.Queue = queue.Queue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="answer-store", daemon=True)
        self._thread.start()

    def put(self, rows: list[dict], report: tuple) -> None:
        if self._error is not None:
            raise self._error
        self._jobs.put((rows, report))

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            if self._error is None:
                try:
                    self._write(*job)
                except BaseException as e:  # handed to the executor's thread
                    self._error = e

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error
