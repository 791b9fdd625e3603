"""Test cases of a run: ORIG plus the dialogue-level perturbations, with the EC verdict of every round."""

import streamlit as st

import ui
from mortar import store

st.title("Test cases")
st.caption("Each test case asks a seed's questions in a new order: DRS shuffles the rounds, DRR drops some, "
           "DRD repeats some, DSR and DSD shuffle a reduction or a duplication. `source_round` is the seed round "
           "asked at each position.")

runs = ui.read(ui.runs_overview)
run_id = ui.pick_run(runs, with_checks=False, key="t-run")
if run_id is None:
    st.info("No test cases yet. Launch a run, or generate test cases with "
            "`mortar generate data/sample_coqa.json --seed 7 --out cases.jsonl`.")
    st.stop()
rounds = ui.read(store.test_case_rounds, run_id)
config = ui.read(store.run_config, run_id)

kg = config.get("kg", {})
if kg:
    st.caption(f"Equivalent context check: {ui.md_escape(kg.get('backend'))} backend, {ui.md_escape(kg.get('model'))}. "
               + ui.GLOSSARY["EC"])
for seed_id, reason in config.get("failed_seeds", {}).items():
    st.warning(f"Seed {ui.md_escape(seed_id)} was left out: knowledge-graph extraction failed "
               f"({ui.md_escape(reason)}).")
perturbed = rounds[rounds["perturbation"] != "ORIG"]
if len(perturbed) and perturbed["ec_equivalent"].notna().all():
    c1, c2 = st.columns(2)
    c1.metric("Perturbed rounds", len(perturbed))
    c2.metric("Without equivalent context", int((~perturbed["ec_equivalent"].astype(bool)).sum()),
              help="These rounds fall under MR2 (context-altering); the others under MR1 (context-preserving).")

perturbation = st.multiselect("Perturbation", sorted(rounds["perturbation"].unique()))
if perturbation:
    rounds = rounds[rounds["perturbation"].isin(perturbation)]
st.dataframe(rounds, hide_index=True, width="stretch")
