"""What an answer says, read without any model: numbers, times, units, dates, 'unknown' (mortar.answers)."""

import pytest

from mortar.answers import (CLOCK, dotted_as_clock, is_unknown, joined_pairs, normalize_text, normalize_word,
                            quantities, same_word)


def values(text):
    return [q.value for q in quantities(text)]


@pytest.mark.parametrize("text, expected", [
    ("26", [26]), ("twenty-six birds", [26]), ("three hundred and twelve", [312]), ("a hundred people", [100]),
    ("two thousand nineteen", [2019]), ("3,800 meters", [3800]), ("3.3 degrees", [3.3]),
    ("4.5 billion years", [4.5e9]), ("roughly four and a half billion years", [4.5e9]), ("$8.6 million", [8.6e6]),
    ("the 3rd one", [3]), ("her third novel", [3]), ("May 2nd", [2]), ("the second of May", [2]),
    ("only one", [1]), ("the one about electricity", []), ("a single ticket", [1]), ("twice", [2]),
    ("the night of August 3, 2021", [3, 2021]), ("fourteen parents and six teachers", [14, 6]),
    ("around one point two million", [1.2e6]), ("the cheaper one", []), ("one of the two options", [1, 2]),
    ("between two thousand two hundred and two thousand eight hundred", [2200, 2800]),
    ("one million and two thousand", [1002000]), ("They finished runner-up.", [2]),
    ("six dozen rolls", [72]), ("a dozen and a half eggs", [18]), ("a couple of hundred", [200]),
    ("her eightieth birthday", [80]), ("in 1730 the mill was built", [1730]),
])
def test_numbers_in_digits_and_words(text, expected):
    assert values(text) == pytest.approx(expected)


@pytest.mark.parametrize("text, hour_minute", [
    ("8:15 am", (8, 15)), ("half past eight", (8, 30)), ("quarter to midnight", (11, 45)),
    ("twenty to ten", (9, 40)), ("seventeen minutes past four", (4, 17)), ("at 11:45 p.m.", (11, 45)),
    ("the ten-to-six train", (5, 50)), ("the 9.14 from Leeds", (9, 14)), ("on the 7.30 train", (7, 30)),
    ("opens at 0900", (9, 0)), ("1400 hours", (14, 0)), ("0830 to 1730", (8, 30, 17, 30)),
    # two decimals after a word of time, or before a part of the day, are a clock time; a price is not
    ("The café shut at 4.50.", (4, 50)), ("from 6.15 till 7.45", (6, 15, 7, 45)), ("5.20 in the evening", (5, 20)),
])
def test_clock_times(text, hour_minute):
    assert tuple(values(text)) == hour_minute


def test_units_convert_and_differ():
    km, m = quantities("3.8 km")[0], quantities("3,800 metres")[0]
    assert km.matches(m) and m.matches(km)
    assert quantities("2 miles")[0].matches(quantities("3.2 km")[0])  # conversions are rounded
    assert not quantities("2 miles")[0].matches(quantities("2 km")[0])
    assert not quantities("about six seconds")[0].matches(quantities("about six minutes")[0])
    assert not quantities("812 grams")[0].matches(quantities("812 kilograms")[0])
    assert quantities("forty minutes")[0].matches(quantities("forty")[0])  # no unit on one side: as written
    assert quantities("$5")[0].matches(quantities("5 dollars")[0])
    assert quantities("95%")[0].matches(quantities("95 percent")[0])
    assert quantities("£1.50")[0].matches(quantities("150p")[0]) and not quantities("£1.50")[0].matches(
        quantities("15p")[0])  # pounds and pence
    assert quantities("a pint")[0].matches(quantities("568 ml")[0])
    # approximate fractions may differ a little; years may not
    assert quantities("nearly 33 percent")[0].matches(quantities("almost a third")[0])
    assert not quantities("2019")[0].matches(quantities("about 2020")[0])
    # said roughly in another unit, a little further apart
    assert quantities("just under an hour")[0].matches(quantities("55 minutes")[0])
    assert not quantities("an hour")[0].matches(quantities("55 minutes")[0])
    assert not quantities("about an hour")[0].matches(quantities("50 minutes")[0])


def test_a_telephone_number_is_one_label_matched_digit_for_digit():
    (spaced,) = quantities("Ring Colm on 07700 451 203.")
    assert spaced.dim == "phone" and spaced.matches(quantities("07700451203")[0])
    assert not spaced.matches(quantities("07700 451 204")[0])
    assert [x.dim for x in quantities("The number is 0345 210 7788, open 9 to 5.")][0] == "phone"
    assert [x.value for x in quantities("They sold 300 tickets at 07:45.")][:1] == [300]  # no phone number


