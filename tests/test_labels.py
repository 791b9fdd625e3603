"""Precision labels, samples, agreement (mortar/labels.py) and the violations query (mortar/store)."""

import json
import math
import subprocess
import sys
import threading

import pytest

from mortar import labels, metrics, store
from tests.conftest import ROOT

RUN = "run-synthetic"
RELATIONS = ("RBT", "MR1", "MR2", "MR3", "MR4")
PERTS = ("DRS", "DRR", "DRD", "DSR", "DSD")


def synthetic_store(db, n: int, run_id: str = RUN, sut: str = "synthetic-sut") -> None:
    """A run with ``n`` detections (and as many passed checks), written with SQL in one go."""
    with store.connect(db) as con:
        con.execute("INSERT INTO datasets VALUES ('ds', 'synthetic', 'none', 10) ON CONFLICT DO NOTHING")
        con.execute("INSERT INTO runs VALUES (?, 'run', 'ds', 0, ?, 'done', now(), now())",
                    [run_id, json.dumps({"sut": {"model": sut}, "kg": {"backend": "spacy", "model": "m"}})])
        con.execute("""
            INSERT INTO seed_rounds (dataset_id, seed_id, turn_id, question, answer) SELECT 'ds', 'seed-' || (i % 10), i % 16, 'Question number ' || i || '?', 'gold'
            FROM range(160) t(i) ON CONFLICT DO NOTHING""")
        con.execute("""
            INSERT INTO checks (run_id, check_id, relation, seed_id, source_round, perturbations, test_case_ids,
                                positions, text_a, text_b, similarity, ec_equivalent, violated, bug_level, unstable)
            SELECT ?, ['RBT','MR1','MR2','MR3','MR4'][1 + i % 5] || '/' || i,
                   ['RBT','MR1','MR2','MR3','MR4'][1 + i % 5], 'seed-' || (i % 10), i % 16,
                   CASE WHEN i % 5 = 0 THEN '["ORIG"]'
                        WHEN i % 5 >= 3 THEN '["DRS", "DRR"]'
                        ELSE '["' || ['DRS','DRR','DRD','DSR','DSD'][1 + (i // 5) % 5] || '"]' END,
                   '["tc"]', '[1]', 'answer ' || i || CASE WHEN i % 1000 = 8 THEN ' needle' ELSE '' END,
                   'reference ' || i, (i % 100) / 100.0, i % 5 <> 2, i % 2 = 0,
                   CASE WHEN i % 5 = 0 THEN NULL ELSE ['L1','L2','L3'][1 + i % 3] END, FALSE
            FROM range(?) t(i)""", [run_id, 2 * n])


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    db = tmp_path_factory.mktemp("big") / "big.duckdb"
    synthetic_store(db, 25_000)  # 50,000 checks, 25,000 of them violated: detections
    synthetic_store(db, 25_000, run_id="run-other", sut="other-sut")
    return db


def test_violations_query_filters_sorts_and_pages_50000_detections(big):
    """How fast it is: benchmarks/labels.py."""
    find = store.find_detections
    with store.session(big) as con:
        page, total = find(con, store.DetectionFilter())
        assert total == 50_000 and len(page) == 50
        _, in_run = find(con, store.DetectionFilter(run_ids=(RUN,)))
        assert in_run == 25_000
        _, other = find(con, store.DetectionFilter(suts=("other-sut",)))
        assert other == 25_000
        _, mr1 = find(con, store.DetectionFilter(run_ids=(RUN,), relations=("MR1",)))
        _, drs = find(con, store.DetectionFilter(run_ids=(RUN,), perturbations=("DRS",)))
        assert 0 < mr1 < in_run and 0 < drs < in_run
        _, rbt = find(con, store.DetectionFilter(run_ids=(RUN,), bug_levels=(store.NO_LEVEL,)))
        assert rbt == find(con, store.DetectionFilter(run_ids=(RUN,), relations=("RBT",)))[1]
        page, found = find(con, store.DetectionFilter(run_ids=(RUN,), text="NEEDLE"))
        assert 0 < found < 100 and page["output"].str.contains("needle").all()
        page, low = find(con, store.DetectionFilter(similarity=(0.0, 0.1)), sort="similarity", descending=True,
                         limit=10, offset=20)
        assert page["similarity"].max() <= 0.1 and list(page["similarity"]) == sorted(page["similarity"], reverse=True)
        last, _ = find(con, offset=49_990)
        assert len(last) == 10


def test_filter_values_cannot_inject_sql(big):
    with store.session(big) as con:
        _, n = store.find_detections(con, store.DetectionFilter(text="'; DROP TABLE checks; --",
                                                                   seeds=("x' OR '1'='1",)))
        assert n == 0
        assert con.execute("SELECT count(*) FROM checks").fetchone()[0] == 100_000
    with pytest.raises(ValueError):
        with store.session(big) as con:
            store.find_detections(con, sort="similarity; DROP TABLE checks")


def test_samples_are_reproducible_and_strata_take_turns(big):
    with store.session(big) as con:
        a = labels.sample_detections(con, RUN, 30, seed=1)
        assert a == labels.sample_detections(con, RUN, 30, seed=1)
        assert a != labels.sample_detections(con, RUN, 30, seed=2) and len(set(a)) == 30
        strat = labels.sample_detections(con, RUN, 8, seed=1, stratify_by=("relation",))
        assert {d.split("/")[0] for d in strat} == set(RELATIONS)  # every stratum gets its turn
        both = labels.sample_detections(con, RUN, 100, seed=1, stratify_by=("relation", "perturbation"))
        assert len(both) == 100


