"""Inspector: one detection — the original and the perturbed dialogue side by side, the perturbed one aligned to
the seed round by round with its answers' changes, the EC verdict of every round, the knowledge graph around the
question, and (MR3/MR4) every version of the question. A bug group (``?run=…&group=SEED:ROUND``, opened from the
Violations page) lists all its detections and versions above the one chosen.

What the page shows of a detection is read once per run stamp and kept for every browser session
(``mortar.ui.inspector``); the version picker and the round picker rerun only the part of the page they change
(fragments)."""

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from mortar import store, ui
from mortar.alignment import align, needed_rounds
from mortar.context import context_before
from mortar.errors import InputError
from mortar.ui.inspector import (aligned_rounds, answer_text, case_view, detection_choices, detection_view,
                                 group_view, round_figures)
from mortar.ui.kg_figure import WIDTH
from mortar.vocab import OPERATOR_TEXT, ORIG, PERSONA_VERSION_TEXT

DETECTION_MARK, NEEDED_MARK = "🟧 detection", "🟦 needed"  # the rows of the dialogue tables
GROUP = "inspect_group"  # the bug group being triaged: (run_id, seed_id, source_round), or None

st.title("Inspector")

db = str(store.db_path())
stamps = ui.run_stamps()  # one query; the reads below come from the cache while a run's stamp is unchanged
runs = ui.cached_runs_overview(db, stamps)
runs = runs[runs["checks"] > 0]
if runs.empty:
    ui.no_runs_yet()
    st.stop()


def inspect(picker: str, group: tuple | None = None) -> None:
    """A detection picker changed: inspect its detection (of this group, or alone in the run picked above)."""
    run_id, detection_id = group[0] if group else st.session_state["i-run"], st.session_state[picker]
    if detection_id:
        st.session_state["inspect"], st.session_state[GROUP] = (run_id, detection_id), group
        link = {"run": run_id, "detection": detection_id}
        if group:
            link["group"] = store.group_key(group[1], group[2])
        st.query_params.from_dict(link)


target, group = st.session_state.get("inspect"), st.session_state.get(GROUP)
qp_run, qp_det, qp_group = (st.query_params.get(k) for k in ("run", "detection", "group"))
if qp_run and qp_group:
    try:
        group = (qp_run, *store.parse_group_key(qp_group))
    except InputError as e:
        st.error(str(e))
        st.stop()
elif qp_run and qp_det:
    group = None  # a single detection's link
if qp_run and qp_det:
    target = (qp_run, qp_det)

with st.expander("Choose a detection", expanded=target is None and group is None):
    run_id = ui.pick_run(runs, key="i-run")
    ids, total = detection_choices(db, run_id, stamps.get(run_id, ""))
    # the picker shows the detection inspected, however it was opened (a link, a group, this picker)
    st.session_state["i-det"] = target[1] if target and target[0] == run_id and target[1] in ids else None
    st.selectbox(f"Detection ({total:,} in this run; open others from the Violations page)", ids, key="i-det",
                 placeholder="choose one", on_change=inspect, args=("i-det",))

