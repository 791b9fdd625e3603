"""Every dashboard page under streamlit.testing's AppTest, on a small store built with the scripted SUT."""

import json
import shutil
from urllib.parse import parse_qs

import pytest
from streamlit.testing.v1 import AppTest

from mortar import jobs, labels, store
from mortar import reports
from mortar.formats import load_dataset
from mortar.pipeline import RunConfig, run
from tests.conftest import ROOT, SAMPLE, fresh_copy, scripted_store
from tests.scripted_sut import ScriptedSUT

APP = str(ROOT / "app.py")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    # two seeds: every relation has detections (MR2 among them), so every view has something to show
    return scripted_store(tmp_path_factory, "pages", limit=2)


@pytest.fixture
def db(built, tmp_path, monkeypatch):
    return fresh_copy(built[0], tmp_path, monkeypatch)


@pytest.fixture
def run_id(built):
    return built[1]


def app(page: str | None = None, **state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    for k, v in state.items():
        at.session_state[k] = v
    if page:
        at.switch_page(f"pages/{page}.py")  # the pages keep their file names as URL paths
    at.run()
    assert not at.exception, at.exception
    return at


def by_label(widgets, label: str):
    found = [w for w in widgets if w.label == label or w.label.startswith(label)]
    assert found, f"no widget labelled {label!r}: {[w.label for w in widgets]}"
    return found[0]


def plain(markdown: str) -> str:
    """Escaped markdown as it reads on the page."""
    return markdown.replace("\\", "")


def metric(at, label: str) -> str:
    return by_label(at.metric, label).value


def detection_ids(db, run_id, relation=None, ec=None):
    with store.session(db) as con:
        sql = "SELECT detection_id FROM detections WHERE run_id = ?"
        params = [run_id]
        if relation:
            sql, params = sql + " AND relation = ?", params + [relation]
        if ec is not None:
            sql, params = sql + " AND ec_equivalent = ?", params + [ec]
        return [d for (d,) in con.execute(sql + " ORDER BY detection_id", params).fetchall()]


@pytest.fixture
def fake_jobs(monkeypatch):
    """Record what the pages ask mortar.jobs to do instead of starting real runs."""
    calls = []
    monkeypatch.setattr(jobs, "start", lambda config, db=None: calls.append(("start", config)) or "job-1")
    monkeypatch.setattr(jobs, "start_study", lambda study, db=None: calls.append(("study", study)) or "job-3")
    monkeypatch.setattr(jobs, "resume", lambda job_id, db=None: calls.append(("resume", job_id)) or "job-2")
    monkeypatch.setattr(jobs, "cancel", lambda job_id, db=None: calls.append(("cancel", job_id)))
    return calls


# -- Overview ---------------------------------------------------------------------------------------

def test_overview_on_an_empty_store_starts_the_demo_run(tmp_path, monkeypatch, fake_jobs):
    monkeypatch.setenv("MORTAR_DB", str(tmp_path / "empty.duckdb"))
    at = app()
    assert "demo" in at.info[0].value
    by_label(at.button, "Start the demo run").click().run()
    (kind, config), = fake_jobs
    assert kind == "start" and config.dataset == str(SAMPLE) and config.sut == "smollm2" and config.limit == 1
    assert config.settings["mortar"].perturbations == ("DRS", "DRR") and config.methods == ("mortar",)


def test_overview_lists_runs_with_headline_metrics_and_ppd(db, run_id):
    at = app()
    runs = at.dataframe[0].value
    row = runs[runs["run_id"] == run_id].iloc[0]
    with store.connect(db, read_only=True) as con:
        cases, verdicts = store.read_cases_and_verdicts(con, run_id)
        expected = reports.run_metrics(store.read_checks(con, run_id), cases)
    assert row["sut"] == "keyword-overlap-v1" and row["status"] == "done" and row["dataset"] == "sample_coqa.json"
    assert row["MT NBugs"] == expected["MT"]["NBugs"] and row["RBT NBugs"] == expected["RBT"]["NBugs"]
    assert row["MT BPTC"] == pytest.approx(expected["MT"]["BPTC"])
    assert row["MT Rate+"] == pytest.approx(expected["MT"]["Rate+"])
    assert runs["PPD"].isna().all()
    labels.save_label(run_id, detection_ids(db, run_id)[0], "ann", 2, db=db)
    at.run()
    assert at.dataframe[0].value.set_index("run_id").loc[run_id, "PPD"] == 1.0


def test_overview_shows_the_metrics_a_run_stored_rather_than_recomputing_them(db, run_id):
    from mortar import ui

    with store.connect(db) as con:
        cases, _ = store.read_cases_and_verdicts(con, run_id)
        figures = reports.run_metrics(store.read_checks(con, run_id), cases)
        figures["MT"]["NBugs"] = 999  # not what the checks give: shows where the overview read it
        store.write_run_metrics(con, run_id, [{"method": m, "metric": k, "value": v}
                                              for m, values in figures.items() for k, v in values.items()])
    with store.connect(db, read_only=True) as con:
        row = ui.runs_overview(con).set_index("run_id").loc[run_id]
    assert row["MT NBugs"] == 999 and row["RBT NBugs"] == figures["RBT"]["NBugs"]
    assert row["MT BPTC"] == pytest.approx(figures["MT"]["BPTC"])


# -- Launch -----------------------------------------------------------------------------------------

def test_launch_form_starts_a_background_run_with_every_setting(db, fake_jobs):
    at = app("launch")
    by_label(at.multiselect, "Dialogue-level perturbations").set_value(["DRS", "DSD"])
    by_label(at.number_input, "Replicates").set_value(2)
    by_label(at.number_input, "Threshold").set_value(0.5)
    by_label(at.radio, "Oracle").set_value("mss")
    by_label(at.button, "Start run").click().run()
    assert not at.exception and not at.error
    (kind, config), = fake_jobs
    assert kind == "start" and config.dataset.endswith("sample_coqa.json") and config.sut == "smollm2"
    assert config.settings["mortar"].perturbations == ("DRS", "DSD") and config.settings["mortar"].replicates == 2
    assert config.oracle == "mss" and config.threshold == 0.5 and config.limit == 2 and config.kg_backend == "spacy"
    assert config.methods == ("mortar",)
    assert RunConfig.from_json(config.to_json()) == config  # handed to the background run as JSON, unchanged
    assert "Started job job-1" in at.success[0].value


def test_launch_offers_the_persona_relations(db, fake_jobs):
    at = app("launch")
    by_label(at.multiselect, "Methods").set_value(["mortar", "persona"])
    by_label(at.multiselect, "Noise locations").set_value(["question", "both"])
    by_label(at.checkbox, "Selection").check()
    by_label(at.number_input, "Selection candidates").set_value(5)
    by_label(at.button, "Start run").click().run()
    assert not at.exception and not at.error
    (_, config), = fake_jobs
    assert config.methods == ("mortar", "persona") and config.settings["persona"].noise_locations == ("question", "both")
    assert config.settings["persona"].selection and config.settings["persona"].candidates == 5


def test_launch_offers_dialtest_with_gini_guidance(db, fake_jobs):
    at = app("launch")
    by_label(at.multiselect, "Methods").set_value(["mortar", "metal", "dialtest"])
    by_label(at.multiselect, "DialTest operators").set_value(["SR", "WI"])
    by_label(at.number_input, "Gini budget").set_value(4)
    by_label(at.number_input, "Gini τ").set_value(0.02)
    by_label(at.radio, "Targets").set_value("wali")
    by_label(at.number_input, "Budget").set_value(40)
    by_label(at.selectbox, "Order").set_value("gri")
    by_label(at.button, "Start run").click().run()
    assert not at.exception and not at.error
    (_, config), = fake_jobs
    assert config.methods == ("mortar", "metal", "dialtest") and config.settings["dialtest"].operators == ("SR", "WI")
    assert config.settings["dialtest"].gini_budget == 4 and config.settings["dialtest"].gini_tau == pytest.approx(0.02)
    assert config.targets == "wali" and config.budget == 40 and config.order == "gri"
    assert RunConfig.from_json(config.to_json()) == config


def test_launch_starts_a_study_of_the_three_bundled_systems_under_the_paper_profile(db, fake_jobs, monkeypatch):
    for name in ("MORTAR_LLM_BASE_URL", "MORTAR_LLM_API_KEY", "GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    at = app("launch")
    at.segmented_control(key="launch-mode").set_value("A study (several systems side by side)").run()
    by_label(at.selectbox, "Profile").set_value("paper")
    by_label(at.text_input, "Study name").set_value("bundled, paper settings")
    by_label(at.button, "Start run").click().run()
    assert not at.exception and not at.error
    (kind, study), = fake_jobs
    assert kind == "study" and [s.name for s in study.systems] == ["smollm2", "gemma3-270m", "smollm2-one-word"]
    assert study.name == "bundled, paper settings"
    assert study.systems[1].sut == "gemma3-270m" and "{story}" in study.systems[2].system_prompt
    assert (study.suite.profile, study.suite.oracle, study.suite.threshold) == ("paper", "cosine", 0.6)
    assert any("spaCy" in i.value for i in at.info) and "Started study job job-3 (3 systems)" in at.success[0].value


def test_launch_takes_a_python_function_as_the_sut(db, fake_jobs):
    at = app("launch")
    by_label(at.selectbox, "SUT").set_value("python")
    by_label(at.text_input, "Model name").set_value("tests.echo_bot:reply")
    by_label(at.button, "Start run").click().run()
    assert not at.error and fake_jobs[0][1].sut == "tests.echo_bot:reply"
    by_label(at.text_input, "Model name").set_value("tests.echo_bot:respond")
    by_label(at.button, "Start run").click().run()
    assert len(fake_jobs) == 1 and any("tests.echo_bot has no respond" in plain(e.value) for e in at.error)


def test_launch_explains_a_missing_key_instead_of_starting(db, fake_jobs, monkeypatch):
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    at = app("launch")
    by_label(at.selectbox, "SUT").set_value("groq")
    by_label(at.text_input, "Model name").set_value("llama-3.1-8b-instant")
    by_label(at.button, "Start run").click().run()
    assert fake_jobs == [] and any("GROQ_API_KEY" in plain(e.value) for e in at.error)


def test_launch_validates_uploads_with_the_loader_and_keeps_good_ones(db, tmp_path, monkeypatch):
    from mortar import ui

    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(SAMPLE, data / "sample_coqa.json")
    monkeypatch.setattr(ui, "DATA", data)
    at = app("launch")
    at.file_uploader[0].set_value(("broken.json", b'{"version": "1.0", "data": [{"id": "x"}]}', "application/json"))
    at.run()
    assert at.error and "broken.json" in plain(at.error[0].value) and not (data / "broken.json").exists()
    good = '{"id": "mine-1", "story": "Ann has a kite.", "rounds": [{"question": "What has Ann?", "answer": "a kite"}]}'
    at.file_uploader[0].set_value(("my dialogues.jsonl", good.encode(), "application/json"))
    at.run()
    assert not at.error and (data / "my_dialogues.jsonl").read_text() == good
    assert by_label(at.selectbox, "Dataset").value == "my_dialogues.jsonl"


def test_launch_shows_live_progress_cancels_and_resumes(db, fake_jobs):
    import os

    with store.connect(db) as con:  # a running job (this process stands in for it) and one whose process is gone
        store.write_job(con, "j-gone", args=RunConfig(dataset="d.json").to_json(), status="running", pid=None,
                        stage="answering", done=3, total=10)
        store.write_job(con, "j-live", args=RunConfig(dataset="d.json", limit=1).to_json(), status="running",
                        pid=os.getpid(), stage="answering", done=30, total=120, rate=1.5)
    at = app("launch")
    progress = at.get("progress")
    assert len(progress) == 1 and "answering · 30/120 · 1.50 answers/s" in progress[0].proto.text
    assert "about 1 min 0 s left" in progress[0].proto.text
    assert any("gone" in m.value and "stopped" in m.value for m in at.markdown)
    by_label(at.button, "Cancel").click().run()
    by_label(at.button, "Resume").click().run()
    assert fake_jobs == [("cancel", "j-live"), ("resume", "j-gone")]


# -- Violations -------------------------------------------------------------------------------------

def test_violations_filters_change_the_rows(db, run_id):
    at = app("violations")
    total = int(metric(at, "Matching detections").replace(",", ""))
    assert total == len(detection_ids(db, run_id)) and len(at.dataframe[0].value) == min(50, total)
    by_label(at.multiselect, "Relation").set_value(["MR1"]).run()
    mr1 = int(metric(at, "Matching detections"))
    assert mr1 == len(detection_ids(db, run_id, "MR1")) and 0 < mr1 < total
    assert set(at.dataframe[0].value["relation"]) == {"MR1"}
    by_label(at.multiselect, "Perturbation").set_value(["DRS"]).run()
    drs = int(metric(at, "Matching detections"))
    assert 0 < drs < mr1 and all("DRS" in p for p in at.dataframe[0].value["perturbations"])
    by_label(at.slider, "Similarity").set_value((0.0, 0.2)).run()
    assert (at.dataframe[0].value["similarity"] <= 0.2).all()
    by_label(at.multiselect, "Relation").set_value([]).run()
    by_label(at.multiselect, "Perturbation").set_value([]).run()
    by_label(at.slider, "Similarity").set_value((-1.0, 1.0)).run()
    by_label(at.text_input, "Search").set_value("kite").run()
    found = at.dataframe[0].value
    assert 0 < len(found) < total
    assert all("kite" in " ".join(map(str, r)).lower() for r in found[["question", "output", "reference"]].values)
    by_label(at.selectbox, "Sort by").set_value("similarity").run()
    by_label(at.toggle, "Descending").set_value(True).run()
    sims = list(at.dataframe[0].value["similarity"])
    assert sims == sorted(sims, reverse=True)


def test_violations_link_the_picked_detection_to_the_inspector(db, run_id):
    """The link opens the Inspector on the detection picked (a link: the Violations page does not run again)."""
    at = app("violations")
    at.selectbox(key="v-pick").select_index(1).run()
    wanted_run, wanted = at.selectbox(key="v-pick").value.split("|", 1)
    link = next(e.proto for e in at.get("page_link") if e.proto.label == "Open in the inspector")
    assert link.page.endswith("inspector") and parse_qs(link.query_string) == {"run": [wanted_run],
                                                                               "detection": [wanted]}
    followed = AppTest.from_file(APP, default_timeout=30)
    followed.query_params.update({"run": wanted_run, "detection": wanted})
    followed.switch_page("pages/inspector.py")
    followed.run()
    assert not followed.exception and followed.title[0].value == "Inspector"
    assert plain(followed.subheader[0].value).endswith(wanted)


def test_a_page_run_leaves_what_is_loaded_out_of_garbage_collection(db, run_id):
    import gc

    app("datasets")
    assert gc.get_freeze_count() > 0  # the server's heap, frozen after a page's first run (app.heap_frozen)


# -- Inspector --------------------------------------------------------------------------------------

def test_inspector_shows_dialogues_ec_verdicts_and_the_knowledge_graph(db, run_id):
    mr2 = detection_ids(db, run_id, "MR2")
    det = mr2[0] if mr2 else detection_ids(db, run_id, "MR1")[0]
    at = app("inspector", inspect=(run_id, det))
    assert plain(at.subheader[0].value).endswith(det)
    original, perturbed = at.dataframe[0].value, at.dataframe[1].value
    assert {"question", "SUT answer", "gold answer"} <= set(original.columns)
    assert {"EC", "semantic", "ontology", "story", "needed (Ḡ_j)", "missing"} <= set(perturbed.columns)
    assert set(perturbed["EC"]) <= {"✓", "✗"} and len(perturbed) > 3
    # the detection's row is marked in both dialogues, the rounds its question needs in the seed's
    source_round = int(original.loc[original[""] == "🟧 detection", "round"].squeeze())
    assert perturbed.loc[perturbed[""] == "🟧 detection", "round"].tolist() == [source_round]
    assert set(original.loc[original[""] == "🟦 needed", "round"]) <= set(range(1, source_round))
    verdicts = [e.value for e in list(at.success) + list(at.error)]
    assert any(v.startswith(("equivalent context", "context not equivalent")) for v in verdicts)
    assert {m.label for m in at.metric} >= {"semantic check", "ontology check", "story check"}
    assert at.get("plotly_chart")
    # a round whose context lost what it needs says which entities are missing
    lost = perturbed[perturbed["missing"] != ""]
    if len(lost):
        at.selectbox(key=f"i-round-{det.split('/', 1)[1].rsplit('/', 1)[0]}").set_value(int(lost['pos'].iloc[0])).run()
        assert any("lacks" in e.value for e in at.error)


def test_inspector_lists_every_version_of_an_mr3_question(db, run_id):
    det = detection_ids(db, run_id, "MR3")[0]
    at = app("inspector", inspect=(run_id, det))
    versions = at.dataframe[0].value
    assert len(versions) >= 2 and versions["compared"].sum() >= 1
    assert {"perturbation", "question", "sut_answer", "EC"} <= set(versions.columns)


def test_inspector_rerun_reads_only_the_stamps_while_the_run_is_unchanged(db, run_id, monkeypatch):
    det = detection_ids(db, run_id, "MR1")[0]
    at = app("inspector", inspect=(run_id, det))
    opened = []
    session = store.session
    monkeypatch.setattr(store, "session", lambda *a, **k: opened.append(1) or session(*a, **k))
    at.run()
    assert not at.exception, at.exception
    assert len(opened) == 1  # the runs' stamps; the rest, the run's PPD under the label form too, is cached


def test_inspector_group_shows_a_label_saved_elsewhere_at_once(db, run_id):
    det = detection_ids(db, run_id, "MR1")[0]
    with store.session(db) as con:
        seed_id, turn = con.execute("SELECT seed_id, source_round FROM detections WHERE run_id = ? AND detection_id = ?",
                                    [run_id, det]).fetchone()
    at = app("inspector", inspect=(run_id, det), inspect_group=(run_id, seed_id, turn))

    def labels_of_det():
        members = at.dataframe[0].value  # the group comes first
        return int(members.loc[members["detection_id"] == det, "n_labels"].iloc[0])

    assert labels_of_det() == 0
    labels.save_label(run_id, det, "bob", 2, db=db)  # another browser session labels it
    at.run()
    assert labels_of_det() == 1


def test_inspector_labels_a_detection_and_ppd_changes(db, run_id):
    det = detection_ids(db, run_id, "MR1")[0]
    at = app("inspector", inspect=(run_id, det))
    by_label(at.text_input, "Your name").set_value("ann")
    by_label(at.button, "Start labelling").click().run()
    assert metric(at, "PPD of this run") == "–"
    by_label(at.number_input, "Score").set_value(9)
    by_label(at.button, "Save label").click().run()
    assert metric(at, "PPD of this run") == "0.000"
    with store.session(db) as con:
        assert store.label_of(con, run_id, det, "ann") == (9, None)


# -- Labelling --------------------------------------------------------------------------------------

def test_labelling_a_sample_stores_labels_and_updates_ppd(db, run_id):
    at = app("labelling")
    by_label(at.text_input, "Your name").set_value("ann")
    by_label(at.button, "Start labelling").click().run()
    by_label(at.number_input, "Sample size").set_value(3)
    by_label(at.radio, "Sampling").set_value("stratified by relation")
    by_label(at.button, "Draw the sample").click().run()
    assert "0 of 3 labelled by you · item 1" in at.get("progress")[0].proto.text
    by_label(at.number_input, "Score").set_value(2)
    by_label(at.text_input, "Note").set_value("wrong person")
    by_label(at.button, "Save label").click().run()
    assert "1 of 3 labelled by you · item 2" in at.get("progress")[0].proto.text
    assert metric(at, "PPD of this run") == "1.000"
    by_label(at.button, "Skip").click().run()
    assert "item 3" in at.get("progress")[0].proto.text
    by_label(at.button, "← Back").click().run()
    by_label(at.number_input, "Score").set_value(10)
    by_label(at.button, "Save label").click().run()
    assert metric(at, "PPD of this run") == "0.500"
    with store.session(db) as con:
        frame = store.read_labels(con, run_id)
    assert sorted(frame["score"]) == [2, 10] and "wrong person" in set(frame["note"])


def test_agreement_kappa_and_adjudication(db, run_id):
    ids = detection_ids(db, run_id)[:4]
    for det, a, b in zip(ids, (1, 2, 9, 8), (1, 9, 9, 7)):
        labels.save_label(run_id, det, "ann", a, db=db)
        labels.save_label(run_id, det, "bob", b, db=db)
    at = app("labelling", annotator="carol")
    assert metric(at, "Cohen's kappa") == "0.500"
    assert metric(at, "PPD of ann") == "0.500" and metric(at, "PPD of bob") == "0.250"
    assert metric(at, "Disputed") == "1"
    by_label(at.radio, "Final label").set_value("false positive")
    by_label(at.button, "Save the decision").click().run()
    assert metric(at, "Disputed") == "0" and metric(at, "PPD of this run") == "0.250"
    with store.session(db) as con:
        adj = store.read_adjudications(con, run_id)
    assert list(adj["detection_id"]) == [ids[1]] and adj["adjudicator"][0] == "carol"


# -- Metrics, Export, Datasets, Test cases ----------------------------------------------------------

def test_metrics_page_shows_the_papers_tables_and_figures(db, run_id):
    at = app("metrics")
    with store.connect(db, read_only=True) as con:
        cases, verdicts = store.read_cases_and_verdicts(con, run_id)
        report = reports.report(store.read_checks(con, run_id), cases, verdicts)
    assert metric(at, "MT NBugs") == str(report["metrics"]["MT"]["NBugs"])
    assert any("differ from the paper's: oracle: answer" in c.value and "paper: cosine" in c.value for c in at.caption)
    headline = at.dataframe[0].value.set_index("method")
    assert headline.loc["MT", "BPTC"] == pytest.approx(report["metrics"]["MT"]["BPTC"])
    tables = [d.value for d in at.dataframe[1:5]]
    table_vi = next(t for t in tables if "MR1_checks" in t)
    table_viii = next(t for t in tables if "Rate+" in t)
    assert set(table_vi["perturbation"]) == {"DRS", "DRR", "DRD", "DSR", "DSD", "Sum"}
    assert list(table_viii["relation"]) == ["MR1", "MR2", "MR3", "MR4"]
    assert len(at.get("plotly_chart")) == 7  # … and the similarity per relation, with its critical bugs
    labels_ = [b.proto.label for b in at.get("download_button")]
    assert labels_.count("HTML") == 7 and labels_.count("CSV") >= 5
    assert "Report to share (HTML)" in labels_  # the whole report as one file, as the README says
    assert all(d.proto.placeholder == "—" for d in at.dataframe)  # a missing value shows as a dash, not "None"


def test_metrics_page_compares_mortar_with_metal(tmp_path, monkeypatch):
    db = tmp_path / "both.duckdb"
    result = run(load_dataset(SAMPLE), RunConfig(methods="mortar,metal", sut="scripted", limit=1), db=db, sut=ScriptedSUT())
    monkeypatch.setenv("MORTAR_DB", str(db))
    with store.connect(db, read_only=True) as con:
        cases, verdicts = store.read_cases_and_verdicts(con, result.run_id)
        report = reports.report(store.read_checks(con, result.run_id), cases, verdicts)
        metal_bug = con.execute("SELECT min(detection_id) FROM detections WHERE relation = 'METAL'").fetchone()[0]
    labels.save_label(result.run_id, metal_bug, "ann", 1, db=db)
    labels.save_label(result.run_id, metal_bug, "bob", 2, db=db)
    at = app("metrics")
    assert "METAL" in set(at.dataframe[0].value["method"])
    unique = next(d.value for d in at.dataframe if "unique_share" in d.value)
    assert list(unique["method"]) == ["MT", "METAL"]
    assert list(unique["unique"]) == [r["unique"] for r in report["uniqueness"]]
    figures = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    overlap = next(f for f in figures if f["layout"]["title"]["text"].startswith("Overlap"))
    assert {t["name"]: t["x"][0] for t in overlap["data"]} == report["overlap"]
    precision = next(d.value for d in at.dataframe if "kappa" in d.value).set_index("method")
    assert precision.loc["METAL", "PPD"] == 1.0 and precision.loc["METAL", "annotators"] == "ann vs bob"


def test_export_offers_every_download_in_every_format(db, run_id):
    at = app("export")
    buttons = at.get("download_button")
    assert [b.proto.label for b in buttons] == ["Download rounds", "Download detections", "Download labels",
                                                "Download metrics"]
    assert buttons[0].proto.url  # the file is ready to download
    by_label(at.radio, "Format").set_value("Parquet").run()
    assert not at.exception and len(at.get("download_button")) == 4


def test_datasets_and_test_cases_pages(db, run_id):
    at = app("datasets")
    assert metric(at, "Seeds") == "30" and "cs-01" in set(at.dataframe[0].value["seed"])
    at = app("test_cases")
    rounds = at.dataframe[0].value
    assert set(rounds["perturbation"]) == {"ORIG", "DRS", "DRR", "DRD", "DSR", "DSD"}
    assert int(metric(at, "Without equivalent context")) > 0


def test_the_datasets_page_lists_stored_datasets_and_takes_uploads_in_any_format(tmp_path, monkeypatch):
    import json

    from mortar import ui

    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(SAMPLE, data / "sample_coqa.json")
    monkeypatch.setattr(ui, "DATA", data)
    db = tmp_path / "d.duckdb"
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text(json.dumps({"id": "far", "messages": [{"role": "system", "content": "Kim owns a blue van."},
                                                               {"role": "user", "content": "What does Kim own?"},
                                                               {"role": "assistant", "content": "a blue van"}]}))
    with store.connect(db) as con:
        store.write_dataset(con, load_dataset(elsewhere))
    elsewhere.unlink()  # the file is gone: its seeds are read from the store
    monkeypatch.setenv("MORTAR_DB", str(db))
    at = app("datasets")
    stored = next(o for o in by_label(at.selectbox, "Dataset").options if o.startswith("elsewhere.jsonl"))
    by_label(at.selectbox, "Dataset").set_value(stored).run()
    assert metric(at, "Seeds") == "1" and metric(at, "Format") == "stored" and not at.exception
    assert at.text[0].value == "Kim owns a blue van."
    chat = (ROOT / "data" / "sample_chat.jsonl").read_bytes()
    at.file_uploader[0].set_value(("my chats.jsonl", chat, "application/json"))
    at.run()
    assert (data / "my_chats.jsonl").read_bytes() == chat and metric(at, "Format") == "chat"
    assert by_label(at.selectbox, "Dataset").value == "data/my_chats.jsonl"


def test_pages_on_an_empty_store_say_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("MORTAR_DB", str(tmp_path / "none.duckdb"))
    for page in ("violations", "inspector", "labelling", "metrics", "export"):
        at = app(page)
        assert "Launch" in at.info[0].value, page


def test_sut_and_dataset_text_is_never_rendered_as_html():
    for path in [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]:
        assert "unsafe_allow_html" not in path.read_text(), path


def test_figures_export_as_png():
    import plotly.graph_objects as go

    from mortar import ui

    assert ui.png_export_available(), "kaleido and Chromium are installed by `make`"
    png = go.Figure(go.Bar(x=["MT", "METAL"], y=[3, 1])).to_image(format="png", width=400, height=300)
    assert png.startswith(b"\x89PNG") and len(png) > 1000
