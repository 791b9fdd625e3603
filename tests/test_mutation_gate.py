"""The mutation gate: each constraint on hand-made cases, and the gate in METAL and DialTest."""

import random

import pytest

from mortar.dataset import Round, Seed
from mortar.methods.dialtest import Operators, unguided_cases
from mortar.methods.metal import MetalSettings, Word, make_cases as metal_make_cases, metal_test_cases, perturb
from mortar.mutation_gate import (GATE_OFF, GATE_ON, LM_MAX_DROP, NEUTRAL_WORDS, SAME_WORD_IN_CONTEXT, Cosine, LanguageModel,
                                  Mutation, WordInContext,
                                  focus_noun, in_context_synonyms, inflect, lesk_sense, make_gate, swap_options)
from mortar.nlp import load_nlp
from mortar.wordnet import pos_share, senses, verb_frames
from mortar.oracle import Oracle
from mortar.vocab import ADD, LEET, SR, SYN, TYPO, WI

STORY = ("Mara keeps her savings at the bank on King Street. On Sundays she fishes from the muddy bank of the river "
         "Lune with her uncle. Her uncle sold his red van in 2019 and now rides an old bicycle.")


@pytest.fixture(scope="module")
def nlp():
    return load_nlp().nlp


@pytest.fixture(scope="module")
def oracle():
    return Oracle("cosine")


@pytest.fixture(scope="module")
def gate(nlp, oracle):
    return make_gate(nlp, oracle.embeddings, 0.8, GATE_ON)


def reason(gate, operator, original, mutated, story=STORY):
    return gate.reasons([Mutation(operator, original, mutated, story)])[0]


def test_the_focus_noun_is_what_the_question_asks_for(nlp):
    for question, focus in [("Which colour did Mara paint the fence?", "colour"),
                            ("How many fish did her uncle catch?", "fish"),
                            ("What was the name of the river?", "name"), ("Whose bicycle is old?", "bicycle")]:
        doc = nlp(question)
        assert doc[focus_noun(doc)].text == focus
    assert focus_noun(nlp("Where does Mara fish?")) is None


@pytest.mark.parametrize("mutated", [
    "Where does Maria keep her savings?",  # a name
    "Why did her uncle sell his van in 2018?",  # a number
    "Why did her uncle not sell his van in 2019?",  # a negation added is a change too: the number of 'not's
    "Which shade did Mara paint the fence?",  # the focus noun
])
def test_protected_words_are_never_changed(gate, mutated):
    original = {"M": "Where does Mara keep her savings?", "W": "Why did her uncle sell his van in 2019?"}
    source = "Which colour did Mara paint the fence?" if mutated.startswith("Which") else \
        original["M"] if "savings" in mutated else original["W"]
    if "not" in mutated:  # a negation counts the other way: removing one is what is checked
        source, mutated = mutated, source
    assert reason(gate, SYN, source, mutated) == "protected word"


def test_the_sense_in_context_is_chosen_by_the_words_around(nlp):
    money = nlp("Where does Mara deposit her savings at the bank?")
    river = nlp("Where does Mara fish on the muddy bank of the river?")
    at_money, at_river = [t.text for t in money].index("bank"), [t.text for t in river].index("bank")
    assert lesk_sense(money, at_money).offset != lesk_sense(river, at_river).offset
    assert "depository financial institution" in lesk_sense(money, at_money).words
    assert "depository financial institution" not in lesk_sense(river, at_river).words


def test_a_swap_must_be_a_lemma_of_the_sense_in_context(gate, nlp):
    assert reason(gate, SYN, "Why did her uncle sell his van?", "Why did her uncle betray his van?") == "word sense"
    assert reason(gate, SR, "What did Mara keep at the bank?", "What did Mara preserve at the bank?") == "word sense"
    # a light verb's sense is too loose to swap
    assert in_context_synonyms(nlp("What did her uncle do on Sundays?"), 4) == ()


