from streamlit.testing.v1 import AppTest

from mortar.cli import main
from tests.conftest import ROOT, SAMPLE


def test_home_lists_the_sample_seeds():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert at.metric[0].value == "30"
    table = at.dataframe[0].value
    assert len(table) == 30 and "cs-01" in set(table["seed"])


def test_test_cases_page_shows_generated_cases(tmp_path, monkeypatch):
    db = tmp_path / "s.duckdb"
    monkeypatch.setenv("MORTAR_DB", str(db))
    assert main(["generate", str(SAMPLE), "--seed", "7", "--out", str(tmp_path / "a.jsonl")]) == 0
    at = AppTest.from_file(str(ROOT / "pages" / "1_Test_cases.py"), default_timeout=60).run()
    assert not at.exception
    rounds = at.dataframe[1].value
    assert set(rounds["perturbation"]) == {"ORIG", "DRS", "DRR", "DRD", "DSR", "DSD"}
    assert rounds["ec_equivalent"].notna().all()
    assert any("coreferee (rules)" in c.value or "coreferee (neural)" in c.value for c in at.caption)
    assert int(at.metric[1].value) > 0  # some perturbed rounds lost their context


def test_test_cases_page_on_an_empty_store_explains_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("MORTAR_DB", str(tmp_path / "none.duckdb"))
    at = AppTest.from_file(str(ROOT / "pages" / "1_Test_cases.py"), default_timeout=60).run()
    assert not at.exception
    assert "mortar generate" in at.info[0].value
