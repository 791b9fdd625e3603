"""Guided generation evaluated where a user reads runs: a Gini-guided DialTest run on the intent/slot sample (the
bundled recurrent model, trained in seconds) shows, on the Metrics page and in the HTML report, the comparison with
random transformation at the same budget and the curve of bugs found against SUT calls. Screenshots go to
tests/artifacts/."""

from pathlib import Path

import pytest

from mortar import store
from mortar.formats import load_dataset
from mortar.methods.dialtest import DialTestSettings
from mortar.pipeline import RunConfig, run
from mortar.report_html import html_report
from tests.e2e.conftest import ARTIFACTS, serve
from tests.e2e.test_dashboard import settle, shot

SAMPLE = Path(__file__).parents[2] / "data" / "sample_nlu.json"
TABLE = "Gini-guided generation against random transformation at the same budget"
CURVE = "Bugs found against SUT calls spent, per guide"


@pytest.fixture(scope="module")
def guided_store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("e2e-guidance")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MORTAR_MODELS", str(folder / "models"))
        # short answers (16 tokens) keep the run quick: the page reads the guides, not what the answers say
        config = RunConfig(dataset=str(SAMPLE), methods="dialtest", limit=8, max_new_tokens=16,
                           settings={"dialtest": DialTestSettings(gini_budget=3, gate="off")})
        result = run(load_dataset(SAMPLE), config, db=folder / "guided.duckdb")
    with store.connect(folder / "guided.duckdb", read_only=True) as con:
        assert {m["guide"] for m in store.read_mutants(con, result.run_id)} == {"gini", "random"}
        page = html_report(con, result.run_id)
    return folder / "guided.duckdb", result.run_id, page


def test_the_metrics_page_compares_the_guides_and_draws_the_curve(guided_store, page):
    db, run_id, _ = guided_store
    with serve(db, "e2e-server-guidance.log") as url:
        page.goto(f"{url}/metrics?run={run_id}")
        page.get_by_text(TABLE).first.wait_for()
        settle(page)
        assert page.get_by_text("APFD: how early the search found them", exact=False).count() >= 1
        page.locator('[data-testid="stDataFrame"]').first.wait_for()
        curve = page.locator(".js-plotly-plot").filter(has_text=CURVE)
        curve.first.wait_for()
        assert curve.first.locator(".scatterlayer .trace").count() == 2  # gini and random
        assert page.locator('[data-testid="stException"]').count() == 0
        shot(page, "32-metrics-guidance")


def test_the_html_report_shows_the_guidance_table_and_curve(guided_store, browser, tmp_path):
    _, _, html = guided_store
    out = tmp_path / "guided.html"
    out.write_text(html, encoding="utf-8")
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(out.as_uri(), wait_until="load")
        page.get_by_text(TABLE).first.wait_for()
        assert page.get_by_role("columnheader", name="APFD").count() >= 1
        curve = page.locator(".plotly-graph-div").filter(has_text=CURVE)
        page.wait_for_function(f"""() => Array.from(document.querySelectorAll('.plotly-graph-div'))
            .some(div => div.textContent.includes({CURVE!r}) && div.querySelectorAll('.scatterlayer .trace').length == 2)""",
                               timeout=30_000)
        assert curve.count() == 1
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "html-report-guidance.png"), full_page=True)
    finally:
        page.close()


def test_the_metrics_page_compares_the_gini_order_of_a_plain_run_with_random_ones(tmp_path, page, monkeypatch):
    """A plain run on the intent/slot sample stores DialTest's Gini order (the answers carry the distributions):
    the Metrics page shows its APFD beside random orders and plots the four orders."""
    monkeypatch.setenv("MORTAR_MODELS", str(tmp_path / "models"))
    config = RunConfig(dataset=str(SAMPLE), methods="dialtest", limit=8,
                       settings={"dialtest": DialTestSettings(gate="off")})
    db = tmp_path / "plain.duckdb"
    run_id = run(load_dataset(SAMPLE), config, db=db).run_id
    with serve(db, "e2e-server-gini-order.log") as url:
        page.goto(f"{url}/metrics?run={run_id}")
        page.get_by_text("Test prioritisation: bugs found against the share of the suite executed").first.wait_for()
        settle(page)
        curve = page.locator(".js-plotly-plot").filter(has_text="Bugs found as the suite runs, per order")
        curve.first.wait_for()
        assert curve.first.locator(".scatterlayer .trace").count() == 4  # initial, gini, ideal, random
        assert page.locator('[data-testid="stException"]').count() == 0
        shot(page, "33-metrics-gini-order")