def test_a_noun_is_not_swapped_for_an_ing_form_nor_pluralised_by_guess(gate, nlp):
    assert reason(gate, SYN, "How long did the repairs take?", "How long did the fixings take?") == "word sense"
    assert "wearable" in in_context_synonyms(nlp("What did the clothing cost?"), 3)  # a noun in -ing itself
    assert inflect("sis", "NNS") is None and inflect("glass", "NNS") == "glasses" and inflect("box", "NNS") == "boxes"
    # irregular forms from WordNet's exception list, not by rule
    assert inflect("child", "NNS") == "children" and inflect("foot", "NNS") == "feet" and inflect("go", "VBZ") == "goes"


def test_a_swap_puts_a_common_word_in_the_replaced_words_form(gate, nlp):
    # "sis" is a lemma of the sense, but "sises" is no form of it
    assert reason(gate, SYN, "What did her sisters sell?", "What did her sises sell?") == "word sense"
    # the sense in context is right, but "larceny" and "motorcoach" are words a reader may not know
    assert "larceny" not in in_context_synonyms(nlp("What was stolen in the theft?"), 5)
    assert reason(gate, SYN, "When did the bus leave?", "When did the motorcoach leave?") == "word sense"
    assert reason(gate, SYN, "When did the children leave?", "When did the kids leave?") is None


def test_a_swap_is_no_symbol_no_unknown_plural_and_takes_the_verbs_clause(gate, nlp):
    # 'Sn' is tin's chemical symbol; 'foliage' has no plural a reader knows
    assert "Sn" not in swap_options(nlp("Who brought a tin of oat bars?"), 3)
    assert reason(gate, SYN, "What happened to the leaves?", "What happened to the foliages?") == "word sense"
    # 'help' takes a verb after it ('help dig'), 'assist' and 'aid' do not; without a clause they may stand for it
    assert swap_options(nlp("Why did Fox refuse to help dig?"), 5) == ()
    assert {"assist", "aid"} <= set(swap_options(nlp("What did the wren carry to help?"), 6))
    assert 28 in verb_frames("help", senses("help", "VERB")[0].offset)
    assert 28 not in verb_frames("assist", senses("help", "VERB")[0].offset)


def test_a_swap_is_a_word_read_in_the_replaced_words_part_of_speech(nlp):
    # 'minor' is in the sense of 'child', but a reader takes it as an adjective (2 of its 15 tagged uses are nouns)
    assert pos_share("minor", "NOUN") < 0.25 < pos_share("kid", "NOUN")
    options = swap_options(nlp("Can the children swap their chores with each other?"), 2)
    assert "kids" in options and "minors" not in options


def test_one_word_in_common_with_a_minority_sense_is_no_sure_sense(nlp):
    # Lesk finds one word in common with 'move' as travel, a sense of under half of its uses: not swapped
    story = "Your grandfather Josip moved to Liverpool in 1957 to work on the docks."
    assert swap_options(nlp("In what year did Josip move to Liverpool?"), 5, story) == ()
    assert "construct" in swap_options(nlp("Who is going to build the shelves inside the bus?"), 4)


def test_a_word_of_a_phrasal_verb_or_compound_noun_is_not_swapped(nlp):
    picked = nlp("Who picked up the children?")
    assert swap_options(picked, 1) == () and "kids" in swap_options(picked, 4)  # "picked up" is one verb
    contract = nlp("Who voted against the repair contract?")
    assert swap_options(contract, 4) == () and swap_options(contract, 5) == ()  # nor "repair" of "repair contract"
    check_in = nlp("What should the team have done at check-in?")
    assert [t.text for t in check_in][7:10] == ["check", "-", "in"]
    assert swap_options(check_in, 7) == () and swap_options(check_in, 9) == ()  # not 'cheque-in', 'check-inch'


def test_a_swap_after_an_article_keeps_its_sound(nlp):
    assert swap_options(nlp("How much does a single cone cost?"), 4) == ()  # 'a individual cone'
    assert "individual" in swap_options(nlp("How much does the single cone cost?"), 4)


