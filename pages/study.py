"""Study: several dialogue systems on one test suite, side by side — a systems × metrics heat map, the robustness
drop with intervals, the paper's tables per system, the detections behind any cell, and one question's answers
from every system in every version of the dialogue. ``?study=ID`` links a study."""

import pandas as pd
import streamlit as st

from mortar import figures, store, ui
from mortar.profiles import settings_lines
from mortar.study_report import metrics_matrix, study_report, wide

st.title("Studies")
st.caption("A study runs one test suite — the same seeds, test cases and context verdicts — against several "
           "dialogue systems and reads every table with one row per system, as the paper compares DS1–DS6. Start "
           "one on the **Launch** page or with `mortar study`.")

studies = ui.read(store.read_studies)
if studies.empty:
    st.info("No study yet. Launch one (Launch page, *Study* tab), or from a shell: "
            "`mortar study data/study_local.yaml` tests the three bundled local systems on the sample.")
    st.stop()
ids = list(studies["study_id"])
by_id = studies.set_index("study_id")


def study_name(study_id: str) -> str:
    row = by_id.loc[study_id]
    name = f"{row['name']} · " if row["name"] else ""
    return f"{name}{study_id} · {row['dataset']} · {row['runs_done']}/{row['systems']} systems done"


wanted = st.query_params.get("study")
study_id = st.selectbox("Study", ids, index=ids.index(wanted) if wanted in ids else 0, format_func=study_name,
                        key="s-study")
st.query_params["study"] = study_id


@st.cache_data(max_entries=8, show_spinner="Reading the study…")
def report(db: str, study_id: str, stamp: str) -> dict:
    return ui.read(study_report, study_id)


systems = ui.read(store.study_systems, study_id)
stamp = "|".join(f"{r.system}:{r.run_id}:{r.status}" for r in systems.itertuples())
r = report(str(store.db_path()), study_id, stamp)

ui.table(r["systems"], key="s-systems")
against = settings_lines(r["config"])
if against:
    st.caption(ui.md_escape(against[0] + " " + "; ".join(line.strip() for line in against[1:])))
if not r["headline"]:
    st.info("No system's run is done yet: the tables appear as the runs finish (progress on the Launch page).")
    st.stop()
unfinished = systems[systems["status"] != "done"]
if len(unfinished):
    st.warning(ui.md_escape(f"Not done yet: {', '.join(unfinished['system'])} — shown as their runs finish."))

matrix = metrics_matrix(r)
st.plotly_chart(figures.study_heatmap(matrix), width="stretch", key="s-heat")
ui.csv_download(matrix.rename_axis("system").reset_index(), f"{study_id}-matrix", "s-heat-csv")
st.plotly_chart(figures.robustness(r["robustness"]), width="stretch", key="s-robust")
st.caption("On the same questions — the perturbed versions of seed questions that kept their context (MR1) — seed "
           "accuracy is the share answered right in the seed dialogue (RBT), perturbed accuracy the share answered "
           "right in the perturbed one. The drop between them is how much worse a system does in multi-turn use; "
           "the whiskers are 95% bootstrap intervals over the seed dialogues.")

relations_tab, perturbations_tab, levels_tab, vi_tab, headline_tab = st.tabs(
    ["Per relation (Table VIII)", "Per perturbation (Table VII)", "Bug levels (Table IV)", "Test cases (Table VI)",
     "NBugs and Rate+ with intervals"])
with relations_tab:
    ui.table(wide(r["table_viii"], "relation"), key="s-viii")
    if r["table_viii"]:
        st.plotly_chart(figures.study_breakdown(r["table_viii"], "relation"), width="stretch", key="s-viii-fig")
with perturbations_tab:
    ui.table(wide(r["table_vii"], "perturbation"), key="s-vii")
    if r["table_vii"]:
        st.plotly_chart(figures.study_breakdown(r["table_vii"], "perturbation"), width="stretch", key="s-vii-fig")
with levels_tab:
    st.caption(ui.LEVELS_HELP)
    ui.table(r["table_iv"], key="s-iv")
with vi_tab:
    ui.table(r["table_vi"], key="s-vi")
with headline_tab:
    ui.table(r["headline"], key="s-headline")
    if r["precision"]:
        st.markdown("**Precision of the labelled detections (PPD) per system**")
        ui.table(r["precision"], key="s-ppd")

# The two pickers below rerun only their own part of the page (a fragment): the figures above stay as they are.
@st.fragment
def cell_detections(cells: pd.DataFrame, runs: dict[str, str]) -> None:
    st.subheader("The detections behind a cell")
    c1, c2, c3, c4 = st.columns([1, 1, 1, 1])
    system = c1.selectbox("System", list(dict.fromkeys(cells["system"])), key="s-cell-system")
    relation = c2.selectbox("Relation", list(dict.fromkeys(cells["relation"])), key="s-cell-relation")
    versions = list(dict.fromkeys(cells.loc[cells["relation"] == relation, "perturbation"]))
    perturbation = c3.selectbox("Perturbation", ["any", *versions], key="s-cell-pert")
    mine = cells[(cells["system"] == system) & (cells["relation"] == relation)
                 & ((cells["perturbation"] == perturbation) if perturbation != "any" else True)]
    bugs = int(mine["bugs"].sum())
    c4.metric("Detections", bugs, help="Violated checks of this system, relation and perturbation (a group detection "
                                       "counts for each perturbation of its group).")
    if st.button("Open them in Violations", icon=":material/search:", disabled=bugs == 0, key="s-open"):
        link = {"run": runs[system], "relation": relation}
        if perturbation != "any":
            link["perturbation"] = perturbation
        st.session_state["current_run"] = runs[system]
        st.switch_page("pages/violations.py", query_params=link)


@st.fragment
def one_question(done: list) -> None:
    st.subheader("One question, every system")
    first = done[0].run_id
    text = ui.read(store.seed_questions, first)
    if not text:
        return
    flagged = ui.read(store.questions_with_detections, [s.run_id for s in done])
    keys = sorted(text, key=lambda k: (-flagged.get(k, 0), k))  # the questions with the most detections first
    seed_id, turn_id = st.selectbox("Seed question", keys, key="s-question",
                                    format_func=lambda k: f"{k[0]} · round {k[1]}: {text[k]}"
                                    + (f" · {flagged[k]} detections" if k in flagged else ""))
    answers = ui.read(store.question_answers, [s.run_id for s in done], seed_id, int(turn_id))
    gold = answers["gold_answer"].dropna()
    st.caption(f"Every version of the dialogue that asks this question (the seed as it is first), each system's answer "
               f"there; gold answer: {ui.md_escape(gold.iloc[0]) if len(gold) else '–'}")
    shown = pd.DataFrame({"version": answers["perturbation"], "position": answers["position"],
                          "question as asked": answers["question"],
                          "EC": answers["ec_equivalent"].map({True: "equivalent", False: "not equivalent"}).fillna("–"),
                          **{s.system: answers[s.run_id] for s in done}})
    st.dataframe(shown, hide_index=True, placeholder=ui.MISSING, width="stretch", key="s-answers")


cell_detections(pd.DataFrame(r["breakdown"]), dict(zip(systems["system"], systems["run_id"])))
one_question([s for s in systems.itertuples() if s.status == "done"])
