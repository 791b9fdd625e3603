"""The Python API: test a dialogue system from a script or a test, with the CLI's engine.

    import mortar

    def reply(messages: list[dict]) -> str:           # your system: a chat in, an answer out
        return my_bot.answer(messages)

    result = mortar.run("data/sample_chat.jsonl", reply, methods="mortar", limit=2, db=":memory:")
    print(result.metrics["MT"]["NBugs"], mortar.report(result)["tables"][0].title)
    mortar.gate(result, "RATE:MT>0.6")                 # raises mortar.BudgetExceeded over the budget
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from mortar import store
from mortar.config import ConfigError, RunConfig, sut_settings, validate
from mortar.dataset import Dataset
from mortar.formats import load_dataset
from mortar.budgets import BudgetExceeded, describe, enforce, gate_run, parse_budgets
from mortar.methods import methods
from mortar.pipeline import RunResult
from mortar.pipeline import run as run_pipeline
from mortar.reports import run_report
from mortar.settings import from_json as settings_from_json
from mortar.sut import SUT, make_sut

__all__ = ["run", "report", "gate", "load_dataset", "RunConfig", "RunResult", "BudgetExceeded", "ConfigError",
           "Run"]


@dataclass(frozen=True)
class Run(RunResult):
    """A finished run: the pipeline's result and the store it is in (``report`` and ``gate`` read it there)."""

    db: object = None


def run(dataset: str | Dataset, sut=None, *, config: RunConfig | None = None, db=None, progress=None,
        **settings) -> Run:
    """Test one system on a dataset with the configured methods; every result is stored under the run id.

    ``dataset``: a file in any format ``mortar.formats`` reads (CoQA JSON, JSONL dialogues, OpenAI chat JSONL,
    ShareGPT, Parquet) or a loaded :class:`Dataset`. ``sut``: a function ``messages -> str`` (sync or async), a SUT
    spec as ``--sut`` takes it (``"smollm2"``, ``"openai:MODEL"``, ``"module:function"``), or a SUT; None: the
    configuration's. ``config``: a :class:`RunConfig`; else one is made of ``settings`` (its fields: ``methods``,
    ``limit``, ``oracle``, ``threshold``, ``run_seed``, …, and a method's settings as a dict under its name:
    ``mortar={"perturbations": ["DRS"]}``). ``db``: the store file (default: ``$MORTAR_DB`` or
    ``data/mortar.duckdb``); ``":memory:"`` keeps the store in this process only."""
    path = dataset if isinstance(dataset, str) else getattr(dataset, "path", None)
    config = config or _config(str(path) if path else None, settings)
    loaded = dataset if isinstance(dataset, Dataset) else None
    if isinstance(sut, str):  # a spec: the configuration names it, and the run makes it
        config, sut = replace(config, sut=sut), None
    validate(config, check_services=sut is None)
    if callable(sut) and not isinstance(sut, SUT):
        sut = make_sut(sut, sut_settings(config), lanes=config.lanes)
    result = run_pipeline(loaded, config, db=db, sut=sut, progress=progress)
    return Run(**{f.name: getattr(result, f.name) for f in fields(RunResult)}, db=db)


def _config(dataset: str | None, settings: dict) -> RunConfig:
    by_method = {name: settings.pop(name) for name in list(settings) if name in methods()}
    unknown = sorted(set(settings) - {f.name for f in fields(RunConfig)} - {"settings"})
    if unknown:
        raise ConfigError([f"unknown setting {', '.join(unknown)}; RunConfig takes "
                           f"{', '.join(f.name for f in fields(RunConfig))}, or a method's name"])
    given = {name: value if not isinstance(value, dict) else settings_from_json(methods()[name].settings, value)
             for name, value in by_method.items()}
    return RunConfig(dataset=dataset, **settings, settings=given)


def report(run: Run | str, db=None) -> dict:
    """Everything ``mortar report`` shows of a run (``run``: a result of :func:`run`, or a run id): ``metrics`` per
    method, the method's ``tables``, and per-relation similarity, precision once labelled, …"""
    run_id, db = _run_and_store(run, db)
    with store.connect(db, read_only=True) as con:
        return run_report(con, run_id)


def gate(run: Run | str, *budgets: str, db=None, baseline: str | None = None) -> list[str]:
    """Check a run against ``--fail-on`` budgets (``"RATE:MT>0.5"``, ``"NBUGS>10"``, ``"L3>0"``, …): the budgets
    kept, one line each; :class:`BudgetExceeded` (its message names every budget exceeded) otherwise."""
    run_id, db = _run_and_store(run, db)
    with store.connect(db, read_only=True) as con:
        results = gate_run(con, run_id, parse_budgets(budgets), baseline)
    enforce(results)
    return [describe(b, v) for b, v, _ in results]


def _run_and_store(run: Run | str, db) -> tuple[str, object]:
    if isinstance(run, Run):
        return run.run_id, db if db is not None else run.db
    return run, db