def test_a_swap_must_keep_the_part_of_speech(gate):
    assert reason(gate, SYN, "Where does Mara fish on Sundays?", "Where does Mara angle on Sundays?") is not None
    assert reason(gate, SR, "What does her uncle ride now?", "What does her uncle bicycle now?") == "part of speech"


def test_an_insertion_may_only_add_an_emphasis_adverb(gate):
    base = "What does her uncle ride now?"
    assert reason(gate, WI, base, "What does her younger uncle ride now?") in ("part of speech", "inserted word")
    assert reason(gate, ADD, base, "What does her uncle often ride now?") == "inserted word"  # an adverb that narrows
    assert reason(gate, WI, base, "What does her uncle actually ride now?") is None
    # an adverb of manner says how it was done ("precisely cool" is cool with precision)
    assert reason(gate, ADD, "How long did the pie cool?", "How long did the pie precisely cool?") == "inserted word"
    assert reason(gate, WI, "What did her uncle never ride?",
                  "What did her uncle never really ride?") == "inserted word"
    assert reason(gate, ADD, "Which red van did he sell?", "Which truly red van did he sell?") in ("part of speech",
                                                                                                 "inserted word")


def test_the_question_must_lead_to_the_same_story_sentences(gate):
    original = "Where does Mara keep her savings?"
    assert reason(gate, ADD, original, "Where does Mara keep her savings?") == "unchanged"
    sentences = "Mara reads at night. Mara keeps her savings in a tin. Mara keeps her bicycle in the shed."
    assert reason(gate, SR, "Where does Mara keep her savings?", "Where does Mara keep her bicycle?", sentences) \
        in ("story sentences", "word sense")
    from mortar.mutation_gate import Reading, StorySentences

    moved = gate.read(Mutation(SR, "Where does Mara keep her savings?", "Where does Mara keep her bicycle?", sentences))
    same = gate.read(Mutation(SR, "Where does Mara keep her savings?", "Where does Mara hold her savings?", sentences))
    assert isinstance(moved, Reading)
    assert not StorySentences().check(moved) and StorySentences().check(same)


def test_the_cosine_bar_stays_a_constraint(gate, nlp, oracle):
    off = make_gate(nlp, oracle.embeddings, 0.8, GATE_OFF)
    far = Mutation(TYPO, "Where does Mara keep her savings?", "Whr dz Mr kp hr svngs?", STORY)
    assert off.reasons([far]) == ["cosine"] and gate.reasons([far]) == ["cosine"]
    assert Cosine(oracle.embeddings, 0.0).check(gate.read(far))


def test_a_word_reads_in_its_sentence(oracle):
    money, river = "She paid the cheque into the bank.", "She fished from the muddy bank of the river."
    loan = "She asked the bank for a loan."

    def bank(text):
        return text, text.index("bank"), text.index("bank") + 4

    assert oracle.embeddings.word_cosine(bank(money), bank(loan)) > oracle.embeddings.word_cosine(bank(money),
                                                                                                  bank(river))


def test_a_swapped_word_must_read_as_the_old_one_did(gate, oracle):
    in_context = WordInContext(oracle.embeddings, LanguageModel())
    left = gate.read(Mutation(SYN, "Did Marsh make any comment as he left the court?",
                              "Did Marsh make any comment as he left the tribunal?"))
    often = gate.read(Mutation(SYN, "How often does the ferry run?", "How frequently does the ferry run?"))
    assert not in_context.check(left) and in_context.check(often)
    assert in_context.embeddings.word_cosine(*in_context.spans(left)[0]) < SAME_WORD_IN_CONTEXT
    assert "word in context" in gate.names and WordInContext.operators == {SYN, SR}


def test_the_language_models_misfit_is_read_beside_the_word_in_context(gate, oracle):
    in_context = WordInContext(oracle.embeddings, LanguageModel())
    park = gate.read(Mutation(SYN, "How far from the park did the balloon finally land?",
                              "How far from the parkland did the balloon finally land?"))
    remark = gate.read(Mutation(SYN, "Did Marsh make any comment as he left the court?",
                                "Did Marsh make any remark as he left the court?"))
    # 'parkland' reads close to 'park' but fits the question worse: the LM's misfit takes it under the bar
    assert in_context.embeddings.word_cosine(*in_context.spans(park)[0]) >= SAME_WORD_IN_CONTEXT
    assert in_context.language_model.misfit(park) > 1 and not in_context.check(park)
    assert in_context.check(remark)


