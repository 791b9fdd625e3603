"""The equivalent context check on concrete dialogues, with the real spaCy pipeline and coreferee rules."""

import duckdb
import pytest

from mortar.context import check_case, follows_up, held, leans_on_context
from mortar.dataset import Dataset, Round, Seed, TestCase
from mortar.formats import load_dataset
from mortar.kg.model import ExtractionError
from mortar.kg.spacy_backend import SpacyExtractor
from mortar.perturb import PerturbationSettings
from mortar.pipeline import generate, knowledge_graphs

STORY = ("Maria Lopez was a baker in the town of Kelso, and her sister Elena Lopez sold flowers. "
         "Every morning Maria baked forty loaves of rye bread. "
         "One winter her oven broke, so her neighbour Tom Hardy lent her his old stove. "
         "Maria repaid him with a cake shaped like a castle.")
SEED = Seed("bakery", STORY, (
    Round(1, "Who was the baker in Kelso?", "Maria Lopez"),
    Round(2, "What did she bake every morning?", "forty loaves of rye bread"),
    Round(3, "What broke one winter?", "her oven"),
    Round(4, "Who lent Maria a stove?", "Tom Hardy"),
    Round(5, "How?", "he lent her his old stove"),
    Round(6, "What did Maria give Tom Hardy to repay him?", "a cake shaped like a castle"),
    Round(7, "What shape was it?", "a castle"),
))
QUESTIONS = {r.turn_id: r.question for r in SEED.rounds}


@pytest.fixture(scope="module")
def graph():
    return SpacyExtractor().extract(SEED)


def verdicts(graph, order, perturbation="DRS"):
    return dict(zip(order, check_case(graph, TestCase("bakery", perturbation, 1, tuple(order)), QUESTIONS)))


def test_the_graph_knows_what_each_question_needs(graph):
    assert graph.round(2).needed == {"maria lopez"}  # 'she' → the answer of round 1
    assert graph.round(1).needed == frozenset()
    assert graph.round(5).elliptical and graph.round(5).continues == 4
    # 'it' points into round 6's answer ("a cake shaped like a castle")
    assert graph.round(7).needed and graph.round(7).needed <= graph.round(6).answer.names


def test_pronoun_whose_antecedent_round_was_dropped_is_not_equivalent(graph):
    v = verdicts(graph, [3, 2, 4, 5, 6, 7], "DRR")
    assert not v[2].equivalent
    assert v[2].missing == {"maria lopez"}
    assert not (v[2].semantic or v[2].ontology or v[2].story)


def test_same_question_after_its_antecedent_round_is_equivalent(graph):
    v = verdicts(graph, [4, 1, 3, 2, 7, 6, 5])
    assert v[2].equivalent and v[2].ontology and not v[2].semantic


def test_self_contained_question_always_is_equivalent(graph):
    for order in ([6, 1], [4, 6, 2], [6]):
        v = verdicts(graph, order)
        assert v[6].equivalent and v[6].semantic


def test_how_moved_away_from_its_predecessor_is_not_equivalent(graph):
    v = verdicts(graph, [1, 4, 2, 5, 3], "DRS")  # all of round 4's information is in context, but not right before
    assert not v[5].equivalent and v[5].follows_ok is False
    v = verdicts(graph, [1, 2, 4, 5], "DRR")
    assert v[5].equivalent and v[5].follows_ok


def test_a_failing_round_adds_only_what_its_question_states(graph):
    # round 7's 'it' points into round 6's answer; round 6 passes, so its answer enters the context
    assert verdicts(graph, [6, 7])[7].equivalent
    # round 2 fails (no Maria before it) so its answer (bread) does not count as context; its question names nothing
    v = verdicts(graph, [2, 7])
    assert not v[2].equivalent and not v[7].equivalent


@pytest.mark.parametrize("question", ["To repair what?", "Was anybody injured?", "Does everybody approve?",
                                      "Who finished third?", "So what did Okonkwo do?", "Why did Ines disagree?",
                                      "Who wanted a library instead?", "How many does each team get?",
                                      "Are there any more tickets?", "Is there another route?"])
def test_questions_whose_structure_leaves_out_their_topic_lean_on_context(question):
    assert leans_on_context(question)


