"""The dashboard in a real browser: launch a small run with the real default SUT (SmolLM2, one seed, one
perturbation), wait for it, open a violation in the inspector, label it and see PPD change. Screenshots of
every page go to tests/artifacts/."""

import re
import time

import pytest

from tests.e2e.conftest import ARTIFACTS, serve

RUN_TIMEOUT_S = 1800  # SmolLM2 on two free CPU cores: one seed with DRS takes one to two minutes (far more on a busy machine)


def settle(page, quiet_ms: int = 600, timeout_s: float = 60) -> None:
    """Wait until Streamlit has finished running the script (its status widget is gone for a moment)."""
    deadline = time.monotonic() + timeout_s
    quiet_since = None
    while time.monotonic() < deadline:
        running = page.locator('[data-testid="stStatusWidget"]').count() > 0
        if running:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif (time.monotonic() - quiet_since) * 1000 >= quiet_ms:
            return
        page.wait_for_timeout(100)


def shot(page, name: str) -> None:
    """A screenshot of the whole page: Streamlit scrolls inside its main block, so grow the viewport to fit it."""
    settle(page)
    size = page.viewport_size
    height = page.evaluate("""() => {
        const main = document.querySelector('[data-testid="stMain"]');
        return main ? main.scrollHeight : document.body.scrollHeight; }""")
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(int(height) + 40, 8000))})
    settle(page, quiet_ms=300)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    page.set_viewport_size(size)


def only_perturbation(page, name: str) -> None:
    """On the Launch page: the dialogue-level perturbations cleared, then only ``name`` chosen."""
    perturbations = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Dialogue-level perturbations")
    perturbations.locator("input").click()
    for _ in range(5):
        page.keyboard.press("Backspace")
    page.keyboard.type(name)
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")


def nav(page, title: str, heading: str | None = None) -> None:
    """Go to a page through the sidebar, staying in the same Streamlit session (the annotator is remembered)."""
    page.locator('[data-testid="stSidebarNav"] a').filter(has_text=title).first.click()
    page.get_by_role("heading", name=heading or title).first.wait_for()
    settle(page)