def test_character_noise_meets_only_unchanged_and_cosine(nlp, oracle):
    # a misspelt name stays readable: protected words, sense and the LM do not apply to typos and leet
    no_bar = make_gate(nlp, oracle.embeddings, 0.0, GATE_ON)
    assert reason(no_bar, TYPO, "Where does Mara keep her savings?", "Where does Mraa keep her savings?") is None
    assert reason(no_bar, LEET, "Where does Mara keep her savings?", "Wh3re does M4ra keep her 5avings?") is None
    assert reason(no_bar, SYN, "Where does Mara keep her savings?", "Where does Mraa keep her savings?") is not None


def test_the_language_model_rejects_a_garbled_question(gate):
    lm = LanguageModel()
    base = "Where does Mara keep her savings?"
    assert lm.drop(gate.read(Mutation(SR, "Who came to help her?", "Who came to assist her?"))) < LM_MAX_DROP["swap"]
    assert lm.drop(gate.read(Mutation(WI, base, "Where does Mara exactly precisely keep her savings?"))) > \
        lm.drop(gate.read(Mutation(WI, base, "Where exactly does Mara keep her savings?")))
    assert lm.drop(gate.read(Mutation(WI, base, "Where does Mara savings keep her the?"))) > LM_MAX_DROP["insertion"]


def test_the_gate_counts_each_rejection_per_operator(nlp, oracle):
    counting = make_gate(nlp, oracle.embeddings, 0.8, GATE_ON)
    counting.reasons([Mutation(SYN, "Why did her uncle sell his van?", "Why did her uncle betray his van?", STORY),
                      Mutation(SYN, "Why did her uncle sell his van?", "Why did her uncle sell his van?", STORY),
                      Mutation(WI, "What does her uncle ride now?", "What does her uncle actually ride now?", STORY)])
    rows = {r["operator"]: r for r in counting.rows()}
    assert rows[SYN]["proposed"] == 2 and rows[SYN]["kept"] == 0
    assert rows[SYN]["rejected: word sense"] == 1 and rows[SYN]["rejected: unchanged"] == 1
    assert rows[WI]["kept"] == 1 and "WI kept 1 of 1" in counting.summary()


def test_gated_proposals_use_the_sense_in_context_and_emphasis_adverbs(nlp):
    doc = nlp("Where did the tall boy build his big kite?")
    words = [Word(t.text, t.pos_, t.lemma_, t.whitespace_) for t in doc]
    for k in range(5):
        new = perturb(SYN, words, random.Random(k), 0.2, None, True, doc)
        assert new != doc.text and set(new.split()) - set(doc.text.split()) <= {"construct", "large"}
        added = perturb(ADD, words, random.Random(k), 0.2, None, True, doc).split()
        assert len(added) == len(words) and set(added) - set(doc.text.split()) <= set(NEUTRAL_WORDS)


SEED = Seed("g", STORY, (Round(1, "Where does Mara keep her savings?", "at the bank"),
                         Round(2, "Why did her uncle sell his van in 2019?", "unknown"),
                         Round(3, "What does her uncle ride now?", "an old bicycle"),
                         Round(4, "With whom does Mara fish on Sundays?", "her uncle")))


def test_metal_keeps_only_what_the_gate_keeps_and_counts_the_rest(nlp, oracle):
    gate = make_gate(nlp, oracle.embeddings, 0.8, GATE_ON)
    settings = MetalSettings(perturbations=(SYN, ADD, TYPO, LEET))
    cases, reverted = metal_test_cases([SEED], 3, settings, nlp, oracle, gate=gate)
    rows = {r["operator"]: r for r in gate.rows()}
    assert sum(r["proposed"] for r in rows.values()) == len(cases) + reverted == 16
    assert sum(r["kept"] for r in rows.values()) == len(cases)
    assert reverted == sum(v for r in rows.values() for k, v in r.items() if k.startswith("rejected"))
    judge = make_gate(nlp, oracle.embeddings, 0.8, GATE_ON)
    for case in cases:  # every test case passes the gate on its own
        original = SEED.round(case.target_round).question
        assert judge.reasons([Mutation(case.perturbation, original, case.replaced[0][1], STORY)]) == [None]