@pytest.mark.parametrize("question", ["Who won the Corran fell race?", "What kind of bird was Pemberton?",
                                      "Why did the mill close in 1921?", "When did she first ride a tram there?",
                                      "How did Odile Marchand react?", "Who was the tallest climber?",
                                      "How many of the climbers reached the top?",
                                      "How many more people came than last year?", "Who was more careful?",
                                      "How many of Ibrahim's letters are known today?"])
def test_complete_questions_do_not_lean_on_context(question):
    assert not leans_on_context(question)


RACE = Seed("race", "The Corran fell race was won by Mrs. Edith Lowry, a vet. Bea Santos finished second. "
                    "Lowry trains every evening after surgery.", (
    Round(1, "Who won the Corran fell race?", "Mrs. Edith Lowry"),
    Round(2, "What is her job?", "vet"),
    Round(3, "Who finished second?", "Bea Santos"),
    Round(4, "When does Mrs Lowry train?", "every evening after surgery"),
))
RACE_QUESTIONS = {r.turn_id: r.question for r in RACE.rounds}


@pytest.fixture(scope="module")
def race():
    return SpacyExtractor().extract(RACE)


def race_verdicts(race, order):
    return dict(zip(order, check_case(race, TestCase("race", "DRS", 1, tuple(order)), RACE_QUESTIONS)))


def test_an_elliptical_question_of_three_words_is_not_self_contained(race):
    v = race_verdicts(race, [3, 1, 2, 4])  # 'Who finished second?' first: which contest?
    assert not v[3].equivalent and not v[3].semantic
    v = race_verdicts(race, [1, 4, 2, 3])  # its seed predecessor asked earlier, not directly before: enough
    assert v[3].equivalent and not v[3].semantic


def test_a_name_variant_of_the_antecedent_satisfies_the_pronoun(race):
    # 'her' needs Edith Lowry; round 4 names her only as 'Mrs Lowry'
    assert race.round(2).needed == {"edith lowry"}
    v = race_verdicts(race, [4, 2, 1, 3])
    assert v[2].equivalent and v[2].ontology and not v[2].story


def small_seed(seed_id: str, story: str, *rounds: tuple[str, str]):
    """(graph, questions) of a seed written in the test; its rounds are numbered from 1."""
    seed = Seed(seed_id, story, tuple(Round(i, q, a) for i, (q, a) in enumerate(rounds, start=1)))
    return SpacyExtractor().extract(seed), {r.turn_id: r.question for r in seed.rounds}


def in_order(graph, questions, order, replicate=1):
    return check_case(graph, TestCase(graph.seed_id, "DRS", replicate, tuple(order)), questions)


def test_a_pronoun_is_not_satisfied_by_a_compatible_but_other_person():
    g, questions = small_seed(
        "river", "Tom Reed lived with his dog. One day a boy fell into the river, and Tom pulled him out.",
        ("Who lived with a dog?", "Tom Reed"), ("Who fell into the river?", "a boy"), ("Who pulled him out?", "Tom"))
    v = in_order(g, questions, (1, 3, 2))
    assert not v[1].equivalent  # 'him' is the boy, who has not been mentioned; Tom Reed is no stand-in


def test_an_object_pronoun_is_not_its_own_verbs_subject():
    g, questions = small_seed(
        "race", "Mrs Lowry ran the village race. Near the end she passed Ana Quint, who had led all morning.",
        ("Who ran the village race?", "Mrs Lowry"), ("Who had led all morning?", "Ana Quint"),
        ("Where did Mrs Lowry overtake her?", "near the end"))
    needed = g.round(3).needed
    assert g.round(3).anaphors == ("her",) and any("quint" in n for n in needed) and "lowry" not in needed
    v = in_order(g, questions, (1, 3, 2))
    assert not v[1].equivalent  # 'her' is Ana Quint, not yet mentioned; Mrs Lowry cannot be her


def test_a_fragment_must_come_right_after_the_round_it_continues():
    g, questions = small_seed(
        "ada", "Ada Lind moved to Uppsala in 1901. She went there to learn chemistry with Per Cleve.",
        ("Where did Ada Lind move in 1901?", "Uppsala"), ("Why did Ada Lind go to Uppsala?", "to learn"),
        ("To learn what?", "chemistry"))
    assert in_order(g, questions, (1, 2, 3))[2].equivalent
    assert not in_order(g, questions, (2, 1, 3), replicate=2)[2].equivalent  # round 2 is not just before


@pytest.mark.parametrize("question", ["Was it accurate?", "Are you sure?", "Did that help?", "And before this?",
                                      "Is she wrong?"])
