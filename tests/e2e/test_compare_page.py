"""The Compare page in a real browser: two runs of the tiny dataset by table-driven SUTs that differ on known
questions (made directly in the test's store), one question's answers from both systems side by side; the
screenshot goes to tests/artifacts/."""

import json
import re

from mortar.pipeline import RunConfig, run
from tests import test_compare as tiny
from tests.e2e import test_dashboard as dashboard
from tests.e2e.conftest import fresh_page, serve


def test_compare_page_shows_both_systems_side_by_side(tmp_path, browser):
    data = tmp_path / "tiny.jsonl"
    data.write_text("".join(json.dumps({"id": seed_id, "story": story,
                                        "rounds": [{"question": q, "answer": a} for q, a in rounds]}) + "\n"
                            for seed_id, story, rounds in tiny.SEEDS))
    db = tmp_path / "compare.duckdb"
    config = RunConfig(dataset=str(data), sut="scripted", run_seed=1)
    run_a = run(None, config, db=db, sut=tiny.sut_a()).run_id
    run_b = run(None, config, db=db, sut=tiny.sut_b()).run_id

    with serve(db, "e2e-server-compare.log") as url:
        with fresh_page(browser) as page:
            page.goto(f"{url}/compare?a={run_a}&b={run_b}")
            page.get_by_role("heading", name="Compare runs").first.wait_for()
            table = page.locator('[data-testid="stTable"]').first
            table.wait_for()
            # first the question whose detections changed that sorts first: the boat's fish, which A got wrong
            assert "seven" in table.inner_text() and "two" in table.inner_text()
            assert dashboard.metric_value(page, "New in B") != "0"

            choose = page.locator('[data-testid="stSelectbox"]').filter(has_text="Seed question")
            choose.click()
            page.keyboard.type("Where did she fly")
            page.keyboard.press("Enter")
            page.wait_for_function(
                """() => [...document.querySelectorAll('[data-testid="stTable"]')].some(
                       t => t.innerText.includes('in the kitchen'))""", timeout=30_000)
            text = page.locator('[data-testid="stTable"]').first.inner_text()
            assert "on the hill" in text and re.search(r"ORIG", text)
            assert page.locator('[data-testid="stException"]').count() == 0
            dashboard.shot(page, "23-compare")