if group is not None:
    g_run, g_seed, g_round = group
    group_reads = group_view(db, g_run, g_seed, g_round, stamps.get(g_run, ""))
    members = group_reads["members"]
    if members.empty:
        st.error(f"Run {ui.md_escape(g_run)} has no detection of seed {ui.md_escape(g_seed)}, round {g_round}.")
        st.stop()
    member_ids = list(members["detection_id"])
    if not (target and target[0] == g_run and target[1] in member_ids):
        target = (g_run, member_ids[0])
    st.subheader(f"Bug group: seed {ui.md_escape(g_seed)}, round {g_round}")
    st.caption("Every detection of this seed question in the run, across perturbations and relations.")
    st.text(group_reads["question"] or "")
    perturbations = sorted({p for ps in members["perturbations"] for p in ps})
    c1, c2, c3, c4, c5 = st.columns(5)
    c1.metric("Detections", len(members))
    c2.metric("Relations", members["relation"].nunique(), help=", ".join(sorted(set(members["relation"]))))
    c3.metric("Perturbations", len(perturbations), help=", ".join(perturbations))
    c4.metric("Max bug level", members["bug_level"].dropna().max() if members["bug_level"].notna().any() else "–",
              help=ui.LEVELS_HELP)
    c5.metric("Labelled", int((members["n_labels"] > 0).sum()), help="Detections with at least one precision label.")
    st.dataframe(members.assign(
        perturbations=[", ".join(p) for p in members["perturbations"]],
        versions=[", ".join(f"{t} @ {p}" for t, p in zip(ts, ps))
                  for ts, ps in zip(members["test_case_ids"], members["positions"])],
        EC=["" if pd.isna(v) else "equivalent" if v else "not equivalent" for v in members["ec_equivalent"]]),
        hide_index=True, placeholder=ui.MISSING, width="stretch", key="i-group-detections",
        column_order=["detection_id", "relation", "perturbations", "versions", "output", "reference", "similarity",
                      "EC", "bug_level", "n_labels", "mean_score"],
        column_config={"detection_id": "detection", "output": "SUT answer", "reference": "compared with",
                       "similarity": st.column_config.NumberColumn(format="%.3f"), "bug_level": "level",
                       "n_labels": "labels", "mean_score": st.column_config.NumberColumn("mean score", format="%.1f")})
    st.markdown("**Every version of the question** — each test case round that asks it")
    st.dataframe(group_reads["versions"].assign(
        EC=lambda f: ["" if pd.isna(v) else "equivalent" if v else "not equivalent" for v in f["ec_equivalent"]]
    ).drop(columns=["ec_equivalent"]), hide_index=True, placeholder=ui.MISSING, width="stretch", key="i-group-versions",
        column_config={"similarity": st.column_config.NumberColumn(format="%.3f"),
                       "detections": st.column_config.NumberColumn(help="Detections that name this version.")})
    group_pick = f"i-group-det-{g_run}-{g_seed}-{g_round}"
    st.session_state[group_pick] = target[1]
    st.selectbox("Detection of this group to inspect", member_ids, key=group_pick, on_change=inspect,
                 args=(group_pick, group))
    st.divider()

if target is None:
    st.info("Open a detection from the **Violations** page, or choose one above.")
    st.stop()
run_id, detection_id = target
st.session_state["inspect"], st.session_state[GROUP] = target, group
st.query_params.update({"run": run_id, "detection": detection_id})
if group is not None:
    st.query_params["group"] = store.group_key(group[1], group[2])
elif "group" in st.query_params:
    del st.query_params["group"]

stamp = stamps.get(run_id, "")
view = detection_view(db, run_id, detection_id, stamp)
if view is None:
    st.error(f"Run {ui.md_escape(run_id)} has no detection {ui.md_escape(detection_id)}.")
    st.stop()
det, original, orig_id = view["det"], view["original"], view["orig_id"]

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

st.markdown(f"**Seed {ui.md_escape(det['seed_id'])}, round {det['source_round']}:**")
st.text(view["question"] or "")
left, right = st.columns(2)
left.markdown("**" + ("Answer in one version" if pair else "SUT answer") + "**")
left.text(det["text_a"])
right.markdown("**" + ("Answer in the other version" if pair else "Reference answer") + "**")
right.text(det["text_b"])

seed_kg = view["graph"]
needed = (needed_rounds(seed_kg, det["source_round"], list(original["source_round"]))
          if seed_kg is not None and not original.empty else {})


def marked(table: pd.DataFrame, column: str, value, key: str) -> None:
    """The table with the detection's row (``column`` equal to ``value``) and the rounds its question needs marked
    in a first column (row colours through a pandas Styler cost more than the rest of the table)."""
    mark = np.where(table[column] == value, DETECTION_MARK,
                    np.where(table["round"].isin(list(needed)), NEEDED_MARK, ""))
    st.dataframe(table.assign(**{"": mark})[["", *table.columns]], hide_index=True, placeholder=ui.MISSING,
                 width="stretch", key=key, column_config={"similarity": st.column_config.NumberColumn(format="%.3f")})


