"""Run comparison, CI budgets (`--fail-on`) and the JUnit export, on runs of a tiny dataset by two table-driven
SUTs that differ on known questions: A answers one question of the "boat" dialogue wrongly, B one of "kite"."""

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from types import SimpleNamespace

import pytest
from junitparser import JUnitXml

from mortar import store
from mortar.cli import main
from mortar.compare import RATE_PLUS, compare, compare_runs
from mortar.errors import InputError
from mortar.budgets import EXIT_BUDGET_EXCEEDED, Budget, parse_budget, parse_budgets
from mortar.junit import junit_xml
from mortar.reports import run_report
from mortar.relations import Check
from mortar.pipeline import RunConfig, run
from mortar.sut.base import SUT
from mortar.vocab import ALL, L1, L2, L3, LEVELS, MR1, MR4, RATE, RBT

SEEDS = [
    ("kite", "Ann had a red kite. She flew it on the hill with her brother Tom. The wind was strong that day. "
             "Later they ate apples at home.",
     [("What did Ann have?", "a red kite"), ("Where did she fly it?", "on the hill"),
      ("Who was with her?", "her brother Tom"), ("How was the wind?", "strong"), ("What did they eat later?", "apples")]),
    ("boat", "Max built a small boat. He sailed it on the lake in June. His dog Rex came along. They caught two fish.",
     [("What did Max build?", "a small boat"), ("Where did he sail it?", "on the lake"), ("When was that?", "in June"),
      ("Who came along?", "his dog Rex"), ("How many fish did they catch?", "two")]),
]
GOLD = {q: a for _, _, rounds in SEEDS for q, a in rounds}
FISH, FLY = ("boat", 5), ("kite", 2)  # the seed questions A, and B, answer wrongly
WRONG_A = {"How many fish did they catch?": "seven"}
WRONG_B = {"Where did she fly it?": "in the kitchen"}


class TableSUT(SUT):
    """Answers every question with its gold answer, whatever the context, except the ones it gets wrong."""

    backend = "scripted"

    def __init__(self, model: str, wrong: dict):
        super().__init__()
        self.model, self.wrong = model, wrong

    def answer(self, conversation) -> str:
        return self.wrong.get(conversation.question, GOLD[conversation.question])


def sut_a():
    return TableSUT("table-a", WRONG_A)


def sut_b():
    return TableSUT("table-b", WRONG_B)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    data = folder / "tiny.jsonl"
    data.write_text("".join(json.dumps({"id": seed_id, "story": story,
                                        "rounds": [{"question": q, "answer": a} for q, a in rounds]}) + "\n"
                            for seed_id, story, rounds in SEEDS))
    db = folder / "store.duckdb"
    config = RunConfig(dataset=str(data), sut="scripted", run_seed=1)
    a = run(None, config, db=db, sut=sut_a()).run_id
    b = run(None, config, db=db, sut=sut_b()).run_id
    other_seed = run(None, replace(config, run_seed=2), db=db, sut=sut_a()).run_id  # other test cases
    with store.connect(db, read_only=True) as con:
        checks_a, checks_b = store.read_checks(con, a), store.read_checks(con, b)
        result = compare_runs(con, a, b)
        report_b = run_report(con, b)
    return SimpleNamespace(db=str(db), data=str(data), a=a, b=b, other_seed=other_seed, checks_a=checks_a,
                           checks_b=checks_b, result=result, report_b=report_b)


def ids(checks) -> set[str]:
    return {c.check_id for c in checks}


def on(check, question) -> bool:
    return (check.seed_id, check.source_round) == question


# -- the comparison ------------------------------------------------------------------------------------------------


def test_compare_gives_exactly_the_detections_the_known_differences_make(runs):
    a, b, result = runs.checks_a, runs.checks_b, runs.result
    assert ids(a) == ids(b)  # the same checks were made: only verdicts differ
    # a wrong answer violates RBT and MR1 (the answer should match the reference), and MR4 where it is the same
    # wrong answer with and without the context; the right answer the other SUT gives there is one the story
    # alone gives ('They caught two fish.'), so it violates neither MR2 nor MR4
    only_b = {c.check_id for c in a if on(c, FLY) and c.relation in (RBT, MR1, MR4)}
    only_a = {c.check_id for c in a if on(c, FISH) and c.relation in (RBT, MR1, MR4)}
    assert {c.relation for c in a if c.check_id in only_a | only_b} == {RBT, MR1, MR4}
    assert ids(result.only_b) == only_b and ids(result.only_a) == only_a
    both = ids(c for c in a if c.violated) - only_a
    assert both and {x.check_id for x, _ in result.both} == both == ids(c for c in b if c.violated) - only_b
    top = next(r for r in result.rows if r["relation"] == ALL and r["level"] == ALL)
    assert (top["only A"], top["only B"], top["both"]) == (len(only_a), len(only_b), len(both))
    for relation in (RBT, MR1, MR4):
        row = next(r for r in result.rows if r["relation"] == relation and r["level"] == ALL)
        assert row["only B"] == sum(c.relation == relation for c in a if c.check_id in only_b)
        assert row["only A"] == sum(c.relation == relation for c in a if c.check_id in only_a)


