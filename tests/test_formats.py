"""Dataset formats: the samples of each load, generate test cases and run end to end; a malformed line is exit 2
with one line naming it, and nothing of the file is stored; run files and the command line's overrides."""

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mortar.cli import build_parser, config_from, given_options, main
from mortar.dataset import DatasetError
from mortar.formats import detect_format, load_dataset
from tests.conftest import ROOT

DATA = ROOT / "data"
SAMPLES = {"chat": ("sample_chat.jsonl", 3, "chat-bakery"), "sharegpt": ("sample_sharegpt.json", 3, "sg-garden"),
           "coqa": ("sample_coqa.json", 30, "cs-01"),
           "parquet": ("sample_coqa_hf.parquet", 3, "sample_coqa_hf-1")}


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_each_sample_is_detected_and_loads(kind):
    name, n, first = SAMPLES[kind]
    path = DATA / name
    assert detect_format(path, path.read_bytes()) == kind
    dataset = load_dataset(path)
    assert len(dataset.seeds) == n and dataset.seeds[0].id == first
    assert all(r.question.strip() for s in dataset.seeds for r in s.rounds)


def test_a_chat_log_becomes_a_story_with_rounds():
    bakery = load_dataset(DATA / "sample_chat.jsonl").seeds[0]
    assert bakery.story.startswith("Harbour Street Bakery opens at 7 a.m.")
    assert (bakery.rounds[1].question, bakery.rounds[1].answer) == ("And on Sundays?", "It is closed on Sundays.")
    garden = load_dataset(DATA / "sample_sharegpt.json").seeds[0]
    assert garden.story.startswith("The community garden") and garden.rounds[0].answer == "Twenty-four"


def test_quac_reads_cannotanswer_as_unknown_and_keeps_the_background():
    lighthouse = load_dataset(DATA / "sample_quac.parquet").seeds[0]
    assert lighthouse.id == "quac-lighthouse" and lighthouse.rounds[5].is_unknown
    assert lighthouse.story.startswith("Skerry Point Lighthouse stands") and "CANNOTANSWER" not in lighthouse.story


def test_a_grounding_field_replaces_the_system_message(tmp_path):
    path = tmp_path / "fielded.jsonl"
    path.write_text(json.dumps({"id": "a", "context": "Ann had a red kite.", "messages": [
        {"role": "user", "content": "What colour was the kite?"}, {"role": "assistant", "content": "red"}]}) + "\n")
    assert load_dataset(path, grounding_field="context").seeds[0].story == "Ann had a red kite."
    with pytest.raises(DatasetError, match="line 1: field 'ground'"):
        load_dataset(path, grounding_field="ground")


def test_an_arrow_stream_as_hugging_face_saves_it_loads(tmp_path):
    table = pq.read_table(DATA / "sample_coqa_hf.parquet")
    path = tmp_path / "data-00000-of-00001.arrow"
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    stream, parquet = load_dataset(path).seeds, load_dataset(DATA / "sample_coqa_hf.parquet").seeds
    assert [(s.story, s.rounds) for s in stream] == [(s.story, s.rounds) for s in parquet]
    assert stream[0].id == "data-00000-of-00001-1"  # no id column: the file's name and the row


BAD_CHAT = [
    ('{"messages": [{"role": "user", "content": "Hi?"}, {"role": "assistant", "content": "Hello"}]}\n{"messages": [',
     "line 2: invalid JSON"),
    ('{"id": "x", "turns": []}', "line 1: field 'messages': missing or not a list"),
    ('{"messages": [{"role": "user", "content": "A?"}, {"role": "user", "content": "B?"}]}',
     "line 1: messages[1]: two user messages in a row (round 1 has no assistant reply)"),
    ('{"messages": [{"role": "assistant", "content": "Hello"}]}',
     "line 1: messages[0]: an assistant message with no user message before it"),
    ('{"messages": [{"role": "tool", "content": "{}"}, {"role": "user", "content": "A?"}]}',
     "line 1: messages[0]: role 'tool' is none of system, user, assistant"),
    ('{"messages": [{"role": "system", "content": "Only a story."}]}', "line 1: no user message"),
]


@pytest.mark.parametrize("text, message", BAD_CHAT)
def test_a_malformed_chat_line_is_one_line_naming_it(tmp_path, text, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(DatasetError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        load_dataset(path, "chat")


@pytest.mark.parametrize("name, text, message", [
    ("bad.json", '[{"conversations": [{"from": "narrator", "value": "x"}]}]',
     "record 1: conversations[0].from: 'narrator' is none of human, gpt, system"),
    ("bad.jsonl", '{"conversations": [{"from": "human", "value": "A?"}]}\n{"conversations": 3}',
     "line 2: field 'conversations': missing or not a list"),
])
def test_a_malformed_sharegpt_record_is_one_line(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DatasetError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_dataset(path, "sharegpt")


def test_a_table_of_other_columns_or_a_broken_file_is_one_line(tmp_path):
    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"text": ["a"], "label": [1]}), path)
    with pytest.raises(DatasetError, match="columns label, text: neither Hugging Face's CoQA"):
        load_dataset(path)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1" + b"\0" * 20)
    with pytest.raises(DatasetError, match="not a readable Parquet or Arrow file"):
        load_dataset(broken)
    short = tmp_path / "short.parquet"
    pq.write_table(pa.table({"story": ["s"], "questions": [["A?", "B?"]], "answers": [{"input_text": ["a"]}]}), short)
    with pytest.raises(DatasetError, match="row 1: 2 questions but 1 answers"):
        load_dataset(short)