def noise_warnings() -> None:
    """Why the detection is reported apart: unstable (ORIG disagrees with itself) or flaky (not found again)."""
    if det.get("unstable") and orig_id and not original.empty:
        at = original.loc[original["source_round"] == det["source_round"]]
        repeats = view["orig_repeats"].get(int(at["position"].iloc[0]), []) if len(at) else []
        answers = [answer_text(a) for a in [at["sut_answer"].iloc[0] if len(at) else None, *repeats]]
        st.warning("**Unstable**: the SUT answered this seed question differently when the seed dialogue (ORIG) was "
                   "asked again, so this detection may be the SUT's own noise; it is reported apart. ORIG's answers: "
                   + " · ".join(f"“{ui.md_escape(a)}”" for a in answers), icon=":material/shuffle:")
    if det.get("flaky"):
        mine = set(zip(det["test_case_ids"], det["positions"]))
        again = pd.DataFrame([{"test case": t, "position": p, "asking": k, "answer": answer_text(out)}
                              for (t, p, k), (_, out) in sorted(view["confirmations"].items()) if (t, p) in mine],
                             columns=["test case", "position", "asking", "answer"])
        st.warning("**Flaky**: when its conversations were asked again (`--confirm`), its relation did not find this "
                   "detection every time, so it may come from how the system was served; it is reported apart. The "
                   "answers given on asking again:", icon=":material/replay:")
        st.dataframe(again, hide_index=True, placeholder=ui.MISSING, width="stretch")


def dialogues(perturbed: pd.DataFrame, case: dict | None, perturbed_id: str | None, position: int | None) -> None:
    """The original and the perturbed dialogue side by side, the questions asked differently, and the perturbed
    dialogue aligned to the seed."""
    st.subheader("Dialogues")
    if needed:
        gives = ", ".join(sorted(set().union(*needed.values()))) or "the round it continues"
        st.caption(f"{NEEDED_MARK} rows: the rounds round {det['source_round']}'s question takes its context from — "
                   f"they give what it needs (Ḡ_j: {gives}).")
    elif seed_kg is None:
        st.caption("No knowledge graph for this seed: the rounds the question needs cannot be marked.")
    side_by_side = bool(case and case["perturbation"] != ORIG)
    left, right = st.columns(2) if side_by_side else (st.container(), None)
    with left:
        st.markdown(f"**Original** — the seed's order (test case {ui.md_escape(orig_id or '–')})")
        if not original.empty:
            orig_table = pd.DataFrame({"round": original["source_round"], "question": original["question"],
                                       "SUT answer": original["sut_answer"], "gold answer": original["gold_answer"],
                                       "similarity": original["similarity"]})
            marked(orig_table, "round", det["source_round"], "i-original")
    if not side_by_side:
        st.caption("An RBT detection has no perturbed dialogue: the seed's questions were asked in their order.")
        return
    with right:
        st.markdown(f"**Perturbed** — {ui.md_escape(case['perturbation'])} (test case {ui.md_escape(perturbed_id)})")
        table = ui.verdict_table(perturbed)
        marked(table, "pos", position, "i-perturbed")
    changed_questions(perturbed, case)
    if not original.empty:  # the seed as asked (ORIG) is what the perturbed dialogue is aligned to
        against_the_seed(perturbed, case, position)


def changed_questions(perturbed: pd.DataFrame, case: dict) -> None:
    seed_questions = dict(zip(original["source_round"], original["question"])) if not original.empty else {}
    changed = [(int(r["position"]), seed_questions.get(r["source_round"]), r["question"])
               for _, r in perturbed.iterrows() if seed_questions.get(r["source_round"]) not in (None, r["question"])]
    if not changed:
        return
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


