"""Precision from the labels per relation, perturbation and method; what the Labelling page shows an annotator (the
gold answer, the story passage); the oracle measured against the labels (issue #16)."""

import json
import math

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from mortar import labels, metrics, store
from mortar import reports
from mortar.calibrate import read_pairs, summarize
from mortar.cli import main
from mortar.methods import method_label_of
from mortar.vocab import ALL, MR3, MR4, RBT, is_true_positive
from tests.conftest import ROOT, fresh_copy, scripted_store


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return scripted_store(tmp_path_factory, "precision", limit=2)


@pytest.fixture
def db(built, tmp_path, monkeypatch):
    return fresh_copy(built[0], tmp_path, monkeypatch)


@pytest.fixture
def run_id(built):
    return built[1]


def detections(db, run_id) -> dict[str, tuple[str, tuple[str, ...]]]:
    with store.session(db) as con:
        return {d: (rel, tuple(perts)) for d, rel, perts in store.run_detections(con, run_id)}


def label_two_annotators(db, run_id) -> dict[str, bool | None]:
    """ann and bob label up to three detections of every relation: they agree but on one detection per relation,
    and carol adjudicates one of those. Returns the final verdict each labelled detection should get."""
    by_relation: dict[str, list[str]] = {}
    for d, (rel, _) in detections(db, run_id).items():
        by_relation.setdefault(rel, []).append(d)
    final = {}
    for rel, ids in sorted(by_relation.items()):
        for i, d in enumerate(ids[:3]):
            ann = (1, 9, 2)[i]  # TP, FP, TP
            bob = (0, 8, 9)[i]  # TP, FP, FP: they disagree on the third
            labels.save_label(run_id, d, "ann", ann, db=db)
            labels.save_label(run_id, d, "bob", bob, db=db)
            final[d] = is_true_positive(ann) if is_true_positive(ann) == is_true_positive(bob) else None
        if len(ids) >= 3 and rel == RBT:
            labels.adjudicate(run_id, ids[2], False, "carol", db=db)
            final[ids[2]] = False
    return final


def expected_precision(final: dict, of: dict) -> dict[tuple[str, str], dict]:
    """PPD per (group, name), worked out from the verdicts directly."""
    groups: dict[tuple[str, str], list] = {}
    for d, verdict in final.items():
        rel, perts = of[d]
        for key in (("run", ALL), ("method", method_label_of(rel)), ("relation", rel),
                    *(("perturbation", p) for p in perts)):
            groups.setdefault(key, []).append(verdict)
    out = {}
    for key, verdicts in groups.items():
        decided = [v for v in verdicts if v is not None]
        out[key] = {"labelled": len(decided), "disputed": len(verdicts) - len(decided),
                    "PPD": sum(decided) / len(decided) if decided else math.nan}
    return out


def same(a, b) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b)


def test_precision_per_relation_perturbation_and_method_in_the_report_and_exports(db, run_id, tmp_path, capsys):
    of = detections(db, run_id)
    final = label_two_annotators(db, run_id)
    expected = expected_precision(final, of)
    assert {rel for rel, _ in of.values()} >= {RBT, "MR1", MR3}  # the run has detections of several relations

    with store.session(db) as con:
        report = reports.run_report(con, run_id)
    rows = {(r["group"], r["name"]): r for r in report["precision"]}
    assert set(rows) == set(expected)
    for key, want in expected.items():
        assert rows[key]["labelled"] == want["labelled"] and rows[key]["disputed"] == want["disputed"], key
        assert same(rows[key]["PPD"], want["PPD"]), key
    # ann and bob agree on the first two of each relation (one TP, one FP) and disagree on the third
    mr1 = rows[("relation", "MR1")]
    assert mr1["annotators"] == "ann vs bob" and mr1["both_labelled"] == min(3, sum(r == "MR1" for r, _ in of.values()))
    assert rows[("relation", RBT)]["disputed"] == 0  # carol decided RBT's disputed detection
    assert [r["group"] for r in report["precision"]][0] == "run"
    assert rows[("method", "MT")]["labelled"] == sum(v is not None for d, v in final.items() if of[d][0] != RBT)

    frame = reports.metric_rows(report)
    as_dict = {(r["method"], r["metric"]): r["value"] for r in frame}
    assert same(as_dict[("relation MR1", "PPD")], expected[("relation", "MR1")]["PPD"])
    assert same(as_dict[("MT", "PPD")], expected[("method", "MT")]["PPD"])
    some_perturbation = next(k for k in expected if k[0] == "perturbation" and k[1] != "ORIG")
    assert same(as_dict[(f"perturbation {some_perturbation[1]}", "PPD")], expected[some_perturbation]["PPD"])

    out = tmp_path / "metrics.csv"
    assert main(["export", run_id, "--what", "metrics", "--format", "csv", "--out", str(out), "--db", str(db)]) == 0
    exported = pd.read_csv(out)
    ppd = exported[(exported["method"] == "relation MR3") & (exported["metric"] == "PPD")]["value"]
    assert list(ppd) == pytest.approx([expected[("relation", MR3)]["PPD"]])

    capsys.readouterr()
    assert main(["report", run_id, "--db", str(db)]) == 0
    printed = capsys.readouterr().out
    section = printed[printed.index("Precision of the labelled detections"):]
    lines = section.splitlines()
    mr1_line = next(line for line in lines if line.split()[:2] == ["relation", "MR1"])
    assert f"{expected[('relation', 'MR1')]['PPD']:.3f}" in mr1_line
    assert any(line.split()[:2] == ["perturbation", some_perturbation[1]] for line in lines)
    assert any(line.split()[:2] == ["method", "MT"] for line in lines)


