"""Launch: configure a `mortar run` and start it in the background, with live progress, cancel and resume."""

from pathlib import Path

import pandas as pd
import streamlit as st

from mortar import ui
from mortar.config import KG_BACKENDS, RunConfig, problems
from mortar.methods import methods
from mortar.guide.prioritise import INITIAL, ORDERS
from mortar.guide.sensitivity import SENSITIVITIES
from mortar.oracle import DEFAULT_ORACLE, ORACLES, default_threshold
from mortar.profiles import PROFILES, apply_profile
from mortar.study import Study, System, study_problems
from mortar.sut import LOCAL_LANES
from mortar.ui.datasets import data_files, upload_box
from mortar.ui.settings_form import settings_form
from mortar.vocab import RBT

KEY_VARS = {  # what each choice reads from the environment (or .streamlit/secrets.toml); values never shown
    "openai": ["MORTAR_OPENAI_API_KEY", "OPENAI_API_KEY", "MORTAR_OPENAI_BASE_URL", "MORTAR_OPENAI_MODEL"],
    "groq": ["GROQ_API_KEY", "MORTAR_GROQ_MODEL"],
    "llm knowledge graphs": ["MORTAR_LLM_BASE_URL", "MORTAR_LLM_MODEL", "MORTAR_LLM_API_KEY", "GROQ_API_KEY"],
}
SUT_CHOICES = {
    "smollm2": "SmolLM2-135M-Instruct, local (default; no key, no network)",
    "gemma3-270m": "Gemma 3 270M, local",
    "openai": "an OpenAI-compatible endpoint",
    "groq": "Groq",
    "folder": "a local Hugging Face model folder",
    "python": "a Python function (module:function, messages -> str)",
}
DEFAULTS = RunConfig()  # the form starts from the engine's defaults

st.title("Launch a run")
st.caption(f"A run asks the SUT every seed question in order ({RBT}) and in every test case of the chosen methods "
           "(MORTAR also checks each moved question's context, EC), and judges the answers with each method's "
           "relations. It runs as a background process: it keeps going when you close the tab, and a cancelled run "
           "resumes where it stopped.")
ui.secrets_to_environment(sorted({v for vs in KEY_VARS.values() for v in vs}))


ONE_WORD_PROMPT = ("Story:\n{story}\n\nReply to each question with one word or a number taken from the story, "
                   "nothing else.")


def systems_from(table: pd.DataFrame) -> list[System]:
    """The systems of the editor's rows (blank cells: not set); rows without a name are left out."""
    systems = []
    for row in table.to_dict("records"):
        given = {k: (v.strip() if isinstance(v, str) else v) for k, v in row.items()}
        given = {k: v for k, v in given.items() if v not in ("", None) and not (isinstance(v, float) and v != v)}
        if given.get("name"):
            if "max_new_tokens" in given:
                given["max_new_tokens"] = int(given["max_new_tokens"])
            systems.append(System(**{"sut": given.get("name"), **given}))
    return systems


added = upload_box("launch-upload", ui.DATA)
if added:
    st.session_state["launch-dataset"] = added

datasets = data_files(ui.DATA)
if not datasets:
    st.warning("No dataset in data/: add one above.")
    st.stop()
wanted = st.session_state.get("launch-dataset", "sample_coqa.json")

RUN, STUDY = "A run (one system)", "A study (several systems side by side)"
mode = st.segmented_control("Launch", [RUN, STUDY], default=RUN, required=True, key="launch-mode",
                            help="A study runs one test suite against several systems and reads every table with one "
                                 "row per system (the Studies page); the test cases are made once for all of them.")
DEFAULT_SYSTEMS = pd.DataFrame([
    {"name": "smollm2", "sut": "smollm2", "system_prompt": "", "max_new_tokens": None, "base_url": "",
     "api_key_env": ""},
    {"name": "gemma3-270m", "sut": "gemma3-270m", "system_prompt": "", "max_new_tokens": None, "base_url": "",
     "api_key_env": ""},
    {"name": "smollm2-one-word", "sut": "smollm2", "system_prompt": ONE_WORD_PROMPT, "max_new_tokens": None,
     "base_url": "", "api_key_env": ""},
])
DEFAULT_SYSTEMS["max_new_tokens"] = DEFAULT_SYSTEMS["max_new_tokens"].astype("Int64")

