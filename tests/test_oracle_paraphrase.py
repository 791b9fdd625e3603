"""The answer oracle on paraphrases that share few words with the gold, wrong answers that share many,
and two system answers compared with each other (issue 16)."""

import pytest

from mortar.oracle import Oracle
from mortar.oracle.aliases import canonical_names, countries

STORY = ("Sam Carter worked at the post office in Dublin for thirty years. He visited twenty countries during "
         "his holidays. Tom and Harry Blake are brothers. Tom, the younger of the two, is a nurse. "
         "Lucia grew up in Lima, Peru. Family members and close friends had always believed he was alive.")


@pytest.fixture(scope="module")
def oracle():
    return Oracle("answer")


def passes(oracle, question, gold, candidate, story=None):
    return oracle.similarity(question, gold, candidate, story) >= oracle.threshold


def test_names_are_written_one_way():
    assert canonical_names("She's Peruvian.") == "She's Peru."
    assert canonical_names("the NYC fire department") == "the New York City fire department"
    assert canonical_names("tell us about it") == "tell us about it"  # the pronoun is not the country
    assert countries(canonical_names("a Norwegian crew")) == {"norway"}


@pytest.mark.parametrize("question, gold, candidate, right", [
    ("Where is Lucia from?", "Peru", "She's Peruvian.", True),  # demonym
    ("Where is Lucia from?", "Peru", "Chile", False),  # another country
    ("What nationality was the merchant?", "Dutch", "He was from the Netherlands.", True),
    ("What nationality was the merchant?", "Dutch", "Belgian", False),
])
def test_demonyms(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


@pytest.mark.parametrize("candidate, right", [("The UN", True), ("U.N.", True), ("NATO", False)])
def test_abbreviations(oracle, candidate, right):
    assert passes(oracle, "Which organisation held the meeting?", "The United Nations", candidate) is right


@pytest.mark.parametrize("question, candidate, right", [
    ("Did everyone agree to the deadline?", "Some delegates disagreed.", True),
    ("Was Ruby afraid of bees?", "She was fearless.", True),
    ("Was anyone injured?", "Everyone was unharmed.", True),
    ("Was Ruby afraid of bees?", "Yes, very scared.", False),
])
def test_negated_antonyms(oracle, question, candidate, right):
    assert passes(oracle, question, "no", candidate) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    ("How many countries did Sam visit?", "twenty",
     "He worked there for thirty years and visited twenty countries.", True),
    ("How many countries did Sam visit?", "twenty",
     "He worked there for twenty years and visited thirty countries.", False),
    ("How long did he work at the post office?", "thirty years",
     "He visited thirty countries over twenty years.", False),
    ("What was rescued from the roof?", "three cats", "three dogs", False),
])
def test_number_read_from_the_part_that_answers(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


def test_story_links_a_description_to_the_gold(oracle):
    assert passes(oracle, "Who is the nurse?", "Tom", "The younger of the two brothers.", STORY)
    assert not passes(oracle, "Who is the nurse?", "Tom", "The younger of the two brothers.")  # no story, no link
    assert not passes(oracle, "Who is the nurse?", "Tom", "The older brother, Harry.", STORY)


def test_story_reaches_the_oracle_through_for_story(oracle):
    bound = oracle.for_story(STORY)
    assert bound.similarity("Who is the nurse?", "Tom", "The younger of the two brothers.") >= oracle.threshold
    assert Oracle("cosine").for_story(STORY).similarity("Q?", "Tom", "Tom") == pytest.approx(1.0)


@pytest.mark.parametrize("a, b, agree", [
    ("She's Peruvian.", "Peru", True),
    ("Peru", "Chile", False),
    ("twenty", "He worked there for twenty years and visited thirty countries.", False),
    ("From family members and close friends.", "No, people do not believe he was alive.", False),
])
def test_two_answer_agreement(oracle, a, b, agree):
    question = "How many countries did Sam visit?" if a == "twenty" else \
        "Who believed he was alive?" if a.startswith("From") else "Where is Lucia from?"
    score = oracle.agreement(question, a, b, STORY)
    assert (score >= oracle.threshold) is agree
    assert score == pytest.approx(oracle.agreement(question, b, a, STORY))  # symmetric


def test_wordnet_names_the_kind_two_nouns_share():
    from mortar.wordnet import kind_in_common

    assert kind_in_common("attic", "cellar") == "floor"  # both are floors (levels) of a building
    assert kind_in_common("nurse", "doctor") == "health professional"
    assert kind_in_common("couch", "sofa") is None  # one sense: synonyms
    assert kind_in_common("dog", "animal") is None  # one is a kind of the other
    assert kind_in_common("attic", "democracy") is None  # nothing in common near them


def test_wordnet_gives_the_kind_a_noun_is_defined_as_but_not_a_relation():
    from mortar.wordnet import genus

    assert "field" in genus("meadow")  # 'a field where grass or alfalfa are grown to be made into hay'
    assert "boat" in genus("ferry")
    assert genus("aunt") == frozenset()  # 'the sister of your father or mother': a relation, not a kind


@pytest.mark.parametrize("question, gold, candidate, right", [
    ("Where did they hide the letters?", "in the attic", "They hid them in the cellar.", False),  # another room
    ("Where did they hide the letters?", "in the attic", "Up in the attic, under the boards.", True),
    ("Who treated the boy?", "a nurse", "A doctor treated him.", False),
    ("What did she ride to school?", "a bicycle", "She rode her bike.", True),  # one synset
    # the kind the reference's noun is defined as says the same, less precisely
    ("Where did the sheep graze?", "in the meadow by the river", "in the field by the river", True),
    ("Who looked after her?", "her aunt", "her sister", False),
])
def test_another_thing_of_the_same_kind(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


NEWS = ("A 64-year-old swimmer was pulled from the water off Dunhallow Point on Sunday. Maeve Rourke had swum out "
        "to a buoy and could not get back against the tide. Lifeguard Tomás Breen reached her within minutes. "
        "Her friend Colette, who runs the beach cafe, called the coastguard.")


LETTER = ("Northmere Bank will never ask you to move money to a 'safe account'. If you get a call like this, hang up."
          "\n\nYours sincerely,\nPriya Raghunathan\nHead of Customer Protection")
MINUTES = ("Minutes of the Harbour Rowing Club, annual meeting, 3 March.\nSecretary (minutes): Dafydd Rees.\n"
           "The treasurer, Ann Hope, reported a balance of £1,200.")
GUIDE = ("You are standing in front of the Harbour Clock. In 2019 it was repaired by our restorer, Dr Ines Moreau, "
         "who found a maker's mark under the old paint.")


FARM = "Dear Gwen,\nLambing is nearly over. My son Idris does the night checks and I take the day shift.\nBest wishes,\nEmrys"


@pytest.mark.parametrize("question, gold, candidate, story, right", [
    # a name for the gold's description, and a description for the gold's name, read through the story
    ("Who was pulled from the water?", "a 64-year-old swimmer", "Maeve Rourke", NEWS, True),
    ("Who was pulled from the water?", "a 64-year-old swimmer", "Tomás Breen", NEWS, False),
    ("Who reached her?", "Tomás Breen", "the lifeguard", NEWS, True),
    ("Who called the coastguard?", "Colette", "Her sister Colette.", NEWS, False),  # the story says friend
    ("Who called the coastguard?", "her friend Colette", "her friend", None, True),  # the gold's own description
    ("Who reached her?", "Tomás Breen", "Breen's brother", None, False),  # someone of Breen's, not Breen
    # 'my son Idris' in a letter: the teller's son, named with the teller's name
    ("Who does the night checks?", "Idris", "Emrys's son.", FARM, True),
    ("Who does the night checks?", "Idris", "Emrys's daughter.", FARM, False),
    # the teller's own ('our restorer') is the museum's in the answer; another's is not
    ("Who repaired the clock?", "Dr Ines Moreau", "The museum's restorer.", GUIDE, True),
    ("Who repaired the clock?", "Dr Ines Moreau", "The museum's restorer.", GUIDE.replace("our", "a"), False),
    # the owner the heading names is the teller too: 'Minutes of the Harbour Rowing Club'
    ("Who took the minutes?", "Dafydd Rees, the secretary.", "The club's secretary.", MINUTES, True),
    ("Who took the minutes?", "Dafydd Rees, the secretary.", "The club's secretary.", MINUTES.split("\n", 1)[1],
     False),
    # a title the story writes under the name ('Head of Customer Protection') describes that person
    ("Who signed the letter?", "Priya Raghunathan", "The bank's Head of Customer Protection.", LETTER, True),
    ("Who signed the letter?", "Priya Raghunathan", "The bank's Head of Customer Support.", LETTER, False),
])
def test_names_and_descriptions(oracle, question, gold, candidate, story, right):
    assert passes(oracle, question, gold, candidate, story) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    # small models loop, hedge between answers, give part of a list, or a placeholder
    ("What did the parrot say?", "hello", "hello hello hello hello hello hello", False),
    ("Which day is the market?", "Thursday", "Either Thursday or Friday.", False),
    ("Which day is the market?", "Thursday", "It is on Thursday, I think.", True),
    ("What do you need?", "flour and two eggs", "flour", False),
    ("What do you need?", "flour and two eggs", "Some flour and a couple of eggs.", True),
    ("What did the report recommend?", "closing the old bridge", "The report recommended something.", False),
    # rates, clock halves, units in words
    ("How often is the hall cleaned?", "once a week", "weekly", True),
    ("How often is the hall cleaned?", "once a week", "once a month", False),
    ("When does the shop open?", "9 a.m.", "at 09:00", True),
    ("When does the shop open?", "9 a.m.", "at 9 p.m.", False),
    ("How long did he live there?", "thirty years", "three decades", True),
    ("How much sugar?", "500 grams", "half a kilo", True),
    ("How long does the stew cook?", "two hours", "an hour and a half", False),
    ("How long does the stew cook?", "ninety minutes", "An hour and a half.", True),
    ("How long is the warranty?", "18 months", "a year and a half", True),
    ("How long is the warranty?", "18 months", "one year", False),
    ("How much milk?", "3 tablespoons", "3 tbsp", True),
    ("How much milk?", "half a litre", "250 ml", False),
    ("When does the pool close?", "at 22:00", "10 pm", True),
    ("When does the pool close?", "at 22:00", "10:30 pm", False),
    ("How much is the rent?", "a pound a year", "£1 per year", True),
    ("When does the class start?", "6:30 pm", "Half six in the evening.", True),
    ("When does the class start?", "6:30 pm", "Half seven.", False),
    ("How long is the session?", "75 minutes", "An hour and a quarter.", True),
    ("How soon will the refund arrive?", "within five working days", "up to five business days", True),
    ("How tall is the clock?", "226 cm", "a little over two and a quarter metres", True),
    ("How cold will it get?", "-2 °C", "2 degrees", False),
    ("How cold will it get?", "-2 °C", "Down to two below freezing.", True),
    ("How long does a round take?", "about 45 minutes", "Roughly three-quarters of an hour.", True),
    ("For how many days should he take them?", "7", "A week.", True),
    ("When will the water be off?", "9.30 am to 2 pm", "From half past nine in the morning until two in the "
                                                         "afternoon.", True),
    ("When will the water be off?", "9.30 am to 2 pm", "From half past nine in the evening until two.", False),
    ("Who leads the team?", "Dr Imelda Castañeda", "Imelda Castaneda", True),
    ("What is the fair age?", "unknown", "Her age isn't mentioned in the column.", True),
    ("Is there a signal past the bridge?", "no", "There's no mobile signal beyond the footbridge.", True),
    # a price of nothing
    ("How much do children pay?", "nothing", "Kids go free.", True),
    ("How much do children pay?", "nothing", "£2 each.", False),
    ("How much do children pay?", "£2", "Kids go free.", False),
    ("Does it cost anything to get in?", "no", "Entry is free.", True),
    # an opposite word in place of the reference's
    ("Which way do you turn the lid?", "anticlockwise", "Clockwise.", False),
    ("Where is the spare key?", "above the door", "Below the door.", False),
    ("Who goes first?", "the youngest player", "The oldest player goes first.", False),
    # yes and no said without the words
    ("Will the minister reply?", "yes", "He will, after the meeting on Friday.", True),
    ("Will the minister reply?", "no", "He will, after the meeting on Friday.", False),
    ("Did the light come back on?", "no", "No warning light appeared during the test.", True),
    # the story does not tell, said in other ways
    ("What did the ticket cost?", "unknown", "The letter gives no price for the ticket.", True),
    ("What was the cause?", "unknown", "They don't know yet; samples went to the lab.", True),

    # a name and its acronym
    ("Who paid for the study?", "the NHS", "the National Health Service", True),
    ("Who runs the museum?", "the Dunhallow Heritage Trust", "the DHT", True),
])
def test_shapes_small_models_answer_in(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


TIMETABLE = ("Winds will ease from Thursday to Saturday. The parade starts at the footbridge and goes along "
             "the river. Mr Tuan, your driver, will meet you at the airport. A gardener named Piet found the key.")


@pytest.mark.parametrize("question, gold, candidate, right", [
    ("Who will meet them?", "Mr Tuan", "Their driver.", True),  # apposition
    ("Who found the key?", "Piet", "The gardener.", True),  # 'a gardener named Piet'
    ("Until when will winds ease?", "Saturday", "Thursday", False),  # a range: two days, not one described
])
def test_a_story_link_needs_the_description_beside_the_name(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate, TIMETABLE) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    ("When will the winds be strongest?", "between 15:00 and 18:00", "Between about 3 and 6 in the afternoon.", True),
    ("When will the winds be strongest?", "between 15:00 and 18:00", "Between 4 and 7 in the evening.", False),
    ("Which train was delayed first?", "the 17:50 to Kilbride", "The ten-to-six train to Kilbride.", True),
    ("Where is the village?", "on the northern tip of the island", "At the north end of the island.", True),
    ("Where is the village?", "on the northern tip of the island", "On the southern tip of the island.", False),
    ("Who owned the house until 1962?", "the Harrowgate family", "The Harrowgates.", True),
    ("Where did the dog sleep?", "on the sofa", "on the couch", True),  # a first-sense synonym
    ("Where did the dog sleep?", "on the sofa", "in the kitchen", False),
    ("How often should he take one?", "three times a day", "One capsule roughly every eight hours.", True),
    ("How many runs did they finish?", "6 of 8", "Six.", True),  # '8' is what the six are counted out of
    ("How many runs did they finish?", "6 of 8", "Eight.", False),
    ("How often should he take one?", "three times a day", "One capsule every six hours.", False),
])
def test_same_answer_in_other_words(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    ("Which seat is she in?", "14C", "14A", False),  # a code: the same digits, other letters
    ("Which seat is she in?", "14C", "Seat 14C, by the aisle.", True),
    ("How far is it?", "5km", "5 kms", True),  # a unit is no code
    ("What time did it happen?", "about 02:15", "About 2:15 in the afternoon.", False),  # '02:15' is a.m.
    ("What time did it happen?", "about 14:15", "About 2:15 in the afternoon.", True),
    ("Did they find the key in it?", "no, a ring", "They found her ring instead.", True),
    ("Can a ten-year-old join?", "no, ringers must be over 11", "They have to be over 11.", True),
    ("Is there a receipt for the rug?", "no", "It was thrown away and he has no receipt.", True),
    ("Is it waterproof?", "no", "It's only splash-resistant.", True),  # only something else
    ("Is it waterproof?", "yes", "It's only splash-resistant.", False),
    ("Is it open on Sundays?", "yes", "It is only open on Sundays.", True),
    ("Has he claimed before?", "yes, for a stolen bicycle in 2021", "Yes, for a stolen bicycle in 2022.", False),
    ("Which breed are the ewes?", "unknown", "The ledger only gives the ram's breed, not the ewes'.", True),
    ("Which breed are the ewes?", "Texel", "The ledger only gives the ram's breed, not the ewes'.", False),
])
def test_codes_clocks_and_implicit_answers(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


SIGNED = ("Thank you for your letter about the delayed refund. We have now paid it in full.\n"
          "Priya Ramesh, Customer Care Manager")


@pytest.mark.parametrize("question, gold, candidate, story, right", [
    ("Where was it done?", "Uppsala, Sweden", "In Stockholm, Sweden.", None, False),  # one name kept, one swapped
    ("Where was it done?", "Uppsala, Sweden", "In Uppsala, a Swedish university town.", None, True),
    ("Where was the cargo loaded?", "Mersin, Turkiye", "At the Turkish port of Mersin.", None, True),
    ("Who wrote back?", "Priya Ramesh", "The Customer Care Manager.", SIGNED, True),  # a title is a description
])
def test_names_swapped_and_titles(oracle, question, gold, candidate, story, right):
    assert passes(oracle, question, gold, candidate, story) is right


GIG = ("Halfway through the set Lucia's amp died. A lovely sound engineer named Henrik lent us his own, a battered "
       "old Ampeg, and it sounded better than ours ever did.")


@pytest.mark.parametrize("candidate, right", [
    ("A sound engineer, who lent them his own amp.", True),  # the reference's description, and what the story adds
    ("A fan from the crowd.", False),
])
def test_a_description_may_add_what_the_story_says_of_the_person(oracle, candidate, right):
    assert passes(oracle, "Who helped them?", "Henrik, a sound engineer", candidate, GIG) is right


DUMPLINGS = "My grandmother Greta Holm baked these every winter in her kitchen in Malmo, and never measured a thing."


@pytest.mark.parametrize("candidate, right", [
    # the teller's grandmother, a place the story names beside her, the source cited
    ("According to the recipe, the author's grandmother baked them every winter in Malmo.", True),
    ("According to the recipe, the author's grandmother baked them every winter in Oslo.", False),
    ("The author's neighbour baked them.", False),
])
def test_a_description_may_name_the_teller_and_a_place_the_story_gives(oracle, candidate, right):
    assert passes(oracle, "Who baked these?", "Greta Holm, the writer's grandmother.", candidate, DUMPLINGS) is right


FERRIES = ("There were 214 cancellations. Most of them involved the MV Roisin, which entered service in 1991. The "
           "MV Corrib, built in 2004, had two.")
RING = "Tom Hale, the gardener who works for Anna Berg, found the ring in May. Berg's cousin Ida Lund lost it."
SHIP = ("Which ship caused most of them?", "the MV Roisin", FERRIES)
FINDER = ("Who found the ring?", "Tom Hale, the gardener", RING)


@pytest.mark.parametrize("asked, candidate, right", [
    # what the story says the reference's entity did picks it out; another year is another boat
    (SHIP, "The old boat that entered service in 1991.", True),
    (SHIP, "The boat that entered service in 2004.", False),
    (SHIP, "The boat that sank in 1991.", False),
    # a name in a clause that describes the person is no other person; a name in the person's place is
    (FINDER, "The gardener who works for Anna Berg.", True),
    (FINDER, "The old tree that Anna Berg planted.", False),
    (FINDER, "Ida Lund, the gardener.", False),
])
def test_a_relative_clause_the_story_tells_picks_out_the_entity(oracle, asked, candidate, right):
    question, reference, story = asked
    assert passes(oracle, question, reference, candidate, story) is right


@pytest.mark.parametrize("candidate, right", [
    ("To stop him chewing the lead.", True),  # what a verb of preventing governs does not happen
    ("To make him chew the lead.", False),
])
def test_a_verb_of_preventing_says_not(oracle, candidate, right):
    assert passes(oracle, "Why does the puppy wear a muzzle?", "so he doesn't chew the lead", candidate) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    ("Where did the flight land?", "Bombay", "In Mumbai.", True),  # another name WordNet gives the place
    ("Where did the flight land?", "Bombay", "In Delhi.", False),
    ("What is the cat called?", "Biscuit", "Cookie", False),  # WordNet's 'biscuit' and 'cookie' are no names
    ("What was in the hall?", "a longcase clock", "An oak grandfather clock.", True),  # a compound's synonym
    ("What was in the hall?", "a longcase clock", "An oak cuckoo clock.", False),
])
def test_wordnet_names_and_compounds(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


@pytest.mark.parametrize("candidate, right", [
    ("A staff shortage.", True),  # what a shortage or a lack is of is not there
    ("A lack of staff.", True),
    ("Too many staff.", False),
])
def test_a_shortage_says_not_enough(oracle, candidate, right):
    assert passes(oracle, "Why was the café closed?", "there weren't enough staff", candidate) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    ("Where did the band play?", "Nairobi", "In the Kenyan capital.", True),  # WordNet: the capital of Kenya
    ("Where did the band play?", "Nairobi", "In the Ugandan capital.", False),
    ("Who paid for the survey?", "the WWF", "The World Wide Fund for Nature.", True),  # the acronym stops at 'for'
    ("Who paid for the survey?", "the WWF", "The World Health Organization.", False),
    ("Who read the meter?", "PR", "P. Okafor-Reyes.", False),
    ("Who read the meter?", "TR", "T. Rawlinson.", True),  # initials with a full stop
    ("Who read the meter?", "TR", "K. Rawlinson.", False),
])
def test_a_capital_by_its_country_and_an_acronym_that_stops_at_for(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


@pytest.mark.parametrize("candidate, right", [
    ("It's her first time in Peru.", True),  # a first time says no to 'before'
    ("She went there twice before.", False),
])
def test_a_first_time_says_no_to_before(oracle, candidate, right):
    assert passes(oracle, "Had Ana been to Peru before?", "no", candidate) is right


@pytest.mark.parametrize("candidate, right", [
    ("At no additional fee, it comes with the room.", True),
    ("At an additional fee of £5, it comes with the room.", False),
])
def test_no_additional_fee_costs_nothing(oracle, candidate, right):
    assert passes(oracle, "Does the towel cost extra?", "no", candidate) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    ("Who phoned the office?", "her brother Mateo", "Her brother from Quito.", True),  # a place is no other person
    ("Who phoned the office?", "her brother Mateo", "Her neighbour Sofia.", False),
    ("Who buys the cheese?", "shops in Leeds", "Shops in York.", False),  # the reference names a place itself
])
def test_a_place_beside_a_description_is_no_other_person(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


@pytest.mark.parametrize("candidate, right", [
    ("Anna Reed's nephew.", True),  # the owner the reference calls 'her' is no other person
    ("Anna Reed's gardener.", False),
    ("Anna Reed.", False),
])
def test_the_owner_a_reference_calls_her_is_no_other_person(oracle, candidate, right):
    assert passes(oracle, "Who found the letter?", "her nephew, Tom Reed", candidate) is right


@pytest.mark.parametrize("candidate, right", [
    ("The captain is Ama Boateng.", True),  # another name said to be the captain says no
    ("The captain is Lena Vogt.", False),  # the name the question asks about
    ("Lena has been ruled out with a knee injury.", True),
])
def test_another_name_for_the_role_asked_about_says_no(oracle, candidate, right):
    assert passes(oracle, "Is Lena Vogt the captain?", "no", candidate) is right


@pytest.mark.parametrize("candidate, right", [
    ("No, not entirely.", True),  # the reference's 'no' in words, the answer's as a 'no'
    ("No.", True),
    ("Yes, completely.", False),
])
def test_a_yes_or_no_matches_a_reference_that_says_it_in_words(oracle, candidate, right):
    assert passes(oracle, "Did the new pump make up for the old one?", "not fully", candidate) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    # a first name alone names the one person 'who' asks for
    ("Who painted the sign?", "Marta Quispe, the head gardener.", "Marta.", True),
    # a ban says no to a question of what is allowed; 'no renewals' to 'Can it be renewed?'
    ("Are dogs allowed on the beach?", "No.", "They're banned from May to September.", True),
    ("Are dogs allowed on the beach?", "Yes.", "They're banned from May to September.", False),
    ("Can the books be renewed?", "No.", "Two weeks, and no renewals.", True),
    # a phone number grouped otherwise; miles to the gallon are mpg; what is lacked is not there
    ("What number should guests ring?", "The front desk, 01632 960 114.", "Ring 01632 960114 any time.", True),
    ("What number should guests ring?", "The front desk, 01632 960 114.", "Ring 01632 960115 any time.", False),
    ("How economical is the van?", "About 45 mpg.", "around forty-five miles to the gallon", True),
    ("Why was he turned away at the gate?", "He had no ticket.", "Because he lacked a ticket.", True),
    # up and down are opposites, unless each is a particle of another verb ('hang up', 'put the phone down')
    ("Which way up should the tiles go?", "Glazed side up.", "Glazed side down.", False),
])
def test_names_bans_numbers_and_lacks_read_as_the_reference_says_them(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    # the price asked for, said without what it buys; a different price or a part of a time still differs
    ("How much are the pasties?", "£4 for two", "Four pounds.", True),
    ("How much are the pasties?", "£4 for two", "Three pounds.", False),
    ("What time is the service now?", "6:30 pm", "6 pm", False),
    ("How many laps did she finish?", "5 of 8", "All 8.", False),
    # to a yes/no question the reference's numbers only back its yes or no
    ("Was that decision unanimous?", "No, the vote was 7 to 2.", "Two members voted against it.", True),
    ("Has the roof been repaired?", "Yes, in 2021 for £3,000.", "No, not since 2021.", False),
])
def test_a_price_without_what_it_buys_and_numbers_that_back_a_yes(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


@pytest.mark.parametrize("candidate, right", [
    ("He delivers the mail round the village.", True),  # a postman is 'a man who delivers the mail'
    ("He sorts parcels at the depot.", False),
])
def test_a_noun_said_by_its_definition(oracle, candidate, right):
    assert passes(oracle, "What is Mr Okafor's job?", "a postman", candidate) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    # an hour said alone is on the hour; a date said without its year is that date, unless it says another year
    ("When will the water be off?", "From 09:00 to 15:30.", "Nine in the morning till half past three.", True),
    ("When will the water be off?", "From 09:00 to 15:30.", "Nine till half past four.", False),
    ("When is the sale?", "Saturday 14 June 2025.", "The 14th of June, a Saturday.", True),
    ("When is the sale?", "Saturday 14 June 2025.", "14 June 2024.", False),
    # a clock reading of a span: '4:52' for '4 hours and 52 minutes'
    ("How long did the ride take?", "4 hours and 52 minutes", "4:52", True),
    ("How long did the ride take?", "4 hours and 52 minutes", "4:25", False),
])
def test_times_dates_and_spans_said_another_way(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    # a double-barrelled surname is one name, and a first name alone names the person the reference opens with
    ("Who led the survey?", "Zofia Pellegrini-Shaw of Kitteridge & Vale Lettings.", "Zofia.", True),
    ("Who led the survey?", "Zofia Pellegrini-Shaw of Kitteridge & Vale Lettings.", "Kitteridge.", False),
    ("Who should I ask?", "Saoirse Delacourt-Ng, the customer manager.", "Saoirse.", True),
    ("Who should I ask?", "Saoirse Delacourt-Ng, the customer manager.", "Siobhan.", False),
    # a yes or no given last, after the reasons
    ("Will Emlyn stay on as secretary?", "No.", "He said this is his last year doing the job, so no.", True),
    ("Will Emlyn stay on as secretary?", "No.", "He loves the job and wants to carry on, so yes.", False),
])
def test_double_barrelled_names_and_a_closing_yes_or_no(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    # two numbers offered, one of them the reference's, is a hedge; a range the reference gives is not
    ("How old is the cox?", "14.", "Maybe 14 or 16, somewhere in her mid-teens.", False),
    ("What time does the hall open?", "10:00.", "Probably about 9 or 10 in the morning.", False),
    ("How old is the cox?", "14.", "She is 14.", True),
    ("How long will it take?", "2 or 3 days", "Two or three days.", True),
    # a date or a name on one side of an 'or', another on the other
    ("When is the class made up?", "26 March", "I think it could be either 19 March or 26 March.", False),
    ("What is on at two?", "Chapel Choirs", "I think it's either Shanty and Folk or Chapel Choirs.", False),
    ("What is on at two?", "Chapel Choirs", "Chapel Choirs, or the choir hour as they call it.", True),
    # spoken sums before 'a' or 'per'; a span said as an owner; refusing verbs say no
    ("What does the shearer charge?", "£1.90 a head", "One pound ninety per sheep.", True),
    ("What does the shearer charge?", "£1.90 a head", "One pound eighty per sheep.", False),
    ("How much notice is needed?", "24 hours", "A day's notice.", True),
    ("Did Hattie get a result?", "No.", "She was disqualified at control 11.", True),
    ("Did Livia obey her father?", "No.", "She defies him and lights the lantern.", True),
])
def test_two_numbers_offered_hedge(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right


@pytest.mark.parametrize("question, gold, candidate, right", [
    # the same number said of someone else is wrong; a unit is no name
    ("Why was the peal rung?", "To mark Ignatius Kittering's 80th birthday.", "For Bramwell Yeardley's 80th birthday.",
     False),
    ("Why was the peal rung?", "To mark Ignatius Kittering's 80th birthday.", "For Ignatius's 80th birthday.", True),
    ("How should it be stored?", "below 25°C", "Under 25 degrees Celsius.", True),
])
def test_the_same_number_of_someone_else(oracle, question, gold, candidate, right):
    assert passes(oracle, question, gold, candidate) is right