def test_report_without_labels_has_no_precision(db, run_id):
    with store.session(db) as con:
        report = reports.run_report(con, run_id)
    assert "precision" not in report
    assert not any(r["metric"] == "PPD" for r in reports.metric_rows(report))


def test_precision_by_method_is_the_method_rows(db, run_id):
    final = label_two_annotators(db, run_id)
    with store.session(db) as con:
        table = labels.precision_by_method(con, run_id).set_index("method")
    of = detections(db, run_id)
    mt = [v for d, v in final.items() if of[d][0] != RBT and v is not None]
    assert list(table.index) == [RBT, "MT"] and table.loc["MT", "PPD"] == pytest.approx(sum(mt) / len(mt))
    assert list(table.columns) == ["labelled", "disputed", "PPD", "annotators", "both_labelled", "kappa"]


# -- the Metrics page ----------------------------------------------------------------------------------

def app(page: str, **state) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for k, v in state.items():
        at.session_state[k] = v
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, at.exception
    return at


def test_metrics_page_shows_precision_per_relation_perturbation_and_method(db, run_id):
    at = app("metrics")
    assert not any("relation" in d.value and "PPD" in d.value for d in at.dataframe)  # no labels yet
    final = label_two_annotators(db, run_id)
    expected = expected_precision(final, detections(db, run_id))
    at.run()
    tables = {}
    for d in at.dataframe:
        if "PPD" in d.value and "kappa" in d.value:
            group = next(c for c in ("method", "relation", "perturbation") if c in d.value)
            tables[group] = d.value.set_index(group)
    assert set(tables) == {"method", "relation", "perturbation"}
    for group, table in tables.items():
        for name, row in table.iterrows():
            assert same(row["PPD"], expected[(group, name)]["PPD"]) and row["labelled"] == expected[(group, name)][
                "labelled"]
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    chart = next(f for f in charts if f["layout"]["title"]["text"].startswith("Precision of the labelled"))
    bars = {(t["xaxis"], x): y for t in chart["data"] for x, y in zip(t["x"], t["y"])}
    relation_axis = chart["data"][1]["xaxis"]  # method, relation, perturbation: left to right
    assert bars[(relation_axis, "MR1")] == pytest.approx(expected[("relation", "MR1")]["PPD"])


# -- the Labelling page: the gold answer and the story passage ------------------------------------------

def test_story_passage_prefers_the_sentence_holding_the_gold_answer():
    story = "Ann had a red kite. Her brother Tom built it. They flew it on the hill near the lake."
    passage = labels.story_passage(story, "Where did they fly it?", "on the hill")
    assert passage.text == "They flew it on the hill near the lake."
    assert passage.text[slice(*passage.span)] == "on the hill"
    by_words = labels.story_passage(story, "Who built the kite?", "her brother")  # "Her brother" is in sentence 2
    assert by_words.text.startswith("Her brother Tom") and by_words.span == (0, 11)
    no_span = labels.story_passage(story, "What colour was the kite?", "unknown")
    assert no_span.text == "Ann had a red kite." and no_span.span is None  # most shared words: kite
    assert labels.story_passage("", "Who?", "Ann") is None


def test_labelling_page_shows_the_gold_answer_and_story_passage_of_an_mr3_item(db, run_id):
    of = detections(db, run_id)
    group = next(d for d, (rel, _) in sorted(of.items()) if rel in (MR3, MR4))
    with store.session(db) as con:
        det = store.detection(con, run_id, group)
        context = store.detection_context(con, run_id, group)
    assert context["gold_answer"]
    at = app("labelling", annotator="ann", **{"l-drawn": {"run_id": run_id, "ids": [group]}, "l-pos": 0})
    texts = [t.value for t in at.text]
    markdown = [m.value.replace("\\", "") for m in at.markdown]
    assert "**Reference (gold) answer**" in markdown
    assert context["gold_answer"] in texts  # the dataset's gold answer, beside the two versions' answers
    assert det["text_a"] in texts and det["text_b"] in texts
    assert "**Story passage**" in markdown
    passage = labels.story_passage(context["story"], context["question"], context["gold_answer"])
    shown = markdown[markdown.index("**Story passage**") + 1]
    assert shown.replace("**", "") == passage.text and passage.text in context["story"]
    if passage.span:
        assert f"**{passage.text[slice(*passage.span)]}**" in shown