with st.form("launch"):
    st.markdown("**Dataset and SUT**" if mode == RUN else "**Dataset and systems**")
    c1, c2 = st.columns(2)
    dataset = c1.selectbox("Dataset", datasets, index=datasets.index(wanted) if wanted in datasets else 0,
                           help="Files in data/. Seeds are dialogues: a story and question/answer rounds.")
    limit = c2.number_input("Seed limit", min_value=0, value=2, step=1,
                            help="Only the first N seeds of the dataset (0 = all of them). SmolLM2 on two CPU cores "
                                 "needs roughly a minute per seed and perturbation.")
    if mode == STUDY:
        study_name = st.text_input("Study name", placeholder="e.g. small models, May release",
                                   help="How the Studies page and the reports name it. The same suite under another "
                                        "name is another study; under the same name, added systems join it.")
        systems_table = st.data_editor(
            DEFAULT_SYSTEMS, num_rows="dynamic", hide_index=True, width="stretch", key="launch-systems",
            column_config={
                "name": st.column_config.TextColumn("name", required=True, help="How the study's tables name it."),
                "sut": st.column_config.TextColumn("sut", required=True, help="smollm2, gemma3-270m, openai:MODEL, "
                                                   "groq:MODEL or a model folder"),
                "system_prompt": st.column_config.TextColumn("system prompt", help="Its own system prompt, with "
                                                             "{story} where the story goes (empty: the default)"),
                "max_new_tokens": st.column_config.NumberColumn("max new tokens", min_value=1, step=1,
                                                                help="Empty: the value below"),
                "base_url": st.column_config.TextColumn("endpoint", help="openai/groq systems: the base URL"),
                "api_key_env": st.column_config.TextColumn("key variable", help="The NAME of the environment "
                                                           "variable that holds its key (never the key)")})
    c1, c2 = st.columns(2)
    sut_kind = c1.selectbox("SUT (system under test)" if mode == RUN else "SUT (runs only)", list(SUT_CHOICES), format_func=lambda k: f"{k} — {SUT_CHOICES[k]}")
    sut_model = c2.text_input("Model name or folder",
                              help="openai / groq: the model name (else MORTAR_OPENAI_MODEL / MORTAR_GROQ_MODEL). "
                                   "folder: the path of a Hugging Face model folder. python: module:function, a "
                                   "function of the chat's messages that returns the answer (the project folder is "
                                   "on the import path). Ignored for local presets.")
    c1, c2, c3, c4 = st.columns(4)
    lanes = c1.number_input("Lanes", min_value=0, value=DEFAULTS.lanes or 0, step=1,
                            help="Conversations answered at once: a local model's batch size, an HTTP SUT's requests "
                                 "in flight (64 and more for a serving engine such as vLLM). 0 = the SUT's default "
                                 f"({LOCAL_LANES} local, 4 HTTP). Never changes an answer, so it never starts another run.")
    max_new_tokens = c2.number_input("Max new tokens", min_value=1, value=DEFAULTS.max_new_tokens, step=8,
                                     help="The longest answer, in tokens. Part of the SUT's fingerprint: another "
                                          "value asks every question again, as another run.")
    orig_repeats = c3.number_input("ORIG repeats", min_value=1, value=DEFAULTS.orig_repeats, step=1,
                                   help="The noise floor: each seed dialogue is answered this many times. A detection "
                                        "on a question whose ORIG answers already disagree is marked unstable and "
                                        "reported apart. For SUTs that do not answer the same way every time.")
    confirm = c4.number_input("Confirm detections", min_value=0, value=DEFAULTS.confirm, step=1,
                              help="Ask every detection's conversations this many more times, past the answer cache "
                                   "and the server's prompt cache where it allows; a detection not found again every "
                                   "time is marked flaky and reported apart. 0 = not confirmed.")
    st.markdown("**Test methods**")
    registered = methods()
    chosen = st.multiselect("Methods", list(registered), default=list(DEFAULTS.methods),
                            format_func=lambda n: f"{n} ({registered[n].label})",
                            help=" ".join(f"{n}: {m.text}" for n, m in registered.items())
                            + " Several methods run on the same seeds and SUT and are compared in one report.")
    method_settings = {name: settings_form(m, DEFAULTS.settings_of(name)) for name, m in registered.items()}
    c1, c2 = st.columns(2)
    seed = c1.number_input("Run seed", min_value=0, value=DEFAULTS.run_seed, step=1, help="Same seed, same test cases.")
    profile = c2.selectbox("Profile", ["the tool's defaults", *PROFILES], key="launch-profile",
                           help="paper: the paper's cosine oracle at ε 0.6, the order-blind context check, no "
                                "story-support exemption, and the LLM knowledge-graph pipeline when an endpoint is "
                                "configured. Settings below that differ from the defaults keep their values.")
    st.markdown("**Oracle and context check**")
    c1, c2, c3 = st.columns(3)
    oracles = list(ORACLES)
    oracle = c1.radio("Oracle", oracles, index=oracles.index(DEFAULT_ORACLE), horizontal=True,
                      help="How answers are compared. answer (default): reads the answer's polarity, number or entity "
                           "before comparing; cosine: similarity of MiniLM sentence embeddings (the paper's); mss: "
                           "cosine combined with SQuAD exact match and F1, penalising wordy answers.")
    threshold = c2.number_input("Threshold ε", min_value=0.0, max_value=1.0, value=DEFAULTS.threshold, step=0.05,
                                placeholder="the oracle's default",
                                help="Answers at least this similar count as the same answer. Empty: the oracle's "
                                     + ", ".join(f"{o} {default_threshold(o)}" for o in oracles) + ".")
    kg_backend = c3.radio("Knowledge-graph backend", list(KG_BACKENDS), horizontal=True,
                          help="For the EC ontology check. spacy: offline (default). llm: the paper's extraction "
                               "pipeline on an LLM endpoint (see the environment variables below).")
    st.markdown("**White-box guidance** (local SUTs)")
    c1, c2, c3 = st.columns(3)
    targets = c1.radio("Targets", ["random", *SENSITIVITIES], horizontal=True,
                       help="Which words METAL's and DialTest's operators change: random, or those the SUT's answer "
                            "is most sensitive to — gri: by the gradient of the answer's loss; wali: by attention to "
                            "its least confident answer tokens.")
    budget = c2.number_input("Budget", min_value=0, value=0, step=10,
                             help="Execute only the first N test cases in the order (ORIG always runs); 0 = all.")
    order = c3.selectbox("Order", [INITIAL, *ORDERS],
                         help="With a budget: initial, gri / wali (the rounds and words the answers lean on, from the "
                              "seed conversations), gini (the SUT's uncertainty on the seed questions) or random.")
    submitted = st.form_submit_button("Start run", type="primary", icon=":material/rocket_launch:")

