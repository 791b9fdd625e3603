import duckdb

from mortar import store
from mortar.dataset import load_dataset
from mortar.perturb import PerturbationSettings
from mortar.run import generate
from tests.conftest import coqa_record

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


def test_db_location_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("MORTAR_DB", str(tmp_path / "env.duckdb"))
    assert store.db_path() == tmp_path / "env.duckdb"
    assert store.db_path(tmp_path / "flag.duckdb") == tmp_path / "flag.duckdb"
    monkeypatch.delenv("MORTAR_DB")
    assert store.db_path() == store.DEFAULT_DB
