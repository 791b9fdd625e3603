import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

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
