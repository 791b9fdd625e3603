"""A scripted, deterministic SUT for unit tests of the run pipeline (never a default, never a result).

It answers from the story by keyword overlap with the question, and forgets the story once the
conversation is long, so perturbations change some answers as a real SUT's would.
"""

import os
import re
import time

from mortar.sut.base import SUT


class ScriptedSUT(SUT):
    backend, model = "scripted", "keyword-overlap-v1"

    def __init__(self, delay_s: float = 0.0, calls_file: str | None = None):
        super().__init__()
        self.delay_s, self.calls_file, self.calls = delay_s, calls_file, 0

    def answer(self, conversation) -> str:
        self.calls += 1
        if self.calls_file:
            with open(self.calls_file, "a") as f:
                f.write("call\n")
        if self.delay_s:
            time.sleep(self.delay_s)
        words = set(re.findall(r"[a-z]+", conversation.question.lower())) - {"what", "who", "did", "the", "was", "a"}
        sentences = re.split(r"(?<=[.!?])\s+", conversation.story)
        best = max(sentences, key=lambda s: len(words & set(re.findall(r"[a-z]+", s.lower()))))
        if len(conversation.history) % 4 == 3:
            return "Unknown"
        return " ".join(best.split()[:8])


class SuffixSUT(ScriptedSUT):
    """The scripted SUT with a fixed text at the end of every answer (markup that a report must escape); its own
    model name, so its answers are stored apart from the plain scripted SUT's."""

    def __init__(self, suffix: str, name: str):
        super().__init__()
        self.suffix, self.model = suffix, f"keyword-overlap-v1-{name}"

    def answer(self, conversation) -> str:
        return f"{super().answer(conversation)} {self.suffix}"


def make(delay_s=None, calls_file=None):
    return ScriptedSUT(float(delay_s if delay_s is not None else os.environ.get("SCRIPTED_DELAY", 0)), calls_file)


SUFFIXES = ("", "please", "!!", "indeed", "so", "I think")  # what each scripted system adds to its answers


def scripted_study(db, dataset, n_systems: int = 6, n_seeds: int = 5):
    """A study of ``n_systems`` scripted systems (each adds its own words to the scripted answers) on the first
    ``n_seeds`` seeds, stored in ``db``: the study result."""
    from mortar.config import RunConfig
    from mortar.study import Study, System, run_study

    names = [f"DS{k}" for k in range(1, n_systems + 1)]
    suts = {name: SuffixSUT(SUFFIXES[k % len(SUFFIXES)] + " " * (k // len(SUFFIXES)), name)
            for k, name in enumerate(names)}
    systems = tuple(System(name, f"scripted-{name}") for name in names)
    return run_study(Study(RunConfig(dataset=str(dataset), limit=n_seeds), systems, "scripted systems"), db=db,
                     suts_by_name=suts)
