"""A study: one test suite run against several dialogue systems, read side by side (the paper's DS1–DS6).

The suite is a run configuration without its SUT: dataset, run seed, methods and their settings, oracle. Its
test cases, their context verdicts and knowledge graphs are made once and asked of every system; each system
is one run, with its answers stored under its own fingerprint, so adding a system to a study answers only that
system and a killed study resumes where it stopped. A study is defined by a study file (YAML or JSON: the run
configuration plus ``systems``) or by repeating ``--sut``.

    name: three small models
    dataset: data/sample_coqa.json
    limit: 2
    systems:
      - {name: smollm2, sut: smollm2}
      - {name: gemma3, sut: gemma3-270m}
      - {name: smollm2-terse, sut: smollm2, system_prompt: "Story: {story} Answer in at most three words."}
      - {name: vllm-qwen, sut: "openai:Qwen/Qwen2.5-7B-Instruct", base_url: "http://gpu:8000/v1",
         api_key_env: VLLM_KEY}
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path


from mortar import store
from mortar import sut as suts
from mortar.config import (ConfigError, RunConfig, dataset_beside, dataset_of, make_extractor, problems, read_document,
                           sut_settings)
from mortar.dataset import Dataset, limited
from mortar.errors import InputError
from mortar.methods import methods
from mortar.oracle import Oracle
from mortar.profiles import apply_profile
from mortar.pipeline import RunResult, make_test_cases, planned_run_id, run, suite_depends_on_sut

SUT_FIELDS = ("sut", "system_prompt", "max_new_tokens", "lanes")  # what a system sets; the suite sets the rest
HTTP_KINDS = ("openai", "groq")
ENDPOINT_VARS = {"openai": ("MORTAR_OPENAI_BASE_URL", "MORTAR_OPENAI_API_KEY"), "groq": ("GROQ_BASE_URL", "GROQ_API_KEY")}


@dataclass(frozen=True)
class System:
    """One system under test in a study: a named SUT with the settings that make it this system."""

    name: str  # how the study's tables name it
    sut: str = suts.DEFAULT_SUT  # as ``--sut``: a preset, a model folder, openai[:MODEL], groq[:MODEL]
    system_prompt: str | None = None  # None: the suite's (else the default one)
    max_new_tokens: int | None = None  # None: the suite's
    base_url: str | None = None  # an HTTP SUT's endpoint (else the environment's)
    api_key_env: str | None = None  # the NAME of the environment variable that holds its key (never the key)
    lanes: int | None = None  # requests in flight / batch size; never changes an answer

    @property
    def kind(self) -> str:
        return self.sut.partition(":")[0]

    def spec(self) -> dict:
        """As stored with the study: the fields set (a key's variable name, never the key)."""
        return {k: v for k, v in asdict(self).items() if v is not None}

    def config(self, suite: RunConfig) -> RunConfig:
        """The run configuration that tests this system on the suite."""
        return replace(suite, sut=self.sut, system_prompt=self.system_prompt or suite.system_prompt,
                       max_new_tokens=self.max_new_tokens or suite.max_new_tokens, lanes=self.lanes or suite.lanes)

    def environment(self, env=None) -> dict:
        """The environment its SUT reads: the process's, with the system's endpoint and key put where the HTTP
        client looks for them."""
        env = dict(os.environ if env is None else env)
        if self.kind in ENDPOINT_VARS:
            url_var, key_var = ENDPOINT_VARS[self.kind]
            if self.base_url:
                env[url_var] = self.base_url
            if self.api_key_env:
                env[key_var] = env.get(self.api_key_env, "")
        return env

    def make_sut(self, suite: RunConfig, env=None):
        config = self.config(suite)
        options = {"env": self.environment(env)} if self.kind in HTTP_KINDS else {}
        return suts.make_sut(config.sut, sut_settings(config), lanes=config.lanes, **options)


@dataclass(frozen=True)
class Study:
    suite: RunConfig  # its SUT fields are each system's
    systems: tuple[System, ...]
    name: str | None = None


@dataclass(frozen=True)
class StudyResult:
    study_id: str
    runs: dict[str, str]  # system → run id, in the study's order
    results: dict[str, RunResult | None]  # system → its result (None: finished before, not run again)
    notes: tuple[str, ...] = ()


def from_suts(suite: RunConfig, specs: list[str], name: str | None = None) -> Study:
    """A study of repeated ``--sut`` options, each system named by its spec."""
    return Study(suite, tuple(System(name=spec, sut=spec) for spec in dict.fromkeys(specs)), name)


def load_study_file(path: str | Path, env=None) -> tuple[Study, list[str]]:
    """A study file (YAML or JSON) and the notes of its profile; InputError naming the file and what is wrong."""
    return from_document(read_document(path), Path(path), env)


def from_document(doc, path: Path, env=None) -> tuple[Study, list[str]]:
    """A study from a study file's content (``path`` names it in errors; a relative dataset is read beside it)."""
    if not isinstance(doc, dict):
        raise InputError(f"{path}: a study file is a mapping of run settings with a list of systems")
    doc = dict(doc)
    name, profile, listed = doc.pop("name", None), doc.pop("profile", None), doc.pop("systems", None)
    if not isinstance(listed, list) or not listed:
        raise InputError(f"{path}: 'systems' must list at least one system (each with a name and a sut)")
    systems = [_system(path, i, item) for i, item in enumerate(listed, start=1)]
    names = [s.name for s in systems]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"{path}: system names must differ; given twice: {', '.join(twice)}")
    # max_new_tokens, system_prompt and lanes here are every system's defaults
    known = {f.name for f in fields(RunConfig)} - {"sut", "profile"}
    known |= {m.key for m in methods().values()}
    unknown = sorted(set(doc) - known)
    if unknown:
        raise InputError(f"{path}: unknown setting {', '.join(unknown)}; a study file takes name, profile, systems, "
                         f"{', '.join(sorted(known))}")
    if doc.get("dataset"):
        doc["dataset"] = dataset_beside(doc["dataset"], path)
    try:
        suite = RunConfig.from_json(doc)
    except (TypeError, ValueError) as e:
        raise InputError(f"{path}: {e}") from None
    suite, notes = apply_profile(suite, profile, env)
    return Study(suite, tuple(systems), name), notes


