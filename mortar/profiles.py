"""Named sets of settings: ``--profile paper`` runs MORTAR as the paper does.

The tool's defaults depart from the paper on purpose (the ``answer`` oracle at 0.5 reads what an answer says,
the context check's follow rule, the story-support exemption of MR2/MR4); a profile puts the paper's values in
one switch, and every report says which settings of a run differ from the paper's.
"""

from __future__ import annotations

import os
from dataclasses import replace

from mortar.config import RunConfig
from mortar.errors import InputError
from mortar.oracle import default_threshold
from mortar.mutation_gate import GATE_OFF
from mortar.vocab import DIALTEST_METHOD, METAL_METHOD, MORTAR_METHOD

PAPER = "paper"
PROFILES = (PAPER,)
LLM_ENDPOINT_VARS = ("MORTAR_LLM_BASE_URL", "MORTAR_LLM_API_KEY", "GROQ_API_KEY")  # any: the LLM KG pipeline can run

# The paper's settings (MORTAR §IV-E, §III-B): setting → (value, how a report names it)
PAPER_SETTINGS = {
    "oracle": ("cosine", "oracle"),
    "threshold": (0.6, "threshold ε"),
    "follow_rule": (False, "context check: follow rule for elliptical questions"),
    "story_support": (False, "MR2/MR4 story-support exemption"),
    "kg_backend": ("llm", "knowledge graphs"),
}
# The word-mutation methods' gate: the paper filters by embedding cosine only (said when the method runs)
PAPER_GATE = {METAL_METHOD: "METAL mutation gate", DIALTEST_METHOD: "DialTest mutation gate"}
DEFAULTS = RunConfig()


def llm_endpoint_configured(env=None) -> bool:
    env = os.environ if env is None else env
    return any(env.get(name) for name in LLM_ENDPOINT_VARS)


def apply_profile(config: RunConfig, profile: str | None, env=None) -> tuple[RunConfig, list[str]]:
    """The configuration under a profile, and what the user should be told (one line each).

    A setting the configuration gives a value other than the default keeps that value: the profile fills in
    the rest. The profile's name is recorded with the run."""
    if profile is None:
        return config, []
    if profile not in PROFILES:
        raise InputError(f"unknown profile {profile!r}; choose from {', '.join(PROFILES)}")
    notes = []
    changes = {"profile": profile}
    for name in ("oracle", "threshold"):
        if getattr(config, name) == getattr(DEFAULTS, name):
            changes[name] = PAPER_SETTINGS[name][0]
    if config.kg_backend == DEFAULTS.kg_backend:
        if llm_endpoint_configured(env):
            changes["kg_backend"] = "llm"
        else:
            notes.append("profile paper: no LLM endpoint configured (MORTAR_LLM_BASE_URL or GROQ_API_KEY), so the "
                         "knowledge graphs come from the offline spaCy backend, not the paper's LLM pipeline")
    config = replace(config, **changes)
    mortar = config.settings_of(MORTAR_METHOD)
    defaults = DEFAULTS.settings_of(MORTAR_METHOD)
    switches = {name: PAPER_SETTINGS[name][0] for name in ("follow_rule", "story_support")
                if getattr(mortar, name) == getattr(defaults, name)}
    config = config.with_settings(MORTAR_METHOD, **switches) if switches else config
    for method in PAPER_GATE:
        if config.settings_of(method).gate == DEFAULTS.settings_of(method).gate:
            config = config.with_settings(method, gate=GATE_OFF)
    return config, notes


def differences_from_paper(run_config: dict) -> list[str]:
    """Which settings of a run (its stored ``RunConfig.to_json()``) differ from the paper's, one line each."""
    config = RunConfig.from_json(run_config)
    mortar = config.settings_of(MORTAR_METHOD)
    used = {"oracle": config.oracle, "threshold": config.threshold, "kg_backend": config.kg_backend,
            "follow_rule": mortar.follow_rule, "story_support": mortar.story_support}
    if used["threshold"] is None:  # the oracle's own default
        used["threshold"] = default_threshold(config.oracle)
    lines = []
    for name, (paper, text) in PAPER_SETTINGS.items():
        if used[name] != paper:
            lines.append(f"{text}: {_shown(used[name])} (paper: {_shown(paper)})")
    for method, text in PAPER_GATE.items():
        if method in config.methods and config.settings_of(method).gate != GATE_OFF:
            lines.append(f"{text}: {config.settings_of(method).gate} (paper: {GATE_OFF})")
    return lines


def _shown(value) -> str:
    return "on" if value is True else "off" if value is False else str(value)


def settings_lines(run_config: dict | None) -> list[str]:
    """What a report says of a run's settings against the paper's: its profile and each difference."""
    if not run_config:  # a run stored before configurations were kept whole
        return []
    differences = differences_from_paper(run_config)
    profile = run_config.get("profile") or "the tool's defaults"
    if not differences:
        return [f"profile: {profile}; every setting as in the paper"]
    return [f"profile: {profile}; settings that differ from the paper's:", *(f"  {d}" for d in differences)]
