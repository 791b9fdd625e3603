"""One run configuration: built by the CLI or the Launch page, validated by one call, handed as is to a
background run (as JSON) and stored with the run.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import yaml

from mortar.chat import ChatConfigError
from mortar.dataset import DatasetError
from mortar.formats import format_of, load_dataset
from mortar.errors import InputError
from mortar.kg.llm import LlmExtractor
from mortar.methods import methods, parse_methods
from mortar.oracle import DEFAULT_ORACLE, ORACLES
from mortar.settings import from_json as settings_from_json
from mortar.settings import problems as settings_problems
from mortar import sut as suts
from mortar.sut import RECURRENT, TOOLS, CAPABILITY_TEXT, DEFAULT_MAX_NEW_TOKENS, DEFAULT_SUT, DEFAULT_SYSTEM_PROMPT, PERSONA_SYSTEM_PROMPT, STORY, WEIGHTS, SutError, SutSettings
from mortar.vocab import GINI, GRI, INITIAL, MORTAR_METHOD, ORDERS, RANDOM, SENSITIVITIES, WALI

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
    # every registered method's settings by method name (its settings dataclass; defaults where not given)
    settings: dict[str, object] = field(default_factory=dict)
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
    # Confirmed detections: every detection's conversations are asked this many more times, afresh (no answer cache,
    # no prompt cache where the server allows); a detection not found again every time is flaky, reported apart
    confirm: int = 0
    dataset_format: str | None = None  # the dataset's file format (``mortar.formats``); None: detected from the file
    grounding_field: str | None = None  # chat JSONL: the record field that holds the grounding (else the system message)
    system_prompt: str | None = None  # the SUT's system prompt ("{story}" marks the story); None: the default one
    profile: str | None = None  # a named set of settings it was made with (``mortar.profiles``), for the record

    def __post_init__(self):
        if isinstance(self.methods, str):  # "mortar,metal" or "all", as typed on the command line
            object.__setattr__(self, "methods", parse_methods(self.methods))
        registered = methods()
        unknown = sorted(set(self.settings) - set(registered))
        if unknown:
            raise ValueError(f"settings of unknown method {', '.join(unknown)}; choose from {', '.join(registered)}")
        object.__setattr__(self, "settings", {name: self.settings.get(name) or m.settings()
                                              for name, m in registered.items()})

    def settings_of(self, method: str):
        """The settings of a registered method in this run."""
        return self.settings[method]

    def with_settings(self, method: str, **changes) -> "RunConfig":
        """The same configuration with some of one method's settings changed."""
        return replace(self, settings={**self.settings, method: replace(self.settings[method], **changes)})

    def to_json(self) -> dict:
        """As stored with the run: each method's settings under its own key (``TestMethod.key``)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "settings"}
        if not self.confirm:  # stored only when asked for: the configurations stored before it stay as they were
            del data["confirm"]
        for name, m in methods().items():
            data[m.key] = asdict(self.settings[name])
        return data

    @classmethod
    def from_json(cls, data: dict | str) -> "RunConfig":
        data = dict(json.loads(data) if isinstance(data, str) else data)
        data["methods"] = tuple(data.get("methods") or (MORTAR_METHOD,))
        settings = {name: settings_from_json(m.settings, data.pop(m.key, None)) for name, m in methods().items()}
        return cls(**data, settings=settings)


def problems(config: RunConfig, check_services: bool = True, env=None) -> list[str]:
    """Everything that keeps this configuration from running, one line each (nothing is loaded or asked).

    ``check_services``: also check that the SUT spec and the LLM knowledge-graph endpoint are configured, the SUT's
    in ``env`` (default: the process environment).
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
        try:
            dataset_of(config)
        except DatasetError as e:
            found.append(str(e))
    for name, method in methods().items():
        if name in config.methods:  # a method's settings matter only when it runs
            settings = config.settings_of(name)
            found += settings_problems(settings, name) + (method.check(settings) if method.check else [])
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
    if config.system_prompt is not None and STORY not in config.system_prompt:
        found.append("the system prompt has no {story}: say where the story goes")
    if not _positive_int(config.orig_repeats):
        found.append(f"ORIG repeats {config.orig_repeats} is not a positive integer (1: ORIG answered once)")
    if config.confirm != 0 and not _positive_int(config.confirm):
        found.append(f"confirm {config.confirm} is not a positive integer (0: detections are not confirmed)")
    if config.oracle not in ORACLES:
        found.append(f"unknown oracle {config.oracle!r}; choose from {', '.join(ORACLES)}")
    if config.threshold is not None and not 0.0 <= config.threshold <= 1.0:
        found.append(f"threshold {config.threshold} is not between 0 and 1")
    if config.kg_backend not in KG_BACKENDS:
        found.append(f"unknown knowledge-graph backend {config.kg_backend!r}; choose from {', '.join(KG_BACKENDS)}")
    if check_services:
        found += _service_problems(config, env)
    return found


