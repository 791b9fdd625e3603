"""Inspector: one detection — the original and the perturbed dialogue side by side, the EC verdict of every
round, the knowledge graph around the question, and (MR3/MR4) every version of the question."""

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from mortar import store, ui
from mortar.context import context_before
from mortar.vocab import OPERATOR_TEXT, ORIG

st.title("Inspector")

runs = ui.read(ui.runs_overview)
runs = runs[runs["checks"] > 0]
if runs.empty:
    ui.no_runs_yet()
    st.stop()

target = st.session_state.get("inspect")
qp_run, qp_det = st.query_params.get("run"), st.query_params.get("detection")
if qp_run and qp_det:
    target = (qp_run, qp_det)

with st.expander("Choose a detection", expanded=target is None):
    run_id = ui.pick_run(runs, key="i-run")
    page, total = ui.read(store.find_detections, store.DetectionFilter(run_ids=(run_id,)), "detection", False, 1000)
    ids = list(page["detection_id"])
    current = target[1] if target and target[0] == run_id and target[1] in ids else None
    chosen = st.selectbox(f"Detection ({total:,} in this run; open others from the Violations page)", ids,
                          index=ids.index(current) if current else None, key="i-det", placeholder="choose one")
    if chosen and chosen != current:
        target = (run_id, chosen)

if target is None:
    st.info("Open a detection from the **Violations** page, or choose one above.")
    st.stop()
run_id, detection_id = target
st.session_state["inspect"] = target
st.query_params.update({"run": run_id, "detection": detection_id})

det = ui.read(store.detection, run_id, detection_id)
if det is None:
    st.error(f"Run {ui.md_escape(run_id)} has no detection {ui.md_escape(detection_id)}.")
    st.stop()

relation = det["relation"]
pair = len(det["test_case_ids"]) > 1  # a group relation: two versions of the question were compared
st.subheader(f"{relation} detection {ui.md_escape(detection_id)}")
st.caption(ui.help_for(relation))
c1, c2, c3, c4 = st.columns(4)
c1.metric("Relation", relation)
c2.metric("Similarity", ui.fmt(det["similarity"]), help=ui.GLOSSARY["similarity"])
c3.metric("Bug level", det["bug_level"] or "–", help=ui.LEVELS_HELP)
ec = det["ec_equivalent"]
c4.metric("EC verdict", "not checked" if pd.isna(ec) else ("equivalent" if ec else "not equivalent"),
          help=ui.GLOSSARY["EC"] + " A group detection over both kinds of version, or a method without a context "
                                   "check, has none.")

question = ui.read(store.seed_question, run_id, det["seed_id"], det["source_round"])
st.markdown(f"**Seed {ui.md_escape(det['seed_id'])}, round {det['source_round']}:**")
st.text(question or "")
left, right = st.columns(2)
left.markdown("**" + ("Answer in one version" if pair else "SUT answer") + "**")
left.text(det["text_a"])
right.markdown("**" + ("Answer in the other version" if pair else "Reference answer") + "**")
right.text(det["text_b"])

if pair:
    st.subheader("Every version of the question")
    st.caption(ui.help_for(relation) + " 'compared' marks the pair that decided the check.")
    vers = ui.read(store.versions, run_id, det)
    st.dataframe(vers, hide_index=True, width="stretch")
    options = list(range(len(vers)))
    first = next((i for i, c in enumerate(vers["compared"]) if c), 0) if options else None
    chosen_version = st.selectbox("Show this version's dialogue", options, index=first, key="i-version",
                                  format_func=lambda i: f"{vers['test_case'][i]} · position {vers['position'][i]}")
    perturbed_id = vers["test_case"][chosen_version] if chosen_version is not None else None
    position = int(vers["position"][chosen_version]) if chosen_version is not None else None
else:
    perturbed_id, position = det["test_case_ids"][0], int(det["positions"][0])

orig_id = ui.read(store.original_case_id, run_id, det["seed_id"])
original = ui.read(store.case_rounds, run_id, orig_id) if orig_id else pd.DataFrame()
perturbed = ui.read(store.case_rounds, run_id, perturbed_id) if perturbed_id else pd.DataFrame()
case = ui.read(store.test_case, run_id, perturbed_id) if perturbed_id else None


def highlight(column: str, value):
    def style(row):
        return ["background-color: #f6d5c8" if row[column] == value else ""] * len(row)
    return style


st.subheader("Dialogues")
side_by_side = bool(case and case["perturbation"] != ORIG)
left, right = st.columns(2) if side_by_side else (st.container(), None)
with left:
    st.markdown(f"**Original** — the seed's order (test case {ui.md_escape(orig_id or '–')})")
    if not original.empty:
        orig_table = pd.DataFrame({"round": original["source_round"], "question": original["question"],
                                   "SUT answer": original["sut_answer"], "gold answer": original["gold_answer"],
                                   "similarity": original["similarity"]})
        st.dataframe(orig_table.style.apply(highlight("round", det["source_round"]), axis=1).format(
            {"similarity": "{:.3f}"}, na_rep=""), hide_index=True, width="stretch", key="i-original")