def against_the_seed(perturbed: pd.DataFrame, case: dict, position: int | None) -> None:
    st.subheader("Against the seed")
    was = original.loc[original["source_round"] == det["source_round"], "sut_answer"]
    now = perturbed.loc[perturbed["position"] == position, "sut_answer"]
    before, after = answer_text(was.iloc[0] if len(was) else None), answer_text(now.iloc[0] if len(now) else None)
    st.markdown(f"**The answer's change** — round {det['source_round']} in ORIG and at position {position} here"
                + (" (the same answer)" if before == after else ""))
    old, new = ui.word_diff(before, after)
    left, right = st.columns(2)
    left.markdown(f"ORIG: {old}")
    right.markdown(f"{ui.md_escape(case['perturbation'])}: {new}")
    if list(perturbed["source_round"]) == list(original["source_round"]):
        st.caption("Every seed round is asked once, in the seed's order.")
        return
    aligned = align(list(original["source_round"]), list(perturbed["source_round"]))
    st.caption(f"The perturbed dialogue round by round in the seed's order: round → its position(s) here. "
               f"{sum(a.moved for a in aligned)} moved out of the seed's order, "
               f"{sum(a.dropped for a in aligned)} dropped (struck through), "
               f"{sum(a.duplicated for a in aligned)} asked more than once; answers that changed from ORIG are "
               "shown as a word diff.")
    with st.container(border=True, key="i-aligned"):
        st.markdown("\n\n".join(aligned_rounds(original, perturbed, needed, det["source_round"], position)))


def sensitivity(perturbed: pd.DataFrame, position: int | None) -> None:
    """The white-box sensitivity of the question's answer to each part of the seed conversation, when computed."""
    sens = view["sensitivity"]
    st.subheader("What the answer leans on")
    if sens is None:
        st.caption("No white-box scores for this seed yet: `mortar prioritise RUN --by gri` (or wali) computes the "
                   "local SUT's sensitivity to each round of the seed conversation.")
        return
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


@st.fragment
def rounds(dialogue: pd.DataFrame, beside: bool, perturbed_id: str | None, position: int | None) -> None:
    """One round of the dialogue at a time: its EC verdict and the knowledge graph around its question (``beside``:
    in the seed's context too). Picking another round or the whole graph reruns this part alone."""
    st.subheader("Round by round: equivalent context and knowledge graph")
    if dialogue.empty:
        return
    positions = list(dialogue["position"])
    default = positions.index(position) if position in positions else 0
    pos = st.selectbox("Round", positions, index=default, key=f"i-round-{perturbed_id}",
                       format_func=lambda p: (f"position {p} · seed round "
                                              f"{int(dialogue.loc[dialogue['position'] == p, 'source_round'].iloc[0])}"
                                              + (" · the detection" if p == position else "")))
    row = dialogue[dialogue["position"] == pos].iloc[0].to_dict()
    round_verdict(row)
    if seed_kg is None:
        st.warning(f"No knowledge graph to show: {view['no_graph']}.")
    else:
        round_graph(dialogue, row, pos, beside)


def round_verdict(row: dict) -> None:
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


