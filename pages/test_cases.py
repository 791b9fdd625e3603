"""Test cases of a run: the seeds as they are plus every method's test cases, with the EC verdict of every round."""

import streamlit as st

from mortar import store, ui
from mortar.vocab import DIALOGUE_PERTURBATIONS, MR1, MR2, ORIG, PERTURBATION_TEXT

st.title("Test cases")
st.caption("Each test case asks a seed's questions in a new order — "
           + "; ".join(f"{p}: {PERTURBATION_TEXT[p]}" for p in DIALOGUE_PERTURBATIONS)
           + f" — or with one question changed. {ORIG} is the seed as it is. `source_round` is the seed round asked at "
           "each position.")

runs = ui.current_runs()
run_id = ui.pick_run(runs, with_checks=False, key="t-run")
if run_id is None:
    st.info("No test cases yet. Launch a run, or generate test cases with "
            "`mortar generate data/sample_coqa.json --seed 7 --out cases.jsonl`.")
    st.stop()
rounds = ui.read(store.test_case_rounds, run_id)
config = ui.read(store.stored_config, run_id)

if config.kg_backend:
    st.caption(f"Equivalent context check: {ui.md_escape(config.kg_backend)} backend, {ui.md_escape(config.kg_model)}. "
               + ui.GLOSSARY["EC"])
for seed_id, reason in config.failed_seeds.items():
    st.warning(f"Seed {ui.md_escape(seed_id)} was left out: knowledge-graph extraction failed "
               f"({ui.md_escape(reason)}).")
perturbed = rounds[rounds["perturbation"].isin(DIALOGUE_PERTURBATIONS)]
if len(perturbed) and perturbed["ec_equivalent"].notna().all():
    c1, c2 = st.columns(2)
    c1.metric("Perturbed rounds", len(perturbed))
    c2.metric("Without equivalent context", int((~perturbed["ec_equivalent"].astype(bool)).sum()),
              help=f"These rounds fall under {MR2} (context-altering); the others under {MR1} (context-preserving).")

perturbation = st.multiselect("Perturbation", sorted(rounds["perturbation"].unique()))
if perturbation:
    rounds = rounds[rounds["perturbation"].isin(perturbation)]
st.dataframe(rounds, hide_index=True, placeholder=ui.MISSING, width="stretch")