def read_document(path: str | Path):
    """The content of a run or study file, YAML or JSON (JSON is YAML too); InputError in one line."""
    try:
        return yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise InputError(f"{path}: not YAML or JSON: {str(e).splitlines()[0]}") from None


def dataset_beside(dataset: str, path: str | Path) -> str:
    """A file's dataset: as given when it exists or is absolute, else relative to the file (kept together)."""
    given = Path(dataset)
    return str(given if given.is_absolute() or given.exists() else Path(path).parent / given)


def dataset_of(config: RunConfig):
    """The configuration's dataset, read in its format (DatasetError: one line)."""
    return load_dataset(config.dataset, config.dataset_format, config.grounding_field)


def requirements(config: RunConfig) -> dict[str, str]:
    """What the configuration requires of the SUT: capability → the option that needs it."""
    needed = {}
    for name, method in methods().items():
        if name in config.methods:
            needed.update(method.requirements(config.settings_of(name)))
    white_box = [f"--targets {config.targets}"] if config.targets != RANDOM else []
    white_box += [f"--order {config.order}"] if config.budget and config.order in (GRI, WALI, GINI) else []
    if white_box:
        needed[WEIGHTS] = " and ".join(white_box)
    return needed


def _positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


NLU_FORMATS = ("nlu", "snips", "atis")  # intent/slot datasets: their systems predict intents and slots


def run_sut_spec(config: RunConfig) -> str:
    """The SUT a configuration names; on an intent/slot dataset the default is the bundled recurrent system trained
    on the dataset (a chat model cannot predict intents and slots), and an endpoint asked with tool calls that names
    no dataset gets the run's intents and slots as its tools."""
    kind, _, model = config.sut.partition(":")
    tools = kind == TOOLS and "@" not in model
    if (config.sut == DEFAULT_SUT or tools) and config.dataset and \
            format_of(config.dataset, config.dataset_format) in NLU_FORMATS:
        return f"{TOOLS}:{model}@{config.dataset}" if tools else f"{RECURRENT}:{config.dataset}"
    return config.sut


def make_run_sut(config: RunConfig):
    """The SUT of a (valid) configuration with its settings; nothing heavy is loaded until it answers."""
    return suts.make_sut(run_sut_spec(config), sut_settings(config), lanes=config.lanes)


def sut_settings(config: RunConfig) -> SutSettings:
    """The settings that change the SUT's answers (all in its fingerprint)."""
    return SutSettings(system_prompt=config.system_prompt or default_system_prompt(config),
                       max_new_tokens=config.max_new_tokens)


def default_system_prompt(config: RunConfig) -> str:
    """The system prompt of a run that names none: a persona dialogue's (the persona as the speaker's own) for a
    persona dataset, else MORTAR's story prompt."""
    persona = config.dataset and format_of(config.dataset, config.dataset_format) == "persona"
    return PERSONA_SYSTEM_PROMPT if persona else DEFAULT_SYSTEM_PROMPT


def _service_problems(config: RunConfig, env=None) -> list[str]:
    found = []
    try:
        # checks the spec and the environment; loads nothing
        sut = suts.make_sut(config.sut, **({"env": env} if env is not None else {}))
    except SutError as e:
        found.append(str(e))
    else:
        for capability, option in requirements(config).items():
            if capability not in sut.capabilities:
                found.append(f"{option} needs {CAPABILITY_TEXT[capability]}; the SUT {config.sut} "
                             f"({sut.backend}) gives none")
    if config.kg_backend == "llm":
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
        from mortar.kg.spacy_backend import SpacyExtractor  # heavy: spaCy, coreferee and torch, only to extract

        return SpacyExtractor()
    if backend == "llm":
        return LlmExtractor.from_env()
    raise ConfigError([f"unknown knowledge-graph backend {backend!r}; choose from {', '.join(KG_BACKENDS)}"])
