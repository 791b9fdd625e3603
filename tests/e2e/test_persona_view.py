"""A persona dialogue in a real browser: the Inspector shows the speaker's persona beside the version the system
was asked with (the partner's persona, a noisy persona), the changed words marked; the Metrics page shows the
persona paper's table. The store is made by a scripted-SUT run (seconds, no model); screenshots go to
tests/artifacts/."""

import re
from pathlib import Path

import pytest

from mortar import store
from mortar.formats import load_dataset
from mortar.pipeline import RunConfig, run
from tests.e2e.conftest import serve
from tests.e2e.test_dashboard import settle, shot
from mortar.sut.base import SUT
from tests.scripted_sut import ScriptedSUT

SAMPLE = Path(__file__).parents[2] / "data" / "sample_persona.jsonl"


class PersonaBlind(SUT):
    """Says the same whatever its persona: under the partner's persona its reply about dogs should have changed."""

    backend, model = "scripted", "persona-blind"

    def answer(self, conversation) -> str:
        return "yes, I have two dogs at home!"


@pytest.fixture(scope="module")
def persona_store(tmp_path_factory):
    """Two scripted runs of the persona sample's first two dialogues: the keyword SUT (its replies follow the
    noisy persona) and a persona-blind one; the URL and the run ids by perturbation."""
    db = tmp_path_factory.mktemp("e2e-persona") / "persona.duckdb"
    config = RunConfig(methods="persona", sut="scripted", limit=2, oracle="cosine")
    noisy = run(load_dataset(SAMPLE), config, db=db, sut=ScriptedSUT()).run_id
    blind = run(load_dataset(SAMPLE), config, db=db, sut=PersonaBlind()).run_id
    with serve(db, "e2e-server-persona.log") as url:
        yield url, db, {"P3-story": noisy, "P2": blind}


def detection_of(db, run_id: str, perturbation: str) -> int:
    with store.connect(db, read_only=True) as con:
        found = con.execute("SELECT min(detection_id) FROM detections WHERE run_id = ? AND perturbations = ?",
                            [run_id, f'["{perturbation}"]']).fetchone()[0]
    assert found is not None, f"no {perturbation} detection to open"
    return found


@pytest.mark.parametrize("perturbation, shown", [("P2", "partner's persona"), ("P3-story", "noise in the persona")])
def test_the_inspector_shows_the_persona_beside_the_version_asked(persona_store, page, perturbation, shown):
    url, db, run_ids = persona_store
    run_id = run_ids[perturbation]
    seed = load_dataset(SAMPLE).seeds[0]
    page.goto(f"{url}/inspector?run={run_id}&detection={detection_of(db, run_id, perturbation)}")
    page.get_by_role("heading", name="Persona: the speaker's and the version asked").wait_for()
    settle(page)
    assert page.get_by_text(re.compile(shown)).count() >= 1
    section = page.locator('[data-testid="stHorizontalBlock"]').filter(has_text="Seed persona").last
    text = section.inner_text()
    assert "Asked with" in text
    marked = section.locator("span[class*='ColoredBackground'], span[style*='background']")
    assert marked.count() >= 2  # words removed on the left, added on the right
    if perturbation == "P2":  # the partner's persona replaces the speaker's, sentence for sentence shown
        assert seed.persona.partner[0].split()[-1].rstrip(".") in text
    assert page.locator('[data-testid="stException"]').count() == 0
    shot(page, f"30-inspector-persona-{perturbation}")


def test_the_metrics_page_shows_the_persona_papers_table(persona_store, page):
    url, db, run_ids = persona_store
    page.goto(f"{url}/metrics")
    page.get_by_text("Persona relations as the persona paper reports them").first.wait_for()
    settle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    shot(page, "31-metrics-persona")
