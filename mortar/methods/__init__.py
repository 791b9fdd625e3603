"""Test methods, registered by name: each makes test cases from seeds and names the relations that judge them.

A method reads like one of TextAttack's recipes: a short composition of a transformation (how test
cases are made from a seed), constraints (which of them are kept), and the relations that judge the
answers. A method owns its settings (a dataclass of ``mortar.settings.setting`` fields: defaults, help,
validation, flags; the CLI options and the Launch form are built from them), says how they enter the run
id, and declares what it requires of the SUT (capabilities such as local weights or log-probabilities).

Adding a method is one module and one :func:`register_method` call; a package outside this repository
registers its methods through the ``mortar.methods`` entry-point group (each entry point names a module,
imported once, that calls :func:`register_method`). The run, the metrics, the report, the exports and the
dashboard pick it up from :func:`methods`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from importlib.metadata import entry_points

from mortar.dataset import Seed, TestCase
from mortar.guide.sensitivity import dataset_sensitivities
from mortar.relations import RELATIONS
from mortar.verdict import ECVerdict
from mortar.vocab import ALL_METHODS, BUILTIN_METHODS, RANDOM

log = logging.getLogger(__name__)
ENTRY_POINT_GROUP = "mortar.methods"


@dataclass(frozen=True)
class Making:
    """What a method may use to make its test cases."""

    seeds: list[Seed]
    run_seed: int
    config: object  # the run's RunConfig
    graphs: dict = field(default_factory=dict)  # seed_id → DialogueGraph, for methods with a context check
    oracle: object = None  # the run's oracle (its embeddings serve meaning filters)
    pool: list[Seed] = field(default_factory=list)  # every seed of the dataset, beyond a --limit (other stories)
    sut: object = None  # the SUT, for methods whose generation is guided by its answers (None: not available)
    cache: object = None  # AnswerCache and ScoreCache (answers and scores computed while generating are kept)
    progress: object = None  # progress(done, total, info) for long generation
    dataset_id: str = ""  # the dataset's sha256 (white-box scores of its seeds are stored under it)
    settings: object = None  # this method's own settings (its ``settings`` dataclass)
    stages: object = None  # the run's ``Stages``: a step that is a stage of its own (the context check) is timed apart

    def timed(self, stage: str):
        return self.stages(stage) if self.stages is not None else nullcontext()

    def sensitivities(self):
        """(seed_id, turn_id) → the SUT's sensitivity to each seed question's words when the run targets the most
        sensitive words (``--targets gri|wali``); None for random targets."""
        if self.config.targets == RANDOM:
            return None
        return dataset_sensitivities(self.sut, self.dataset_id, self.seeds, self.config.targets, cache=self.cache,
                                     progress=self.progress)[0]


@dataclass(frozen=True)
class Made:
    cases: list[TestCase]
    verdicts: dict[str, list[ECVerdict | None]] = field(default_factory=dict)  # none: no context check
    notes: tuple[str, ...] = ()  # what the run should tell the user (e.g. how many mutants were reverted)
    mutants: tuple[dict, ...] = ()  # guided generation: every evaluated mutant (stored, compared in the report)
    record: dict = field(default_factory=dict)  # stored with the run's configuration (e.g. which operators ran)


@dataclass(frozen=True)
class Table:
    """A table a method adds to the report: a key for exports, a title, a caption and its rows."""

    key: str
    title: str
    caption: str
    rows: list[dict]


@dataclass(frozen=True)
class Answered:
    """What a method's ``after_answers`` step may use: the run's answers to every test case, and the SUT."""

    settings: object  # the method's own settings
    seeds: list[Seed]
    cases: list[TestCase]  # ORIG and this method's test cases
    answers: dict  # (test_case_id, position) → the executor's Answer
    sut: object
    pool: list[Seed]
    oracle: object
    threshold: float
    run_seed: int
    progress: object = None


@dataclass(frozen=True)
class NoSettings:
    """The settings of a method that has none."""


@dataclass(frozen=True)
class TestMethod:
    __test__ = False  # not a pytest class

    name: str  # on the command line: --method NAME
    label: str  # in the report, as the paper names it (MT for MORTAR)
    perturbations: tuple[str, ...]  # the kinds of test case it makes (TestCase.perturbation)
    relations: tuple[str, ...]  # names of the registered relations that judge its test cases
    text: str  # one line for the glossary and the report
    make_cases: Callable[[Making], Made]
    # (checks, cases, verdicts, unknown, record) → its own tables; unknown: (seed_id, turn_id) of the gold-"unknown"
    # rounds; record: what its make_cases recorded for the run (``Made.record``, stored with the run; {} if nothing)
    tables: Callable[[list, list, dict, set, dict], list[Table]] | None = None
    settings: type = NoSettings  # its settings dataclass (``mortar.settings.setting`` fields)
    config_key: str = ""  # where the stored run configuration keeps its settings (default: its name)
    # How its settings enter the run id: (settings, whether the run uses the method) → entries of the run key.
    # Default: the settings under ``config_key`` when the method runs, nothing otherwise.
    run_key: Callable[[object, bool], dict] | None = None
    check: Callable[[object], list[str]] | None = None  # problems beyond what the fields declare, one line each
    # What it requires of the SUT under these settings: capability (``mortar.sut.WEIGHTS`` …) → the option that
    # needs it, for the error message
    requires: Callable[[object], dict[str, str]] | None = None
    # Whether making its test cases under these settings reads the SUT's answers (guided generation)
    guided_by_sut: Callable[[object], bool] | None = None
    # A step after the answers (response selection): rows keyed (test_case_id, position) for its relations
    after_answers: Callable[[Answered], dict] | None = None

    @property
    def key(self) -> str:
        return self.config_key or self.name

    def key_entries(self, settings, chosen: bool) -> dict:
        if self.run_key is not None:
            return self.run_key(settings, chosen)
        return {self.key: asdict(settings)} if chosen and asdict(settings) else {}

    def requirements(self, settings) -> dict[str, str]:
        return self.requires(settings) if self.requires else {}


METHODS: dict[str, TestMethod] = {}


class DuplicateName(ValueError):
    """A second registration of a name already registered."""


def register_method(method: TestMethod) -> TestMethod:
    if method.name in METHODS:
        raise DuplicateName(f"a test method named {method.name!r} is already registered")
    METHODS[method.name] = method
    return method


_loaded = False


def _load() -> None:
    """The built-in methods, then the methods of installed packages (the entry-point group), once."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    from mortar.methods import dialtest, metal, mortar, persona  # noqa: F401  (the registry's own built-ins)

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        try:
            entry.load()  # the module registers its methods (and their relations)
        except Exception as e:  # a broken plug-in is reported, never takes the built-ins down
            log.warning("test method plug-in %s (%s) not loaded: %s", entry.name, entry.value, e)


