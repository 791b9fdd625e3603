"""The HTML report of a run (`mortar export RUN --format html`, the Metrics page's download), on a scripted-SUT
run whose story and answers carry HTML: the report's counts against the stored checks, escaping, worked
examples and no external resource."""

import json
from collections import Counter
from html.parser import HTMLParser

import pytest
from streamlit.testing.v1 import AppTest

from mortar import store
from mortar.cli import main
from mortar.formats import load_dataset
from mortar.methods import methods
from mortar.report_html import example_detections, html_report
from mortar.pipeline import RunConfig, run
from mortar.vocab import LEVELS, MORTAR_METHOD, RBT
from tests.conftest import ROOT, SAMPLE
from tests.scripted_sut import SuffixSUT

SUT_TAG = '<script>alert("sut")</script>'
STORY_TAG = "<b onmouseover=alert(2)>Look</b>."


class Document(HTMLParser):
    """What a browser would see as elements: tables (rows of cell texts), script elements and every attribute."""

    def __init__(self, text: str):
        super().__init__()
        self.tables, self.scripts, self.attrs = [], [], []
        self._row = self._cell = self._script = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.attrs += [(tag, k, v or "") for k, v in attrs]
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "script":
            self._script = [dict(attrs), ""]

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr":
            self.tables[-1].append(self._row)
        elif tag == "script":
            self.scripts.append(tuple(self._script))
            self._script = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        if self._script is not None:
            self._script[1] += data

    def table(self, *header: str) -> dict[str, list[str]]:
        """The table whose header starts with these columns, as first cell → the row's cells."""
        found = [t for t in self.tables if tuple(t[0][:len(header)]) == header]
        assert len(found) == 1, f"{len(found)} tables headed {header}"
        return {row[0]: row for row in found[0][1:]}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("report")
    records = json.loads(SAMPLE.read_text())["data"][:2]
    for record in records:
        record["story"] = f"{STORY_TAG} {record['story']}"
    dataset = folder / "tagged.json"
    dataset.write_text(json.dumps({"version": "1.0", "data": records}))
    db = folder / "store.duckdb"
    result = run(load_dataset(dataset), RunConfig(dataset=str(dataset), sut="scripted", limit=2), db=db, sut=SuffixSUT(SUT_TAG, "html"))
    with store.connect(db, read_only=True) as con:
        page = html_report(con, result.run_id)
    return db, result.run_id, page


def test_every_relation_row_counts_the_stored_checks(built):
    db, run_id, page = built
    with store.connect(db, read_only=True) as con:
        checks = store.read_checks(con, run_id)
    made, violated = Counter(c.relation for c in checks), Counter(c.relation for c in checks if c.violated)
    doc = Document(page)
    per_relation = doc.table("relation", "detections", "bugs")  # MORTAR's Table VIII
    relations = methods()[MORTAR_METHOD].relations
    assert sorted(per_relation) == sorted(relations)
    for relation in relations:
        assert per_relation[relation][1:3] == [str(made[relation]), str(violated[relation])], relation
    headline = doc.table("method", "test_cases", "detections", "NBugs")
    assert headline[RBT][2:4] == [str(made[RBT]), str(violated[RBT])]
    mt = methods()[MORTAR_METHOD]
    assert headline[mt.label][3] == str(sum(violated[r] for r in mt.relations))


def test_dataset_and_sut_text_is_escaped(built):
    _, _, page = built
    assert SUT_TAG not in page and STORY_TAG not in page
    assert "&lt;script&gt;alert(&quot;sut&quot;)&lt;/script&gt;" in page  # the answers are shown, as text
    assert "&lt;b onmouseover=alert(2)&gt;Look&lt;/b&gt;" in page
    doc = Document(page)
    # the only script elements: plotly.js, its config, and one per figure
    figures = sum(1 for tag, k, v in doc.attrs if tag == "div" and k == "class" and "plotly-graph-div" in v)
    assert figures >= 4 and len(doc.scripts) == 2 + figures
    assert not any("alert(" in text for _, text in doc.scripts)


def test_nothing_is_fetched_from_elsewhere(built):
    _, _, page = built
    doc = Document(page)
    links = [v for tag, k, v in doc.attrs if k in ("src", "href", "srcset", "data", "action")]
    assert links and all(v.startswith("#") for v in links), links  # in-page anchors only
    assert not any(tag == "link" for tag, _, _ in doc.attrs)
    plotly_js = max((text for _, text in doc.scripts), key=len)
    assert len(plotly_js) > 1_000_000 and "Plotly" in plotly_js  # plotly.js is embedded, not loaded


def test_worked_examples_are_the_highest_level_detection_of_different_relations(built):
    db, run_id, page = built
    with store.connect(db, read_only=True) as con:
        picked = example_detections(con, run_id)
        found = store.detections_export(con, run_id)
    rank = {None: 0, **{lv: i + 1 for i, lv in enumerate(LEVELS)}}
    level = {d: rank[lv if lv in LEVELS else None] for d, lv in zip(found["detection_id"], found["bug_level"])}
    relation = dict(zip(found["detection_id"], found["relation"]))
    assert 3 <= len(picked) <= 5 and len({relation[d] for d in picked}) == len(picked)
    assert [level[d] for d in picked] == sorted((level[d] for d in picked), reverse=True)
    for d in picked:  # no detection of the same relation has a higher level
        assert level[d] == max(level[x] for x in level if relation[x] == relation[d])
    examples = page.split('<section id="examples">')[1].split("</section>")[0]
    assert examples.count('class="example"') == len(picked)
    assert examples.count("<b>Perturbed</b>") == sum(relation[d] != RBT for d in picked)
    assert examples.count("<b>Original</b>") == len(picked)


def test_cli_writes_the_report_and_refuses_what(built, tmp_path, capsys):
    db, run_id, _ = built
    out = tmp_path / "report.html"
    assert main(["export", "latest", "--format", "html", "--out", str(out), "--db", str(db)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and f"run {run_id}" in text and "How to read this" in text
    assert main(["export", run_id, "--format", "html", "--what", "rounds", "--out", str(out), "--db", str(db)]) == 2
    assert "leave out --what" in capsys.readouterr().err


def test_metrics_page_offers_the_report(built, monkeypatch):
    monkeypatch.setenv("MORTAR_DB", str(built[0]))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/metrics.py")
    at.run()
    assert not at.exception, at.exception
    button = [b for b in at.get("download_button") if b.proto.label == "Report to share (HTML)"]
    assert len(button) == 1 and button[0].proto.deferred_file_id  # made when clicked
