import json
import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # one of several test processes on a core each: one thread for OpenMP's and MKL's kernels (torch's), here and in the
    # processes the tests start (more threads than cores make every process wait on the others)
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "sample_coqa.json"


def coqa_record(seed_id="d1", n=4, story="Ann had a red kite. She flew it on the hill."):
    return {
        "source": "test",
        "id": seed_id,
        "filename": f"{seed_id}.txt",
        "story": story,
        "questions": [{"input_text": f"Question {k}?", "turn_id": k, "bad_attribute": []} for k in range(1, n + 1)],
        "answers": [{"input_text": f"answer {k}", "turn_id": k, "span_start": 0, "span_end": 3, "span_text": "Ann"}
                    for k in range(1, n + 1)],
        "additional_answers": {"0": []},
    }


@pytest.fixture
def write_coqa(tmp_path):
    def write(records, name="data.json"):
        path = tmp_path / name
        path.write_text(json.dumps({"version": "1.0", "data": records}))
        return path
    return write


@pytest.fixture
def db(tmp_path):
    return tmp_path / "store.duckdb"


def scripted_store(tmp_path_factory, name: str, limit: int) -> tuple[Path, str]:
    """A store holding one scripted-SUT run of the first `limit` sample seeds: (its path, the run id)."""
    from mortar.formats import load_dataset
    from mortar.pipeline import RunConfig, run
    from tests.scripted_sut import ScriptedSUT

    db = tmp_path_factory.mktemp(name) / "built.duckdb"
    result = run(load_dataset(SAMPLE), RunConfig(sut="scripted", limit=limit), db=db, sut=ScriptedSUT())
    return db, result.run_id


def fresh_copy(built_db: Path, tmp_path, monkeypatch) -> Path:
    """A copy of a built store for one test (tests write labels), as $MORTAR_DB."""
    path = tmp_path / "store.duckdb"
    shutil.copy(built_db, path)
    monkeypatch.setenv("MORTAR_DB", str(path))
    return path


def kill_after_calls(args: list[str], calls: Path, n: int, timeout_s: float = 180) -> None:
    """Start ``args`` (a script whose scripted SUT writes a line to ``calls`` per answer, slowly) and SIGKILL it
    once it has asked ``n`` questions: a run killed in the middle of answering."""
    import os
    import signal
    import subprocess
    import time

    proc = subprocess.Popen(args, cwd=ROOT)
    deadline = time.time() + timeout_s
    while time.time() < deadline and (not calls.exists() or len(calls.read_text().splitlines()) < n):
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