def test_bug_levels_are_compared_separately(runs):
    result = runs.result

    def level(check, wrong):  # L1 on the question RBT got wrong, L2 elsewhere in that seed, L3 in the other seed
        return L1 if on(check, wrong) else L2 if check.seed_id == wrong[0] else L3

    for x, y in result.both:
        assert (x.bug_level, y.bug_level) == (level(x, FISH), level(y, FLY))
    changed = sum(x.bug_level != y.bug_level for x, y in result.both)
    assert changed > 0
    level_rows = [r for r in result.rows if r["relation"] == ALL and r["level"] in LEVELS]
    assert sum(r["both"] for r in level_rows) == len(result.both) - changed
    assert sum(r["only A"] for r in level_rows) == sum(c.bug_level is not None for c in result.only_a) + changed
    assert sum(r["only B"] for r in level_rows) == sum(c.bug_level is not None for c in result.only_b) + changed


def test_bootstrap_intervals_are_reproducible_and_centred_on_the_reports_figures(runs):
    with store.connect(runs.db, read_only=True) as con:
        again = compare_runs(con, runs.a, runs.b)
        same = compare_runs(con, runs.a, runs.a)
    assert again.intervals == runs.result.intervals  # fixed RNG seed
    rows = {(r["statistic"], r["scope"]): r for r in runs.result.intervals}
    report = runs.report_b
    assert rows[(RATE_PLUS, RBT)]["B"] == pytest.approx(report["metrics"][RBT]["Rate+"])
    for level in LEVELS:
        assert rows[("NBugs", level)]["B"] == report["metrics"]["MT"][level]
    for row in next(t for t in report["tables"] if t.key == "table_viii").rows:
        assert rows[("NBugs", row["relation"])]["B"] == row["bugs"]
        assert rows[(RATE_PLUS, row["relation"])]["B"] == pytest.approx(row["Rate+"], nan_ok=True)
    for r in runs.result.intervals:
        for name in ("A", "B", "B - A"):
            assert r[f"{name} low"] <= r[f"{name} high"]
    for r in same.intervals:  # a run against itself: every paired difference is exactly 0
        assert r["B - A"] == r["B - A low"] == r["B - A high"] == 0


def test_bootstrap_interval_of_a_clear_difference_excludes_zero():
    def check(seed, violated):
        return Check(f"MR1/{seed}/DRS/1/1", MR1, seed, 1, ("DRS",), (f"{seed}/DRS/1",), (1,), "x", "y", 0.1, True,
                     violated, L3 if violated else None)

    seeds = [f"s{i}" for i in range(12)]
    a = [check(s, True) for s in seeds]
    b = [check(s, s == "s0") for s in seeds]
    rows = {(r["statistic"], r["scope"]): r for r in compare(a, b, seeds).intervals}
    nbugs, rate = rows[("NBugs", ALL)], rows[(RATE_PLUS, MR1)]
    assert (nbugs["A"], nbugs["B"], nbugs["B - A"]) == (12, 1, -11)
    assert nbugs["B - A high"] < 0 and rate["B - A high"] < 0 and nbugs["A low"] == nbugs["A high"] == 12


def test_compare_refuses_runs_of_other_test_cases_in_one_line(runs, capsys):
    assert main(["compare", runs.a, runs.other_seed, "--db", runs.db]) == 2
    err = capsys.readouterr().err.strip()
    assert "different test cases" in err and len(err.splitlines()) == 1
    with store.connect(runs.db, read_only=True) as con, pytest.raises(InputError):
        compare_runs(con, runs.a, "run-nope")


def test_compare_command_prints_the_new_detections_and_gates_on_them(runs, capsys):
    assert main(["compare", runs.a, runs.b, "--db", runs.db]) == 0
    out = capsys.readouterr().out
    assert f"New detections in B: {len(runs.result.only_b)}" in out and "in the kitchen" in out and "B - A" in out
    n = len(runs.result.only_b)
    assert main(["compare", runs.a, runs.b, "--fail-on", f"NEW>{n - 1}", "--db", runs.db]) == EXIT_BUDGET_EXCEEDED
    err = capsys.readouterr().err.strip()
    assert err == f"mortar: budget exceeded: NEW = {n} > {n - 1}"
    assert main(["compare", runs.a, runs.b, "--fail-on", f"NEW>{n}", "--db", runs.db]) == 0
    assert main(["compare", runs.a, runs.a, "--fail-on", "NEW>0", "--db", runs.db]) == 0


