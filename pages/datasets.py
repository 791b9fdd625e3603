"""Datasets: the seeds of a dataset in data/ (CoQA-format dialogues: a story and question/answer rounds)."""

import pandas as pd
import streamlit as st

from mortar import ui
from mortar.dataset import DatasetError
from mortar.formats import load_dataset

st.title("Datasets")
st.caption("Seed dialogues: a story plus question/answer rounds (CoQA format). Perturbations turn every seed into "
           "test cases. Add your own on the Launch page.")


@st.cache_data
def seeds_table(path: str, mtime: float) -> tuple[pd.DataFrame, dict]:
    dataset = load_dataset(path)
    table = pd.DataFrame([{
        "seed": s.id, "domain": s.source, "rounds": len(s.rounds), "story words": len(s.story.split()),
        "unknown answers": sum(r.is_unknown for r in s.rounds), "first question": s.rounds[0].question,
    } for s in dataset.seeds])
    return table, {s.id: s for s in dataset.seeds}


datasets = sorted(p.name for p in ui.DATA.glob("*.json*") if p.suffix in (".json", ".jsonl"))
if not datasets:
    st.info("No dataset in data/. Put a CoQA v1.0 JSON or JSONL file there, or upload one on the Launch page.")
    st.stop()
choice = st.selectbox("Dataset", datasets,
                      index=datasets.index("sample_coqa.json") if "sample_coqa.json" in datasets else 0)
try:
    path = ui.DATA / choice
    table, seeds = seeds_table(str(path), path.stat().st_mtime)
except DatasetError as e:
    st.error(str(e))
    st.stop()

c1, c2, c3 = st.columns(3)
c1.metric("Seeds", len(table), help="Seed dialogues that perturbations turn into test cases.")
c2.metric("Rounds", int(table["rounds"].sum()), help="Question/answer rounds over all seeds.")
c3.metric("Domains", table["domain"].nunique())
st.dataframe(table, hide_index=True, width="stretch")

seed_id = st.selectbox("Show a seed", list(seeds))
seed = seeds[seed_id]
left, right = st.columns([3, 2])
with left:
    st.subheader("Story")
    st.text(seed.story)  # dataset text is rendered as plain text, never as markdown or HTML
with right:
    st.subheader("Rounds")
    st.dataframe(pd.DataFrame([{"turn": r.turn_id, "question": r.question, "answer": r.answer} for r in seed.rounds]),
                 hide_index=True, width="stretch")