def metric_value(page, label: str) -> str:
    metric = page.locator('[data-testid="stMetric"]').filter(
        has=page.locator('[data-testid="stMetricLabel"]', has_text=re.compile("^" + re.escape(label))))
    return metric.first.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_launch_inspect_label_in_a_real_browser(dashboard, page):
    url, _ = dashboard
    started = time.monotonic()

    # Overview on an empty store: the demo run is one click away
    page.goto(url)
    page.get_by_role("heading", name="Overview").first.wait_for()
    page.get_by_role("button", name=re.compile("Start the demo run")).wait_for()
    shot(page, "01-overview-empty")

    # Launch: one seed, one perturbation, the default local SUT
    nav(page, "Launch", "Launch a run")
    limit = page.get_by_role("spinbutton", name="Seed limit")
    limit.fill("1")
    only_perturbation(page, "DRS")
    page.get_by_role("spinbutton", name="Max new tokens").fill("16")  # short answers: a quicker run
    shot(page, "02-launch-form")
    page.get_by_role("button", name=re.compile("Start run")).click()
    page.get_by_text(re.compile(r"Started job \w+")).wait_for()
    job_line = page.get_by_text(re.compile(r"sample_coqa.json \(first 1 seed\)"))
    job_line.first.wait_for()
    assert job_line.first.inner_text().startswith("mortar (DRS) · SUT smollm2")
    shot(page, "03-launch-running")

    # the run goes on in the background; the job panel refreshes itself until it is done
    page.get_by_text(re.compile(r"Job \w+ — done")).first.wait_for(timeout=RUN_TIMEOUT_S * 1000)
    run_seconds = time.monotonic() - started
    print(f"\nrun launched and finished in {run_seconds:.0f} s")
    shot(page, "04-launch-done")

    nav(page, "Overview")
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    assert metric_value(page, "Runs") == "1"
    shot(page, "05-overview")

    # Violations → inspector
    nav(page, "Violations")
    matching = int(metric_value(page, "Matching detections").replace(",", ""))
    assert matching > 0
    relation = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Relation")
    relation.locator("input").click()
    page.keyboard.type("MR1")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    page.wait_for_function(
        """(before) => [...document.querySelectorAll('[data-testid="stMetric"]')].some(
               m => m.innerText.includes('Matching detections') && !m.innerText.includes(String(before)))""",
        arg=matching, timeout=30_000)
    assert 0 < int(metric_value(page, "Matching detections")) < matching
    shot(page, "06-violations")
    page.get_by_role("link", name=re.compile("Open in the inspector")).click()
    page.get_by_role("heading", name=re.compile(r"MR1 detection")).wait_for()
    settle(page)
    page.get_by_text("Round by round").first.wait_for()
    page.locator('[data-testid="stPlotlyChart"], .js-plotly-plot').first.wait_for()
    shot(page, "07-inspector")

    # label it: name once, then a score; Enter submits
    assert metric_value(page, "PPD of this run") == "–"
    name = page.get_by_role("textbox", name="Your name, as annotator")
    name.fill("e2e-annotator")
    name.press("Enter")
    score = page.get_by_role("spinbutton", name="Score (0–10)")
    score.wait_for()
    score.fill("2")
    score.press("Enter")
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stMetric"]')].some(
               m => m.innerText.includes('PPD of this run') && m.innerText.includes('1.000'))""", timeout=30_000)
    assert metric_value(page, "PPD of this run") == "1.000"
    shot(page, "08-inspector-labelled")

    # the other pages render without errors
    for title, name in (("Labelling", "09-labelling"), ("Metrics", "10-metrics"), ("Export", "11-export"),
                        ("Datasets", "12-datasets"), ("Test cases", "13-test-cases")):
        nav(page, title)
        if title == "Labelling":
            page.get_by_role("button", name="Draw the sample").click()
            page.get_by_text(re.compile(r"of \d+ labelled by you")).wait_for()
        if title == "Metrics":
            page.locator(".js-plotly-plot").nth(5).wait_for()
        assert page.locator('[data-testid="stException"]').count() == 0, title
        shot(page, name)
    assert metric_value(page, "Perturbed rounds") != "0"
    print(f"whole browser session: {time.monotonic() - started:.0f} s")


@pytest.mark.parametrize("path", ["", "launch", "violations", "inspector", "labelling", "metrics", "study",
                                  "compare", "export", "datasets", "test_cases"])
def test_deep_link_as_first_request_goes_through_app_py(tmp_path, browser, path):
    """A fresh server whose first request is a page URL must still run app.py (st.navigation), not the
    legacy pages/ auto-navigation that lists raw file names (app, datasets, …) in the sidebar."""
    with serve(tmp_path / "deeplink.duckdb", f"e2e-server-deeplink-{path or 'root'}.log") as url:
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        page = context.new_page()
        try:
            page.goto(f"{url}/{path}")
            links = page.locator('[data-testid="stSidebarNav"] a')
            links.first.wait_for(timeout=30_000)
            wanted = ["Overview", "Launch", "Violations", "Inspector", "Labelling", "Metrics", "Studies", "Compare",
                      "Export", "Datasets", "Test cases"]
            deadline = time.monotonic() + 30
            while True:  # the first run may show Streamlit's own list for a moment, until it reruns through app.py
                settle(page)
                texts = [t.split("\n")[-1].strip() for t in links.all_inner_texts()]
                if texts == wanted or time.monotonic() > deadline:
                    break
                page.wait_for_timeout(200)
            assert texts == wanted, texts
            page.get_by_text("Multi-turn metamorphic testing").first.wait_for()  # app.py's sidebar caption
            heading = {"study": "Studies", "": "Overview"}.get(path, path.replace("_", " ").capitalize())
            page.get_by_role("heading", name=heading).first.wait_for()
            assert page.locator('[data-testid="stException"]').count() == 0
        finally:
            context.close()
