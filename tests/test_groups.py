"""Bug groups: the detections of one seed question across perturbations and relations, counted, filtered like
the detections, and opened in the Inspector with all their versions."""

import json

import pytest

from mortar import labels, store
from mortar.errors import InputError
from mortar.vocab import MR1, NO_LEVEL, ORIG
from tests.conftest import fresh_copy, scripted_store


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return scripted_store(tmp_path_factory, "groups", limit=1)


@pytest.fixture
def db(built, tmp_path, monkeypatch):
    return fresh_copy(built[0], tmp_path, monkeypatch)


@pytest.fixture
def run_id(built):
    return built[1]


def all_groups(con, flt=store.DetectionFilter()):
    page, total = store.find_groups(con, flt, limit=10_000)
    assert len(page) == total
    return page


def matching(con, flt):
    """The detections that pass ``flt``, as find_detections reads them."""
    page, total = store.find_detections(con, flt, limit=10_000)
    assert len(page) == total
    return page


def test_group_counts_are_those_of_the_detections_they_contain(db, run_id):
    with store.connect(db, read_only=True) as con:
        first = con.execute("SELECT min(detection_id) FROM detections WHERE run_id = ?", [run_id]).fetchone()[0]
    labels.save_label(run_id, first, "ann", 2, db=db)
    labels.save_label(run_id, first, "bob", 8, db=db)  # two labels, one labelled detection
    with store.connect(db, read_only=True) as con:
        groups = all_groups(con)
        detections = matching(con, store.DetectionFilter())
        assert len(groups) == len(detections.groupby(["run_id", "seed_id", "source_round"]))
        assert 0 < len(groups) < len(detections)  # grouping saves triage work
        assert groups["detections"].sum() == len(detections)
        for g in groups.itertuples():
            members = store.group_detections(con, g.run_id, g.seed_id, g.source_round)
            assert g.detections == len(members)
            assert list(g.relations) == sorted(set(members["relation"])) and g.n_relations == len(g.relations)
            perts = sorted({p for ps in members["perturbations"] for p in ps})
            assert list(g.perturbations) == perts and g.n_perturbations == len(perts)
            levels = members["bug_level"].dropna()
            assert g.max_level == (levels.max() if len(levels) else None)
            assert g.labelled == (members["n_labels"] > 0).sum()
            assert g.min_similarity == pytest.approx(members["similarity"].min())
        assert groups["labelled"].sum() == 1
    assert len({tuple(p) for p in groups["perturbations"]}) > 1 and (groups["n_relations"] > 1).any()


def test_filters_apply_to_the_groups(db, run_id):
    with store.connect(db, read_only=True) as con:
        everything = all_groups(con)
        for flt in (store.DetectionFilter(relations=(MR1,)), store.DetectionFilter(perturbations=("DRS",)),
                    store.DetectionFilter(bug_levels=(NO_LEVEL,)), store.DetectionFilter(similarity=(0.0, 0.2)),
                    store.DetectionFilter(text="kite")):
            groups, detections = all_groups(con, flt), matching(con, flt)
            assert 0 < len(groups) <= len(everything), flt
            assert groups["detections"].sum() == len(detections), flt
            keys = set(zip(detections["seed_id"], detections["source_round"]))
            assert set(zip(groups["seed_id"], groups["source_round"])) == keys, flt
        assert all(list(r) == [MR1] for r in all_groups(con, store.DetectionFilter(relations=(MR1,)))["relations"])
        assert all("DRS" in p for p in all_groups(con, store.DetectionFilter(perturbations=("DRS",)))["perturbations"])
        assert all_groups(con, store.DetectionFilter(bug_levels=(NO_LEVEL,)))["max_level"].isna().all()
        assert (all_groups(con, store.DetectionFilter(similarity=(0.0, 0.2)))["min_similarity"] <= 0.2).all()
        none, total = store.find_groups(con, store.DetectionFilter(seeds=("no-such-seed",)))
        assert total == 0 and none.empty


def test_groups_are_sorted_and_paged(db):
    with store.connect(db, read_only=True) as con:
        whole = all_groups(con)
        assert list(whole["detections"]) == sorted(whole["detections"], reverse=True)  # the default: most first
        pages = [store.find_groups(con, limit=5, offset=k)[0] for k in range(0, len(whole), 5)]
        assert [tuple(r) for p in pages for r in p[["seed_id", "source_round"]].values] == \
            [tuple(r) for r in whole[["seed_id", "source_round"]].values]
        by_round = store.find_groups(con, sort="round", descending=False, limit=10_000)[0]
        assert list(by_round["source_round"]) == sorted(by_round["source_round"])
        with pytest.raises(ValueError):
            store.find_groups(con, sort="question; DROP TABLE runs")


def test_a_group_key_names_a_seed_question():
    assert store.group_key("cs-01", 3) == "cs-01:3"
    assert store.parse_group_key("cs-01:3") == ("cs-01", 3)
    assert store.parse_group_key("a:b:12") == ("a:b", 12)  # a seed id may hold colons
    for bad in ("cs-01", "cs-01:", ":3", "cs-01:three"):
        with pytest.raises(InputError):
            store.parse_group_key(bad)


