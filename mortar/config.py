"""One run configuration: built by the CLI or the Launch page, validated by one call, handed as is to a
background run (as JSON) and stored with the run.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mortar.errors import InputError
from mortar.methods import parse_methods
from mortar.methods.dialtest import DialTestSettings
from mortar.methods.metal import MetalSettings
from mortar.methods.persona import PersonaSettings
from mortar.oracle import DEFAULT_ORACLE, ORACLES
from mortar.perturb import PerturbationSettings
from mortar.sut import DEFAULT_MAX_NEW_TOKENS, DEFAULT_SUT
from mortar.vocab import (RANDOM, DIALOGUE_PERTURBATIONS, DIALTEST_METHOD, DIALTEST_OPERATORS, MORTAR_METHOD, NOISE_LOCATIONS, P3, PERSONA_METHOD, PERSONA_RELATIONS,
                          QUESTION_PERTURBATIONS)

KG_BACKENDS = ("spacy", "llm")  # offline spaCy + coreferee (default), or the paper's LLM pipeline


class ConfigError(InputError):
    """A run configuration that cannot run: every problem, one per line."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class RunConfig:
    dataset: str | None = None  # CoQA v1.0 JSON or JSONL dialogues (``run`` may also be given a loaded Dataset)
    methods: tuple[str, ...] = (MORTAR_METHOD,)  # registered method names (mortar, metal, …)
    sut: str = DEFAULT_SUT  # smollm2, gemma3-270m, a model folder, openai[:MODEL] or groq[:MODEL]
    run_seed: int = 0  # same seed, same test cases
    perturbation: PerturbationSettings = field(default_factory=PerturbationSettings)  # MORTAR's
    metal: MetalSettings = field(default_factory=MetalSettings)  # METAL's
    persona: PersonaSettings = field(default_factory=PersonaSettings)  # the persona-centric relations'
    dialtest: DialTestSettings = field(default_factory=DialTestSettings)  # DialTest's
    oracle: str = DEFAULT_ORACLE  # 'cosine' and 'mss' are the paper's oracles (ε = 0.6)
    threshold: float | None = None  # None: the oracle's own default
    kg_backend: str = KG_BACKENDS[0]  # knowledge graphs for the context check
    limit: int | None = None  # only the first N seeds
    targets: str = "random"  # which words METAL's and DialTest's operators change: random, or the SUT's gri / wali
    budget: int | None = None  # execute only the first N test cases (ORIG always runs) …
    order: str = "initial"  # … in this order: initial, gri, wali, gini or random (mortar.guide.prioritise)
    # SUT settings. max_new_tokens changes answers: it is in the SUT's fingerprint (so in the run id; the
    # default keeps the fingerprints runs had before it was a setting). lanes never changes an answer: it
    # is kept here for the record and leaves the run id alone.
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS  # longest answer, in tokens (decoding is greedy)
    lanes: int | None = None  # a local model's batch size, an HTTP SUT's requests in flight; None: the SUT's default
    # The noise floor: ORIG is answered this many times; a detection on a seed question whose ORIG answers
    # disagree with each other is marked unstable and reported apart (1: ORIG once, as the paper)
    orig_repeats: int = 1

    def __post_init__(self):
        if isinstance(self.methods, str):  # "mortar,metal" or "all", as typed on the command line
            object.__setattr__(self, "methods", parse_methods(self.methods))

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict | str) -> "RunConfig":
        data = dict(json.loads(data) if isinstance(data, str) else data)
        data["methods"] = tuple(data.get("methods") or (MORTAR_METHOD,))
        perturbation = dict(data.get("perturbation") or {})
        if "perturbations" in perturbation:
            perturbation["perturbations"] = tuple(perturbation["perturbations"])
        metal = dict(data.get("metal") or {})
        if "perturbations" in metal:
            metal["perturbations"] = tuple(metal["perturbations"])
        persona = dict(data.get("persona") or {})
        for key in ("relations", "noise_locations"):
            if key in persona:
                persona[key] = tuple(persona[key])
        dialtest = dict(data.get("dialtest") or {})
        if "operators" in dialtest:
            dialtest["operators"] = tuple(dialtest["operators"])
        return cls(**{**data, "perturbation": PerturbationSettings(**perturbation), "metal": MetalSettings(**metal),
                      "persona": PersonaSettings(**persona), "dialtest": DialTestSettings(**dialtest)})