def test_the_cli_exits_2_on_a_bad_line_and_stores_nothing(tmp_path, capsys):
    path, db = tmp_path / "bad.jsonl", tmp_path / "s.duckdb"
    path.write_text('{"messages": [{"role": "user", "content": "A?"}]}\n{"messages": [{"role": "user"}]}\n')
    assert main(["generate", str(path), "--out", str(tmp_path / "c.jsonl"), "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "line 2: messages[0].content: not text" in err
    assert not db.exists() or duckdb.connect(str(db)).execute("SELECT count(*) FROM datasets").fetchone()[0] == 0


@pytest.mark.parametrize("name", ["sample_chat.jsonl", "sample_sharegpt.json", "sample_coqa_hf.parquet",
                                  "sample_quac.parquet"])
def test_each_sample_generates_test_cases_with_their_context_verdicts(tmp_path, name, capsys):
    out = tmp_path / "cases.jsonl"
    assert main(["generate", str(DATA / name), "--out", str(out), "--db", str(tmp_path / "g.duckdb"),
                 "--perturbations", "DRS", "DRR"]) == 0
    cases = [json.loads(line) for line in out.read_text().splitlines()]
    assert {c["perturbation"] for c in cases} == {"ORIG", "DRS", "DRR"}
    assert any(not r["ec"]["equivalent"] for c in cases for r in c["rounds"])  # the context check ran


@pytest.mark.parametrize("name", ["sample_chat.jsonl", "sample_sharegpt.json", "sample_coqa_hf.parquet",
                                  "sample_quac.parquet"])
def test_each_sample_runs_end_to_end_against_a_python_function(tmp_path, name, capsys):
    db = tmp_path / "r.duckdb"
    assert main(["run", "--dataset", str(DATA / name), "--sut", "tests.echo_bot:reply", "--limit", "1",
                 "--perturbations", "DRS", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "SUT tests.echo_bot:reply" in out and "MT (mortar):" in out
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM run_rounds WHERE output IS NOT NULL").fetchone()[0] > 0
    con.close()


def test_the_chat_sample_runs_end_to_end_with_the_bundled_sut(tmp_path, capsys):
    db = tmp_path / "smol.duckdb"
    assert main(["run", "--dataset", str(DATA / "sample_chat.jsonl"), "--limit", "1", "--perturbations", "DRS",
                 "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "SUT smollm2" in out and "RBT: " in out


def test_a_run_file_is_read_and_the_command_line_overrides_it(tmp_path):
    run_file = tmp_path / "run.yaml"
    (tmp_path / "sample_chat.jsonl").write_bytes((DATA / "sample_chat.jsonl").read_bytes())
    run_file.write_text("dataset: sample_chat.jsonl\nmethods: [mortar, metal]\nlimit: 2\noracle: cosine\n"
                        "perturbation: {perturbations: [DRS, DRR]}\n")
    argv = ["run", "-c", str(run_file), "--limit", "1", "--perturbations", "DSD", "--oracle", "answer"]
    args = build_parser().parse_args(argv)
    args.given = given_options(build_parser(), argv)  # argparse's private _actions: this fails if they change
    assert {"limit", "oracle", "mortar__perturbations"} <= args.given and "seed" not in args.given
    config = config_from(args)
    assert (config.limit, config.oracle, config.methods) == (1, "answer", ("mortar", "metal"))
    assert config.settings_of("mortar").perturbations == ("DSD",)
    assert Path(config.dataset) == tmp_path / "sample_chat.jsonl"  # relative to the run file
    json_file = tmp_path / "run.json"
    json_file.write_text(json.dumps({"dataset": str(DATA / "sample_chat.jsonl"), "limit": 2}))
    argv = ["run", "--config", str(json_file)]
    args = build_parser().parse_args(argv)
    args.given = given_options(build_parser(), argv)
    assert config_from(args).limit == 2


def test_a_bad_run_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("dataset: [unclosed\n")
    assert main(["run", "-c", str(bad)]) == 2
    assert "not YAML or JSON" in capsys.readouterr().err
    bad.write_text("- a list\n")
    assert main(["run", "-c", str(bad)]) == 2
    assert "a run file is a mapping" in capsys.readouterr().err