def test_labels_upsert_per_detection_and_annotator_and_ppd_follows(tmp_path):
    db = tmp_path / "l.duckdb"
    synthetic_store(db, 50)
    labels.save_label(RUN, "MR1/1", "ann", 3, db=db)
    labels.save_label(RUN, "MR1/1", "ann", 8, "on second thought", db=db)  # replaces, does not add
    labels.save_label(RUN, "MR1/1", "bob", 2, db=db)
    labels.save_label(RUN, "MR3/3", "ann", 1, db=db)
    labels.save_label(RUN, "MR3/3", "bob", 0, db=db)
    with pytest.raises(ValueError):
        labels.save_label(RUN, "MR1/1", "ann", 11, db=db)
    with pytest.raises(ValueError):
        labels.save_label(RUN, "MR1/1", "  ", 5, db=db)
    with store.session(db) as con:
        frame = store.read_labels(con, RUN)
        assert len(frame) == 4 and store.label_of(con, RUN, "MR1/1", "ann") == (8, "on second thought")
        ag = labels.agreement(frame, "ann", "bob")
        assert ag.common == 2 and ag.disagreements == ["MR1/1"] and ag.ppd_a == 0.5 and ag.ppd_b == 1.0
        assert ag.kappa == 0.0
        final = store.final_labels(con, RUN).set_index("detection_id")
        assert final.loc["MR1/1", "decided_by"] == "disputed" and final.loc["MR3/3", "true_positive"]
        ppd = metrics.ppd_by_run(store.final_labels(con)).set_index("run_id")
        assert ppd.loc[RUN, "PPD"] == 1.0 and ppd.loc[RUN, "disputed"] == 1
    labels.adjudicate(RUN, "MR1/1", False, "carol", "the answer is fine", db=db)
    with store.session(db) as con:
        final = store.final_labels(con, RUN).set_index("detection_id")
        assert final.loc["MR1/1", "decided_by"] == "adjudicated" and not final.loc["MR1/1", "true_positive"]
        assert metrics.ppd_by_run(store.final_labels(con)).set_index("run_id").loc[RUN, "PPD"] == 0.5


def test_precision_and_kappa_per_method(tmp_path):
    db = tmp_path / "m.duckdb"
    synthetic_store(db, 50)
    for annotator, scores in {"ann": {"RBT/0": 2, "RBT/10": 9, "MR1/6": 1, "MR3/8": 1, "MR4/4": 8},
                              "bob": {"RBT/0": 3, "RBT/10": 8, "MR1/6": 9, "MR3/8": 0}}.items():
        for detection, score in scores.items():
            labels.save_label(RUN, detection, annotator, score, db=db)
    with store.session(db) as con:
        table = labels.precision_by_method(con, RUN).set_index("method")
    assert list(table.index) == ["RBT", "MT"]  # no METAL detections in this run
    assert table.loc["RBT", "PPD"] == 0.5 and table.loc["RBT", "kappa"] == 1.0
    assert table.loc["MT", "labelled"] == 2 and table.loc["MT", "disputed"] == 1  # MR1/6: ann TP, bob FP
    assert table.loc["MT", "PPD"] == 0.5 and table.loc["MT", "both_labelled"] == 2 and table.loc["MT", "kappa"] == 0.0
    assert table.loc["MT", "annotators"] == "ann vs bob"


N_EACH = 20
WRITER = """
import sys
from mortar import labels
db, who = sys.argv[1], sys.argv[2]
for i in range(int(sys.argv[3])):
    labels.save_label("run-synthetic", f"MR1/{i}", who, i % 11, f"note {i}", db=db)
"""


def count_labels(db) -> dict:
    with store.session(db) as con:
        return dict(con.execute("SELECT annotator, count(*) FROM labels GROUP BY annotator").fetchall())


def test_two_processes_labelling_the_same_run_lose_no_label(tmp_path):
    db = tmp_path / "p.duckdb"
    synthetic_store(db, 50)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), who, str(N_EACH)], cwd=ROOT)
             for who in ("ann", "bob")]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    assert count_labels(db) == {"ann": N_EACH, "bob": N_EACH}


def test_two_sessions_in_one_server_process_lose_no_label(tmp_path):
    """Streamlit serves every browser session from one process, in threads: reads and writes interleave."""
    db = tmp_path / "t.duckdb"
    synthetic_store(db, 50)
    errors = []

    def annotate(who):
        try:
            for i in range(N_EACH):
                labels.save_label(RUN, f"MR1/{i}", who, i % 11, db=db)
                with store.session(db, read_only=True) as con:  # a page render between two labels
                    store.find_detections(con, store.DetectionFilter(run_ids=(RUN,)), limit=5)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=annotate, args=(who,)) for who in ("ann", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert count_labels(db) == {"ann": N_EACH, "bob": N_EACH}


def test_agreement_of_identical_annotators_is_perfect():
    import pandas as pd

    frame = pd.DataFrame({"detection_id": ["a", "b", "a", "b"], "annotator": ["x", "x", "y", "y"],
                          "score": [1, 9, 2, 10]})
    ag = labels.agreement(frame, "x", "y")
    assert ag.kappa == 1.0 and ag.disagreements == [] and ag.common == 2
    assert math.isnan(labels.agreement(frame, "x", "nobody").kappa)


HOLDER = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
con.close()
"""


def test_a_page_read_gives_up_while_a_run_holds_the_store(tmp_path):
    db = tmp_path / "busy.duckdb"
    synthetic_store(db, 5)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), "60"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(store.StoreBusy):
            with store.session(db, read_only=True, wait_s=0.3):
                pass
        assert holder.poll() is None  # it gave up while the store was still held, not once it was free
    finally:
        holder.terminate()
        holder.wait()
    with store.session(db, read_only=True, wait_s=0.3) as con:  # free again
        assert store.find_detections(con)[1] == 5
