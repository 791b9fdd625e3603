import json

import duckdb
import pytest

from mortar import labels, store
from mortar.formats import load_dataset
from mortar.perturb import PerturbationSettings
from mortar.pipeline import generate
from tests.conftest import ROOT, coqa_record

TABLES = ("datasets", "seeds", "seed_rounds", "runs", "test_cases", "test_case_rounds")


def counts(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        con.close()


def test_generate_writes_everything_once_and_is_idempotent(write_coqa, db):
    dataset = load_dataset(write_coqa([coqa_record("a", 10), coqa_record("b", 12)]))
    gen = generate(dataset, 7, PerturbationSettings(), db=db)
    run_id, cases = gen.run_id, gen.cases
    first = counts(db)
    assert first["seeds"] == 2 and first["seed_rounds"] == 22
    assert first["test_cases"] == len(cases) == 12
    assert first["test_case_rounds"] == sum(len(c.source_rounds) for c in cases)
    assert generate(dataset, 7, PerturbationSettings(), db=db).run_id == run_id
    assert counts(db) == first


def test_other_seed_is_another_run_sharing_the_seeds(write_coqa, db):
    dataset = load_dataset(write_coqa([coqa_record("a", 10)]))
    a = generate(dataset, 7, PerturbationSettings(), db=db).run_id
    b = generate(dataset, 8, PerturbationSettings(), db=db).run_id
    assert a != b
    c = counts(db)
    assert c["runs"] == 2 and c["seeds"] == 1 and c["test_cases"] == 12


def test_stored_rounds_carry_source_round_and_question(write_coqa, db):
    dataset = load_dataset(write_coqa([coqa_record("a", 5)]))
    gen = generate(dataset, 1, PerturbationSettings(perturbations=("DRS",)), db=db)
    run_id, cases = gen.run_id, gen.cases
    with store.connect(db, read_only=True) as con:
        assert store.resolve_run_id(con, "latest") == run_id
        rows = store.test_case_rounds(con, run_id)
    drs = rows[rows.perturbation == "DRS"].sort_values("position")
    assert list(drs.source_round) == list(cases[1].source_rounds)
    assert list(drs.question) == [f"Question {k}?" for k in cases[1].source_rounds]


def test_an_unknown_run_is_an_input_error(db):
    from mortar.errors import InputError

    with store.connect(db) as con:
        for lookup in (lambda: store.resolve_run_id(con, "latest"), lambda: store.run_config(con, "nope")):
            with pytest.raises(store.UnknownRun) as e:
                lookup()
            assert isinstance(e.value, InputError) and isinstance(e.value, LookupError)


def test_db_location_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("MORTAR_DB", str(tmp_path / "env.duckdb"))
    assert store.db_path() == tmp_path / "env.duckdb"
    assert store.db_path(tmp_path / "flag.duckdb") == tmp_path / "flag.duckdb"
    monkeypatch.delenv("MORTAR_DB")
    assert store.db_path() == store.DEFAULT_DB


# -- the stored run configuration, read typed ---------------------------------------------------------

def test_stored_config_reads_what_the_run_stored_and_none_for_what_it_did_not():
    config = store.StoredConfig.from_json(json.dumps({
        "sut": {"model": "m1", "backend": "local"}, "kg": {"backend": "spacy", "model": "en_core_web_sm"},
        "oracle": "answer", "threshold": 0.5, "method": "mortar", "failed_seeds": {"s": "no JSON"}}))
    assert (config.sut_model, config.kg_backend, config.kg_model) == ("m1", "spacy", "en_core_web_sm")
    assert (config.oracle, config.threshold, config.method, config.failed_seeds) == ("answer", 0.5, "mortar",
                                                                                       {"s": "no JSON"})
    generation = store.StoredConfig.from_json(json.dumps({"kg": {"backend": "spacy", "model": "m"}}))
    assert generation.sut_model is generation.oracle is generation.threshold is generation.method is None
    assert generation.failed_seeds == {} and generation.raw == {"kg": {"backend": "spacy", "model": "m"}}
    assert store.StoredConfig.from_json(json.dumps({"threshold": "0.5", "sut": "m"})).threshold is None


def test_no_sql_reads_the_run_configuration_by_json_path():
    for path in [*(ROOT / "mortar").rglob("*.py"), *(ROOT / "pages").glob("*.py")]:
        assert "json_extract" not in path.read_text(), path


# -- runs and their stored metrics ---------------------------------------------------------------------

def test_runs_are_listed_with_counts_and_stored_metrics_replace_per_run(write_coqa, db):
    dataset = load_dataset(write_coqa([coqa_record("a", 5)]))
    run_id = generate(dataset, 1, PerturbationSettings(perturbations=("DRS",)), db=db).run_id
    with store.connect(db) as con:
        runs = store.read_runs(con)
        assert list(runs.columns) == ["run_id", "kind", "dataset", "status", "created_at", "test_cases", "checks"]
        assert runs.iloc[0][["run_id", "kind", "test_cases", "checks"]].tolist() == [run_id, "generate", 2, 0]
        store.write_run_metrics(con, run_id, [{"method": "MT", "metric": "NBugs", "value": 3},
                                              {"method": "MT", "metric": "Rate+", "value": 0.25}])
        store.write_run_metrics(con, "other", [{"method": "RBT", "metric": "NBugs", "value": 1}])
        store.write_run_metrics(con, run_id, [{"method": "MT", "metric": "NBugs", "value": 4}])  # replaces the run's
        stored = store.read_run_metrics(con)
    assert stored.values.tolist() == [[run_id, "MT", "NBugs", 4.0], ["other", "RBT", "NBugs", 1.0]]


def test_a_store_from_an_older_version_is_migrated_when_first_opened_read_only(write_coqa, db):
    dataset = load_dataset(write_coqa([coqa_record("a", 5)]))
    generated = generate(dataset, 1, PerturbationSettings(perturbations=("DRS",)), db=db)
    con = duckdb.connect(str(db))
    con.execute("DROP TABLE run_metrics")
    con.execute("ALTER TABLE test_cases DROP COLUMN target_round")
    con.execute("ALTER TABLE test_cases DROP COLUMN story")
    con.execute("ALTER TABLE test_cases DROP COLUMN guide")
    con.execute("DROP TABLE mutants")
    con.execute("ALTER TABLE answers DROP COLUMN gini")
    con.execute("DROP TABLE store_meta")  # older versions recorded no schema
    con.close()
    with store.connect(db, read_only=True) as con:  # the dashboard's first read of an old file
        assert store.read_run_metrics(con).empty
        assert store.read_mutants(con, generated.run_id) == []
        cases, _ = store.read_cases_and_verdicts(con, generated.run_id)
    assert sorted(c.test_case_id for c in cases) == sorted(c.test_case_id for c in generated.cases)


def test_a_store_brought_up_to_another_schema_is_brought_up_to_this_one_on_write(db):
    with store.connect(db) as con:
        con.execute("DROP TABLE orig_samples")
        con.execute("UPDATE store_meta SET value = 'an-older-one'")
    with store.connect(db) as con:
        assert con.execute("SELECT count(*) FROM orig_samples").fetchone() == (0,)
        assert con.execute("SELECT value FROM store_meta").fetchall() == [(store.SCHEMA_SHA,)]


# -- the detection search: the SUT comes from the runs' configurations ---------------------------------

def stored_detections(db, runs: dict[str, dict]) -> None:
    """One detection per run; ``runs`` maps run id → its configuration."""
    with store.connect(db) as con:
        con.execute("INSERT INTO datasets VALUES ('ds', 'd', 'none', 1)")
        con.execute("INSERT INTO seed_rounds (dataset_id, seed_id, turn_id, question, answer) "
                    "VALUES ('ds', 's', 1, 'Where?', 'home')")
        for i, (run_id, config) in enumerate(runs.items()):
            con.execute("INSERT INTO runs VALUES (?, 'run', 'ds', 0, ?, 'done', now(), now())",
                        [run_id, json.dumps(config)])
            con.execute("""INSERT INTO checks (run_id, check_id, relation, seed_id, source_round, perturbations,
                           test_case_ids, positions, text_a, text_b, similarity, ec_equivalent, violated, bug_level,
                           unstable) VALUES (?, 'MR1/1', 'MR1', 's', 1, '["DRS"]', '["tc"]', '[1]',
                           'out', 'ref', ?, TRUE, TRUE, 'L1', FALSE)""", [run_id, i / 10])


def test_the_sut_filter_and_column_come_from_each_runs_configuration(db):
    stored_detections(db, {"r1": {"sut": {"model": "b-sut"}}, "r2": {"sut": {"model": "a-sut"}}, "r3": {}})
    with store.connect(db, read_only=True) as con:
        assert store.filter_choices(con)["suts"] == ["?", "a-sut", "b-sut"]
        assert store.filter_choices(con, ("r1",))["suts"] == ["b-sut"]
        page, n = store.find_detections(con, sort="SUT")
        assert n == 3 and page[["run_id", "sut"]].values.tolist() == [["r3", "?"], ["r2", "a-sut"], ["r1", "b-sut"]]
        assert store.find_detections(con, store.DetectionFilter(suts=("b-sut", "?")))[0]["run_id"].tolist() == ["r1", "r3"]
        assert store.find_detections(con, store.DetectionFilter(suts=("nobody",)))[1] == 0
        assert store.find_detections(con, store.DetectionFilter(suts=("a-sut",), run_ids=("r1",)))[1] == 0


def test_the_seed_graph_is_the_one_the_runs_context_check_used(write_coqa, db):
    dataset = load_dataset(write_coqa([coqa_record("a", 5)]))
    run_id = generate(dataset, 1, PerturbationSettings(perturbations=("DRS",)), db=db).run_id
    with store.connect(db) as con:
        graph, why = store.seed_graph(con, run_id, "a")
        assert graph is not None and why is None
        assert store.seed_graph(con, run_id, "nobody") == (None, "no knowledge graph is stored for this seed")
        config = store.run_config(con, run_id)
        con.execute("UPDATE runs SET config = ? WHERE run_id = ?",
                    [json.dumps({**config, "kg": {"backend": "llm", "model": "other"}}), run_id])
        assert store.seed_graph(con, run_id, "a") == (None, "no knowledge graph is stored for this seed")
        assert store.seed_question(con, run_id, "a", 2) == "Question 2?"
        assert store.original_case_id(con, run_id, "a") is not None


def test_a_runs_stamp_changes_with_its_results_and_labels_and_only_then(write_coqa, db):
    """The dashboard keys its cached reads of a run by its stamp: a label or a new status must change it."""
    dataset = load_dataset(write_coqa([coqa_record("a", 5)]))
    a = generate(dataset, 1, PerturbationSettings(), db=db).run_id
    b = generate(dataset, 2, PerturbationSettings(), db=db).run_id

    def stamps():
        with store.session(db) as con:
            return store.run_stamps(con)

    before = stamps()
    assert set(before) == {a, b} and stamps() == before
    labels.save_label(a, "MR1/x", "ann", 3, db=db)
    labelled = stamps()
    assert labelled[a] != before[a] and labelled[b] == before[b]
    labels.save_label(a, "MR1/x", "ann", 7, db=db)  # replaced: as many labels as before, a later one
    assert stamps()[a] != labelled[a]
    with store.connect(db) as con:
        store.write_run_status(con, b, "failed")
    assert stamps()[b] != before[b]


def test_the_inspectors_detection_ids_are_the_first_of_the_run_by_id_and_its_count(db):
    stored_detections(db, {"r1": {}, "r2": {}})
    with store.connect(db) as con:
        for k in (7, 3, 12, 5):  # more detections of r1, stored out of order
            con.execute("""INSERT INTO checks (run_id, check_id, relation, seed_id, source_round, perturbations,
                           test_case_ids, positions, text_a, text_b, similarity, ec_equivalent, violated, bug_level,
                           unstable) VALUES ('r1', ?, 'MR1', 's', 1, '["DRS"]', '["tc"]', '[1]', 'out', 'ref', 0.1,
                           TRUE, TRUE, 'L1', FALSE)""", [f"MR1/{k}"])
    with store.connect(db, read_only=True) as con:
        page, total = store.find_detections(con, store.DetectionFilter(run_ids=("r1",)), "detection", False, 3)
        assert store.run_detection_ids(con, "r1", 3) == (list(page["detection_id"]), total)
        assert total == 5 and store.run_detection_ids(con, "r2", 3) == (["MR1/1"], 1)
