"""Violations: every detection (violated check) of every run, filtered, sorted and paged in DuckDB; or the same
detections as bug groups, one per seed question, to triage a group at a time."""

import json
import time

import pandas as pd
import streamlit as st

from mortar import store, ui
from mortar.relations import RELATIONS
from mortar.vocab import NO_LEVEL, ORIG, RBT

st.title("Violations")
st.caption(f"A detection is a violated check: an {RBT} round answered unlike the gold answer, or a violated relation "
           "of a test method (MORTAR's metamorphic relations on a perturbed dialogue, METAL's on a perturbed question). "
           "Pick a row to open it in the inspector.")

db = str(store.db_path())
stamps = ui.run_stamps()  # one query; the runs and the filters' choices come from the cache while no run changed
runs = ui.cached_runs_overview(db, stamps)
runs = runs[runs["checks"] > 0]
if runs.empty:
    ui.no_runs_yet()
    st.stop()
names = {r["run_id"]: ui.run_label(r) for _, r in runs.iterrows()}


@st.cache_data(max_entries=32, show_spinner=False)
def filter_choices(db: str, run_ids: tuple[str, ...], stamps: dict[str, str]) -> dict[str, list]:
    """The values each filter offers within the chosen runs, read again when a run's stamp has changed."""
    return ui.read(store.filter_choices, run_ids)


DETECTIONS, GROUPS = "Detections", "Groups"
view = st.segmented_control("Show", [DETECTIONS, GROUPS], default=DETECTIONS, required=True, key="v-view",
                            help="Groups: the detections of one seed question (seed and round) across perturbations "
                                 "and relations, counted, so that a question is triaged once.")
groups = view == GROUPS

with st.container(border=True):
    c1, c2, c3 = st.columns([2, 1, 1])
    # ?run=…&relation=…&perturbation=… (the Study page's link to the detections behind one of its cells)
    asked = {k: st.query_params.get(k) for k in ("run", "relation", "perturbation")}
    if asked["run"] in names and st.session_state.get("v-link") != asked:
        st.session_state["v-link"] = asked
        st.session_state["v-runs"] = [asked["run"]]
        st.session_state["v-relations"] = [asked["relation"]] if asked["relation"] else []
        st.session_state["v-perts"] = [asked["perturbation"]] if asked["perturbation"] else []
    default_runs = [st.session_state["current_run"]] if st.session_state.get("current_run") in names else []
    run_ids = c1.multiselect("Runs", list(names), default=None if "v-runs" in st.session_state else default_runs,
                             format_func=names.get, placeholder="all runs", key="v-runs")
    choices = filter_choices(db, tuple(run_ids), stamps)
    suts = c2.multiselect("SUT", choices["suts"], placeholder="any SUT", key="v-suts")
    relations = c3.multiselect("Relation", choices["relations"], placeholder="any relation", key="v-relations",
                               help=" ".join(ui.help_for(k) for k in RELATIONS))
    c1, c2, c3, c4 = st.columns([1, 1, 1, 2])
    perturbations = c1.multiselect("Perturbation", choices["perturbations"], placeholder="any", key="v-perts",
                                   help=f"{ORIG} is the seed as it is ({RBT}). A group detection matches any "
                                        "perturbation of its group.")
    levels = c2.multiselect("Bug level", choices["bug_levels"], placeholder="any", key="v-levels",
                            help=ui.LEVELS_HELP + f" '{NO_LEVEL}': {RBT} detections have no level.")
    seeds = c3.multiselect("Seed", choices["seeds"], placeholder="any seed", key="v-seeds")
    lo, hi = choices["similarity"]
    lo, hi = min(0.0, float(lo)), max(1.0, float(hi))
    sim = c4.slider("Similarity", lo, hi, (lo, hi), step=0.01, key="v-sim", help=ui.GLOSSARY["similarity"])
    c1, c2, c3, c4, c5, c6 = st.columns([3, 1, 1, 1, 1, 1])
    text = c1.text_input("Search the question, the SUT's answer and the reference", key="v-text",
                         placeholder="words to find (case-insensitive)")
    if groups:
        sort = c2.selectbox("Sort groups by", list(store.GROUP_SORTABLE), key="v-gsort")
        descending = c3.toggle("Descending", value=True, key="v-gdesc")
    else:
        sort = c2.selectbox("Sort by", list(store.SORTABLE), index=list(store.SORTABLE).index("similarity"),
                            key="v-sort")
        descending = c3.toggle("Descending", value=False, key="v-desc")
    page_size = c4.selectbox("Rows per page", [25, 50, 100, 200], index=1, key="v-size")
    stable_only = c5.toggle("Stable only", value=False, key="v-stable",
                            help="Leave out detections on questions whose ORIG answers already disagree when ORIG "
                                 "is answered more than once (run option --orig-repeats): the SUT's own noise.")
    confirmed_only = c6.toggle("Confirmed only", value=False, key="v-confirmed",
                               help="Leave out flaky detections: those not found again when their conversations were "
                                    "asked again (run option --confirm), which may come from how the system is "
                                    "served rather than from the test case.")