def test_metal_with_the_gate_off_is_the_papers_cosine_filter(nlp, oracle):
    settings = MetalSettings(perturbations=(SYN, ADD), gate=GATE_OFF)
    cases, reverted = metal_test_cases([SEED], 3, settings, nlp, oracle)
    for case in cases:
        assert oracle.embeddings.cosine(SEED.round(case.target_round).question, case.replaced[0][1]) >= 0.8


def test_metal_reports_the_gate_in_its_notes_record_and_table(oracle):
    from types import SimpleNamespace

    from mortar.methods import Making, methods

    making = Making([SEED], 3, SimpleNamespace(targets="random"), oracle=oracle,
                    settings=MetalSettings(perturbations=(SYN, ADD)))
    made = metal_make_cases(making)
    rows = made.record["mutation_gate"]
    assert {r["operator"] for r in rows} == {SYN, ADD} and all(r["proposed"] == 4 for r in rows)
    assert any("mutation gate" in n and "SYN kept" in n for n in made.notes)
    (table,) = methods()["metal"].tables([], [], {}, set(), made.record)
    assert table.rows == rows and "rejected: word sense" in table.rows[0]


def test_dialtest_keeps_only_what_the_gate_keeps(nlp, oracle):
    gate = make_gate(nlp, oracle.embeddings, 0.8, GATE_ON)
    ops = Operators((SR, WI), nlp, gated=True)
    cases, reverted = unguided_cases([SEED], 3, ops, 0.8, oracle.embeddings, gate=gate)
    rows = {r["operator"]: r for r in gate.rows()}
    assert rows[SR]["proposed"] == rows[WI]["proposed"] == 4
    assert len(cases) == rows[SR]["kept"] + rows[WI]["kept"] and reverted == 8 - len(cases)
    judge = make_gate(nlp, oracle.embeddings, 0.8, GATE_ON)
    for case in cases:
        original = SEED.round(case.target_round).question
        assert judge.reasons([Mutation(case.perturbation, original, case.replaced[0][1], STORY)]) == [None]
    wi = [c.replaced[0][1] for c in cases if c.perturbation == WI]
    assert all(set(q.split()) - set(SEED.round(c.target_round).question.split()) <= set(NEUTRAL_WORDS)
               for q, c in zip(wi, [c for c in cases if c.perturbation == WI]))


def test_the_gate_enters_the_run_id_only_when_off():
    from mortar.methods import methods
    from mortar.methods.dialtest import DialTestSettings

    metal, dialtest = methods()["metal"], methods()["dialtest"]
    assert "gate" not in metal.key_entries(MetalSettings(), True)["metal"]
    assert metal.key_entries(MetalSettings(gate=GATE_OFF), True)["metal"]["gate"] == GATE_OFF
    assert "gate" not in dialtest.key_entries(DialTestSettings(), True)["dialtest"]
    assert dialtest.key_entries(DialTestSettings(gate=GATE_OFF), True)["dialtest"]["gate"] == GATE_OFF


def test_the_paper_profile_turns_the_gate_off():
    from mortar.config import RunConfig
    from mortar.profiles import apply_profile, differences_from_paper

    config, _ = apply_profile(RunConfig(methods=("metal", "dialtest")), "paper", env={})
    assert config.settings_of("metal").gate == GATE_OFF and config.settings_of("dialtest").gate == GATE_OFF
    lines = differences_from_paper(RunConfig(methods=("metal",)).to_json())
    assert "METAL mutation gate: on (paper: off)" in lines and not any("DialTest" in x for x in lines)
