"""Test methods, registered by name: each makes test cases from seeds and names the relations that judge them.

A method reads like one of TextAttack's recipes: a short composition of a transformation (how test
cases are made from a seed), constraints (which of them are kept), and the relations that judge the
answers. MORTAR and METAL are two registrations; adding a method is one module and one
:func:`register_method` call, and the run, the metrics, the report, the exports and the dashboard
pick it up from :data:`METHODS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mortar.context import ECVerdict
from mortar.dataset import Seed, TestCase
from mortar.vocab import ALL_METHODS, BUILTIN_METHODS


@dataclass(frozen=True)
class Making:
    """What a method may use to make its test cases."""

    seeds: list[Seed]
    run_seed: int
    config: object  # the run's RunConfig (a method reads its own settings from it)
    graphs: dict = field(default_factory=dict)  # seed_id → DialogueGraph, for methods with a context check
    oracle: object = None  # the run's oracle (its embeddings serve meaning filters)
    pool: list[Seed] = field(default_factory=list)  # every seed of the dataset, beyond a --limit (other stories)
    sut: object = None  # the SUT, for methods whose generation is guided by its answers (None: not available)
    db: object = None  # the run's store (answers given while generating are kept for the run)
    progress: object = None  # progress(done, total, info) for long generation
    dataset_id: str = ""  # the dataset's sha256 (white-box scores of its seeds are stored under it)

    def sensitivities(self):
        """(seed_id, turn_id) → the SUT's sensitivity to each seed question's words when the run targets the most
        sensitive words (``--targets gri|wali``); None for random targets."""
        if self.config.targets == "random":
            return None
        from mortar.guide.sensitivity import dataset_sensitivities

        return dataset_sensitivities(self.sut, self.dataset_id, self.seeds, self.config.targets, db=self.db,
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
class TestMethod:
    __test__ = False  # not a pytest class

    name: str  # on the command line: --method NAME
    label: str  # in the report, as the paper names it (MT for MORTAR)
    perturbations: tuple[str, ...]  # the kinds of test case it makes (TestCase.perturbation)
    relations: tuple[str, ...]  # names of the registered relations that judge its test cases
    text: str  # one line for the glossary and the report
    make_cases: Callable[[Making], Made]
    tables: Callable[[list, list, dict], list[Table]] | None = None  # (checks, cases, verdicts) → its own tables


METHODS: dict[str, TestMethod] = {}


def register_method(method: TestMethod) -> TestMethod:
    METHODS[method.name] = method
    return method


def _load_builtin() -> None:
    from mortar.methods import dialtest, metal, mortar, persona  # noqa: F401  (registers them)


def methods() -> dict[str, TestMethod]:
    """Every registered method: the built-ins in the paper's order, then the others as registered."""
    _load_builtin()
    return {**{n: METHODS[n] for n in BUILTIN_METHODS}, **METHODS}


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
    from mortar.relations import RELATIONS

    _load_builtin()
    return RELATIONS[relation].method if relation in RELATIONS else relation