def test_short_follow_ups_that_judge_or_continue_the_last_answer(question):
    assert follows_up(question)


@pytest.mark.parametrize("question", ["Was the bridge safe?", "Did Noor agree with Sam?", "Where did she go?",
                                      "How old was he?"])
def test_questions_that_name_or_ask_for_something_are_no_follow_ups(question):
    assert not follows_up(question)


def test_a_short_follow_up_must_come_right_after_the_answer_it_judges():
    g, questions = small_seed(
        "survey", "Surveyor Noor Haddad measured the tower at 61 metres. A later survey found it was 58 metres. "
                  "The tower was built by the Tellmark company in 1910.",
        ("How tall did Noor Haddad measure the tower?", "61 metres"), ("Was she accurate?", "no"),
        ("Who built the tower?", "the Tellmark company"))
    assert in_order(g, questions, (1, 2, 3))[1].equivalent
    v = in_order(g, questions, (1, 3, 2), replicate=2)  # her measurement was asked, but not just before
    assert not v[2].equivalent and not v[2].semantic


def test_a_pronoun_for_people_first_named_in_other_words_is_satisfied_by_that_wording():
    # 'their' points at the names of round 2's answer, which only names the sailors of round 1
    g, questions = small_seed(
        "rescue", "Two sailors were rescued off Corrin Head on Monday. Brothers Aled and Rhodri Tegid had "
                  "sailed from Abersoch in the Curlew, a small yacht.",
        ("How many sailors were rescued?", "two"), ("Who were they?", "brothers Aled and Rhodri Tegid"),
        ("What was their yacht called?", "the Curlew"))
    assert in_order(g, questions, (1, 3))[1].equivalent  # the sailors are in context, under their first wording
    assert not in_order(g, questions, (3, 1), replicate=2)[0].equivalent


def test_he_is_never_a_woman_named_by_a_noun_and_the_story_check_counts_unnamed_people():
    g, questions = small_seed(
        "bees", "Kwame kept bees with his grandmother in Kumasi. Later his uncle taught him to build hives.",
        ("Who kept bees with Kwame?", "his grandmother"), ("Where did he live?", "in Kumasi"))
    assert "grandmother" not in g.round(2).needed
    assert not g.round(2).story_resolved  # 'he' could be Kwame or the unnamed uncle


def test_it_points_at_the_topic_before_a_place_said_on_the_side():
    g, _ = small_seed(
        "bell", "Divers raised a bronze bell off Kinsale in May. It was cast by Eliza Pound in 1790.",
        ("What did the divers raise?", "a bronze bell"), ("Where?", "off Kinsale"), ("Who cast it?", "Eliza Pound"))
    assert g.round(3).needed == {"bell"}


def test_a_raised_it_is_a_pronoun_and_an_extraposed_it_is_none():
    g, _ = small_seed(
        "lot", "Lot 37 is a 1961 Alvis saloon. It is expected to fetch 40,000 pounds. It is easy to see why.",
        ("What car is Lot 37?", "a 1961 Alvis saloon"), ("What is it expected to fetch?", "40,000 pounds"),
        ("Is it easy to see why?", "yes"))
    assert g.round(2).anaphors == ("it",) and g.round(2).needed
    assert g.round(3).anaphors == ()


def test_it_takes_someone_to_do_a_thing_is_no_pronoun_but_it_takes_to_fix_is():
    g, _ = small_seed(
        "capsize", "Ama capsized her kayak on purpose. She was back in her boat in two minutes. The hull needed "
                   "a patch, which cost forty pounds.",
        ("Who capsized?", "Ama"), ("How long did it take Ama to get back in her boat?", "two minutes"),
        ("What needed a patch?", "the hull"), ("How much did it cost to fix?", "forty pounds"))
    assert g.round(2).anaphors == ()
    assert g.round(4).anaphors == ("it",)


def test_meanwhile_and_at_the_time_point_back_at_a_told_event():
    g, _ = small_seed(
        "ferry", "The Aurora is in dry dock until March. The Nordlys runs the route. Cars now park on Dock Road.",
        ("Which ship is in dry dock?", "the Aurora"), ("Which ship runs the route meanwhile?", "the Nordlys"),
        ("Where was the Aurora at the time?", "in dry dock"), ("Which ship runs the route in March?", "the Aurora"))
    assert [g.round(k).anaphors for k in (2, 3, 4)] == [("meanwhile",), ("time",), ()]


