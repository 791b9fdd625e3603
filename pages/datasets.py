"""Datasets: the seeds of a dataset — a file in data/ in any supported format, or one a run has stored (a story or
grounding text, and question/answer rounds) — and an upload checked by the loader."""

from pathlib import Path

import pandas as pd
import streamlit as st

from mortar import store, ui
from mortar.dataset import DatasetError
from mortar.formats import FORMATS, detect_format, load_dataset
from mortar.ui.datasets import data_files, upload_box

st.title("Datasets")
st.caption("Seed dialogues: a grounding text (a story, a system message) and question/answer rounds. Perturbations "
           "turn every seed into test cases. Formats: " + "; ".join(f"{f.name} ({f.text})" for f in FORMATS.values())
           + ".")


def table_of(seeds) -> pd.DataFrame:
    return pd.DataFrame([{
        "seed": s.id, "domain": s.source, "rounds": len(s.rounds), "grounding words": len(s.story.split()),
        "unknown answers": sum(r.is_unknown for r in s.rounds), "first question": s.rounds[0].question,
    } for s in seeds])


@st.cache_data
def file_seeds(path: str, mtime: float) -> tuple[str, list]:
    raw = Path(path).read_bytes()
    return detect_format(Path(path), raw), list(load_dataset(path).seeds)


@st.cache_data
def stored(dataset_id: str, stamp: str) -> list:
    return ui.read(store.stored_seeds, dataset_id)


added = upload_box("datasets-upload", ui.DATA)
files = data_files(ui.DATA)
in_store = ui.read(store.stored_datasets)
choices = {f"data/{name}": ("file", name) for name in files}
for row in in_store.itertuples():
    if not (Path(row.path).resolve().parent == ui.DATA.resolve() and row.name in files):
        choices[f"{row.name} — stored by {row.runs} run{'s' if row.runs != 1 else ''} ({row.path})"] = ("store", row)
if not choices:
    st.info("No dataset yet: add one above, or put a file into data/.")
    st.stop()
labels = list(choices)
wanted = f"data/{added}" if added else "data/sample_coqa.json"
choice = st.selectbox("Dataset", labels, index=labels.index(wanted) if wanted in labels else 0,
                      help="Files in data/, and every dataset a run stored (its seeds are read from the store when "
                           "the file is elsewhere or gone).")
kind, what = choices[choice]
try:
    if kind == "file":
        path = ui.DATA / what
        fmt, seeds = file_seeds(str(path), path.stat().st_mtime)
    else:
        fmt, seeds = "stored", stored(what.dataset_id, f"{what.seeds}")
except DatasetError as e:
    st.error(ui.md_escape(str(e)))
    st.stop()
table = table_of(seeds)

c1, c2, c3, c4 = st.columns(4)
c1.metric("Seeds", len(table), help="Seed dialogues that perturbations turn into test cases.")
c2.metric("Rounds", int(table["rounds"].sum()), help="Question/answer rounds over all seeds.")
c3.metric("Domains", table["domain"].nunique())
c4.metric("Format", fmt, help="Detected from the file's content (or read from the store).")
st.dataframe(table, hide_index=True, placeholder=ui.MISSING, width="stretch")

by_id = {s.id: s for s in seeds}
seed_id = st.selectbox("Show a seed", list(by_id))
seed = by_id[seed_id]
left, right = st.columns([3, 2])
with left:
    st.subheader("Grounding")
    st.text(seed.story)  # dataset text is rendered as plain text, never as markdown or HTML
with right:
    st.subheader("Rounds")
    st.dataframe(pd.DataFrame([{"turn": r.turn_id, "question": r.question, "answer": r.answer} for r in seed.rounds]),
                 hide_index=True, placeholder=ui.MISSING, width="stretch")