def test_every_version_of_a_group_question_with_the_detections_that_name_it(db, run_id):
    with store.connect(db, read_only=True) as con:
        g = all_groups(con, store.DetectionFilter(perturbations=("DRS",))).iloc[0]
        versions = store.question_versions(con, run_id, g.seed_id, g.source_round)
        members = store.group_detections(con, run_id, g.seed_id, g.source_round)
        cases = con.execute("SELECT count(*) FROM test_case_rounds r JOIN test_cases t USING (run_id, test_case_id) "
                            "WHERE r.run_id = ? AND t.seed_id = ? AND r.source_round = ?",
                            [run_id, g.seed_id, int(g.source_round)]).fetchone()[0]
    assert len(versions) == cases and versions["perturbation"].iloc[0] == ORIG
    assert set(versions["question"]) == {versions["question"].iloc[0]}  # MORTAR asks the seed's question as it is
    named = {(t, p) for ts, ps in zip(members["test_case_ids"], members["positions"]) for t, p in zip(ts, ps)}
    flagged = {(t, p) for t, p, n in zip(versions["test_case"], versions["position"], versions["detections"]) if n}
    assert flagged == named
    per_version = sum(len(set(zip(ts, ps))) for ts, ps in zip(members["test_case_ids"], members["positions"]))
    assert versions["detections"].sum() == per_version


# -- the pages ----------------------------------------------------------------------------------------

def test_the_violations_page_switches_to_groups_and_opens_one_in_the_inspector(db, run_id):
    from streamlit.testing.v1 import AppTest

    from tests.test_pages import APP, app, by_label, metric

    at = app("violations")
    at.segmented_control(key="v-view").set_value("Groups").run()
    assert not at.exception, at.exception
    with store.connect(db, read_only=True) as con:
        groups = all_groups(con)
        mr1 = all_groups(con, store.DetectionFilter(relations=(MR1,)))
        detections = len(matching(con, store.DetectionFilter()))
    assert int(metric(at, "Matching groups")) == len(groups) and int(metric(at, "Their detections")) == detections
    shown = at.dataframe[0].value
    assert list(shown["detections"]) == list(groups["detections"])[:len(shown)]
    by_label(at.multiselect, "Relation").set_value([MR1]).run()
    assert int(metric(at, "Matching groups")) == len(mr1) and set(at.dataframe[0].value["relations"]) == {MR1}

    wanted = at.selectbox(key="v-gpick").value
    at.button(key="v-gopen").click().run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Inspector"
    group = at.query_params["group"]
    group = group[0] if isinstance(group, list) else group
    assert wanted.endswith(group)
    seed_id, turn = store.parse_group_key(group)
    with store.connect(db, read_only=True) as con:
        members = store.group_detections(con, run_id, seed_id, turn)
    assert any(s.value.startswith("Bug group") for s in at.subheader)
    listed = at.dataframe[0].value  # the group comes first, above the detection chosen in it
    assert list(listed["detection_id"]) == list(members["detection_id"])  # all of them, not only the MR1 ones
    assert int(metric(at, "Detections")) == len(members)

    # a group link (AppTest stays on the page it switched from, so open the link in a fresh one); another
    # detection of the group: the page follows it and keeps the group
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"run": run_id, "group": group})
    at.switch_page("pages/inspector.py")
    at.run()
    other = members["detection_id"].iloc[-1]
    assert any(s.value.replace("\\", "").endswith(members["detection_id"].iloc[0]) for s in at.subheader)
    at.selectbox(key=f"i-group-det-{run_id}-{seed_id}-{turn}").set_value(other).run()
    assert not at.exception, at.exception
    assert any(s.value.replace("\\", "").endswith(other) for s in at.subheader)
    assert any(s.value.startswith("Bug group") for s in at.subheader)
    assert at.query_params["group"] in (group, [group]) and at.query_params["detection"] in (other, [other])
    assert at.selectbox(key="i-det").value == other  # the run's picker shows it too

    # a detection picked from the whole run leaves the group
    outside = next(d for d in at.selectbox(key="i-det").options if d not in set(members["detection_id"]))
    at.selectbox(key="i-det").set_value(outside).run()
    assert not at.exception, at.exception
    assert not any(s.value.startswith("Bug group") for s in at.subheader) and "group" not in at.query_params
    assert [s.value.replace("\\", "") for s in at.subheader][0].endswith(outside)


def test_a_single_detection_link_still_opens_that_detection_alone(db, run_id):
    from streamlit.testing.v1 import AppTest

    from tests.test_pages import APP

    with store.connect(db, read_only=True) as con:
        det = con.execute("SELECT min(detection_id) FROM detections WHERE run_id = ? AND relation = ? AND "
                          "perturbations = ?", [run_id, MR1, json.dumps(["DRR"])]).fetchone()[0]
    at = AppTest.from_file(APP, default_timeout=30)
    at.query_params.update({"run": run_id, "detection": det})
    at.switch_page("pages/inspector.py")
    at.run()
    assert not at.exception, at.exception
    subheaders = [s.value.replace("\\", "") for s in at.subheader]
    assert subheaders[0] == f"{MR1} detection {det}" and not any(s.startswith("Bug group") for s in subheaders)
    assert "Against the seed" in subheaders
    aligned = [m.value for m in at.markdown if m.value.startswith(("**round", "~~**round"))]
    assert sum(m.startswith("~~**round") for m in aligned) >= 1  # the rounds DRR dropped, struck through
    assert sum("the detection" in m for m in aligned) == 1

    # another detection picked from the whole run: the page follows it
    other = next(d for d in at.selectbox(key="i-det").options if d != det)
    at.selectbox(key="i-det").set_value(other).run()
    assert not at.exception, at.exception
    assert [s.value.replace("\\", "") for s in at.subheader][0].endswith(other)
    assert at.query_params["detection"] in (other, [other])