# -- budgets -------------------------------------------------------------------------------------------------------


def test_budgets_parse_and_malformed_ones_are_bad_input():
    assert parse_budget("rate:mr1 >= 0.5") == Budget(RATE, MR1, ">=", 0.5)
    assert parse_budget("RATE:mt>.3") == Budget(RATE, "MT", ">", 0.3)
    assert [str(b) for b in parse_budgets(["RATE>0.30,L1>10", "NEW>0"])] == ["RATE>0.3", "L1>10", "NEW>0"]
    assert parse_budgets(None) == []
    for bad in ("RATE>>0.3", "RATE<0.3", "FOO>1", "RATE:MR9>0.1", "RATE>1.5", "L1>", "L1>-1", "RATE 0.3"):
        with pytest.raises(InputError):
            parse_budget(bad)


def test_gate_exits_with_its_code_exactly_when_a_budget_is_exceeded(runs, capsys):
    metrics = runs.report_b["metrics"]
    rate = sum(m["NBugs"] for m in metrics.values()) / sum(m["detections"] for m in metrics.values())
    l1 = metrics["MT"][L1]
    assert 0 < rate < 1 and l1 > 0

    def gate(*budgets, baseline=None):
        extra = ["--baseline", baseline] if baseline else []
        code = main(["gate", runs.b, *[x for b in budgets for x in ("--fail-on", b)], *extra, "--db", runs.db])
        return code, capsys.readouterr().err.strip()

    assert gate(f"RATE>{rate!r}") == (0, "")
    code, err = gate(f"RATE>={rate!r}")
    assert code == EXIT_BUDGET_EXCEEDED and err.startswith("mortar: budget exceeded: RATE = ") and "\n" not in err
    assert gate(f"L1>{l1}")[0] == 0
    code, err = gate(f"RATE>0.99,L1>{l1 - 1}")
    assert (code, err) == (EXIT_BUDGET_EXCEEDED, f"mortar: budget exceeded: L1 = {l1} > {l1 - 1}")
    mr1 = next(r for r in next(t for t in runs.report_b["tables"] if t.key == "table_viii").rows if r["relation"] == MR1)
    assert gate(f"RATE:MR1>{mr1['Rate+']!r}")[0] == 0 and gate(f"RATE:MR1>={mr1['Rate+']!r}")[0] == EXIT_BUDGET_EXCEEDED
    new = len(runs.result.only_b)
    assert gate(f"NEW>{new}", baseline=runs.a)[0] == 0
    assert gate(f"NEW>{new - 1}", baseline=runs.a)[0] == EXIT_BUDGET_EXCEEDED
    code, err = gate("NEW>0")  # no baseline to be new against
    assert code == 2 and "--baseline" in err


