"""The local SmolLM2 SUT, for real: a few rounds only, the model loaded once for the whole test session."""

import pytest
import torch

from mortar.store import StoreCache
from mortar.dataset import TestCase
from mortar.formats import load_dataset
from mortar.execute import execute
from mortar.sut import Conversation, SutSettings, Turn, make_sut
from mortar.sut.local import CACHE_DIR, load_model, stop_token_ids
from tests.conftest import SAMPLE


@pytest.fixture(scope="session")
def smollm2():
    sut = make_sut("smollm2", lanes=3)
    sut.loaded  # noqa: B018 - the one expensive load (a GGUF conversion the very first time)
    return sut


@pytest.fixture(scope="session")
def seeds():
    return load_dataset(SAMPLE).seeds


def template_ids(sut, conversation):
    return list(sut.tokenizer.apply_chat_template(conversation.messages(sut.settings.system_prompt),
                                                  add_generation_prompt=True, tokenize=True, return_dict=False))


def generate(sut, conversation):
    """The answer the plain way: the whole templated conversation through model.generate."""
    model, tokenizer = sut.loaded
    ids = torch.tensor([template_ids(sut, conversation)])
    with torch.inference_mode():
        out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                             max_new_tokens=sut.settings.max_new_tokens, pad_token_id=tokenizer.pad_token_id,
                             eos_token_id=sorted(stop_token_ids(model, tokenizer)))
    return tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True).strip()


def ask(session, lane, conversation):
    session.submit(lane, conversation)
    done = []
    while not done:
        done = session.wait()
    return done[0].text


def test_extending_the_kv_cache_gives_the_chat_templates_tokens_and_the_same_answers(smollm2, seeds):
    seed = seeds[1]
    q1, q2, q3 = (r.question for r in seed.rounds[:3])
    session = smollm2.session(lanes=1)
    a1 = ask(session, 0, c1 := Conversation(seed.story, (), q1))
    assert a1 == generate(smollm2, c1)

    c2 = Conversation(seed.story, (Turn(q1, a1),), q2)
    before = session.prefilled_tokens
    a2 = ask(session, 0, c2)
    expected = template_ids(smollm2, c2)
    assert session.cached_tokens(0)[:len(expected)] == expected
    assert session.prefilled_tokens - before < len(expected) // 5  # only the new turn was run
    assert a2 == generate(smollm2, c2)

    # history that departs from what the model generated: the cache must be cut back and recomputed
    c3 = Conversation(seed.story, (Turn(q1, a1), Turn(q2, "Grey,  of course!")), q3)
    a3 = ask(session, 0, c3)
    expected = template_ids(smollm2, c3)
    assert session.cached_tokens(0)[:len(expected)] == expected
    assert a3 == generate(smollm2, c3)


def test_lanes_decoded_in_one_batch_answer_as_each_would_alone(smollm2, seeds):
    conversations = [
        Conversation(seeds[0].story, (), seeds[0].rounds[0].question),
        Conversation(seeds[2].story, (Turn(seeds[2].rounds[0].question, "In the mountains."),
                                      Turn(seeds[2].rounds[1].question, "Unknown")), seeds[2].rounds[2].question),
        Conversation(seeds[3].story, (), seeds[3].rounds[1].question),
    ]
    session = smollm2.session(lanes=3)
    for lane, conversation in enumerate(conversations):
        session.submit(lane, conversation)
    answers = {}
    while len(answers) < 3:
        answers.update({c.lane: c.text for c in session.wait()})
    assert [answers[i] for i in range(3)] == [generate(smollm2, c) for c in conversations]