def test_pounds_and_pence_are_one_sum():
    (spelled,) = quantities("One hundred and eighty-two pounds and twenty-five pence.")
    assert spelled.dim == "pound" and spelled.matches(quantities("£182.25")[0])
    assert quantities("It costs 5 dollars and 50 cents")[0].value == 5.5
    assert [x.dim for x in quantities("£5 for adults and 50p for children")] == ["pound", "penny"]
    assert quantities("Eighteen pounds ninety.")[0].value == 18.9  # the pence said bare, at the end
    assert [x.value for x in quantities("10 pounds 50 times")] == [10, 50]


def test_hours_and_minutes_are_one_span():
    (span,) = quantities("3 hours 2 minutes")
    assert span.matches(quantities("182 minutes")[0]) and not span.matches(quantities("3 hours")[0])
    assert quantities("2 hours and 15 minutes")[0].base == 8100
    assert len(quantities("2 minutes 3 hours")) == 2  # a smaller unit first is two figures
    # 'about' is close as said: 3 hours and 5 minutes, not 4 hours
    assert quantities("about 3 hours")[0].matches(quantities("3 hours and 5 minutes")[0])
    assert not quantities("about 3 hours")[0].matches(quantities("4 hours")[0])


def test_a_number_before_until_or_till_counts_no_thing():
    (start, end) = quantities("open from 2 until 4 in the afternoon")[:2]
    assert start.noun is None and (start.value, start.meridiem) == (2, "pm") and end.value == 4
    assert quantities("9 till 5")[0].noun is None


def test_a_year_falls_in_its_decade_or_century():
    (decade,) = quantities("in the 1620s")  # a decade, not 1620 seconds
    assert decade.dim is None and decade.noun == "decade"
    year, other = quantities("about 1620")[0], quantities("in 1631")[0]
    assert year.matches(decade) and decade.matches(year) and not other.matches(decade)
    assert year.matches(quantities("early in the seventeenth century")[0])
    assert year.matches(quantities("the 1600s")[0]) and not year.matches(quantities("the 1500s")[0])
    assert not quantities("the 18th century")[0].matches(year)


def test_two_decimals_are_a_price_or_a_time_as_the_words_around_them_say():
    assert [q.dim for q in quantities("Pears at 2.40 per kilo.")] == [None]
    (bare,) = quantities("6.45")
    assert bare.dim is None and [(q.value, q.dim) for q in dotted_as_clock([bare])] == [(6, CLOCK[0]), (45, CLOCK[1])]
    assert dotted_as_clock(quantities("7.75")) == quantities("7.75")  # no minute is 75


def test_a_range_or_a_list_of_two_numbers_is_read_as_joined():
    def joined(text):
        return joined_pairs(text, quantities(text))

    assert joined("£150 to £220.") == [(150, 220)]
    assert joined("Saturday 3 and Sunday 4 May.") == [(3, 4)]
    assert joined("before 9am or after 5pm") == [(540, 1020)]
    assert joined("Under an hour - forty minutes.") == []  # said again more exactly, not a range
    assert joined("half past nine, 9:30 pm") == []  # a comma alone joins nothing
    assert joined("£18 for adults and £9 for children.") == []


def test_once_that_opens_a_clause_counts_nothing():
    assert [q.text for q in quantities("£800 once her report arrives")] == ["£ 800"]
    assert [q.value for q in quantities("He rang once.")] == [1] and [q.value for q in quantities("once a week")] == [1]


def test_an_hour_and_three_quarters_and_a_unit_joined_by_a_hyphen():
    assert [q.base for q in quantities("an hour and three quarters")] == [6300]
    assert [(q.value, q.dim) for q in quantities("a 30-foot ketch")] == [(30, "m")]
    assert [q.dim for q in quantities("a 3-4 hour walk")][:1] == [None]  # a number after the hyphen: a range


def test_counted_noun_is_kept():
    assert [(q.value, q.noun) for q in quantities("fourteen parents and six teachers")] == [(14, "parent"), (6, "teacher")]


def test_what_is_counted_is_the_plural_after_one_or_two_words():
    assert [(q.value, q.noun) for q in quantities("36 small meadow plots and twelve ripe plums")] == [(36, "plot"),
                                                                                                  (12, "plum")]