def round_graph(dialogue: pd.DataFrame, row: dict, pos: int, beside: bool) -> None:
    """The round's knowledge graph in the dialogue's context and, ``beside``, in the seed's; laid out once per
    round and contexts (cached)."""
    source = int(row["source_round"])
    earlier = dialogue[dialogue["position"] < pos]
    available = context_before(seed_kg, zip(earlier["source_round"].astype(int),
                                            earlier["ec_equivalent"].fillna(True)))
    seed_order = ([int(r) for r in original["source_round"]] if not original.empty
                  else [r.turn_id for r in seed_kg.rounds])
    seed_before = seed_order[:seed_order.index(source)] if source in seed_order else []
    in_seed = context_before(seed_kg, ((r, True) for r in seed_before))  # ORIG rounds are equivalent
    st.markdown("**Decontextualised question** (the question with its context filled in)")
    st.text(seed_kg.round(source).decontextualised_question)
    whole = st.toggle("Whole dialogue graph", value=False, key="i-whole",
                      help="Off: only the question's entities, what it needs (Ḡ_j) and what the dialogue relates "
                           "to them. On: every entity of the dialogue.")
    kg_original, kg_perturbed = round_figures(db, run_id, det["seed_id"], stamp, seed_kg, source,
                                              tuple(sorted(in_seed)), tuple(sorted(available)), whole,
                                              2 * WIDTH if whole else WIDTH)
    chart = dict(width="content", config={"displaylogo": False})
    if beside:  # the same round, in both contexts
        kg_left, kg_right = (st.container(), st.container()) if whole else st.columns(2)
        kg_left.plotly_chart(kg_original, key="i-graph-original", **chart)
        kg_right.plotly_chart(kg_perturbed, key="i-graph", **chart)
    else:
        st.plotly_chart(kg_original, key="i-graph", **chart)
    st.caption(f"Entities in the context before this question: {len(in_seed)} in the seed's order, {len(available)} "
               f"here. Arrows are the relations the dialogue states (labelled by verb, 'is', 'has', 'of'…); red: "
               f"needed but missing here. Knowledge graphs by {seed_kg.backend} ({seed_kg.model}).")


def grounding(case: dict | None) -> None:
    """The story (or persona) the test case was asked with, against the seed's when it has its own version."""
    seed_story, persona = view["story"], view["persona"]
    name = "Persona" if persona else "Story"
    if not (case and case["story"]):
        with st.expander(name):
            st.text(seed_story)
        return
    if persona:
        st.subheader("Persona: the speaker's and the version asked")
        st.caption(f"{PERSONA_VERSION_TEXT.get(case['perturbation'], case['perturbation'])}. Words that differ are "
                   "highlighted on both sides.")
        before, after = ui.line_diff(seed_story, case["story"])
    else:
        st.subheader("Story: the seed's and the version asked")
        st.caption("Words that differ are highlighted on both sides.")
        before, after = ui.word_diff(seed_story, case["story"])
    left, right = st.columns(2)
    left.markdown(f"**Seed {name.lower()}**")
    left.markdown(before)
    right.markdown(f"**Asked with** ({ui.md_escape(case['perturbation'])})")
    right.markdown(after)


def version_shown(perturbed_id: str | None, position: int | None) -> None:
    """Everything below the detection that depends on the version of the dialogue shown."""
    noise_warnings()
    perturbed, case = case_view(db, run_id, perturbed_id, stamp) if perturbed_id else (pd.DataFrame(), None)
    dialogues(perturbed, case, perturbed_id, position)
    sensitivity(perturbed, position)
    perturbed_shown = bool(case) and not perturbed.empty
    rounds(perturbed if perturbed_shown else original, perturbed_shown and case["perturbation"] != ORIG, perturbed_id,
           position)
    grounding(case)


@st.fragment
def versions() -> None:
    """MR3/MR4: every version of the question, and the one picked shown below; picking another reruns this part
    alone."""
    st.subheader("Every version of the question")
    st.caption(ui.help_for(relation) + " 'compared' marks the pair that decided the check.")
    vers = view["versions"]
    st.dataframe(vers, hide_index=True, placeholder=ui.MISSING, width="stretch")
    options = list(range(len(vers)))
    first = next((i for i, c in enumerate(vers["compared"]) if c), 0) if options else None
    chosen = st.selectbox("Show this version's dialogue", options, index=first, key="i-version",
                          format_func=lambda i: f"{vers['test_case'][i]} · position {vers['position'][i]}")
    if chosen is None:
        version_shown(None, None)
    else:
        version_shown(vers["test_case"][chosen], int(vers["position"][chosen]))


if pair:
    versions()
else:
    version_shown(det["test_case_ids"][0], int(det["positions"][0]))

st.subheader("Label this detection")
ui.quick_label(run_id, detection_id, key="i-label", stamp=stamp)
