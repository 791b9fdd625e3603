"""The HTML report in a real browser: opened from a file in headless Chromium, it fetches nothing, logs no
error, runs no script from the dataset or the SUT, and draws its plotly figures. Its screenshot goes to
tests/artifacts/html-report.png."""

import json

from mortar import store
from mortar.formats import load_dataset
from mortar.report_html import html_report
from mortar.pipeline import RunConfig, run
from tests.conftest import SAMPLE
from tests.e2e.conftest import ARTIFACTS
from tests.scripted_sut import SuffixSUT

SUT_TAG = "<script>window.pwned = 'sut'</script>"
STORY_TAG = "<img src=nowhere.png onerror=\"window.pwned = 'story'\">"


def write_report(folder) -> str:
    """A scripted run on two sample seeds whose stories and answers carry HTML; the report's file URL."""
    records = json.loads(SAMPLE.read_text())["data"][:2]
    for record in records:
        record["story"] = f"{STORY_TAG} {record['story']}"
    dataset = folder / "tagged.json"
    dataset.write_text(json.dumps({"version": "1.0", "data": records}))
    db = folder / "store.duckdb"
    result = run(load_dataset(dataset), RunConfig(dataset=str(dataset), sut="scripted", limit=2), db=db,
                 sut=SuffixSUT(SUT_TAG, "tagging"))
    with store.connect(db, read_only=True) as con:
        page = html_report(con, result.run_id)
    out = folder / "report.html"
    out.write_text(page, encoding="utf-8")
    return out.as_uri()


def test_report_opens_offline_without_errors_and_draws_its_figures(browser, tmp_path):
    url = write_report(tmp_path)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    requested, errors = [], []
    # every request goes through here: the report's own file loads, anything else is recorded and refused
    context.route("**/*", lambda route: route.continue_() if route.request.url == url else route.abort())
    page = context.new_page()
    page.on("request", lambda request: requested.append(request.url))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(url, wait_until="load")
        figures = page.locator(".plotly-graph-div")
        n = figures.count()
        assert n >= 4
        # every figure has drawn its traces (bars, lines) into its svg
        page.wait_for_function("""() => Array.from(document.querySelectorAll('.plotly-graph-div'))
            .every(div => div.querySelector('.main-svg .trace'))""", timeout=30_000)
        assert page.locator(".plotly-graph-div .main-svg .trace .point").count() >= n
        overflowing = page.evaluate("""() => Array.from(document.querySelectorAll('.plotly-graph-div')).filter(div =>
            div.querySelector('.main-svg').getBoundingClientRect().width
            > div.closest('.figures > div').getBoundingClientRect().width + 1).map(div => div.id)""")
        assert overflowing == []  # each figure was drawn at the width of its own slot
        page.get_by_role("heading", name="Worked examples").wait_for()
        assert page.get_by_text(SUT_TAG).count() > 0  # the answer's markup reads as text
        page.locator("details summary").first.click()  # a story with an <img> in it, shown
        page.wait_for_timeout(300)
        assert page.evaluate("window.pwned") is None  # neither the SUT's script nor the story's handler ran
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "html-report.png"), full_page=True)
    finally:
        context.close()
    assert requested == [url], requested
    assert errors == [], errors