# -- the oracle against the annotators --------------------------------------------------------------------

def constructed(threshold=0.6) -> pd.DataFrame:
    """Five detections flagged for a low similarity, the three lowest real bugs; an MR2 detection (high similarity),
    a disputed one and a response-selection one (no threshold) stay out of the sweep."""
    rows = [("RBT/1", "RBT", 0.10, True), ("MR1/2", "MR1", 0.20, True), ("MR3/3", MR3, 0.30, True),
            ("MR1/4", "MR1", 0.45, False), ("RBT/5", "RBT", 0.55, False), ("MR2/6", "MR2", 0.90, False),
            ("MR1/7", "MR1", 0.05, None), ("SEL/8", "SEL", 0.0, True)]
    return pd.DataFrame([{"detection_id": d, "relation": rel, "perturbations": ["DRS"], "similarity": sim,
                          "question": f"q{d}", "reference": "gold", "output": "answer", "story": "A story.",
                          "true_positive": tp,
                          "decided_by": "agreed" if tp is not None else "disputed", "n_labels": 2}
                         for d, rel, sim, tp in rows])


def test_oracle_vs_humans_best_threshold_on_a_constructed_case():
    result = metrics.oracle_vs_humans(constructed(), 0.6)
    assert result["labelled"] == 7 and result["confirmed"] == 4 and result["precision"] == pytest.approx(4 / 7)
    assert result["calibration"] == 5  # not MR2 (high similarity), the disputed one, nor SEL
    assert result["best_threshold"] == pytest.approx(0.375) and result["best_accuracy"] == 1.0  # between .30 and .45
    assert result["at_threshold"]["accuracy"] == pytest.approx(3 / 5) and result["at_best"]["F1"] == 1.0
    best = max(result["curve"], key=lambda r: r["accuracy"])
    assert best["threshold"] == pytest.approx(result["best_threshold"])
    # the same labelled detections as `mortar score-answers` reads them: the same best threshold
    pairs = metrics.calibration_set(constructed(), 0.6)
    scored = [{**p, "score": p["similarity"], "pass": p["similarity"] >= 0.6} for p in pairs]
    assert summarize(scored, 0.6)["best_threshold"] == result["best_threshold"]
    assert [p["acceptable"] for p in pairs] == [False, False, False, True, True]


def test_oracle_panel_and_labelled_pairs_export_on_a_constructed_case(db, run_id, tmp_path):
    with store.connect(db) as con:
        eps = store.stored_config(con, run_id).threshold
        low = [d for d, rel, _ in store.run_detections(con, run_id) if rel in (RBT, "MR1")][:5]
        shares = (0.2, 0.4, 0.6, 0.8, 0.9)  # of ε: the three lowest are real bugs
        for d, share in zip(low, shares):  # constructed similarities on real detections
            con.execute("UPDATE checks SET similarity = ? WHERE run_id = ? AND check_id = ?", [share * eps, run_id, d])
    for i, d in enumerate(low):
        for who in ("ann", "bob"):
            labels.save_label(run_id, d, who, 2 if i < 3 else 9, db=db)
    at = app("labelling", annotator="ann")
    values = {m.label: m.value for m in at.metric}
    assert values[f"Oracle precision at ε = {eps:g}"] == "0.600"
    assert values["Confirmed flags"] == "3 of 5"
    assert float(values["Best threshold"]) == pytest.approx(0.7 * eps, abs=1e-4)
    assert values["Accuracy at best"] == "1.000"
    assert any(f"mortar export {run_id} --what labelled-pairs" in c.value for c in at.code)

    out = tmp_path / "labelled.jsonl"
    assert main(["export", run_id, "--what", "labelled-pairs", "--out", str(out), "--db", str(db)]) == 0
    pairs = read_pairs(out)  # what `mortar score-answers` reads
    assert sorted(p["detection_id"] for p in pairs) == sorted(low)
    assert sum(p["acceptable"] for p in pairs) == 2 and {p["kind"] for p in pairs} <= {RBT, "MR1"}
    assert main(["export", run_id, "--what", "labelled-pairs", "--format", "csv", "--out", str(out),
                 "--db", str(db)]) == 2
