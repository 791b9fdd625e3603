"""Compare: two runs of the same test cases (two SUTs, or two versions of one) — the detections only one of them
found, Rate+ and NBugs with bootstrap intervals, B's new detections, and one seed question's answers from both
systems in every version of the dialogue. ``?a=RUN&b=RUN`` links a comparison."""

import pandas as pd
import streamlit as st

from mortar import compare, store, ui
from mortar.errors import InputError
from mortar.vocab import ALL

st.title("Compare runs")
st.caption("Run A (the baseline) against run B (another SUT, or a new version of it) on the same test cases. A "
           "detection is the same in both when the same check — relation, test case and position, or the seed "
           "question for a group relation — is violated; its bug level is compared separately.")

runs = ui.current_runs()
runs = runs[runs["checks"] > 0]
if len(runs) < 2:
    st.info("Comparing needs two finished runs of the same test cases: the same dataset, seed and test settings "
            "with two SUTs. Start them on the **Launch** page.")
    st.stop()
ids = list(runs["run_id"])  # newest first
names = {r["run_id"]: ui.run_label(r) for _, r in runs.iterrows()}
by_id = runs.set_index("run_id")


def default_pair() -> tuple[str, str]:
    """?a= and ?b= when given, else the newest run as B and the newest earlier run of its dataset as A."""
    b = st.query_params.get("b") if st.query_params.get("b") in ids else ids[0]
    if st.query_params.get("a") in ids:
        return st.query_params.get("a"), b
    same = [i for i in ids if i != b and by_id.loc[i, "dataset"] == by_id.loc[b, "dataset"]
            and by_id.loc[i, "test_cases"] == by_id.loc[b, "test_cases"]]
    return (same or [i for i in ids if i != b])[0], b


default_a, default_b = default_pair()
c1, c2 = st.columns(2)
run_a = c1.selectbox("Run A (baseline)", ids, index=ids.index(default_a), format_func=names.get, key="c-a")
run_b = c2.selectbox("Run B (candidate)", ids, index=ids.index(default_b), format_func=names.get, key="c-b")
st.query_params.from_dict({"a": run_a, "b": run_b})
sut_a, sut_b = by_id.loc[run_a, "sut"], by_id.loc[run_b, "sut"]


@st.cache_data(max_entries=16, show_spinner="Comparing the runs…")
def comparison(db: str, run_a: str, run_b: str, stamp: str) -> compare.Comparison:
    return ui.read(compare.compare_runs, run_a, run_b)


def stamp(run_id: str) -> str:
    row = by_id.loc[run_id]
    return f"{row['created_at']}|{row['checks']}|{row['status']}"


try:
    result = comparison(str(store.db_path()), run_a, run_b, f"{stamp(run_a)}|{stamp(run_b)}")
except InputError as e:
    st.error(str(e))
    st.stop()

rate = {r["scope"]: r for r in result.intervals if r["statistic"] == compare.RATE_PLUS}[ALL]
cols = st.columns(4)
cols[0].metric("New in B", len(result.only_b), help="Detections of B whose check A passed (or could not make).")
cols[1].metric("Gone in B", len(result.only_a), help="Detections of A whose check B passed.")
cols[2].metric("In both", len(result.both))
cols[3].metric("Rate+ of B", ui.fmt(rate["B"]), delta=ui.fmt(rate["B - A"]), delta_color="inverse",
               help=f"Bugs / checks over every relation; A: {ui.fmt(rate['A'])}. {ui.help_for('Rate+')}")

st.markdown("**Detections per relation and bug level**")
st.caption("'all' rows ignore the level; a level row counts the detections of that level in each run, so a detection "
           "whose level changed is 'only A' at its old level and 'only B' at its new one.")
rows = pd.DataFrame(result.rows)
ui.table(rows, key="c-rows")
ui.csv_download(rows, f"{run_a}-vs-{run_b}-detections", "c-rows-csv")

st.markdown(f"**Rate+ and NBugs with {compare.CONFIDENCE:.0%} bootstrap intervals**")
st.caption(f"Each figure with its percentile interval [low, high] from {compare.BOOTSTRAP_RESAMPLES} resamples of the "
           f"seed dialogues (with replacement, random seed {compare.BOOTSTRAP_SEED}); B - A uses the same resamples "
           "for both runs, so an interval of B - A that excludes 0 is a change beyond the seeds' spread.")
ui.table(compare.interval_table(result.intervals), key="c-intervals")
ui.csv_download(pd.DataFrame(result.intervals), f"{run_a}-vs-{run_b}-intervals", "c-intervals-csv")

st.subheader(f"New detections in B ({len(result.only_b)})")
new = pd.DataFrame(compare.detection_rows(result.only_b, result.questions))
if new.empty:
    st.success("B has no detection that A did not have.")
else:
    st.dataframe(new, hide_index=True, placeholder=ui.MISSING, width="stretch", key="c-new")
    ui.csv_download(new, f"{run_a}-vs-{run_b}-new", "c-new-csv")
with st.expander(f"Detections only in A ({len(result.only_a)})"):
    st.dataframe(pd.DataFrame(compare.detection_rows(result.only_a, result.questions)), hide_index=True, placeholder=ui.MISSING,
                 width="stretch", key="c-gone")

st.subheader("One question, both systems")
changed = {(c.seed_id, c.source_round) for c in [*result.only_b, *result.only_a]}
questions = sorted(result.questions, key=lambda k: (k not in changed, k))  # questions whose detections changed first


def question_label(key) -> str:
    mark = " · detections changed" if key in changed else ""
    return f"{key[0]} · round {key[1]}: {result.questions[key]}{mark}"


if not questions:
    st.info("The runs' seeds have no questions stored.")
    st.stop()
seed_id, turn_id = st.selectbox("Seed question", questions, format_func=question_label, key="c-question")
pairs = ui.read(store.paired_answers, run_a, run_b, seed_id, turn_id)
gold = pairs["gold_answer"].dropna()
st.caption(f"Every version of the dialogue that asks this question (the seed as it is first); gold answer: "
           f"{ui.md_escape(gold.iloc[0]) if len(gold) else '–'}")
shown = pd.DataFrame({
    "version": pairs["perturbation"], "test case": pairs["test_case_id"], "position": pairs["position"],
    "question as asked": pairs["question"],
    "EC": pairs["ec_equivalent"].map({True: "equivalent", False: "not equivalent"}).fillna("–"),
    f"A ({sut_a})": pairs["answer_a"], f"B ({sut_b})": pairs["answer_b"],
    "same": (pairs["answer_a"] == pairs["answer_b"]).map({True: "yes", False: "no"})})
# st.table renders its cells as markdown: SUT and dataset text is escaped to show as written
st.table(shown.set_index("version").map(lambda v: ui.md_escape(v) if isinstance(v, str) else v))

verdicts = [{"detection": a.check_id, "relation": a.relation, "A": a.bug_level or "bug", "B": b.bug_level or "bug"}
            for a, b in result.both if (a.seed_id, a.source_round) == (seed_id, turn_id)]
verdicts += [{"detection": c.check_id, "relation": c.relation, "A": c.bug_level or "bug", "B": "not detected"}
             for c in result.only_a if (c.seed_id, c.source_round) == (seed_id, turn_id)]
verdicts += [{"detection": c.check_id, "relation": c.relation, "A": "not detected", "B": c.bug_level or "bug"}
             for c in result.only_b if (c.seed_id, c.source_round) == (seed_id, turn_id)]
if verdicts:
    st.markdown("**Detections on this question** (the level, or 'bug' for RBT's)")
    ui.table(verdicts, key="c-verdicts")
