"""Oracles, registered by name behind one interface: does this answer match that one?

Every oracle takes its arguments in one order, ``(question, reference, candidate)``, and optionally the
``story`` the question is about (an oracle may read it, the ``answer`` oracle does: "the younger brother"
is the gold "Tom" when the story says so):

- ``similarity(question, reference, candidate, story=None)`` → a score in [0, 1], which the relations
  compare with the run's threshold ε;
- ``agreement(question, a, b, story=None)`` → symmetric: do two system answers give the same answer
  (MR3/MR4 compare two outputs, neither of them a reference);
- ``compare(question, a, b, story=None)`` → the same as an ``Agreement``: the score, and ``no_answer`` when
  neither answer answers the question (the ``answer`` oracle reads that, ``mortar.oracle.agreement``; the
  paper's ``cosine`` and ``mss`` stay pure scores and never say so);
- ``judge_many([(question, reference, candidate[, story]), …], threshold)`` → ``Verdict`` with a reason;
- ``for_story(story)`` → the same oracle with the story bound (what the relations hand to a seed's checks).

Registered oracles:
- ``cosine``: cosine of all-MiniLM-L6-v2 sentence embeddings (the paper's oracle, ε = 0.6);
- ``mss``: (SS² + EM² + F1²) / (SS + EM + F1) with SS the cosine and SQuAD-style EM and F1, which
  penalises wordy answers (MORTAR journal version, ε = 0.6);
- ``answer`` (default): reads what the answer says before comparing (``mortar.oracle.answer``), 0.5.
Embeddings are computed in batches, once per distinct text.
"""

from __future__ import annotations

from dataclasses import dataclass

from mortar.oracle.agreement import Agreement, AgreementJudge
from mortar.oracle.answer import AnswerJudge
from mortar.oracle.embeddings import Embeddings, embedding_model
from mortar.oracle.squad import exact_match, f1_score, mss, normalize_answer

__all__ = ["ORACLES", "DEFAULT_ORACLE", "Oracle", "Verdict", "Agreement", "Embeddings", "embedding_model",
           "default_threshold", "register_oracle", "exact_match", "f1_score", "mss", "normalize_answer"]


@dataclass(frozen=True)
class Verdict:
    """An oracle's decision on one answer: the score in [0, 1], pass (score ≥ threshold), and why."""

    score: float
    passed: bool
    reason: str


class BaseOracle:
    """The declared interface; subclasses give ``name``, ``default_threshold`` and ``score``."""

    name = ""
    default_threshold = 0.6

    def __init__(self, embeddings: Embeddings | None = None, threshold: float | None = None):
        self.embeddings = embeddings or Embeddings()
        self.threshold = self.default_threshold if threshold is None else threshold

    def prepare(self, texts, questions=()) -> None:
        """Read and embed all texts that will be compared, in batches, before the comparisons."""
        self.embeddings.add(list(texts))

    def similarity(self, question: str | None, reference: str, candidate: str, story: str | None = None) -> float:
        return self.score(question, reference, candidate, story)[0]

    def agreement(self, question: str | None, a: str, b: str, story: str | None = None) -> float:
        return self.similarity(question, b, a, story)

    def compare(self, question: str | None, a: str, b: str, story: str | None = None) -> Agreement:
        """Two system answers: a pure score here (the paper's oracles read no answer for what it says)."""
        s = self.agreement(question, a, b, story)
        return Agreement(s, False, f"{self.name} similarity {s:.2f}")

    def score(self, question: str | None, reference: str, candidate: str,
              story: str | None = None) -> tuple[float, str]:
        raise NotImplementedError

    def for_story(self, story: str | None) -> "StoryOracle":
        return StoryOracle(self, story)

    def judge(self, question: str | None, reference: str, candidate: str, threshold: float | None = None) -> Verdict:
        return self.judge_many([(question, reference, candidate)], threshold)[0]

    def judge_many(self, triples, threshold: float | None = None) -> list[Verdict]:
        """Verdicts on (question, reference, candidate[, story]) tuples, read and embedded in one batch."""
        threshold = self.threshold if threshold is None else threshold
        verdicts = []
        for s, reason in self.score_many(triples):
            s = float(min(1.0, max(0.0, s)))
            passed = s >= threshold
            if passed != (s >= self.default_threshold):
                reason = f"{reason}; score {s:.2f} {'≥' if passed else '<'} threshold {threshold:g}"
            verdicts.append(Verdict(s, passed, reason))
        return verdicts

    def score_many(self, triples) -> list[tuple[float, str]]:
        triples = list(triples)
        self.embeddings.add({t for _, r, c, *_ in triples for t in (r, c)})
        return [self.score(*t) for t in triples]


