import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path
from collections import Counter

import pytest

from mortar.cli import main
from tests.conftest import ROOT, SAMPLE, coqa_record
from tests.test_store import counts


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_generate_sample_is_reproducible_and_meets_each_definition(tmp_path, db):
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    assert main(["generate", str(SAMPLE), "--seed", "7", "--out", str(a), "--db", str(db)]) == 0
    assert main(["generate", str(SAMPLE), "--seed", "7", "--out", str(b), "--db", str(db)]) == 0
    assert main(["generate", str(SAMPLE), "--seed", "8", "--out", str(c), "--db", str(db)]) == 0
    assert sha(a) == sha(b)
    assert sha(a) != sha(c)

    cases = [json.loads(line) for line in a.read_text().splitlines()]
    seeds = json.loads(SAMPLE.read_text())["data"]
    assert len(cases) == 6 * len(seeds)
    by_seed = {}
    for case in cases:
        by_seed.setdefault(case["seed_id"], {})[case["perturbation"]] = case
        assert [r["position"] for r in case["rounds"]] == list(range(1, len(case["rounds"]) + 1))
    for seed in seeds:
        turns = [q["turn_id"] for q in seed["questions"]]
        text = {q["turn_id"]: q["input_text"] for q in seed["questions"]}
        n = len(turns)
        got = {p: [r["source_round"] for r in case["rounds"]] for p, case in by_seed[seed["id"]].items()}
        assert set(got) == {"ORIG", "DRS", "DRR", "DRD", "DSR", "DSD"}
        for case in by_seed[seed["id"]].values():
            assert all(r["question"] == text[r["source_round"]] for r in case["rounds"])
        assert got["ORIG"] == turns
        assert sorted(got["DRS"]) == turns
        k_red, k_dup = max(1, math.floor(0.3 * n)), max(1, math.floor(0.2 * n))
        assert len(got["DRR"]) == n - k_red and got["DRR"] == [t for t in turns if t in got["DRR"]]
        assert len(got["DRD"]) == n + k_dup
        dup = Counter(got["DRD"])
        assert sum(v == 2 for v in dup.values()) == k_dup
        it = iter(got["DRD"])
        assert all(t in it for t in turns)  # originals keep their order
        assert len(got["DSR"]) == n - k_red and len(set(got["DSR"])) == len(got["DSR"])
        assert sum(v == 2 for v in Counter(got["DSD"]).values()) == k_dup and set(got["DSD"]) == set(turns)


def _bad_datasets(tmp_path, write_coqa):
    unequal = coqa_record("u", 3)
    unequal["answers"].pop()
    empty = coqa_record("e", 1)
    empty["questions"], empty["answers"] = [], []
    broken = tmp_path / "broken.json"
    broken.write_text("{ not json")
    missing = coqa_record("m", 2)
    del missing["questions"][0]["turn_id"]
    return {"invalid JSON": broken, "missing field": write_coqa([missing], "m.json"),
            "unequal counts": write_coqa([coqa_record("ok", 2), unequal], "u.json"),
            "empty dialogue": write_coqa([empty], "e.json"),
            "duplicate ids": write_coqa([coqa_record("d", 2), coqa_record("d", 2)], "d.json"),
            "no file": tmp_path / "absent.json"}


@pytest.mark.parametrize("kind", ["invalid JSON", "missing field", "unequal counts", "empty dialogue",
                                  "duplicate ids", "no file"])
def test_bad_input_exits_2_with_one_line_and_leaves_the_store_unchanged(kind, tmp_path, write_coqa, db):
    good = write_coqa([coqa_record("g", 10)], "good.json")
    assert main(["generate", str(good), "--out", str(tmp_path / "g.jsonl"), "--db", str(db)]) == 0
    before, before_bytes = counts(db), sha(db)
    bad = _bad_datasets(tmp_path, write_coqa)[kind]
    out = tmp_path / "bad.jsonl"
    proc = subprocess.run([sys.executable, "-m", "mortar", "generate", str(bad), "--out", str(out), "--db", str(db)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mortar: error: ") and bad.name in lines[0]
    assert "Traceback" not in proc.stderr
    assert counts(db) == before and sha(db) == before_bytes
    assert not out.exists()


def test_console_script_is_installed():
    proc = subprocess.run([str(Path(sys.executable).parent / "mortar"), "generate", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "--seed" in proc.stdout


def test_progress_bar_shows_stage_counts_rate_and_eta(monkeypatch):
    import io

    from mortar.cli import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    err = Terminal()
    monkeypatch.setattr("sys.stderr", err)
    with ProgressBar() as bar:
        bar(10, 100, {"stage": "answering", "answers_per_second": 0.5})
    line = err.getvalue()
    assert "answering" in line and "10/100" in line and "0.50 answers/s" in line and "ETA 3:00" in line
    assert line.endswith("\n")