def test_a_lane_idle_between_decoding_lanes_keeps_its_cache(smollm2, seeds):
    """Lanes 0 and 2 decode as one batch over rows 0–2: idle lane 1 is fed placeholders past its own tokens."""
    seed = seeds[5]
    first = Conversation(seed.story, (), seed.rounds[0].question)
    session = smollm2.session(lanes=3)
    a1 = ask(session, 1, first)
    others = [Conversation(seeds[6].story, (), seeds[6].rounds[0].question),
              Conversation(seeds[7].story, (), seeds[7].rounds[0].question)]
    session.submit(0, others[0])
    session.submit(2, others[1])
    answers = {}
    while len(answers) < 2:
        answers.update({c.lane: c.text for c in session.wait()})
    assert [answers[0], answers[2]] == [generate(smollm2, c) for c in others]
    cached = session.cached_tokens(1)
    follow_up = Conversation(seed.story, (Turn(first.question, a1),), seed.rounds[1].question)
    before = session.prefilled_tokens
    assert ask(session, 1, follow_up) == generate(smollm2, follow_up)
    assert session.prefilled_tokens - before < len(cached) // 5  # the idle lane's story was reused, not re-read


def test_packed_layers_compute_what_the_loaded_ones_do_from_memory_of_their_own(smollm2, seeds):
    packed, tokenizer = smollm2.loaded
    plain, _ = smollm2.white_box
    assert packed is not plain and packed.model.layers[0].mlp.up_proj.__class__.__name__ == "PackedLinear"
    ids = torch.tensor([template_ids(smollm2, Conversation(seeds[0].story, (), seeds[0].rounds[0].question))])
    with torch.inference_mode():
        a, b = packed(input_ids=ids).logits[0], plain(input_ids=ids).logits[0]
    assert (a - b).abs().max() < 1e-2 and torch.equal(a.argmax(-1), b.argmax(-1))
    # the weights left unpacked (embedding, norms) are copies: none is read from the mapped weights file
    files = [tuple(int(x, 16) for x in line.split()[0].split("-")) for line in open("/proc/self/maps")
             if line.rstrip().endswith(".safetensors")]
    assert files  # the white-box model still reads its weights from the file
    assert not any(low <= p.data_ptr() < high for p in packed.parameters() for low, high in files)


def test_execute_with_smollm2_stores_and_reads_back(smollm2, seeds, db):
    seed = seeds[4]
    cases = [TestCase(seed.id, "ORIG", 1, (1, 2)), TestCase(seed.id, "DRS", 1, (2, 1))]
    infos = []
    first = execute([seed], cases, smollm2, StoreCache(db), progress=lambda d, t, info: infos.append(info))
    assert infos[-1]["sut_calls"] == 4 and all(a.ok and a.text for a in first.values())
    again = execute([seed], cases, smollm2, StoreCache(db), progress=lambda d, t, info: infos.append(info))
    assert infos[-1]["sut_calls"] == 0 and infos[-1]["cached"] == 4
    assert {k: a.text for k, a in again.items()} == {k: a.text for k, a in first.items()}


def test_weights_load_once_from_the_converted_cache(smollm2):
    assert load_model(smollm2.local) is load_model(smollm2.local)
    assert (CACHE_DIR / smollm2.local.cache_key / "model.safetensors").is_file()
    other = make_sut("smollm2", SutSettings(max_new_tokens=12))
    assert other.fingerprint != smollm2.fingerprint and other.loaded is smollm2.loaded


def test_answers_use_the_current_cache_api_without_deprecation_warnings(smollm2, seeds, caplog):
    """transformers 5.24 renamed `past_key_values` to `cache` and warns it removes the old name in 5.40."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with smollm2.session(lanes=2) as session:
            for lane in range(2):
                session.submit(lane, Conversation(seeds[0].story, (Turn(seeds[0].rounds[0].question, "Otto"),),
                                                  seeds[0].rounds[lane + 1].question))
            done = []
            while len(done) < 2:
                done += session.wait()
    said = [str(w.message) for w in caught] + [r.getMessage() for r in caplog.records]
    assert all(c.text for c in done) and not [s for s in said if "past_key_values" in s]
