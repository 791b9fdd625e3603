"""Datasets on a page: the files in data/ in every supported format, and an upload checked by the same loader."""

from __future__ import annotations

import hashlib
import re
import tempfile
from pathlib import Path

import streamlit as st

from mortar.dataset import DatasetError
from mortar.formats import FORMATS, SUFFIXES, load_dataset
from mortar.ui.text import md_escape


def data_files(folder: Path) -> list[str]:
    """The dataset files in ``folder`` (data/; every format ``mortar.formats`` reads), by name."""
    return sorted(p.name for p in folder.glob("*") if p.suffix in SUFFIXES and p.is_file())


def save_upload(name: str, data: bytes, folder: Path) -> tuple[Path, int]:
    """Validate an uploaded dataset with the loader and keep it in ``folder`` (never overwriting another file)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", Path(name).name).lstrip(".") or "dataset.json"
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / safe
        probe.write_bytes(data)
        dataset = load_dataset(probe)  # raises DatasetError with the loader's one-line reason
    target = folder / safe
    n = 1
    while target.exists() and target.read_bytes() != data:
        n += 1
        target = folder / f"{Path(safe).stem}-{n}{Path(safe).suffix}"
    if not target.exists():
        target.write_bytes(data)
    return target, len(dataset.seeds)


def upload_box(key: str, folder: Path) -> str | None:
    """An uploader in an expander; the name of the file saved into ``folder`` when one was just added."""
    with st.expander("Add a dataset (" + ", ".join(f.name for f in FORMATS.values()) + ")"):
        upload = st.file_uploader("Dataset file", type=[s.lstrip(".") for s in SUFFIXES], key=key,
                                  help="Checked with the same loader as the `mortar` command (format detected from "
                                       "the content: " + "; ".join(f"{f.name}: {f.text}" for f in FORMATS.values())
                                       + "); a valid file is saved into data/.")
        if upload is None:
            return None
        digest = hashlib.sha256(upload.getvalue()).hexdigest()
        if st.session_state.get(f"{key}-done") == digest:
            return None
        try:
            path, n_seeds = save_upload(upload.name, upload.getvalue(), folder)
        except DatasetError as e:
            st.error(md_escape(f"Not a usable dataset: {e}".replace(str(Path(tempfile.gettempdir())), "upload")))
            return None
        st.session_state[f"{key}-done"] = digest
        st.success(md_escape(f"Saved data/{path.name}: {n_seeds} seed dialogues."))
        return path.name
