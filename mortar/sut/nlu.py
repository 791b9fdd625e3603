"""Systems that understand an utterance as DialTest tests them: an intent, and a BIO slot tag for every word.

``NLUSystem.predict`` takes the dialogue's utterances so far (the last one is understood; the earlier ones are
context: "and for tomorrow" keeps the weather intent) and returns a ``Prediction``: the intent, the tags of the
last utterance's words, and the probability of every intent (DialTest's DeepGini reads them).

The bundled system, ``RecurrentNLU``, is a small recurrent network as in the paper: word embeddings, a
bidirectional GRU over the earlier utterance, a separator and the new one, an intent layer over the mean of the
GRU's states and a slot layer over each word's state. ``train_recurrent`` fits it on a dataset's training
utterances in seconds on a CPU; ``bundled`` trains it on first use and keeps it in a file beside the store.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

from mortar.sut.base import LOGPROBS, SUT, Conversation, SutError, SutSettings

UNK, PAD, SEP = "<unk>", "<pad>", "<sep>"
EPOCHS, BATCH, EMBED, HIDDEN, SEED = 30, 16, 64, 64, 13
RECURRENT = "recurrent"  # the SUT spec of the bundled system: recurrent[:TRAINING_FILE]
TOOLS = "openai-tools"  # the SUT spec of an endpoint asked with tool calls: openai-tools[:MODEL][@FILE] (nlu_tools)
SAMPLE_NLU = Path(__file__).resolve().parents[2] / "data" / "sample_nlu.json"  # what it trains on by default
RECURRENT_VERSION = "gru-1"  # changes the file name of the kept model when the network or its training changes


@dataclass(frozen=True)
class Prediction:
    intent: str
    tags: tuple[str, ...]  # one BIO tag per word of the understood utterance
    probabilities: dict[str, float]  # intent → probability


class NLUSystem:
    """An intent/slot system under test."""

    name = ""

    def predict(self, utterances: list[str]) -> Prediction:
        raise NotImplementedError

    def predict_many(self, dialogues: list[list[str]]) -> list[Prediction]:
        return [self.predict(d) for d in dialogues]


def utterances_of(seed, upto: int) -> list[str]:
    """A dialogue's utterances up to round ``upto`` (1-based), as a system is given them."""
    return [r.question for r in seed.rounds[:upto]]


def training_pairs(seeds, split: str = "train") -> list[tuple[list[str], str, tuple[str, ...]]]:
    """(utterances so far, intent, tags of the last) for every round of the seeds of a split ("" for all)."""
    return [(utterances_of(seed, k), r.intent, r.tags) for seed in seeds if not split or seed.source == split
            for k, r in enumerate(seed.rounds, start=1) if r.intent]


class RecurrentNLU(NLUSystem):
    name = "recurrent"

    def __init__(self, vocab: list[str], intents: list[str], tags: list[str], state: dict | None = None):
        import torch

        self.vocab, self.intents, self.tag_names = vocab, intents, tags
        self.index = {w: i for i, w in enumerate(vocab)}
        self.net = _network(len(vocab), len(intents), len(tags))
        if state is not None:
            self.net.load_state_dict(state)
        self.net.eval()
        self.torch = torch

    def encode(self, utterances: list[str]) -> tuple[list[int], int]:
        """Word ids of the previous utterance, the separator and the new utterance; where the new one starts."""
        previous = utterances[-2].split() if len(utterances) > 1 else []
        words = [*previous, SEP, *utterances[-1].split()]
        return [self.index.get(w.lower(), self.index[UNK]) for w in words], len(previous) + 1

    def predict(self, utterances: list[str]) -> Prediction:
        return self.predict_many([utterances])[0]

    def predict_many(self, dialogues: list[list[str]]) -> list[Prediction]:
        torch = self.torch
        encoded = [self.encode(d) for d in dialogues]
        by_length: dict[int, list[int]] = {}
        for k, (ids, _) in enumerate(encoded):
            by_length.setdefault(len(ids), []).append(k)
        out: list[Prediction | None] = [None] * len(encoded)
        # one batch per length: padding would reach the words through the backward GRU, so a prediction would
        # depend on what it was batched with
        for same in by_length.values():
            with torch.inference_mode():
                intent_logits, tag_logits = self.net(*_batch([encoded[k] for k in same], torch))
            for row, k in enumerate(same):
                ids, start = encoded[k]
                probs = torch.softmax(intent_logits[row], dim=-1).tolist()
                tags = tag_logits[row, start:len(ids)].argmax(-1).tolist()
                out[k] = Prediction(self.intents[max(range(len(probs)), key=probs.__getitem__)],
                                    tuple(self.tag_names[t] for t in tags), dict(zip(self.intents, probs)))
        return out

    def save(self, path: Path) -> None:
        self.torch.save({"vocab": self.vocab, "intents": self.intents, "tags": self.tag_names,
                         "state": self.net.state_dict()}, path)

    @classmethod
    def load(cls, path: Path) -> "RecurrentNLU":
        import torch

        saved = torch.load(path, weights_only=True)
        return cls(saved["vocab"], saved["intents"], saved["tags"], saved["state"])