def test_an_acronym_is_no_pronoun():
    g, _ = small_seed("office", "Bogna Wrzos runs IT at the Harlow office.",
                      ("Who runs IT at the Harlow office?", "Bogna Wrzos"))
    assert g.round(1).anaphors == ()


def test_orig_rounds_are_equivalent_by_definition(graph):
    v = check_case(graph, TestCase("bakery", "ORIG", 1, tuple(QUESTIONS)), QUESTIONS)
    assert all(x.equivalent for x in v)


def test_story_check_resolves_the_only_possible_referent():
    story = "Lena Park lived by the sea with her cat. Every day she swam to the red buoy and back."
    seed = Seed("lena", story, (Round(1, "Where did Lena Park live?", "by the sea"),
                                Round(2, "What did she do every day?", "swam to the red buoy")))
    g = SpacyExtractor().extract(seed)
    v = check_case(g, TestCase("lena", "DRS", 1, (2, 1)), {1: seed.rounds[0].question, 2: seed.rounds[1].question})
    assert v[0].story and v[0].equivalent and not v[0].ontology


def test_story_check_counts_no_place_as_a_person_and_reads_gender_from_a_title():
    g, questions = small_seed(
        "vets", "The practice has moved to Mill Lane. Dr Anjali Deshpande joined us in May. She trained in "
                "Leeds and her special interest is eye surgery. Count Philip, our oldest client, brought his parrot.",
        ("Who joined in May?", "Dr Anjali Deshpande"), ("What is her special interest?", "eye surgery"))
    v = in_order(g, questions, (2, 1))
    assert v[0].story and v[0].equivalent  # 'her' can only be Dr Deshpande: Mill Lane is a place, Count Philip a man


class CountingExtractor:
    backend, model = "counting", "v1"

    def __init__(self, fail=()):
        self.inner, self.calls, self.fail = SpacyExtractor(), 0, set(fail)

    def extract_many(self, seeds, progress=None):
        self.calls += len(seeds)
        return [ExtractionError("model returned no JSON") if s.id in self.fail else self.inner.extract(s) for s in seeds]


def test_extractions_are_cached_per_seed_backend_and_model(tmp_path):
    dataset = Dataset("d.json", "f" * 64, (SEED,))
    ex = CountingExtractor()
    knowledge_graphs(dataset, ex, tmp_path / "db.duckdb")
    graphs, failed = knowledge_graphs(dataset, ex, tmp_path / "db.duckdb")
    assert ex.calls == 1 and not failed and graphs["bakery"].round(2).needed == {"maria lopez"}


def test_failed_seed_is_recorded_with_its_reason_and_left_out(tmp_path):
    other = Seed("other", "A short story about Ann.", (Round(1, "Who is in the story?", "Ann"),))
    dataset = Dataset("d.json", "e" * 64, (SEED, other))
    db = tmp_path / "db.duckdb"
    gen = generate(dataset, 1, PerturbationSettings(), db=db, extractor=CountingExtractor(fail={"other"}))
    assert gen.failed_seeds == {"other": "model returned no JSON"}
    assert {c.seed_id for c in gen.cases} == {"bakery"}
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT status, error FROM kg_extractions WHERE seed_id = 'other'").fetchone() == (
        "failed", "model returned no JSON")
    assert "other" in con.execute("SELECT config FROM runs").fetchone()[0]
    con.close()


def test_generate_stores_verdicts_and_the_coreference_mode(tmp_path):
    from tests.conftest import SAMPLE

    dataset = load_dataset(SAMPLE)
    db = tmp_path / "db.duckdb"
    gen = generate(dataset, 7, PerturbationSettings(), db=db)
    con = duckdb.connect(str(db), read_only=True)
    missing_ec = con.execute("SELECT count(*) FROM test_case_rounds WHERE ec_equivalent IS NULL").fetchone()[0]
    not_eq = con.execute("SELECT count(*) FROM test_case_rounds WHERE NOT ec_equivalent").fetchone()[0]
    config = con.execute("SELECT config FROM runs WHERE run_id = ?", [gen.run_id]).fetchone()[0]
    con.close()
    assert missing_ec == 0 and not_eq > 0
    assert "coreferee (rules)" in config or "coreferee (neural)" in config