@pytest.mark.parametrize("text", [
    "Unknown", "unknown.", "I don't know.", "I'm not sure, the story doesn't tell us.", "The story does not say.",
    "The story doesn't say how much the field station cost to run.", "That is not mentioned in the text.",
    "It isn't mentioned.", "Not stated.", "No director is named.", "The text doesn't tell us.",
    "His age isn't mentioned in the story.", "That information isn't given.",
    "The newsletter doesn't say.", "The memo does not mention a date.", "It is not mentioned in the notice.",
    "Not sure, sorry.", "Hard to say.", "Unsure.", "The programme doesn't credit a costume designer.",
    "The log does not record who found it.",
    "She doesn't say what the cottage cost.", "That isn't recorded - the count was never finished.",
    "There's no record of that in the notes.", "Nobody wrote that down.", "The notes skip over that.",
    "That detail never comes up.", "The letter leaves that out.", "That's left unsaid.", "The log is silent on that.",
    "It's not in there.", "Can't tell from this.", "The article never gets round to saying.",
    "That information is missing.", "We're not told his age.",
    "Opening hours aren't listed — only the address.", "The letter just doesn't get into that.",
    "That's anyone's guess from the minutes.", "We never learn the dog's name.",
    "The poster gives a date but no price.",
    "It says the fence was mended but not by whom.", "Sender unknown.", "He doesn't explain why.",
])
def test_unknown_answers(text):
    assert is_unknown(text)


@pytest.mark.parametrize("text", [
    "No, she did not open it.", "Nobody brought soup that night.", "He didn't say anything to her.",
    "the night of August 3", "She knew because the letter came from Buenos Aires.", "no",
    "Not given to him until later.", "He was not sure the bridge would hold.", "She noted the time and left.",
    "It was not clear at first, but the cat came home.", "She didn't say much to the vicar.",
    "Nobody came to the meeting.", "The record was broken in 1998.", "The hall went silent.",
    "It was left out in the rain.",
    "He came up the lane at six.", "Nobody said a word all evening.",
    "The policy doesn't cover floods.", "No, the record was never beaten.", "The unknown soldier's grave.",
    "He went into the shop but not the bank.", "We never learned to swim.", "No deaths were recorded.",
    "Accidental damage isn't included.",
])
def test_answers_that_are_not_unknown(text):
    assert not is_unknown(text)


def test_normalisation_keeps_numbers_and_unifies_spelling():
    assert normalize_text("The kite, at 3.3 m!") == "kite at 3.3 m"
    assert normalize_text("3.3 degrees") != normalize_text("33 degrees")
    assert normalize_word("colour") == normalize_word("color") and normalize_word("grey") == "gray"
    assert normalize_word("metres") == "meters" and normalize_word("Grandma") == "grandmother"
    assert same_word("nurse", "nursing") and same_word("wood", "wooden") and not same_word("call", "callum")
    assert same_word("dissolve", "dissolvable") and not same_word("dissolve", "dissolution")


def test_a_date_with_the_month_shortened_is_the_same_date():
    (full,) = quantities("by 7 February")
    assert quantities("by 7 Feb")[0].noun == "february" and quantities("the 7th Feb.")[0].matches(full)
    assert not quantities("by 8 Feb")[0].matches(full)


def test_half_six_before_a_range_word_is_half_past_six():
    (hour, minutes) = quantities("from half six to eight in the evening")[:2]
    assert (hour.value, minutes.value) == (6, 30)
    assert [x.value for x in quantities("half six until nine")][:2] == [6, 30]


@pytest.mark.parametrize("text, subjects", [
    ("Typewriters have lots of fascinating parts.", {"typewriter"}),
    ("Great question! Gravel paths can get very slippery in the rain.", {"path"}),
    ("Bread should always cool before slicing.", set()),  # a capital at the start is read as a name here
    ("The gravel path turned into a river.", set()),  # the story's own path
    ("Mags says she has a spring in her parts tin.", set()),  # a person, though tagged a plural
    ("Phones, drinks and sweets are not allowed.", set()),  # a list of things: the story's rule
    ("Neustadt will cover the night crew.", set()),  # what will happen: the story's
])
def test_general_statements_are_read_by_their_subjects(text, subjects):
    from mortar.answers import analyse
    from mortar.nlp import load_nlp

    assert analyse(load_nlp().nlp(text), text).general == subjects


def test_how_often_a_thing_happens():
    from mortar.answers import rate

    assert rate("Four an hour.") == rate("every 15 minutes") == rate("four buses an hour")
    assert rate("twice weekly") == rate("two times a week")
    # a measure or a price per period is no count of events
    assert rate("twenty-four hours a day") is None and rate("£20 a day") is None and rate("20 pounds a day") is None


def test_a_decimal_is_no_clock_time_without_a_word_of_time_around_it():
    assert [x.dim for x in quantities("It weighs 9.14 kg")] == ["g"]
    assert quantities("sold at 7.30 a tray")[0].dim is None and quantities("7.30")[0].dim is None
    assert quantities("at 7.30")[0].dim == CLOCK[0]