def _network(n_words: int, n_intents: int, n_tags: int):
    import torch
    from torch import nn

    class JointGRU(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(n_words, EMBED, padding_idx=1)
            self.gru = nn.GRU(EMBED, HIDDEN, batch_first=True, bidirectional=True)
            self.intent = nn.Linear(2 * HIDDEN, n_intents)
            self.slot = nn.Linear(2 * HIDDEN, n_tags)

        def forward(self, ids, mask):
            states, _ = self.gru(self.embed(ids))
            pooled = (states * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)
            return self.intent(pooled), self.slot(states)

    torch.manual_seed(SEED)
    return JointGRU()


def _batch(encoded: list[tuple[list[int], int]], torch):
    width = max(len(ids) for ids, _ in encoded)
    ids = torch.tensor([i + [1] * (width - len(i)) for i, _ in encoded])  # 1: <pad>
    mask = torch.tensor([[1.0] * len(i) + [0.0] * (width - len(i)) for i, _ in encoded])
    return ids, mask


def train_recurrent(pairs: list[tuple[list[str], str, tuple[str, ...]]], epochs: int = EPOCHS) -> RecurrentNLU:
    """A ``RecurrentNLU`` fitted on (utterances so far, intent, tags of the last utterance) pairs: Adam, the sum of
    the intent's and the slots' cross-entropy, fixed seeds (the same pairs give the same model)."""
    import torch

    words = sorted({w.lower() for utterances, _, _ in pairs for u in utterances[-2:] for w in u.split()})
    vocab = [UNK, PAD, SEP, *words]
    intents = sorted({intent for _, intent, _ in pairs})
    tags = sorted({t for _, _, tag_list in pairs for t in tag_list} | {"O"})
    model = RecurrentNLU(vocab, intents, tags)
    net, rng = model.net, random.Random(SEED)
    net.train()
    optimiser = torch.optim.Adam(net.parameters(), lr=0.01)
    data = [(model.encode(u), intents.index(i), [tags.index(t) for t in ts]) for u, i, ts in pairs]
    for _ in range(epochs):
        rng.shuffle(data)
        for start in range(0, len(data), BATCH):
            chunk = data[start:start + BATCH]
            ids, mask = _batch([e for e, _, _ in chunk], torch)
            intent_logits, tag_logits = net(ids, mask)
            gold_tags = torch.full(ids.shape, -100)
            for k, ((token_ids, first), _, tag_ids) in enumerate(chunk):
                gold_tags[k, first:len(token_ids)] = torch.tensor(tag_ids)
            loss = torch.nn.functional.cross_entropy(intent_logits, torch.tensor([i for _, i, _ in chunk])) + \
                torch.nn.functional.cross_entropy(tag_logits.reshape(-1, len(tags)), gold_tags.reshape(-1),
                                                  ignore_index=-100)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    net.eval()
    return model


def bundled(seeds, folder: Path) -> RecurrentNLU:
    """The bundled system for a dataset: trained on its training split (all of it when it has no split) on first
    use, and kept in ``folder`` under a name made of the training data, so the next run loads it."""
    split = "train" if any(s.source == "train" for s in seeds) else ""
    pairs = training_pairs(seeds, split)
    if not pairs:
        raise ValueError("no utterances with an intent to train the bundled intent/slot model on")
    path = folder / f"nlu-{RECURRENT_VERSION}-{_digest(pairs)}.pt"
    if path.is_file():
        return RecurrentNLU.load(path)
    model = train_recurrent(pairs)
    folder.mkdir(parents=True, exist_ok=True)
    model.save(path)
    return model


def slot_spans(tags: tuple[str, ...], words: list[str]) -> set[tuple[str, str]]:
    """The slots a tagging fills: (slot, its words) for every B-/I- span (an I- without its B- starts a span)."""
    spans, current = [], None
    for word, tag in zip(words, tags):
        if tag.startswith("B-") or (tag.startswith("I-") and (current is None or current[0] != tag[2:])):
            current = (tag[2:], [word])
            spans.append(current)
        elif tag.startswith("I-"):
            current[1].append(word)
        else:
            current = None
    return {(slot, " ".join(ws)) for slot, ws in spans}


def slot_f1(gold: list[set], predicted: list[set]) -> float:
    """Slot F1 over utterances: a slot counts when its type and all its words are right (the paper's entity
    accuracy, as precision and recall)."""
    right = sum(len(g & p) for g, p in zip(gold, predicted))
    n_gold, n_pred = sum(len(g) for g in gold), sum(len(p) for p in predicted)
    if not n_gold and not n_pred:
        return 1.0
    precision = right / n_pred if n_pred else 0.0
    recall = right / n_gold if n_gold else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def understanding(system: NLUSystem, pairs) -> tuple[float, float]:
    """Intent accuracy and slot F1 of a system on (utterances so far, intent, tags of the last) pairs."""
    if not pairs:
        return float("nan"), float("nan")
    predicted = system.predict_many([u for u, _, _ in pairs])
    accuracy = sum(p.intent == intent for p, (_, intent, _) in zip(predicted, pairs)) / len(pairs)
    return accuracy, slot_f1([slot_spans(tags, u[-1].split()) for u, _, tags in pairs],
                             [slot_spans(p.tags, u[-1].split()) for p, (u, _, _) in zip(predicted, pairs)])


class NLUSUT(SUT):
    """An intent/slot system as a system under test: the executor asks it conversations like any SUT; it reads
    the user's utterances (the earlier ones as context, its own earlier answers unused) and answers with its
    prediction as JSON, ``{"intent", "tags", "probabilities"}`` (``prediction_of`` reads it back). ``load`` makes
    the system on first use (training the bundled model takes seconds)."""

    backend = "nlu"
    capabilities = frozenset({LOGPROBS})  # the probability of every intent, with each answer (DeepGini reads them)

    def __init__(self, name: str, load, settings: SutSettings | None = None):
        super().__init__(settings)
        self.model, self._load, self._system = name, load, None

    @property
    def system(self) -> NLUSystem:
        if isinstance(self._system, SutError):
            raise self._system  # a system that failed to load fails every round the same way, without retrying
        if self._system is None:
            try:
                self._system = self._load()
            except SutError as e:
                self._system = e
                raise
        return self._system

    def answer(self, conversation: Conversation) -> str:
        utterances = [turn.question for turn in conversation.history] + [conversation.question]
        return answer_json(self.system.predict(utterances))


def recurrent_sut(seeds, folder: Path, settings: SutSettings | None = None) -> NLUSUT:
    """The bundled recurrent system trained on these seeds' training split, named by its training data."""
    split = "train" if any(s.source == "train" for s in seeds) else ""
    pairs = training_pairs(seeds, split)
    return NLUSUT(f"recurrent-{RECURRENT_VERSION}-{_digest(pairs)}", lambda: bundled(seeds, folder), settings)


def models_folder() -> Path:
    """Where trained systems are kept: ``$MORTAR_MODELS``, else ``models/`` beside the store's default file."""
    return Path(os.environ.get("MORTAR_MODELS") or Path(os.environ.get("MORTAR_DB") or "data/mortar.duckdb").parent
                / "models")


def make_recurrent(spec: str, settings: SutSettings | None = None) -> NLUSUT:
    """``recurrent`` (trained on the bundled sample) or ``recurrent:FILE`` (trained on FILE's training split)."""
    from mortar.formats import load_dataset  # the training data is read when the SUT is named

    _, _, path = spec.partition(":")
    return recurrent_sut(load_dataset(path or SAMPLE_NLU).seeds, models_folder(), settings)


def _digest(pairs) -> str:
    return hashlib.sha256(json.dumps([RECURRENT_VERSION, pairs]).encode()).hexdigest()[:12]


def answer_json(prediction: Prediction) -> str:
    return json.dumps({"intent": prediction.intent, "tags": list(prediction.tags),
                       "probabilities": {k: round(v, 6) for k, v in prediction.probabilities.items()}})


def prediction_of(answer: str | None) -> Prediction | None:
    """A stored answer of an intent/slot system read back (None for an errored round or another system's text)."""
    try:
        doc = json.loads(answer) if answer else None
    except json.JSONDecodeError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("intent"), str):
        return None
    return Prediction(doc["intent"], tuple(doc.get("tags", ())), dict(doc.get("probabilities", {})))