def anaphors_of(story: str, *rounds: Round) -> dict[int, set[str]]:
    """Each round's anaphors, as the spaCy backend reads them."""
    (dg,) = SpacyExtractor().extract_many([Seed("s", story, rounds)])
    return {r.turn_id: set(r.anaphors) for r in dg.rounds}


def test_a_place_after_be_and_the_next_one_are_anaphors():
    anaphors = anaphors_of(
        "The ferry to Arran leaves Ardrossan at nine. Ada works in the ticket office.",
        Round(1, "Where does Ada work?", "in the ticket office"),
        Round(2, "Who phoned while Ada was there?", "nobody"),
        Round(3, "When does the ferry to Arran leave?", "at nine"),
        Round(4, "When is the next one due?", "at noon"),
        Round(5, "Is there a cafe on board?", "yes"),
        Round(6, "How many cars were there?", "forty"),
        Round(7, "How long was Ada there?", "all day"))
    assert "there" in anaphors[2] and "one" in anaphors[4] and "there" in anaphors[7]
    assert not anaphors[5] and not anaphors[6]  # the existential 'there', also after what is asked


def test_this_year_is_the_tellers_time_and_that_night_one_said_before():
    anaphors = anaphors_of(
        "The fete was on 3 May. It rained that night. This year the stalls sold out by noon.",
        Round(1, "When was the fete?", "3 May"),
        Round(2, "What happened that night?", "it rained"),
        Round(3, "When did the stalls sell out this year?", "by noon"))
    assert "that" in anaphors[2] and not anaphors[3]


@pytest.mark.parametrize("question, anaphor", [("Which are the main ones?", "ones"),
                                               ("How much longer is that player staying on?", "that"),
                                               ("Which was the oldest?", "oldest"),
                                               ("When was the most recent?", "recent")])
def test_the_main_ones_and_a_misparsed_that_player_are_anaphors(question, anaphor):
    seed = Seed("wine", "The wine blends twenty grapes; Touriga and Roriz lead. Ellis, the winger, is hurt.", (
        Round(1, "How many grapes go into the wine?", "twenty"), Round(2, question, "Touriga and Roriz")))
    (dg,) = SpacyExtractor().extract_many([seed])
    assert anaphor in dg.round(2).anaphors


def test_a_superlative_said_of_a_noun_the_question_names_is_no_anaphor():
    seed = Seed("wine", "The wine blends twenty grapes; Touriga is the oldest grape.", (
        Round(1, "How many grapes go into the wine?", "twenty"), Round(2, "Which grape is the oldest?", "Touriga")))
    (dg,) = SpacyExtractor().extract_many([seed])
    assert dg.round(2).anaphors == ()


def test_a_verb_tagged_as_a_plural_noun_does_not_make_a_fragment():
    seed = Seed("tomato", "Gardener's Delight cracks easily; Ferline does not.", (
        Round(1, "What grows in the bed?", "tomatoes"), Round(2, "Which tomato variety cracks easily?", "Delight")))
    (dg,) = SpacyExtractor().extract_many([seed])
    assert not dg.round(2).elliptical


def test_a_question_with_only_a_participle_is_a_fragment():
    seed = Seed("tent", "Raj's new tent weighs 1.2 kg; his old one weighed 3 kg. He compared them on a long hike.", (
        Round(1, "How heavy is Raj's new tent?", "1.2 kg"), Round(2, "Compared with his old tent?", "much lighter"),
        Round(3, "Who compared the two tents?", "Raj")))
    (dg,) = SpacyExtractor().extract_many([seed])
    assert dg.round(2).elliptical and dg.round(2).continues == 1
    assert not dg.round(3).elliptical


def test_a_role_said_with_as_is_no_new_person_for_a_pronoun():
    seed = Seed("nurse", "Ines Varga came to Canada as a ship's nurse and married Anders Lund.", (
        Round(1, "Who is the story about?", "Ines Varga"),
        Round(2, "In what role did she come to Canada?", "As a ship's nurse"),
        Round(3, "Whom did she marry?", "Anders Lund")))
    (dg,) = SpacyExtractor().extract_many([seed])
    assert "nurse" not in dg.round(3).needed


def test_an_entity_is_held_under_the_longer_name_an_answer_gave():
    names = {"priya chaudhary", "marsh harriers", "question"}
    assert held("chaudhary", names) and held("harriers", names) and held("question", names)
    assert not held("priya", {"priyanka rao"}) and not held("marsh harriers", {"harriers"})