if submitted:
    spec = sut_kind
    if sut_kind in ("openai", "groq"):
        spec = f"{sut_kind}:{sut_model.strip()}" if sut_model.strip() else sut_kind
    elif sut_kind in ("folder", "python"):
        spec = sut_model.strip()
    config = RunConfig(
        dataset=str(ui.DATA / dataset), methods=tuple(chosen) or DEFAULTS.methods, sut=spec, run_seed=int(seed),
        settings=method_settings, oracle=oracle,
        threshold=None if threshold is None else float(threshold), kg_backend=kg_backend, limit=int(limit) or None,
        targets=targets, budget=int(budget) or None, order=order, max_new_tokens=int(max_new_tokens),
        lanes=int(lanes) or None, orig_repeats=int(orig_repeats), confirm=int(confirm))
    config, notes = apply_profile(config, None if profile not in PROFILES else profile)
    for note in notes:
        st.info(ui.md_escape(note))
    if mode == STUDY:
        study = Study(config, tuple(systems_from(systems_table)), study_name.strip() or None)
        found = study_problems(study) if chosen else ["Choose at least one test method."]
    else:
        found = problems(config) if chosen else ["Choose at least one test method."]
        if sut_kind == "folder" and not Path(spec or ".").is_dir():
            found.insert(0, "Give the path of a Hugging Face model folder on this machine.")
    for p in found:
        st.error(ui.md_escape(p))
    if not found and mode == STUDY:
        job_id = ui.start_study_job(study)
        st.success(f"Started study job {job_id} ({len(study.systems)} systems). Its progress is below; the "
                   "systems appear side by side on the Studies page as their runs finish.")
    elif not found:
        job_id = ui.start_job(config)
        st.success(f"Started job {job_id}. Its progress is below; the run's detections appear on the Violations "
                   "page when it is done.")
with st.expander("API keys and endpoints (environment variables)"):
    st.caption("Keys are read from the environment of the dashboard (or .streamlit/secrets.toml) and passed to the "
               "run's process that way; they are never stored in the database nor shown. Set them before "
               "`make run`, e.g. `export GROQ_API_KEY=…`.")
    st.dataframe([{"for": use, "variable": name, "set": "yes" if ok else "no"}
                  for use, names in KEY_VARS.items() for name, ok in ui.env_status(names).items()],
                 hide_index=True, placeholder=ui.MISSING, width="stretch")

st.subheader("Background runs")
ui.jobs_panel("launch")
