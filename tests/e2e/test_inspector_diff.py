"""Triage in a real browser: the Inspector's diff of a shuffled test case against its seed (moved and dropped
rounds, the answer's change), and the Violations page's bug groups opened in the Inspector. The store is made
by a scripted-SUT run written straight into it (seconds, no model); screenshots go to tests/artifacts/."""

import re

import pytest

from mortar import store
from mortar.formats import load_dataset
from mortar.pipeline import RunConfig, run
from tests.conftest import SAMPLE
from tests.e2e.conftest import serve
from tests.e2e.test_dashboard import metric_value, settle, shot
from tests.scripted_sut import ScriptedSUT


@pytest.fixture(scope="module")
def triage(tmp_path_factory):
    """A dashboard on a store with one scripted run (one seed, every perturbation): its URL and the run id."""
    db = tmp_path_factory.mktemp("e2e-triage") / "triage.duckdb"
    result = run(load_dataset(SAMPLE), RunConfig(sut="scripted", limit=1), db=db, sut=ScriptedSUT())
    with serve(db, "e2e-server-triage.log") as url:
        yield url, db, result.run_id


def test_the_inspector_aligns_a_shuffled_reduction_to_its_seed(triage, page):
    url, db, run_id = triage
    with store.connect(db, read_only=True) as con:  # a shuffled reduction: rounds both moved and dropped
        detection = con.execute("SELECT min(detection_id) FROM detections WHERE run_id = ? AND relation = 'MR1' "
                                "AND perturbations = '[\"DSR\"]'", [run_id]).fetchone()[0]
    page.goto(f"{url}/inspector?run={run_id}&detection={detection}")
    page.get_by_role("heading", name=re.compile(r"MR1 detection")).wait_for()
    page.get_by_role("heading", name="Against the seed").wait_for()
    settle(page)
    aligned = page.locator(".st-key-i-aligned")
    aligned.wait_for()
    text = aligned.inner_text()
    assert "moved" in text and "dropped" in text and "the detection" in text
    assert re.search(r"round \d+ → \d+", text)
    struck = aligned.locator("del, s")  # dropped rounds are struck through in place
    assert struck.count() >= 2
    page.get_by_text("The answer's change").wait_for()
    assert page.locator('[data-testid="stException"]').count() == 0
    aligned.scroll_into_view_if_needed()
    shot(page, "20-inspector-diff")


def test_the_violations_groups_open_in_the_inspector(triage, page):
    url, db, run_id = triage
    with store.connect(db, read_only=True) as con:
        _, groups = store.find_groups(con, limit=0)
    page.goto(f"{url}/violations")
    page.get_by_role("heading", name="Violations").first.wait_for()
    settle(page)
    page.locator('[data-testid="stButtonGroup"]').get_by_text("Groups", exact=True).click()
    page.get_by_text("Matching groups").wait_for()
    settle(page)
    assert int(metric_value(page, "Matching groups").replace(",", "")) == groups
    assert page.locator('[data-testid="stException"]').count() == 0
    shot(page, "21-violations-groups")

    page.get_by_role("button", name=re.compile("Open the group in the inspector")).click()
    page.get_by_role("heading", name=re.compile("Bug group: seed")).wait_for()
    settle(page)
    assert int(metric_value(page, "Detections")) >= 1
    assert "group=" in page.url
    assert page.locator('[data-testid="stException"]').count() == 0
    shot(page, "22-inspector-group")