def test_run_with_fail_on_exits_3_when_exceeded_and_refuses_a_malformed_budget_before_any_work(
        runs, monkeypatch, capsys, tmp_path):
    import mortar.sut

    monkeypatch.setattr(mortar.sut, "make_sut", lambda spec, *args, **kwargs: sut_b())
    command = ["run", "--dataset", runs.data, "--sut", "table-b", "--seed", "1", "--db", runs.db]
    assert main([*command, "--baseline", runs.a, "--fail-on", "NEW>0"]) == EXIT_BUDGET_EXCEEDED
    captured = capsys.readouterr()
    assert f"{len(runs.result.only_b)} new detections" in captured.out
    assert captured.err.strip().splitlines()[-1] == f"mortar: budget exceeded: NEW = {len(runs.result.only_b)} > 0"
    assert main([*command, "--baseline", runs.a, "--fail-on", "NEW>100", "--fail-on", "RATE>0.99"]) == 0
    assert "budget kept: RATE = " in capsys.readouterr().out

    def no_sut(*args, **kwargs):
        raise AssertionError("a SUT was made before the budgets were checked")

    monkeypatch.setattr(mortar.sut, "make_sut", no_sut)
    fresh = tmp_path / "fresh.duckdb"
    for bad in (["--fail-on", "RATE>>0.3"], ["--fail-on", "NEW>0"], ["--fail-on", "L2>1", "--baseline", "run-nope"]):
        assert main(["run", "--dataset", runs.data, "--db", str(fresh), *bad]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not fresh.exists()


# -- JUnit -------------------------------------------------------------------------------------------------------


def test_junit_export_parses_and_its_counts_match_the_report(runs, tmp_path):
    out = tmp_path / "mortar.xml"
    assert main(["export", runs.b, "--format", "junit", "--out", str(out), "--db", runs.db]) == 0
    root = ET.parse(out).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    report = runs.report_b
    per_relation = {r["relation"]: r for r in next(t for t in report["tables"] if t.key == "table_viii").rows}
    per_relation[RBT] = {"detections": report["metrics"][RBT]["detections"], "bugs": report["metrics"][RBT]["NBugs"]}
    assert set(suites) == set(per_relation)
    for relation, suite in suites.items():
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert (int(props["checks"]), int(props["NBugs"])) == (per_relation[relation]["detections"],
                                                               per_relation[relation]["bugs"])
        mine = [c for c in runs.checks_b if c.relation == relation]
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases) == len({(c.seed_id, c.source_round) for c in mine})
        assert int(suite.get("failures")) == len(suite.findall("testcase/failure")) \
            == len({(c.seed_id, c.source_round) for c in mine if c.violated})
    # RBT checks each seed question once: its test cases are the report's checks and failures its bugs
    assert (int(suites[RBT].get("tests")), int(suites[RBT].get("failures"))) == (report["metrics"][RBT]["detections"],
                                                                              report["metrics"][RBT]["NBugs"])
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in suites.values())
    assert int(root.get("failures")) == sum(int(s.get("failures")) for s in suites.values())
    # a JUnit-reading library sees the same suites, cases and failures that CI servers will show
    read = JUnitXml.fromfile(str(out))
    by_suite = {suite.name: suite for suite in read}
    assert set(by_suite) == set(suites)
    for relation, suite in by_suite.items():
        cases = list(suite)
        assert (suite.tests, suite.failures) == (len(cases), sum(not case.is_passed for case in cases))
        assert (suite.tests, suite.failures) == (int(suites[relation].get("tests")), int(suites[relation].get("failures")))
    bodies = [f.text for f in root.iter("failure")]
    assert sum(b.count("SUT answer:") for b in bodies) == sum(m["NBugs"] for m in report["metrics"].values())
    fly = next(c for c in suites[RBT].findall("testcase") if "Where did she fly it?" in c.get("name"))
    message = fly.find("failure").get("message")
    assert "'in the kitchen' vs 'on the hill'" in message


def test_junit_carries_untrusted_text_safely():
    check = Check("RBT/k/ORIG/1/1", RBT, "k", 1, ("ORIG",), ("k/ORIG/1",), (1,), "<b>&\x00\x1b</b>", "gold", 0.0,
                  True, True)
    root = ET.fromstring(junit_xml([check], {("k", 1): "Who <is> it?"}, "run-x"))
    case = root.find("testsuite/testcase")
    assert case.get("name") == "k round 1: Who <is> it?" and "<b>&\ufffd\ufffd</b>" in case.find("failure").text


def test_junit_refuses_another_what(runs, tmp_path, capsys):
    assert main(["export", runs.b, "--format", "junit", "--what", "rounds", "--out", str(tmp_path / "x.xml"),
                 "--db", runs.db]) == 2
    assert main(["export", runs.b, "--out", str(tmp_path / "x.jsonl"), "--db", runs.db]) == 2  # --what is needed
    assert not (tmp_path / "x.xml").exists()


# -- the page ------------------------------------------------------------------------------------------------------


def test_compare_page_shows_both_systems_answers(runs, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import ROOT

    monkeypatch.setenv("MORTAR_DB", runs.db)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page("pages/compare.py")
    at.query_params.update({"a": runs.a, "b": runs.b})
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="c-a").value == runs.a and at.selectbox(key="c-b").value == runs.b
    assert at.metric[0].value == str(len(runs.result.only_b))
    at.selectbox(key="c-question").set_value(FLY).run()
    assert not at.exception, at.exception
    table = at.table[0].value
    answers = table[[c for c in table.columns if c.startswith("B (")][0]]
    assert set(table[[c for c in table.columns if c.startswith("A (")][0]]) == {"on the hill"}
    assert set(answers) == {"in the kitchen"} and len(table) > 1  # ORIG and the perturbed versions
    at.selectbox(key="c-b").set_value(runs.other_seed).run()
    assert not at.exception and "different test cases" in at.error[0].value


def test_detections_reported_apart_are_not_compared_as_bugs():
    """A flaky or unstable detection counts in no headline figure, so a comparison does not count it either."""
    from mortar.compare import compare
    from mortar.relations import Check

    def check(check_id, violated, **apart):
        return Check(check_id, "MR1", "s1", 1, ("DRS",), ("t1",), (1,), "a", "b", 0.1, True, violated, "L2", **apart)

    a = [check("x", True), check("y", True)]
    b = [check("x", True, flaky=True), check("y", True, unstable=True)]
    result = compare(a, b, ["s1"], resamples=10)
    assert [c.check_id for c in result.only_a] == ["x", "y"]
    assert result.only_b == [] and result.both == []