def problems(config: RunConfig, check_services: bool = True) -> list[str]:
    """Everything that keeps this configuration from running, one line each (nothing is loaded or asked).

    ``check_services``: also check that the SUT spec and the LLM knowledge-graph endpoint are configured.
    """
    found = []
    try:
        parse_methods(config.methods)
    except ValueError as e:
        found.append(str(e))
    if config.dataset is None:
        found.append("no dataset given")
    elif not Path(config.dataset).is_file():
        found.append(f"{config.dataset}: no such dataset file")
    else:
        from mortar.dataset import DatasetError, load_dataset

        try:
            load_dataset(config.dataset)
        except DatasetError as e:
            found.append(str(e))
    p = config.perturbation
    unknown = [x for x in p.perturbations if x not in DIALOGUE_PERTURBATIONS]
    if unknown:
        found.append(f"unknown perturbation {', '.join(unknown)}; choose from {', '.join(DIALOGUE_PERTURBATIONS)}")
    if MORTAR_METHOD in config.methods and not p.perturbations:
        found.append("choose at least one perturbation")
    unknown = [x for x in config.metal.perturbations if x not in QUESTION_PERTURBATIONS]
    if unknown:
        found.append(f"unknown METAL perturbation {', '.join(unknown)}; choose from {', '.join(QUESTION_PERTURBATIONS)}")
    for name, chosen, known in (("DialTest operator", config.dialtest.operators, DIALTEST_OPERATORS),
                                ("persona relation", config.persona.relations, PERSONA_RELATIONS),
                                ("noise location", config.persona.noise_locations, NOISE_LOCATIONS)):
        unknown = [x for x in chosen if x not in known]
        if unknown:
            found.append(f"unknown {name} {', '.join(unknown)}; choose from {', '.join(known)}")
    if PERSONA_METHOD in config.methods and not config.persona.relations:
        found.append("choose at least one persona relation")
    if PERSONA_METHOD in config.methods and P3 in config.persona.relations and not config.persona.noise_locations:
        found.append("choose at least one noise location for P3")
    if DIALTEST_METHOD in config.methods and not config.dialtest.operators:
        found.append("choose at least one DialTest operator")
    if config.dialtest.gini_budget < 0:
        found.append(f"Gini budget {config.dialtest.gini_budget} is negative (0: unguided)")
    if not 0.0 <= config.dialtest.keep_above <= 1.0:
        found.append(f"DialTest meaning filter {config.dialtest.keep_above} is not between 0 and 1")
    if config.persona.candidates < 1:
        found.append(f"selection candidates {config.persona.candidates} is not a positive integer")
    for name, value in (("reduce ratio", p.reduce_ratio), ("duplicate ratio", p.duplicate_ratio),
                        ("METAL rate", config.metal.rate)):
        if not 0.0 < value < 1.0:
            found.append(f"{name} {value} is not between 0 and 1")
    if p.replicates < 1:
        found.append(f"replicates {p.replicates} is not a positive integer")
    from mortar.guide.prioritise import INITIAL, ORDERS
    from mortar.guide.sensitivity import SENSITIVITIES

    if config.targets not in (RANDOM, *SENSITIVITIES):
        found.append(f"unknown targets {config.targets!r}; choose from random, {', '.join(SENSITIVITIES)}")
    if config.order not in (INITIAL, *ORDERS):
        found.append(f"unknown order {config.order!r}; choose from {INITIAL}, {', '.join(ORDERS)}")
    if config.budget is not None and config.budget < 1:
        found.append(f"budget {config.budget} is not a positive integer")
    if config.limit is not None and config.limit < 1:
        found.append(f"seed limit {config.limit} is not a positive integer")
    if not _positive_int(config.max_new_tokens):
        found.append(f"max new tokens {config.max_new_tokens} is not a positive integer")
    if config.lanes is not None and not _positive_int(config.lanes):
        found.append(f"lanes {config.lanes} is not a positive integer")
    if not _positive_int(config.orig_repeats):
        found.append(f"ORIG repeats {config.orig_repeats} is not a positive integer (1: ORIG answered once)")
    if config.oracle not in ORACLES:
        found.append(f"unknown oracle {config.oracle!r}; choose from {', '.join(ORACLES)}")
    if config.threshold is not None and not 0.0 <= config.threshold <= 1.0:
        found.append(f"threshold {config.threshold} is not between 0 and 1")
    if config.kg_backend not in KG_BACKENDS:
        found.append(f"unknown knowledge-graph backend {config.kg_backend!r}; choose from {', '.join(KG_BACKENDS)}")
    if check_services:
        found += _service_problems(config)
    return found


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def make_run_sut(config: RunConfig):
    """The SUT of a (valid) configuration with its settings; nothing heavy is loaded until it answers."""
    from mortar.sut import SutSettings, make_sut

    return make_sut(config.sut, SutSettings(max_new_tokens=config.max_new_tokens), lanes=config.lanes)


def _service_problems(config: RunConfig) -> list[str]:
    found = []
    from mortar.sut import SutError, make_sut

    try:
        sut = make_sut(config.sut)  # checks the spec and the environment; loads nothing
    except SutError as e:
        found.append(str(e))
    else:
        from mortar.sut.local import LocalSUT

        from mortar.sut.remote import ChatSUT

        if config.persona.selection and PERSONA_METHOD in config.methods and not isinstance(sut, LocalSUT):
            found.append("--selection needs a local model's token probabilities; the SUT is an HTTP endpoint")
        white_box = [f"--targets {config.targets}"] if config.targets != RANDOM else []
        white_box += [f"--order {config.order}"] if config.budget and config.order in ("gri", "wali", "gini") else []
        if white_box and not isinstance(sut, LocalSUT):
            found.append(f"{' and '.join(white_box)} needs a local model's gradients and attention (transformers); "
                         f"the SUT {config.sut} is an HTTP endpoint")
        if config.dialtest.gini_budget and DIALTEST_METHOD in config.methods \
                and not isinstance(sut, (LocalSUT, ChatSUT)):
            found.append("--gini-budget needs a local model or an HTTP service that returns logprobs")
    if config.kg_backend == "llm":
        from mortar.chat import ChatConfigError

        try:
            make_extractor(config.kg_backend).close()
        except ChatConfigError as e:
            found.append(f"--kg-backend llm: {e}")
    return found


def validate(config: RunConfig, check_services: bool = True) -> RunConfig:
    """The configuration, or ConfigError naming every problem."""
    found = problems(config, check_services)
    if found:
        raise ConfigError(found)
    return config


def make_extractor(backend: str):
    """The knowledge-graph extractor of a backend (both behind one interface: ``mortar.kg.model.Extractor``).

    The LLM one reads its endpoint from the environment and raises ChatConfigError when none is set."""
    if backend == "spacy":
        from mortar.kg.spacy_backend import SpacyExtractor

        return SpacyExtractor()
    if backend == "llm":
        from mortar.kg.llm import LlmExtractor

        return LlmExtractor.from_env()
    raise ConfigError([f"unknown knowledge-graph backend {backend!r}; choose from {', '.join(KG_BACKENDS)}"])