class StoryOracle:
    """An oracle with the story of the seed being judged bound to every comparison."""

    def __init__(self, oracle: BaseOracle, story: str | None):
        self.oracle, self.story = oracle, story
        self.threshold = oracle.threshold

    @property
    def embeddings(self):
        return self.oracle.embeddings

    def prepare(self, texts, questions=()) -> None:
        self.oracle.prepare(texts, questions)

    def similarity(self, question, reference, candidate) -> float:
        return self.oracle.similarity(question, reference, candidate, self.story)

    def agreement(self, question, a, b) -> float:
        return self.oracle.agreement(question, a, b, self.story)

    def compare(self, question, a, b) -> Agreement:
        return self.oracle.compare(question, a, b, self.story)


ORACLES: dict[str, type[BaseOracle]] = {}


def register_oracle(cls: type[BaseOracle]) -> type[BaseOracle]:
    if cls.name in ORACLES:
        raise ValueError(f"an oracle named {cls.name!r} is already registered")
    ORACLES[cls.name] = cls
    return cls


@register_oracle
class CosineOracle(BaseOracle):
    name = "cosine"

    def score(self, question, reference, candidate, story=None):
        s = self.embeddings.cosine(candidate, reference)
        return s, f"cosine similarity {s:.2f}"


@register_oracle
class MssOracle(BaseOracle):
    name = "mss"

    def score(self, question, reference, candidate, story=None):
        # symmetric EM and F1, so MR3/MR4 comparisons between two outputs do not depend on their order
        s = mss(self.embeddings.cosine(candidate, reference), exact_match(candidate, reference),
                f1_score(candidate, reference))
        return s, f"mss similarity {s:.2f}"


@register_oracle
class AnswerOracle(BaseOracle):
    name = "answer"
    default_threshold = 0.5

    def __init__(self, embeddings: Embeddings | None = None, threshold: float | None = None):
        super().__init__(embeddings, threshold)
        self._answer = AnswerJudge(self.embeddings)
        self._agreement = AgreementJudge(self._answer)

    def prepare(self, texts, questions=()) -> None:
        texts = list(texts)
        super().prepare(texts)
        self._answer.analyse_texts(texts)
        self._answer.analyse_questions(questions)

    def score(self, question, reference, candidate, story=None):
        return self._answer.judge(question, reference, candidate, story)

    def score_many(self, triples):
        return self._answer.judge_many(triples)

    def agreement(self, question, a, b, story=None) -> float:
        return self.compare(question, a, b, story).score

    def compare(self, question, a, b, story=None) -> Agreement:
        # neither answer is the reference: each is read for what it answers (mortar.oracle.agreement)
        return self._agreement.compare(question, a, b, story)

    def compare_many(self, items) -> list[Agreement]:
        """Agreements of (question, a, b[, story]) tuples, read and embedded in one batch."""
        return self._agreement.compare_many(items)


DEFAULT_ORACLE = AnswerOracle.name


def Oracle(name: str = DEFAULT_ORACLE, embeddings: Embeddings | None = None,  # noqa: N802 (a factory, read as a type)
           threshold: float | None = None) -> BaseOracle:
    """The registered oracle of this name."""
    if name not in ORACLES:
        raise ValueError(f"unknown oracle {name!r}; choose from {', '.join(ORACLES)}")
    return ORACLES[name](embeddings, threshold)


def default_threshold(name: str) -> float:
    """The threshold an oracle's scores were calibrated for (ε = 0.6 for the paper's cosine and MSS)."""
    return ORACLES[name].default_threshold