def methods() -> dict[str, TestMethod]:
    """Every registered method: the built-ins in the paper's order, then the others as registered."""
    _load()
    return {**{n: METHODS[n] for n in BUILTIN_METHODS}, **METHODS}


def method_kinds() -> list[str]:
    """Every registered method's kinds of test case, in registry order (the order a run makes them in)."""
    return [p for m in methods().values() for p in m.perturbations]


def parse_methods(spec: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """One name, a comma list or ``all`` → method names in registry order; ValueError names the unknown ones."""
    known = methods()
    names = spec.split(",") if isinstance(spec, str) else list(spec)
    names = [n.strip() for n in names if n.strip()]
    if names == [ALL_METHODS]:
        return tuple(known)
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise ValueError(f"unknown method {', '.join(unknown) or '(none)'}; choose from {', '.join(known)}, "
                         f"a comma list of them, or {ALL_METHODS}")
    return tuple(n for n in known if n in names)


def method_of_case(case: TestCase) -> TestMethod | None:
    """The method that makes test cases of this kind (None for ORIG, the seed as it is)."""
    return next((m for m in methods().values() if case.perturbation in m.perturbations), None)


def method_label_of(relation: str) -> str:
    """The report label of the method a relation's checks belong to (RBT for reference-based testing)."""
    _load()
    return RELATIONS[relation].method if relation in RELATIONS else relation