def study_document(study: Study) -> dict:
    """The study as a study file holds it (``from_document`` reads it back): the suite, its name and systems."""
    suite = {k: v for k, v in study.suite.to_json().items() if k != "sut" and v is not None}
    return {**({"name": study.name} if study.name else {}), **suite, "systems": [s.spec() for s in study.systems]}


def _system(path: Path, i: int, item) -> System:
    if isinstance(item, str):
        return System(name=item, sut=item)
    if not isinstance(item, dict) or not item.get("name"):
        raise InputError(f"{path}: system {i} needs a name (and a sut: smollm2, gemma3-270m, openai:MODEL, …)")
    unknown = sorted(set(item) - {f.name for f in fields(System)})
    if unknown:
        raise InputError(f"{path}: system {item['name']!r}: unknown field {', '.join(unknown)}; a system takes "
                         f"{', '.join(f.name for f in fields(System))}")
    return System(**{k: (str(v) if k in ("name", "sut") else v) for k, v in item.items()})


def study_problems(study: Study, env=None) -> list[str]:
    """Everything that keeps the study from running, one line each (nothing is loaded or asked)."""
    env = dict(os.environ if env is None else env)
    found = [] if study.systems else ["a study needs at least one system"]
    names = [s.name for s in study.systems]
    found += [f"system name {n!r} is given twice" for n in sorted({n for n in names if names.count(n) > 1})]
    found += problems(study.suite, check_services=False)
    for system in study.systems:
        if (system.base_url or system.api_key_env) and system.kind not in HTTP_KINDS:
            found.append(f"{system.name}: base_url and api_key_env are for openai:MODEL or groq:MODEL systems")
        if system.api_key_env and not env.get(system.api_key_env):
            found.append(f"{system.name}: the environment variable {system.api_key_env} (its key) is not set")
        config = system.config(study.suite)
        own = problems(config, env=system.environment(env))
        found += [f"{system.name}: {p}" for p in own if p not in found]
    return list(dict.fromkeys(found))


