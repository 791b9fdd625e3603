"""The Studies page in a real browser: four scripted systems on two sample seeds (made in the test's store), the
heat map, the robustness drop, the tables per system, one question's answers from every system, and the link to
the detections behind a cell; screenshots go to tests/artifacts/."""

from tests.conftest import SAMPLE
from tests.e2e import test_dashboard as dashboard
from tests.e2e.conftest import fresh_page, serve
from tests.scripted_sut import scripted_study


def test_the_study_page_reads_the_systems_side_by_side(tmp_path, browser):
    db = tmp_path / "study.duckdb"
    result = scripted_study(db, SAMPLE, n_systems=4, n_seeds=2)  # the 6 × 5 timing: benchmarks/study_page.py
    with serve(db, "e2e-server-study.log") as url:
        with fresh_page(browser) as page:
            page.goto(f"{url}/study?study={result.study_id}")
            page.get_by_role("heading", name="Studies").first.wait_for()
            page.locator("#fig-heat, .js-plotly-plot").first.wait_for()
            dashboard.settle(page)
            text = page.locator('[data-testid="stMain"]').inner_text()
            assert "Systems side by side" in page.content() and "Robustness" in page.content()
            for name in ("DS1", "DS4"):
                assert name in text
            assert page.locator('[data-testid="stException"]').count() == 0
            dashboard.shot(page, "24-study")

            # one question, every system: a column per system in the answers table
            answers = page.locator('[data-testid="stDataFrame"]').last
            answers.scroll_into_view_if_needed()
            assert page.locator('[data-testid="stSelectbox"]').filter(has_text="Seed question").count() == 1
            choose = page.locator('[data-testid="stSelectbox"]').filter(has_text="Seed question")
            choose.click()
            page.keyboard.press("ArrowDown")
            page.keyboard.press("Enter")
            dashboard.settle(page)
            assert page.locator('[data-testid="stException"]').count() == 0
            dashboard.shot(page, "25-study-question")

            # the detections behind a cell, in Violations
            expected = dashboard.metric_value(page, "Detections")
            page.get_by_role("button", name="Open them in Violations").click()
            page.get_by_role("heading", name="Violations").first.wait_for()
            dashboard.settle(page)
            assert dashboard.metric_value(page, "Matching detections") == expected
            dashboard.shot(page, "26-study-to-violations")
