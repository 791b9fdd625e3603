"""SUT text is shown as text, in a real browser: a study of two scripted systems, one of which ends every answer with
HTML and markdown (a script, bold, a javascript: link, an image with an onerror handler). The pages that show SUT
answers — Violations, Inspector, Compare, Studies — show it literally and never make an element of it, nor run
it."""

import re

from mortar import store
from tests.conftest import SAMPLE
from tests.e2e import test_dashboard as dashboard
from tests.e2e.conftest import fresh_page, serve
from tests.scripted_sut import SuffixSUT

MARKUP = ('<script>window.__pwned = 1</script> <b>bolded</b> **starred** [linked](javascript:window.__pwned=2) '
          '<img src="x" onerror="window.__pwned=3">')

INJECTED = """() => {
    const main = document.querySelector('[data-testid="stMain"]') || document.body;
    const made = [...main.querySelectorAll('script, img, a, b, strong, em')].filter(e =>
        e.tagName === 'SCRIPT' || (e.tagName === 'IMG' && e.getAttribute('src') === 'x')
        || /^(bolded|starred|linked)$/.test(e.textContent.trim())
        || (e.getAttribute('href') || '').startsWith('javascript'));
    return {pwned: window.__pwned === undefined ? null : window.__pwned, made: made.map(e => e.outerHTML)};
}"""


SHOWN = """() => [document.querySelector('[data-testid="stMain"]').innerText,
                   ...[...document.querySelectorAll('[data-testid="stDataFrame"] table')].map(t => t.innerText)
                  ].join('\\n')"""  # a data grid draws its cells on a canvas; its accessible table holds their text


def assert_shown_as_text(page, where: str) -> None:
    dashboard.settle(page)
    assert page.locator('[data-testid="stException"]').count() == 0, where
    found = page.evaluate(INJECTED)
    assert found == {"pwned": None, "made": []}, (where, found)
    text = page.evaluate(SHOWN)
    for piece in ("<b>bolded</b>", "**starred**", "[linked](javascript:", '<img src="x"'):
        assert piece in text, (where, piece)


def test_sut_markup_is_shown_as_text_on_every_page(tmp_path, browser):
    from mortar.config import RunConfig
    from mortar.study import Study, System, run_study

    db = tmp_path / "escaping.duckdb"
    suts = {"plain": SuffixSUT("", "plain"), "marked": SuffixSUT(MARKUP, "marked")}
    study = run_study(Study(RunConfig(dataset=str(SAMPLE), limit=1),
                            (System("plain", "scripted-plain"), System("marked", "scripted-marked")), "escaping"),
                      db=db, suts_by_name=suts)
    with store.session(db, read_only=True) as con:
        runs = dict(con.execute("SELECT system, run_id FROM study_systems WHERE study_id = ?",
                                [study.study_id]).fetchall())
        detection = con.execute("""SELECT check_id FROM checks WHERE run_id = ? AND relation = 'MR1' AND violated
                                   AND text_a LIKE '%starred%' ORDER BY check_id LIMIT 1""",
                                [runs["marked"]]).fetchone()[0]

    with serve(db, "e2e-server-escaping.log") as url, fresh_page(browser) as page:
        page.goto(f"{url}/violations?run={runs['marked']}")
        page.get_by_role("heading", name="Violations").first.wait_for()
        page.locator('[data-testid="stDataFrame"]').first.wait_for()
        assert_shown_as_text(page, "violations")

        page.goto(f"{url}/inspector?run={runs['marked']}&detection={detection}")
        page.get_by_role("heading", name=re.compile("MR1 detection")).wait_for()
        page.get_by_text("The answer's change").first.wait_for()
        assert_shown_as_text(page, "inspector")
        dashboard.shot(page, "29-escaping-inspector")

        page.goto(f"{url}/compare?a={runs['plain']}&b={runs['marked']}")
        page.get_by_role("heading", name="Compare runs").first.wait_for()
        page.locator('[data-testid="stTable"]').first.wait_for()
        assert_shown_as_text(page, "compare")

        page.goto(f"{url}/study?study={study.study_id}")
        page.get_by_role("heading", name="Studies").first.wait_for()
        page.locator('[data-testid="stDataFrame"]').last.wait_for()
        assert_shown_as_text(page, "studies")