def study_id_for(study: Study, dataset: Dataset) -> str:
    """Same suite and name, same study: the systems are not part of it, so adding one keeps the study (and another
    name on the same suite is another study)."""
    suite = {k: v for k, v in study.suite.to_json().items() if k not in (*SUT_FIELDS, "profile")}
    suite["dataset"] = dataset.sha256
    if study.name:
        suite["study name"] = study.name
    digest = hashlib.sha256(json.dumps(suite, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return f"{store.STUDY_PREFIX}{digest}"


def run_study(study: Study, db=None, progress=None, suts_by_name: dict | None = None, extractor=None,
              env=None) -> StudyResult:
    """Test every system of the study on its suite; a system whose run is done is not run again.

    ``suts_by_name``: ready SUTs for some systems (tests pass scripted ones); the others are made from their spec.
    ``progress(done, total, info)`` gets the system in ``info``."""
    found = [p for p in study_problems(study, env) if not _given(p, study, suts_by_name)]
    if found:
        raise ConfigError(found)
    full = dataset_of(study.suite)
    dataset = limited(full, study.suite.limit)
    study_id = study_id_for(study, full)
    extractor = extractor or make_extractor(study.suite.kg_backend)
    made = {s.name: (suts_by_name or {}).get(s.name) or s.make_sut(study.suite, env) for s in study.systems}
    planned = {s.name: planned_run_id(full, s.config(study.suite), made[s.name], extractor)[0] for s in study.systems}
    with store.connect(db) as con:
        con.begin()
        store.write_dataset(con, full)
        store.write_study(con, study_id, study.name, full.sha256, study.suite.to_json())
        for position, system in enumerate(study.systems):
            store.write_study_system(con, study_id, system.name, position, system.spec(), planned[system.name])
        con.commit()
        done = set(store.read_runs(con).query("status == 'done'")["run_id"])
    todo = [s for s in study.systems if planned[s.name] not in done]
    suite = None
    if todo and not suite_depends_on_sut(study.suite):  # the test cases once, for every system
        suite = make_test_cases(dataset, todo[0].config(study.suite), db, extractor, progress,
                                Oracle(study.suite.oracle), full.seeds, made[todo[0].name])
    results: dict[str, RunResult | None] = {s.name: None for s in study.systems}
    notes = []
    for k, system in enumerate(todo, start=1):
        prefix = f"{system.name} ({k}/{len(todo)})"
        step = None if progress is None else (lambda d, t, info=None, prefix=prefix: progress(
            d, t, {**(info or {}), "stage": f"{prefix} {(info or {}).get('stage', 'test cases')}", "system": prefix}))
        result = run(full, system.config(study.suite), db=db, sut=made[system.name], extractor=extractor,
                     progress=step, suite=suite)
        if result.run_id != planned[system.name]:  # the plan and the run must agree, or the study loses runs
            raise RuntimeError(f"{system.name}: run {result.run_id} is not the planned {planned[system.name]}")
        results[system.name] = result
        notes += [f"{system.name}: {n}" for n in result.notes]
    for system in study.systems:
        made[system.name].close()
    return StudyResult(study_id, planned, results, tuple(dict.fromkeys(notes)))


def _given(problem: str, study: Study, suts_by_name: dict | None) -> bool:
    """A problem of a system's SUT spec that does not matter because a ready SUT was given for it."""
    return any(problem.startswith(f"{name}: ") for name in (suts_by_name or {}))