if side_by_side:
    with right:
        st.markdown(f"**Perturbed** — {ui.md_escape(case['perturbation'])} (test case {ui.md_escape(perturbed_id)})")
        table = ui.verdict_table(perturbed)
        st.dataframe(table.style.apply(highlight("pos", position), axis=1).format({"similarity": "{:.3f}"}, na_rep=""),
                     hide_index=True, width="stretch", key="i-perturbed")
    seed_questions = dict(zip(original["source_round"], original["question"])) if not original.empty else {}
    changed = [(int(r["position"]), seed_questions.get(r["source_round"]), r["question"])
               for _, r in perturbed.iterrows() if seed_questions.get(r["source_round"]) not in (None, r["question"])]
    if changed:
        with st.expander(f"Questions asked differently from the seed ({len(changed)})", expanded=True):
            if case["perturbation"] in OPERATOR_TEXT:
                st.caption(f"DialTest operator {case['perturbation']}: {OPERATOR_TEXT[case['perturbation']]}.")
            if case["mutant"]:
                m = case["mutant"]
                st.caption(f"Made by the {case['guide']} search at step {m['step']} of its budget, by the operators "
                           f"{m['operators']} in turn; Gini impurity of the answer {ui.fmt(m['gini'])} (the test it "
                           f"was made from: {ui.fmt(m['parent_gini'])}).")
            for p, before, after in changed:
                old, new = ui.word_diff(before, after)
                st.markdown(f"**Position {p}** — seed: {old}  \n asked: {new}")
else:
    st.caption("An RBT detection has no perturbed dialogue: the seed's questions were asked in their order.")

sens = ui.read(store.round_sensitivity, run_id, det["seed_id"], det["source_round"])
st.subheader("What the answer leans on")
if sens is None:
    st.caption("No white-box scores for this seed yet: `mortar prioritise RUN --by gri` (or wali) computes the "
               "local SUT's sensitivity to each round of the seed conversation.")
else:
    before = set(perturbed[perturbed["position"] < position]["source_round"]) if position and not perturbed.empty \
        else None
    names, shares = list(sens["segments"]), list(sens["segments"].values())
    shown = [n + (" — not before it here" if before is not None and n.startswith("round ")
                  and int(n.split()[1]) not in before else "") for n in names]
    strip = go.Figure(go.Heatmap(z=[shares], x=shown, y=[sens["method"].upper()], colorscale="Oranges", zmin=0,
                                 text=[[f"{v:.0%}" for v in shares]], texttemplate="%{text}", showscale=False))
    strip.update_layout(height=170, margin=dict(l=10, r=10, t=30, b=10),
                        title=f"Share of the {sens['method'].upper()} sensitivity of round {det['source_round']}'s "
                              f"{'gold' if sens['target'] == 'gold' else 'own'} answer per part of the seed conversation")
    st.plotly_chart(strip, key="i-sensitivity")
    st.caption("Rounds marked 'not before it here' are what this perturbed dialogue took away from before the question.")

st.subheader("Round by round: equivalent context and knowledge graph")
dialogue = perturbed if case and not perturbed.empty else original
if dialogue.empty:
    st.stop()
positions = list(dialogue["position"])
default = positions.index(position) if position in positions else 0
pos = st.selectbox("Round", positions, index=default, key=f"i-round-{perturbed_id}",
                   format_func=lambda p: (f"position {p} · seed round "
                                          f"{int(dialogue.loc[dialogue['position'] == p, 'source_round'].iloc[0])}"
                                          + (" · the detection" if p == position else "")))
row = dialogue[dialogue["position"] == pos].iloc[0].to_dict()
st.text(row["question"])
verdict = ui.ec_summary(row)
(st.success if row["ec_equivalent"] else st.error)(verdict)
c1, c2, c3, c4 = st.columns(4)
for col, name, what in ((c1, "semantic", "the question resolves itself"),
                        (c2, "ontology", "what it needs is in the context"),
                        (c3, "story", "its pronoun has one referent in the story")):
    v = row[f"ec_{name}"]
    col.metric(f"{name} check", "–" if pd.isna(v) else ("passed" if v else "failed"), help=what)
c4.metric("follows its round", "–" if pd.isna(row["ec_follows_ok"]) else ("yes" if row["ec_follows_ok"] else "no"),
          help="An elliptical question ('Why?', 'How many?') must come right after the round it continues.")
c1, c2 = st.columns(2)
c1.markdown("**Needed (Ḡ_j)** — what the question takes from its original context")
c1.text(", ".join(row["ec_needed"]) or "nothing")
c2.markdown("**Missing** — needed entities the perturbed context lacks here")
c2.text(", ".join(row["ec_missing"]) or "nothing")

graph, why = ui.read(store.seed_graph, run_id, det["seed_id"])
if graph is None:
    st.warning(f"No knowledge graph to show: {why}.")
else:
    earlier = dialogue[dialogue["position"] < pos]
    available = context_before(graph, zip(earlier["source_round"].astype(int), earlier["ec_equivalent"].fillna(True)))
    rg = graph.round(int(row["source_round"]))
    st.markdown("**Decontextualised question** (the question with its context filled in)")
    st.text(rg.decontextualised_question)
    whole = st.toggle("Whole dialogue graph", value=False, key="i-whole",
                      help="Off: only the question's entities, what it needs and what the context holds here.")
    st.plotly_chart(ui.kg_figure(graph, int(row["source_round"]), available, whole=whole), key="i-graph",
                    config={"displaylogo": False})
    st.caption(f"{len(available)} entities in the context before this position; knowledge graphs by "
               f"{graph.backend} ({graph.model}).")

seed_story = ui.read(store.story, run_id, det["seed_id"])
if case and case["story"]:  # the test case asked with its own version of the story
    st.subheader("Story: the seed's and the version asked")
    st.caption("Words that differ are highlighted on both sides.")
    before, after = ui.word_diff(seed_story, case["story"])
    left, right = st.columns(2)
    left.markdown("**Seed story**")
    left.markdown(before)
    right.markdown(f"**Asked with** ({ui.md_escape(case['perturbation'])})")
    right.markdown(after)
else:
    with st.expander("Story"):
        st.text(seed_story)

st.subheader("Label this detection")
ui.quick_label(run_id, detection_id, key="i-label")