flt = store.DetectionFilter(run_ids=tuple(run_ids), suts=tuple(suts), relations=tuple(relations),
                             perturbations=tuple(perturbations), bug_levels=tuple(levels), seeds=tuple(seeds),
                             similarity=None if sim == (lo, hi) else sim, text=text, stable_only=stable_only,
                             confirmed_only=confirmed_only)


def open_group(run_id: str, seed_id: str, source_round: int) -> None:
    st.session_state["inspect_group"] = (run_id, seed_id, int(source_round))
    st.session_state["current_run"] = run_id
    st.switch_page("pages/inspector.py", query_params={"run": run_id, "group": store.group_key(seed_id, source_round)})


def paged(con, find, key: str):
    """The current page of a store search (detections or groups), its total and the page count; the page number
    kept under `key` is clamped to the pages there are (asking again only when fewer match than it needs)."""
    page_no = int(st.session_state.get(key, 1))
    page, total = find(con, flt, sort, descending, page_size, (page_no - 1) * page_size)
    pages = max(1, -(-total // page_size))
    if page_no > pages:
        st.session_state[key] = page_no = pages
        page, total = find(con, flt, sort, descending, page_size, (page_no - 1) * page_size)
    return page, total, pages, page_no


if groups:
    def fetch_groups(con):
        """How many groups and detections match, and the current page of groups, in one visit to the store."""
        detections = store.count_detections(con, flt)
        page, total, pages, page_no = paged(con, store.find_groups, "v-gpage")
        return page, total, detections, pages, page_no

    started = time.perf_counter()
    page, total, detections, pages, page_no = ui.read(fetch_groups)
    elapsed = time.perf_counter() - started
    c1, c2, c3 = st.columns([2, 1, 1])
    c1.caption(f"Showing {(page_no - 1) * page_size + 1 if total else 0}–{(page_no - 1) * page_size + len(page)} of "
               f"{total:,} bug groups · page {page_no} of {pages} · queried in {elapsed * 1000:.0f} ms")
    c2.metric("Matching groups", f"{total:,}", help="Seed questions (seed and round of a run) with at least one "
                                                     "detection that passes the filters above.")
    c3.metric("Their detections", f"{detections:,}", help="Detections that pass every filter above.")
    if page.empty:
        st.info("No detection matches these filters.")
        st.stop()
    table = page.assign(relations=[", ".join(r) for r in page["relations"]],
                        perturbations=[", ".join(p) for p in page["perturbations"]])
    col = st.column_config
    event = st.dataframe(
        table, hide_index=True, placeholder=ui.MISSING, width="stretch", on_select="rerun", selection_mode="single-row", key="v-groups",
        column_order=["seed_id", "source_round", "question", "detections", "relations", "perturbations", "max_level",
                      "labelled", "min_similarity", "sut", "run_id"],
        column_config={
            "seed_id": col.TextColumn("seed"), "source_round": col.NumberColumn("round", help="The seed round j."),
            "detections": col.NumberColumn(help="Detections of this question that pass the filters."),
            "relations": col.TextColumn(help="The relations that flagged it."),
            "perturbations": col.TextColumn(help="The versions of the dialogue it was flagged in."),
            "max_level": col.TextColumn("max level", help=ui.LEVELS_HELP),
            "labelled": col.NumberColumn(help="Detections of the group with at least one precision label."),
            "min_similarity": col.NumberColumn("min similarity", format="%.3f", help=ui.GLOSSARY["similarity"]),
            "sut": col.TextColumn("SUT"), "run_id": col.TextColumn("run"),
        })
    rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
    if rows:
        chosen = page.iloc[rows[0]]
        open_group(chosen["run_id"], chosen["seed_id"], chosen["source_round"])
    c1, c2, c3 = st.columns([1, 3, 1], vertical_alignment="bottom")
    c1.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1, key="v-gpage")
    keys = {f"{r}|{store.group_key(s, j)}": f"{s} round {j} · {n} detections"
            for r, s, j, n in zip(page["run_id"], page["seed_id"], page["source_round"], page["detections"])}
    pick = c2.selectbox("Group to inspect (or click a row)", list(keys), format_func=keys.get, key="v-gpick")
    if c3.button("Open the group in the inspector", icon=":material/hub:", key="v-gopen"):
        run_id, key = pick.split("|", 1)
        open_group(run_id, *store.parse_group_key(key))
    st.stop()


def fetch(con):
    """The matching count and the current page, in one visit to the store."""
    return paged(con, store.find_detections, "v-page")


started = time.perf_counter()
page, total, pages, page_no = ui.read(fetch)
elapsed = time.perf_counter() - started
c1, c2 = st.columns([3, 1])
c1.caption(f"Showing {(page_no - 1) * page_size + 1 if total else 0}–{(page_no - 1) * page_size + len(page)} of "
           f"{total:,} matching detections · page {page_no} of {pages} · queried in {elapsed * 1000:.0f} ms")
c2.metric("Matching detections", f"{total:,}", help="Detections that pass every filter above.")

if page.empty:
    st.info("No detection matches these filters.")
    st.stop()

table = page.assign(perturbations=[", ".join(json.loads(p)) for p in page["perturbations"]],
                    EC=[("" if pd.isna(v) else "equivalent" if v else "not equivalent") for v in page["ec_equivalent"]])
table = table.drop(columns=["ec_equivalent"])
col = st.column_config
event = st.dataframe(
    table, hide_index=True, placeholder=ui.MISSING, width="stretch", on_select="rerun", selection_mode="single-row", key="v-table",
    column_order=["detection_id", "relation", "perturbations", "seed_id", "source_round", "question", "output",
                  "reference", "similarity", "EC", "bug_level", *(["unstable"] if table["unstable"].any() else []),
                  *(["flaky"] if table["flaky"].any() else []),
                  "n_labels", "mean_score", "sut", "run_id"],
    column_config={
        "detection_id": col.TextColumn("detection"),
        "seed_id": col.TextColumn("seed"), "source_round": col.NumberColumn("round", help="The seed round j."),
        "output": col.TextColumn("SUT answer", help="The SUT's answer (a group relation: one answer of the compared pair)."),
        "reference": col.TextColumn("compared with", help="The reference answer (a group relation: the other answer)."),
        "similarity": col.NumberColumn(format="%.3f", help=ui.GLOSSARY["similarity"]),
        "EC": col.TextColumn(help=ui.GLOSSARY["EC"]),
        "bug_level": col.TextColumn("level", help=ui.LEVELS_HELP),
        "unstable": col.CheckboxColumn("unstable", help="ORIG's repeated answers to this question already "
                                                         "disagree (--orig-repeats): reported apart."),
        "flaky": col.CheckboxColumn("flaky", help="Not found again when its conversations were asked again "
                                                   "(--confirm): reported apart, in no headline figure."),
        "n_labels": col.NumberColumn("labels", help="Precision labels given so far."),
        "mean_score": col.NumberColumn("mean score", format="%.1f",
                                       help="Mean acceptability score (0–10; below 6 = true positive)."),
        "sut": col.TextColumn("SUT"), "run_id": col.TextColumn("run"),
    })
rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
if rows:
    chosen = page.iloc[rows[0]]
    ui.open_inspector(chosen["run_id"], chosen["detection_id"])

c1, c2, c3 = st.columns([1, 3, 1], vertical_alignment="bottom")
c1.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1, key="v-page")
keys = [f"{r}|{d}" for r, d in zip(page["run_id"], page["detection_id"])]
pick = c2.selectbox("Detection to inspect (or click a row)", keys, format_func=lambda k: k.split("|", 1)[1],
                    key="v-pick")
if pick:  # a link: the Inspector opens without this page running again first (and in a new tab if wanted)
    run_id, detection_id = pick.split("|", 1)
    c3.page_link("pages/inspector.py", label="Open in the inspector", icon=":material/hub:",
                 query_params={"run": run_id, "detection": detection_id})
