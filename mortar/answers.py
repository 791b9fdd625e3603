"""What an answer says, read with linguistic rules: the pieces the ``answer`` oracle compares.

A SUT rarely answers "white"; it says "Cotton was white." Before comparing with the reference,
the oracle finds the part of the answer that answers the question:
- *unknown*: "Unknown", "I don't know", "the story does not say …";
- *polarity* of a yes/no answer: a leading yes/no, else negation of the answer's main clause
  ("She didn't."), a negative prefix on the question's verb ("unopened"), or an echo ("He did.");
- *quantities*: numbers in digits or words ("twenty-six", "4.5 billion", "a third"), ordinals,
  clock times ("half past eight" = 8:30), with their unit converted ("3.8 km" = "3,800 metres")
  and the noun they count;
- *closed-class terms* that exclude each other: colours, months, weekdays, seasons, compass points,
  kinship;
- content words (lemmas), proper-name groups (and which of them own something: "Piet's brother"), and which
  words are negated;
- the members of a list ("lemon juice and mint") and of alternatives ("cumin or turmeric"), rates per period
  ("once a week", "weekly"), and answers that loop ("a goat a goat a goat").
Everything here is plain data computed once per text; ``mortar.oracle`` decides.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace

# ---------------------------------------------------------------------------------------------
# unknown answers

_SOURCE = r"(?:the )?(?:story|text|passage|article|report|book|novel|narrative|document|it|they|this|that|post|" \
          r"thread|e-?mail|message|letter|memo|notice|recipe|guide|instructions|review|newsletter|transcript|" \
          r"interview|announcement|log|minutes|leaflet|card|ticket|summary|label|form|receipt|invoice|diary|record|" \
          r"notes?|sheet|listing|advert|brochure|handbook|manual|chat|poster|flyer|programme|schedule|timetable|menu|" \
          r"page|website|bulletin|forum|statement|file|quote|estimate|entry)"
_SAY = r"(?:say|said|says|mention|mentioned|mentions|tell|tells|told|state|stated|states|specify|specified|" \
       r"give|gives|given|name|names|named|include|includes|reveal|reveals|revealed|indicate|indicates|explain|" \
       r"explains|provide|provides|provided|known|clear|available|listed|described|recorded|record|records|credit|" \
       r"credits|credited|identify|identifies|identified|note|notes|noted|specifies|discuss|discussed|discusses)"
# (not 'cover' or 'included': 'The policy doesn't cover floods.', "Accidental damage isn't included." answer)
UNKNOWN_PATTERNS = [re.compile(p) for p in (
    r"^\W*(?:unknown|unclear|not known|no idea|unanswerable|n/?a|none given|not stated|not mentioned|not given)\W*$",
    rf"^\W*(?:it(?:'s| is) |that(?:'s| is) )?not (?:stated|mentioned|given|specified|said) (?:in|by) {_SOURCE}\W*$",
    r"\b(?:i|we) (?:do not|don't|dont|cannot|can't|can not|am not able to|have no way to) (?:know|tell|say|be sure|determine)",
    r"\b(?:i'm|i am|we're|we are) not (?:sure|certain)\b",
    r"^\W*(?:not sure|not certain|unsure|no clue|dunno|hard to say|can't say|cannot say)\b",  # said without "I"
    r"\bno (?:way|means) (?:of|to) (?:know|tell)",
    rf"\b{_SOURCE} (?:does not|doesn't|did not|didn't|do not|don't|never) {_SAY}\b",
    rf"\b(?:isn't|wasn't|aren't|weren't|is not|was not|are not|were not|is never|was never) {_SAY}\b.*"
    r"\b(?:story|text|passage|article)\b",
    rf"\b(?:isn't|wasn't|aren't|weren't|is not|was not|are not|were not|not) (?:actually |explicitly )?(?:{_SAY})\W*$",
    r"^\W*no \w+(?: \w+)? (?:is|was|are|were) (?:named|mentioned|given|stated|specified|listed)\b",
    r"\b(?:cannot|can't|can not) be (?:determined|known|answered|told)\b",
    r"\bthere is no (?:information|mention|indication)\b",
    r"\b(?:no|not enough) (?:information|details?|mention)\b",
    # the document named by what it is ('The label does not specify …', 'The chat doesn't say.')
    rf"^\W*(?:the|this|that) [\w-]+(?: [\w-]+)? (?:does not|doesn't|did not|didn't|do not|don't|never) "
    rf"(?:{_SAY}|list|lists|show|shows)\b",
    rf"\b(?:is not|was not|are not|were not|isn't|wasn't|aren't|weren't) {_SAY} (?:in|on|by) (?:the|this) [\w-]+",
    # '… is not listed on the label.', "Her age isn't mentioned in the column." 
    # a refusal: 'Sorry, I can't help with that.', "I'm not able to share …", 'As an AI I cannot browse …'
    r"\b(?:i|we)(?: am|'m| are|'re)? (?:can't|cannot|can not|unable to|not able to) (?:help|answer|assist|share|"
    r"provide|access|browse|find|determine|disclose|confirm|give|look up)\b",
    r"\b(?:i|we) (?:don't|do not) have (?:access to )?(?:that |this |the |any |enough )?(?:information|details|data)\b",
    r"\b(?:i|we) (?:don't|do not) understand the question\b",
    r"\bas an ai\b|\bas a language model\b",
    rf"^\W*(?:the|this|that) [\w-]+ (?:gives|states|lists|names|mentions) no\b",  # 'The reply gives no cost …'
    # '…; no temperature is given', "… 'by descent' - no heir is named"
    r"[;,:\-–—]\s*no \w+(?: \w+)? (?:is|was|are|were) (?:given|stated|mentioned|specified|named|listed)\b",
    # what the source does give, and that it stops there: 'The ledger only gives the ram's breed, not the ewes'.',
    # 'Only the policy number is given, not the company.'
    rf"^\W*(?:the|this|that|its|his|her|their) [\w-]+(?: [\w-]+)? only (?:{_SAY}|shows?|lists?)\b.*[,;:\-–—]\s*"
    r"(?:but )?not\b",
    rf"^\W*only (?:the|its|his|her|their) [\w' -]+ (?:is|are|was|were) (?:{_SAY})\b.*[,;:\-–—]\s*(?:but )?not\b",
    r"\b(?:don't|do not|doesn't|does not|didn't|did not) know yet\b",
    # the teller leaves it out: 'He doesn't say what his wages were.', 'She never mentions how old she was.'
    r"^\W*(?:he|she|they) (?:doesn't|does not|didn't|did not|never) (?:say|says|mention|mentions|tell us|state|specify)"
    r" (?:what|how|where|when|who|whom|whose|which|why|whether|if)\b",
    # 'That isn't recorded - the survey hadn't happened yet.'
    rf"^\W*(?:that|this|it)(?: is|'s| was)? (?:not|n't|isn't|wasn't) (?:actually |explicitly )?{_SAY}\b(?!.*\bbut\b)",
    # what the document leaves out, said in other words: 'There's no record of that in the notes.', 'Nobody wrote that
    # down.', 'The notes skip over that.', 'That detail never comes up.', 'The log is silent on that.', 'That's left
    # unsaid.', "It's not in there.", 'Can't tell from this.', 'The article never gets round to saying.'
    r"\bno record (?:of|about) (?:that|it|this|them|those|any|the)\b|\b(?:isn't|is not|there's no|there is no) "
    r"(?:any )?record(?:ed)? (?:of|about) (?:that|it|this)\b",
    r"\b(?:nobody|no one|no-one) (?:wrote|writes|recorded|records|noted|notes|mentioned|mentions|said|says) "
    r"(?:that|it|this|so)\b(?: down)?\W*$",
    r"\b(?:skips?|skipped|glosses|glossed) over (?:that|it|this)\b|\b(?:leaves?|left) (?:that|it|this) out\b",
    r"\b(?:never|doesn't|does not|didn't|did not) (?:come|comes|came) up\b",
    r"\b(?:we're|we are|we were|you're|you are) not told\b|\b(?:we|you) (?:aren't|weren't|never get) told\b",
    r"\bleft unsaid\b|\b(?:is|was|are|were|stays|stay) silent (?:on|about) (?:that|it|this|the)\b",
    r"\b(?:information|detail|details|figure|number|date) (?:is|are|was|were) (?:missing|not there|absent)\b",
    r"^\W*(?:it's|it is|that's|that is) not (?:in there|there|in (?:the|this|that) \w+)\W*$",
    r"\bnever gets? (?:round|around) to (?:saying|telling|mentioning)\b",
    r"\bcan(?:'t|not| not) (?:tell|say|know|work (?:it|that) out) from (?:this|that|here|the \w+|what)\b",
    # 'Sunday hours aren't listed — only weekdays.', 'Brand isn't specified, only the colour.'
    rf"\b(?:isn't|wasn't|aren't|weren't|is not|was not|are not|were not) (?:actually |explicitly )?{_SAY}"
    r"\s*[,;:—–-]",
    # the teller or the text does not go into it: "She doesn't explain why.", "The email just doesn't get into that."
    r"\b(?:doesn't|does not|didn't|did not|never) (?:really |actually |ever )?(?:get|gets|go|goes|went) into "
    r"(?:that|it|this|why|how|what|who|where|when)\b|\b(?:never|doesn't|does not|didn't|did not) touch(?:es)? on\b",
    r"^\W*(?:he|she|they|it) (?:doesn't|does not|didn't|did not|never) (?:explain|reveal|specify|give|mention)s? "
    r"(?:why|how|what|who|whom|where|when|which|whether)\b",
    r"\banyone's guess\b|\b(?:is|was|are|were) (?:blank|silent|vague|quiet) (?:on|about)\b",
    rf"^\W*nothing in {_SOURCE}\b|^\W*nowhere (?:in|on|does|is|do|are|did|was)\b",
    r"^\W*there(?:'s| is| was) nothing (?:in|on|about)\b",
    # 'The ending comes before we find out.', 'He's only ever "the boy"; we never learn his name.'
    r"\bwe (?:never|don't|do not|didn't|did not) (?:learn|find out|hear|get told|get to know)\b|\bbefore we "
    r"(?:find out|learn|hear|know)\b",
    # what the text gives, and that the thing asked is not among it: 'The notice gives a date and time but no venue.',
    # 'It says the leak was fixed on the 4th but not by whom.', 'Just "Carla" throughout — no surname.'
    rf"^\W*{_SOURCE} (?:only )?(?:gives|lists|says|mentions|has|shows|includes|names|records) [^.]*\bbut (?:no|not)\b",
    r"\bbut not (?:by |to |for |from |with |about )?(?:who|whom|what|when|where|why|how|which)\b",
    r"^(?!\W*(?:yes|no)\b)[^—–]*[—–]\s*no \w+(?: \w+)?\W*$",
    # 'Owner unknown.', 'Can't tell — …'
    r"^\W*\w+ (?:unknown|not known|not given|not stated)\W*(?:$|[—–-])|^\W*can(?:'t|not) tell\b",
)]


def is_unknown(text: str) -> bool:
    """Does the answer say the story does not tell (rather than answer)?"""
    t = " ".join(text.lower().replace("’", "'").split())
    return any(p.search(t) for p in UNKNOWN_PATTERNS)


# ---------------------------------------------------------------------------------------------
# quantities

UNITS = {  # surface form → (canonical unit, factor to the dimension's base unit)
    **{w: ("m", 1.0) for w in ("m", "meter", "meters", "metre", "metres")},
    **{w: ("m", 1000.0) for w in ("km", "kms", "kilometer", "kilometers", "kilometre", "kilometres")},
    **{w: ("m", 0.01) for w in ("cm", "centimeter", "centimeters", "centimetre", "centimetres")},
    **{w: ("m", 0.001) for w in ("mm", "millimeter", "millimeters", "millimetre", "millimetres")},
    **{w: ("m", 1609.344) for w in ("mile", "miles", "mi")},
    **{w: ("m", 0.3048) for w in ("foot", "feet", "ft")},
    **{w: ("m", 0.9144) for w in ("yard", "yards")},
    **{w: ("m", 0.0254) for w in ("inch", "inches")},
    **{w: ("g", 1.0) for w in ("g", "gram", "grams", "gramme", "grammes")},
    **{w: ("g", 1000.0) for w in ("kg", "kgs", "kilogram", "kilograms", "kilo", "kilos")},
    **{w: ("g", 1e6) for w in ("tonne", "tonnes", "ton", "tons")},
    **{w: ("g", 453.59237) for w in ("lb", "lbs", "pound-weight")},
    **{w: ("s", 1.0) for w in ("s", "sec", "secs", "second", "seconds")},
    **{w: ("s", 60.0) for w in ("min", "mins", "minute", "minutes")},
    **{w: ("s", 3600.0) for w in ("h", "hr", "hrs", "hour", "hours")},
    **{w: ("s", 86400.0) for w in ("day", "days")},
    **{w: ("s", 604800.0) for w in ("week", "weeks")},
    **{w: ("year", 1 / 12) for w in ("month", "months")},
    **{w: ("year", 1.0) for w in ("year", "years", "yr", "yrs")},
    **{w: ("year", 10.0) for w in ("decade", "decades")},
    **{w: ("s", 1209600.0) for w in ("fortnight", "fortnights")},
    **{w: ("fraction", 0.01) for w in ("%", "percent", "per cent", "percentage")},
    **{w: ("degree", 1.0) for w in ("°", "°c", "degree", "degrees", "celsius", "centigrade")},
    **{w: ("dollar", 1.0) for w in ("$", "dollar", "dollars", "usd", "bucks")},
    **{w: ("pound", 1.0) for w in ("£", "pound", "pounds", "quid", "gbp")},
    **{w: ("cent", 1.0) for w in ("¢", "cent", "cents")},
    **{w: ("penny", 1.0) for w in ("penny", "pennies", "pence", "p")},
    **{w: ("euro", 1.0) for w in ("€", "euro", "euros")},
    **{w: ("km/s", 1.0) for w in ("kilometers per second", "kilometres per second", "km/s")},
    **{w: ("l", 1.0) for w in ("l", "litre", "litres", "liter", "liters")},
    **{w: ("l", 0.001) for w in ("ml", "millilitre", "millilitres", "milliliter", "milliliters")},
    **{w: ("l", 0.01) for w in ("cl", "centilitre", "centilitres", "centiliter", "centiliters")},
    **{w: ("l", 0.015) for w in ("tbsp", "tablespoon", "tablespoons", "tablespoonful", "tablespoonfuls")},
    **{w: ("l", 0.005) for w in ("tsp", "teaspoon", "teaspoons", "teaspoonful", "teaspoonfuls")},
    **{w: ("l", 0.568) for w in ("pint", "pints")},  # the imperial pint
}
CURRENCY_SYMBOLS = {"$": "dollar", "£": "pound", "€": "euro"}
MONEY = set(CURRENCY_SYMBOLS.values())  # the currencies (their cents and pence are dimensions of their own)
# 'half six' is a time before these ('half six to eight')
AFTER_HALF_SIX = {",", ".", ";", ":", "!", "?", "-", "(", "in", "on", "at", "tonight", "today", "tomorrow", "am", "pm",
                  "and", "or", "then", "sharp", "that", "this", "every", "each", "to", "until", "till"}
AND_A_PART = {"half": 0.5, "quarter": 0.25, "quarters": 0.25, "third": 1 / 3}  # 'two and a quarter metres'
MONEY_SCALES = {"k": 1e3, "m": 1e6, "mn": 1e6, "bn": 1e9}
SPAN_UNITS = {"minute", "hour", "day", "week", "fortnight", "month", "year", "decade", "inch", "mile",  # 'a' counts one
              "kilo", "kilogram", "litre", "liter", "metre", "meter", "kilometre", "kilometer", "pint", "gram"}

ONES = {"zero": 0, "nought": 0, "nil": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
        "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
        "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
        "eighty": 80, "ninety": 90}
SCALES = {"hundred": 100, "thousand": 1000, "million": 1e6, "billion": 1e9, "trillion": 1e12}
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
            "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
            "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
            "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50, "sixtieth": 60, "seventieth": 70,
            "eightieth": 80, "ninetieth": 90, "hundredth": 100}
FRACTIONS = {"half": 0.5, "halves": 0.5, "third": 1 / 3, "thirds": 1 / 3, "quarter": 0.25, "quarters": 0.25}
CLAUSE_OPENERS = {"the", "her", "his", "their", "its", "my", "our", "your", "i", "you", "he", "she", "it", "we", "they",
                  "this", "that", "these", "those", "everyone", "everything", "all"}
MULTIPLES = {"once": 1, "twice": 2, "thrice": 3, "single": 1, "double": 2, "triple": 3, "dozen": 12, "dozens": 12,
             "couple": 2, "pair": 2}
APPROX_CONVERTED = 0.1  # how far apart two amounts in different units may be when one is said roughly
APPROX = {"about", "around", "roughly", "approximately", "nearly", "almost", "some", "over", "under", "more",
          "less", "fewer", "up", "just", "barely", "circa", "approx", "close", "estimated", "~"}
HOUR_WORDS = {"noon": 12, "midday": 12, "midnight": 12}
# words after which "one" is a pronoun ("the one about …"), not a count
ONE_PRONOUN_BEFORE = {"the", "this", "that", "which", "each", "every", "any", "no", "another", "other", "a", "last",
                      "same", "little", "big", "older", "younger", "elder", "first", "second", "third",
                      "next", "new", "old", "right", "wrong", "whichever"}

_TOKEN = re.compile(r"\d{1,2}:\d{2}|\d+(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:st|nd|rd|th)?|[a-z]+(?:'[a-z]+)?|[$£€¢%°~]|[.,;:!?/()-]")


CLOCK = ("clock-hour", "clock-minute")
# what a clock time names when said as 'the 9.14 …' (a decimal otherwise)
CLOCK_BEFORE = {"at", "from", "by", "before", "after", "around", "about"}  # '… at 8.05'
SPAN_TO = {"to", "till", "until", "and", "-", "–"}  # '8.15 till 9.30', after a time
AFTER_A_TIME = {"on", "and", "to", "till", "until", "or", "sharp", "prompt", "tomorrow", "tonight", "today", "every",
                "each", "daily"}  # not 'at 2.50 per kilo'
DEPARTURES = {"from", "to", "service", "train", "bus", "coach", "ferry", "flight", "departure", "sailing", "boat"}
PHONE = "phone"  # a telephone number: a label, matched digit for digit, no count or time


@dataclass(frozen=True)
class Quantity:
    value: float  # as written ("six" minutes → 6)
    dim: str | None = None  # what it measures: "m", "g", "s", "fraction", "dollar", … or a clock part; None for a count
    base: float | None = None  # the value in the dimension's base unit (six minutes → 360 s)
    noun: str | None = None  # the noun it counts when that is not a unit ("parents")
    approx: bool = False
    text: str = ""
    meridiem: str | None = None  # 'am' / 'pm' on a clock hour

    def matches(self, other: "Quantity") -> bool:
        """Same quantity: equal in a shared unit dimension, else equal as written; a year matches the decade or the
        century it falls in ('1620' and 'the seventeenth century', 'the 1620s')."""
        if _year_in(self, other) or _year_in(other, self):
            return True
        if self.dim == other.dim == CLOCK[0]:
            return _same_hour(self, other)
        if self.dim and other.dim and self.dim not in CLOCK and other.dim not in CLOCK:
            for big, small in ((self, other), (other, self)):  # '£1.50' is '150p'
                if SMALL_CHANGE.get(big.dim) == small.dim:
                    return _close(big.base * 100, small.base, big.approx or small.approx)
            if self.dim != other.dim:
                return False
            # as said, not in the base unit: 'about 3 hours' is close to '3 hours and 5 minutes', not to '4 hours'
            whole = float(self.value).is_integer() and float(other.value).is_integer()
            if self.base == other.base or (not whole and (self.approx or other.approx)
                                           and abs(self.base - other.base) <= 0.05 * max(abs(self.base), abs(other.base))):
                return True
            # written in different units ('2 miles', '3.2 km'): a converted value is only ever rounded
            converted = self.value and other.value and abs(self.base / self.value - other.base / other.value) > 1e-9
            # … unless one is said roughly: 'just under an hour' is '55 minutes'
            share = APPROX_CONVERTED if self.approx or other.approx else 0.02
            return bool(converted) and abs(self.base - other.base) <= share * max(abs(self.base), abs(other.base))
        return _close(self.value, other.value, self.approx or other.approx)


def _year_in(year: Quantity, period: Quantity) -> bool:
    """Does a year ('1620') fall in a period: a decade ('the 1620s'), a century by its years ('the 1600s') or by
    its ordinal ('the seventeenth century': 1600 to 1700, as people say it)?"""
    if year.dim or year.noun or not 1000 <= year.value <= 2100 or year.value != int(year.value) or period.dim:
        return False
    if period.noun == "decade":
        return period.value <= year.value < period.value + 10
    if period.noun == "century":
        start = period.value if period.value >= 1000 else (period.value - 1) * 100
        return start <= year.value <= start + 100
    return False


def _same_hour(a: Quantity, b: Quantity) -> bool:
    """'4 p.m.' is 16:00 and not 4 a.m.; an hour without a.m./p.m. ('half past eight') is either."""
    def hour(x):
        h = x.value % 12 + (12 if x.meridiem == "pm" else 0) if x.meridiem else x.value
        return h, bool(x.meridiem) or x.value > 12 or x.value == 0

    (ha, sure_a), (hb, sure_b) = hour(a), hour(b)
    return ha == hb if sure_a and sure_b else ha % 12 == hb % 12


def _close(a: float, b: float, approx: bool) -> bool:
    if a == b:
        return True
    # 'nearly 33 percent' ~ 'almost a third'; integers must be equal (2019 is not 2020)
    tolerant = approx and not (float(a).is_integer() and float(b).is_integer())
    return tolerant and abs(a - b) <= 0.05 * max(abs(a), abs(b))


VULGAR_FRACTIONS = {"½": 0.5, "¼": 0.25, "¾": 0.75, "⅓": 1 / 3, "⅔": 2 / 3, "⅛": 0.125}


def _words(text: str) -> list[str]:
    text = text.lower().replace("’", "'").replace("per cent", "percent")
    text = re.sub(r"(\d*)\s*([½¼¾⅓⅔⅛])",  # '½ tsp', '1½ hours'
                  lambda m: f" {int(m.group(1) or 0) + VULGAR_FRACTIONS[m.group(2)]:g} ", text)
    text = re.sub(r"(\d)\s*°\s*c\b", r"\1 °c", text)
    text = re.sub(r"(\d)(km|kg|cm|mm|m|g|s|h|hrs?|mins?|secs?|kms|kgs|lbs?|am|pm)\b", r"\1 \2", text)
    text = text.replace("a.m.", "am").replace("p.m.", "pm")
    # "a day's notice", "two weeks' pay": a span said as an owner
    text = re.sub(r"\b(minute|hour|day|night|week|fortnight|month|year)(s?)'s?(?=\s|$)", r"\1\2", text)
    # a race time: '1:18.45' is minutes, seconds and hundredths (a clock has no hundredths)
    text = re.sub(r"\b(\d{1,2}):(\d{2}\.\d{1,2})\b", lambda m: f"{int(m.group(1)) * 60 + float(m.group(2)):g} seconds",
                  text)
    text = re.sub(r"\bmiles? (?:per|to the|to a|a|an) gallon\b", "mpg", text)  # '58 miles to the gallon'
    text = re.sub(r"\b([a-z]+)-(to|past)-([a-z]+)\b", r"\1 \2 \3", text)  # 'the ten-to-six train'
    text = re.sub(r"(\d)k\b", r"\1 thousand", text)  # '5k'
    return _TOKEN.findall(text)


def _spoken_year(words: list[str], i: int) -> tuple[float, int] | None:
    """A year said as two numbers: 'nineteen ninety', 'twenty twenty-one' (the hundreds 16 to 20 only)."""
    if words[i] not in CENTURY_WORDS or i + 1 >= len(words):
        return None
    rest = _number_word_run(words, i + 1)
    if rest is None or not 10 <= rest[0] <= 99 or rest[0] != int(rest[0]) \
            or rest[1] < len(words) and words[rest[1]] == "-":  # 'sixteen twelve-year-olds'
        return None
    return CENTURY_WORDS[words[i]] * 100 + rest[0], rest[1]


CENTURY_WORDS = {"sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20}


def _number_word_run(words: list[str], i: int) -> tuple[float, int] | None:
    """A number written in words from i: 'three hundred and twelve', 'twenty-six', 'a hundred'."""
    total, current, j, last = 0.0, 0.0, i, None  # last: what the previous word was
    if words[j] in ("a", "an") and j + 1 < len(words) and words[j + 1] in ("hundred", "thousand", "million", "billion"):
        current, j, last = 1.0, j + 1, "ones"
    while j < len(words):
        w = words[j]
        if w in ONES and ONES[w] < 10 and last in (None, "tens", "scale", "and"):
            current, last = current + ONES[w], "ones"
        elif w in ONES and last in (None, "scale", "and"):
            current, last = current + ONES[w], "teens"
        elif w in TENS and last in (None, "scale", "and"):
            current, last = current + TENS[w], "tens"
        elif w == "hundred" and last in ("ones", "teens"):
            current, last = current * 100, "scale"
        elif w in SCALES and w != "hundred" and last is not None and last != "and":
            total, current, last = total + (current or 1) * SCALES[w], 0.0, "scale"
        elif w == "-" and last == "tens" and j + 1 < len(words) and words[j + 1] in ONES:
            j += 1
            continue
        elif w == "and" and last == "scale" and j + 1 < len(words) and (words[j + 1] in ONES or words[j + 1] in TENS):
            if _starts_a_bigger_number(words, j + 1, total):
                break  # 'two thousand two hundred and two thousand eight hundred': a range, not one number
            last = "and"
        elif w == "," and last == "scale" and current == 0 and j + 1 < len(words) and words[j + 1] in ONES:
            pass  # 'ninety-eight thousand, four hundred and twelve'
        elif w == "point" and last == "ones" and j + 1 < len(words) and ONES.get(words[j + 1], 10) < 10:
            digits = j + 1  # 'one point two million' is 1.2 million
            while digits < len(words) and ONES.get(words[digits], 10) < 10:
                digits += 1
            current += float("0." + "".join(str(ONES[x]) for x in words[j + 1:digits]))
            j, last = digits, "ones"
            continue
        else:
            break
        j += 1
    if last is None:
        return None
    return total + current, j


def _starts_a_bigger_number(words: list[str], j: int, total: float) -> bool:
    """Does the run of number words from j reach a scale as big as what is already counted ('… and two thousand')?"""
    largest = max((v for v in SCALES.values() if v <= total), default=0)
    while j < len(words) and (words[j] in ONES or words[j] in TENS or words[j] in SCALES or words[j] == "-"):
        if words[j] in SCALES and words[j] != "hundred" and largest and SCALES[words[j]] >= largest:
            return True
        j += 1
    return False


def _digits(tok: str) -> float | None:
    m = re.fullmatch(r"(\d+(?:,\d{3})*(?:\.\d+)?)(?:st|nd|rd|th)?", tok)
    return float(m.group(1).replace(",", "")) if m else None


def quantities(text: str) -> list[Quantity]:
    """Numbers with their units, in reading order; a clock time gives two (hour, minute)."""
    words = _words(text)
    out: list[Quantity] = []
    i = 0
    while i < len(words):
        w = words[i]
        approx = i > 0 and words[i - 1] in APPROX or i > 1 and words[i - 2] in ("more", "less", "up")
        # clock times: 8:15, half past eight, quarter to ten, twenty to ten, ten past four, noon
        m = re.fullmatch(r"(\d{1,2}):(\d{2})", w)
        if m:
            meridiem = words[i + 1] if i + 1 < len(words) and words[i + 1] in ("am", "pm") else None
            if int(m.group(1)) <= 12:
                meridiem = meridiem or _part_of_day(words, i + 1)  # '2:15 in the afternoon'
            if m.group(1).startswith("0") and len(m.group(1)) == 2:
                meridiem = meridiem or "am"  # '02:15' is on the 24-hour clock
            out += [Quantity(float(m.group(1)), CLOCK[0], text=w, meridiem=meridiem),
                    Quantity(float(m.group(2)), CLOCK[1], text=w)]
            i += 1
            continue
        t = _clock_phrase(words, i)
        if t:
            (h, mnt), j = t
            phrase = " ".join(words[i:j])
            out += [Quantity(h, CLOCK[0], text=phrase, meridiem=_part_of_day(words, j)),
                    Quantity(mnt, CLOCK[1], text=phrase)]
            i = j
            continue
        m = re.fullmatch(r"(\d{1,2})\.(\d{2})", w)
        if m and i + 1 < len(words) and words[i + 1] in ("am", "pm") and int(m.group(1)) <= 12:
            out += [Quantity(float(m.group(1)), CLOCK[0], text=w, meridiem=words[i + 1]),  # '9.30 am'
                    Quantity(float(m.group(2)), CLOCK[1], text=w)]
            i += 2
            continue
        if m and int(m.group(1)) <= 23 and int(m.group(2)) < 60 and (
                (i > 0 and words[i - 1] in ("the", "at") and i + 1 < len(words) and words[i + 1] in DEPARTURES)
                or _part_of_day(words, i + 1) or (_after_a_time_word(words, i, out) and _ends_a_time(words, i))):
            # 'the 9.14 from Scarrowby', 'the 7.30 train', '9.18 in the morning', 'lit at 7.40.', 'from 8.15 to …'
            out += [Quantity(float(m.group(1)), CLOCK[0], text=w, meridiem=_part_of_day(words, i + 1)),
                    Quantity(float(m.group(2)), CLOCK[1], text=w)]
            i += 1
            continue
        phone = _phone_number(words, i)
        if phone:
            digits, j = phone
            out.append(Quantity(float(digits), PHONE, float(digits), text=" ".join(words[i:j])))
            i = j
            continue
        m = re.fullmatch(r"([01]\d|2[0-3])([0-5]\d)", w)
        if m and (w.startswith("0") or words[i + 1:i + 2] in (["hours"], ["hrs"], ["h"]) or _in_24h_range(words, i)):
            # the 24-hour clock without a colon: '0900', '0830 to 1730', '1400 hours' (not the year 1730 alone)
            out += [Quantity(float(m.group(1)), CLOCK[0], text=w, meridiem="am" if w.startswith("0") else None),
                    Quantity(float(m.group(2)), CLOCK[1], text=w)]
            i += 2 if words[i + 1:i + 2] in (["hours"], ["hrs"], ["h"]) else 1
            continue
        if w in HOUR_WORDS:
            out.append(Quantity(float(HOUR_WORDS[w]), CLOCK[0], text=w, meridiem="am" if w == "midnight" else "pm"))
            i += 1
            continue
        if w in ("one", "ones") and _pronoun_one(words, i):
            i += 1  # 'the cheaper one', 'this one': no count
            continue
        part = _fraction_of(words, i)  # 'half an hour', 'a quarter of a kilo', 'half a dozen', 'half of it'
        if part:
            value, unit, factor, j = part
            out.append(Quantity(value, unit, value * factor, None, approx, " ".join(words[i:j])))
            i = j
            continue
        value, j, unit, noun = None, i + 1, None, None
        if re.fullmatch(r"(?:1\d|20)\d0", w) and words[i + 1:i + 2] == ["s"]:
            # 'the 1620s', 'the 1500s': a decade or a century, not seconds
            out.append(Quantity(float(w), None, float(w), "century" if w.endswith("00") else "decade", approx, f"{w}s"))
            i += 2
            continue
        if w in CURRENCY_SYMBOLS and i + 1 < len(words):
            v = _digits(words[i + 1]) or (_number_word_run(words, i + 1) or (None,))[0]
            if v is not None:
                value, unit, j = v, CURRENCY_SYMBOLS[w], i + 2
                if j < len(words) and words[j] in MONEY_SCALES:  # '£3.2m'
                    value, j = value * MONEY_SCALES[words[j]], j + 1
        if value is None:
            d = _digits(w)
            if d is not None:
                value = d
            elif w in ("a", "an", "one") and i + 1 < len(words) and words[i + 1] in FRACTIONS and words[i + 1] != "halves":
                value, j, unit = FRACTIONS[words[i + 1]], i + 2, "fraction"  # "a third", "a half"
            elif w in ("a", "an") and i + 1 < len(words) and words[i + 1] in SPAN_UNITS and not (
                    i > 0 and (words[i - 1] in MULTIPLES or words[i - 1] in UNITS  # 'a pound a year'
                               or words[i - 1] in ("on", "of", "such", "what", "which", "that")  # 'on a day'
                               or words[i - 1] in ("times", "per", "every", "each")
                               or _digits(words[i - 1]) is not None or is_number_word(words[i - 1]))):
                value = 1.0  # 'an hour and a half', 'a week' (not 'twice a day')
            elif w in ("next", "whole", "entire", "coming", "following") and i + 1 < len(words) \
                    and words[i + 1] in SPAN_UNITS and i > 1 and words[i - 1] == "the" \
                    and words[i - 2] in ("for", "over", "during", "within", "throughout"):
                value = 1.0  # 'for the next fortnight', 'over the whole week': a span of one
            elif w == "one" and (i > 0 and (words[i - 1] in ONE_PRONOUN_BEFORE or _digits(words[i - 1]) is not None)):
                value = None  # "the one about electricity", "the 3rd one"
            elif w in ("runner", "runners") and words[i + 1:i + 3] == ["-", "up"]:
                value, j = 2.0, i + 3  # the runner-up came second
            elif w in ORDINALS and not (w == "second" and i > 0 and words[i - 1] in ("a", "per")) \
                    and not (i + 2 < len(words) and words[i + 1] == "-"
                             and words[i + 2] in ("hand", "class", "party", "rate")):  # 'second-hand', 'first-class'
                value = float(ORDINALS[w])
            elif w in MULTIPLES and not (w in ("couple", "pair") and (i == 0 or words[i - 1] not in ("a",))) \
                    and not (w == "once" and words[i + 1:i + 2] and words[i + 1] in CLAUSE_OPENERS):
                value = float(MULTIPLES[w])  # not the 'once' of 'once her report arrives'
            else:
                run = _spoken_year(words, i) or _number_word_run(words, i)
                if run:
                    value, j = run
        if value is None:
            i += 1
            continue
        dash = i > 0 and words[i - 1] == "-" and (i == 1 or not re.match(r"[\d.]", words[i - 2])) \
            and re.search(rf"(?:^|[\s(]){re.escape('-' + w)}\b", text)
        if i > 0 and (words[i - 1] == "minus" or dash):
            value = -value  # '-2 °C', 'minus two degrees' (not the '7' of '5-7', nor '- 2' after a dash)
        # scale after digits ("4.5 billion"), "and a half", fractions ("two-thirds")
        while j < len(words) and words[j] in SCALES:
            value *= SCALES[words[j]]
            j += 1
        if j < len(words) and words[j] == "dozen" and w not in MULTIPLES:
            value, j = value * 12, j + 1  # 'six dozen' is 72
        if w in MULTIPLES and words[j:j + 1] == ["of"] and j + 1 < len(words) and words[j + 1] in SCALES:
            value, j = value * SCALES[words[j + 1]], j + 2  # 'a couple of hundred'
        if w in ("dozen", "dozens") and words[j:j + 3] == ["and", "a", "half"]:
            value, j = value * 1.5, j + 3  # 'a dozen and a half' is 18
        if j + 2 < len(words) and words[j] == "and" and words[j + 1] in ("a", "one", "three") \
                and words[j + 2] in AND_A_PART:
            value += AND_A_PART[words[j + 2]] * (3 if words[j + 1] == "three" else 1)
            j += 3
            while j < len(words) and words[j] in SCALES:
                value *= SCALES[words[j]]
                j += 1
        if unit is None and j < len(words) and words[j] in ("-",) and j + 1 < len(words) and words[j + 1] in FRACTIONS:
            value, unit, j = value * FRACTIONS[words[j + 1]], "fraction", j + 2
        elif unit is None and j < len(words) and words[j] in FRACTIONS and words[j] not in ("half", "quarter"):
            value, unit, j = value * FRACTIONS[words[j]], "fraction", j + 1
        if unit == "fraction" and words[j:j + 2] in (["of", "a"], ["of", "an"]) and j + 2 < len(words) \
                and words[j + 2] in UNITS:
            unit, j = None, j + 2  # 'three quarters of an hour', 'three-quarters of …': the unit is read next
        # unit or counted noun right after the number (skipping one adjective-like word is too loose)
        factor, meridiem = 1.0, None
        if unit is None and words[j:j + 2] in (["below", "zero"], ["below", "freezing"]):
            value, unit, j = -value, "degree", j + 2  # 'two below freezing' is -2 °C
        if unit is None and j + 1 < len(words) and re.fullmatch(r"[a-z]{3,}", words[j]) and words[j] not in _NOT_NOUNS \
                and words[j] not in UNITS and not is_number_word(words[j]) and UNITS.get(words[j + 1], ("",))[0] in (
                    "s", "year"):
            j += 1  # 'one full week', 'five working days'
        if unit is None and words[j:j + 1] == ["-"] and j + 1 < len(words) and len(words[j + 1]) > 2 \
                and words[j + 1] in UNITS:
            j += 1  # 'a 26-foot yacht', 'a five-mile walk'

        if unit is None and j < len(words):
            two = " ".join(words[j:j + 3]) if j + 2 < len(words) else ""
            if two in UNITS:
                unit, factor = UNITS[two]
                j += 3
            elif words[j] in UNITS and not (words[j] in ("m", "s", "h", "p", "g") and value > 100000):
                unit, factor = UNITS[words[j]]
                j += 1
                if j < len(words) and words[j] in ("celsius", "centigrade"):
                    j += 1
                if words[j:j + 2] == ["and", "a"] and j + 2 < len(words) and words[j + 2] in AND_A_PART:
                    value, j = value + AND_A_PART[words[j + 2]], j + 3  # 'an hour and a half'
                elif words[j:j + 3] == ["and", "three", "quarters"] and words[j + 3:j + 4] != ["of"]:
                    value, j = value + 0.75, j + 3  # 'an hour and three quarters'
            elif words[j] in ("am", "pm", "o'clock", "oclock"):
                unit, meridiem = CLOCK[0], words[j] if words[j] in ("am", "pm") else None
                j += 1
            elif re.fullmatch(r"[a-z]{3,}", words[j]) and words[j] not in _NOT_NOUNS and not is_number_word(words[j]):
                # 'a dozen small plums', 'twelve ripe plums', '36 small meadow plots': what is counted is the plural
                # after one or two words
                ahead = next((k for k in (1, 2) if j + k < len(words) and re.fullmatch(r"[a-z]{3,}s", words[j + k])
                              and all(re.fullmatch(r"[a-z]{3,}", w) and w not in _NOT_NOUNS
                                      for w in words[j + 1:j + k + 1])), None)
                if value > 1 and not words[j].endswith("s") and ahead:
                    j += ahead
                noun = _MONTH_ABBR.get(words[j], _singular(words[j]))  # '7 Feb' is '7 February'
        part_of_day = _part_of_day(words, j)
        if unit is None and noun is None and 0 < value <= 12 and value == int(value) and part_of_day:
            unit, meridiem = CLOCK[0], part_of_day  # 'two in the afternoon'
        shown = " ".join(words[i:j]) + (f" {words[j]}" if noun else "")
        out.append(Quantity(value, unit, value * factor, noun, approx, shown, meridiem))
        i = j
    text = " ".join(words)
    return _one_span(_with_pence(_hours_of_a_range(out, text), text), text)


def _phone_number(words: list[str], i: int) -> tuple[str, int] | None:
    """A telephone number at ``words[i]`` ('07700 451 203', '0345 210 7788', '01924 557310'): groups of digits, the
    first starting with 0, ten or eleven digits in all. (its digits, the index after it)"""
    if not re.fullmatch(r"0\d{2,10}", words[i]):
        return None
    digits, j = words[i], i + 1
    while len(digits) < 10 and j < len(words) and re.fullmatch(r"\d{2,8}", words[j]):
        digits, j = digits + words[j], j + 1
    return (digits, j) if len(digits) in (10, 11) else None


def _pronoun_one(words: list[str], i: int) -> bool:
    """'one' standing for a thing named before: after 'the', 'this', 'that', 'which', 'each', 'another', or after
    'the' and a word ('the cheaper one', 'the red ones'), and not before a number or a noun it counts."""
    after = words[i + 1] if i + 1 < len(words) else ""
    if after and (re.fullmatch(r"[a-z]{3,}", after) and after not in _NOT_NOUNS | {"that", "which", "who", "is",
                                                                                  "was", "will"}
                  or is_number_word(after)):
        return False
    before = words[i - 1] if i else ""
    return before in ("the", "this", "that", "which", "each", "another", "other") or (
        i >= 2 and words[i - 2] in ("the", "this", "that") and re.fullmatch(r"[a-z]{3,}", before) is not None)


SMALL_CHANGE = {"pound": "penny", "dollar": "cent", "euro": "cent"}
RANGE_WORDS = ("to", "until", "till", "-", "–")


def _in_24h_range(words: list[str], i: int) -> bool:
    """Is the four-digit number at i one end of a range whose other end is on the 24-hour clock ('0830 to 1730')?"""
    def clock(w: str) -> bool:
        return re.fullmatch(r"0\d[0-5]\d", w) is not None

    return (i >= 2 and words[i - 1] in RANGE_WORDS and clock(words[i - 2])) or (
        i + 2 < len(words) and words[i + 1] in RANGE_WORDS and clock(words[i + 2]))


def _with_pence(found: list[Quantity], text: str) -> list[Quantity]:
    """'eighty-two pounds and twenty-five pence' is one sum, £82.25; so is 'eighteen pounds ninety'."""
    out: list[Quantity] = []
    for x in found:
        last = out[-1] if out and out[-1].value == int(out[-1].value) else None  # not twice: '£3.20 and 4p'
        pence = last is not None and x.dim is not None and SMALL_CHANGE.get(last.dim) == x.dim
        spoken = last is not None and last.dim in SMALL_CHANGE and x.dim is None and x.noun is None \
            and x.value == int(x.value)  # 'eighteen pounds ninety'
        if (pence or spoken) and x.value < 100 \
                and re.search(rf"(?<!\S){re.escape(last.text)} (?:, )?(?:and )?{re.escape(x.text)}"
                              + (r"\s*(?:[.,;:!?)]|$|(?:a|an|per|each|every|for)\b)" if spoken else ""), text):
            out[-1] = replace(last, value=last.value + x.value / 100, base=last.base + x.value / 100,
                              text=f"{last.text} and {x.text}")
        else:
            out.append(x)
    return out


def _one_span(found: list[Quantity], text: str) -> list[Quantity]:
    """'3 hours 2 minutes', '2 hours and 15 minutes': one span of time, each unit smaller than the one before."""
    out: list[Quantity] = []
    for x in found:
        last = out[-1] if out else None
        if last is not None and x.dim == last.dim == "s" and last.value and x.value \
                and last.base / last.value > x.base / x.value \
                and re.search(rf"(?<!\S){re.escape(last.text)} (?:and )?{re.escape(x.text)}(?!\S)", text):
            unit = last.base / last.value
            out[-1] = replace(last, value=(last.base + x.base) / unit, base=last.base + x.base,
                              text=f"{last.text} {x.text}")
        else:
            out.append(x)
    return out


def _hours_of_a_range(found: list[Quantity], text: str) -> list[Quantity]:
    """'between 3 and 6 in the afternoon': the first number of a range of hours is an hour of that part of day too."""
    for k in range(len(found) - 1):
        a, b = found[k], found[k + 1]
        if a.dim is None and a.noun is None and a.value == int(a.value) and 1 <= a.value <= 12 \
                and b.dim == CLOCK[0] and b.meridiem \
                and re.search(rf"\b{re.escape(a.text)} (?:and|to|-|–|till|until) (?:about |around )?"
                              rf"{re.escape(b.text)}\b", text):
            found[k] = replace(a, dim=CLOCK[0], base=None, meridiem=b.meridiem)
    return found


def _fraction_of(words: list[str], i: int) -> tuple[float, str, float, int] | None:
    """A fraction of a unit or of a dozen from i: (value, unit, factor to the base unit, end)."""
    j = i + 1 if words[i] in ("a", "an", "one") and i + 1 < len(words) and words[i + 1] in FRACTIONS else i
    if words[j] not in FRACTIONS or words[j] in ("halves", "thirds", "quarters"):
        return None
    fraction, k = FRACTIONS[words[j]], j + 1
    if k < len(words) and words[k] == "of":
        k += 1
    if k + 1 < len(words) and words[k] == "-" and words[k + 1] in UNITS:  # 'a half-day shift'
        unit, factor = UNITS[words[k + 1]]
        return fraction, unit, factor, k + 2
    if k + 1 < len(words) and words[k] in ("a", "an") and words[k + 1] in SCALES:  # 'a quarter of a million litres'
        value, m = fraction * SCALES[words[k + 1]], k + 2
        if m < len(words) and words[m] in UNITS:
            unit, factor = UNITS[words[m]]
            return value, unit, factor, m + 1
        return value, None, 1.0, m
    if k + 1 < len(words) and words[k] in ("a", "an") and (words[k + 1] in UNITS or words[k + 1] in MULTIPLES):
        what = words[k + 1]
        if what in MULTIPLES:
            return fraction * MULTIPLES[what], None, 1.0, k + 2
        unit, factor = UNITS[what]
        return fraction, unit, factor, k + 2
    # a bare 'half' ('half of the soup', 'half'): a share; 'a third' is read by the number rules
    if words[j] == "half" and j == i and (k >= len(words) or words[k] in ("of", "the", "it", "them")
                                           or not re.fullmatch(r"[a-z]+", words[k])):
        return fraction, "fraction", 1.0, k
    return None


PERIOD_WORDS = {"hourly": "hour", "daily": "day", "nightly": "night", "weekly": "week", "fortnightly": "fortnight",
                "monthly": "month", "yearly": "year", "annually": "year", "annual": "year"}
_PERIOD = re.compile(r"\b(?:(?:once|twice|thrice|times|\d[\d,.]*|[a-z]+s|pound|dollar|euro|penny|cent) "
                     r"(?:a|an|per|every|each)|per|every|each) (hour|day|night|week|fortnight|month|year)\b"
                     r"|\b(hourly|daily|nightly|weekly|fortnightly|monthly|yearly|annually|annual)\b")


def periods(text: str) -> dict[str, bool]:
    """The periods a rate is given per ('once a week', 'a pound a year', 'weekly' → week), each with whether it
    was said in one word ('weekly' means once a week)."""
    found: dict[str, bool] = {}
    for m in _PERIOD.finditer(text.lower()):
        period = m.group(1) or PERIOD_WORDS[m.group(2)]
        found[period] = found.get(period, False) or bool(m.group(2))
    return found


def first_loop(words: list[str], longest: int, copies) -> tuple[int, int] | None:
    """Where the earliest loop in the words starts, and its unit's length: a run of ``size`` words (1 … ``longest``)
    repeated back to back ``copies(size)`` times. None when the words do not loop."""
    found = None
    for size in range(1, longest + 1):
        n = copies(size)
        for i in range(len(words) - n * size + 1):
            if all(words[i:i + size] == words[i + k * size:i + (k + 1) * size] for k in range(1, n)):
                if found is None or i < found[0]:
                    found = (i, size)
                break
    return found


def is_degenerate(text: str) -> bool:
    """Does the answer loop — one phrase three times or more in a row ('a goat a goat a goat')?"""
    return first_loop(normalize_text(text).split(), 6, lambda size: 3) is not None


_NOT_NOUNS = {"and", "or", "of", "to", "in", "on", "at", "by", "for", "with", "from", "the", "a", "an", "than", "times",
              "more", "less", "years", "before", "after", "ago", "later", "earlier", "each", "per", "is", "was", "were",
              "are", "had", "has", "have", "did", "who", "which", "that", "but", "so", "as", "it", "they", "he", "she",
              "we", "you", "i", "again", "all", "other", "others", "out", "up", "down", "over", "into", "about",
              "until", "till", "through", "onwards", "then", "when", "while", "if", "because", "since", "not"}


def is_number_word(w: str) -> bool:
    return w in ONES or w in TENS or w in SCALES or w in ORDINALS or w in FRACTIONS or w in MULTIPLES


def _singular(w: str) -> str:
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


def _number_between(words: list[str], i: int, low: float, high: float) -> tuple[float, int] | None:
    """The number (digits or words) starting at i and where it ends, when it lies in [low, high]."""
    d = _digits(words[i])
    run = (d, i + 1) if d is not None else _number_word_run(words, i)
    return run if run and low <= run[0] <= high else None


def _after_a_time_word(words: list[str], i: int, out: list[Quantity]) -> bool:
    """'at 8.05', 'from 8.15', or 'till 9.30' after a time: a number with two decimals said as a clock time."""
    return i > 0 and (words[i - 1] in CLOCK_BEFORE
                      or (words[i - 1] in SPAN_TO and bool(out) and out[-1].dim == CLOCK[1]))


def _ends_a_time(words: list[str], i: int) -> bool:
    """Nothing after the number that it could count or price ('at 7.40.', 'at 8.15 sharp'; not 'at 2.50 per kilo')."""
    return i + 1 == len(words) or not re.match(r"\w", words[i + 1]) or words[i + 1] in AFTER_A_TIME


JOINING = {"and", "or", "to", "till", "until", "through", "-", "–", "—", "&"}  # not a comma: '9.30, 9:31 pm'
BESIDE_A_JOIN = {",", "from", "between", "before", "after", "at", "on", "the", "then", "£", "$", "€"}


def number_points(text: str, found: list[Quantity]) -> list[tuple[int, int, str | None, float]]:
    """The text's numbers (``found`` among its quantities) as points: (start, end, kind, value) in its words. A clock
    time is one point, in minutes of the day; an amount its value in the base unit."""
    words = " ".join(_words(text))
    points, pos = [], 0
    for k, x in enumerate(found):
        if x.dim == CLOCK[1]:
            continue
        at = words.find(x.text, pos)
        if not x.text or at < 0:
            return []
        pos = at + len(x.text)
        if x.dim == CLOCK[0]:
            minute = found[k + 1] if k + 1 < len(found) and found[k + 1].dim == CLOCK[1] else None
            hour = x.value + 12 if x.meridiem == "pm" and x.value < 12 else x.value
            kind = CLOCK[0] if x.meridiem or hour > 12 else "hour, am or pm"  # 'half past nine' is not 21:31
            points.append((at, pos, kind, hour * 60 + (minute.value if minute else 0)))
        else:
            points.append((at, pos, x.dim or x.noun, x.base if x.dim and x.base is not None else x.value))
    return points


def joined_pairs(text: str, found: list[Quantity]) -> list[tuple[float, float]]:
    """Two of the text's numbers said as a range or a list, the smaller first ('£3,200 to £4,100', '22:05 to 22:15',
    'Tuesday 15 and Thursday 17 October', 'before 8am or after 6pm'): nothing between them but joining words; a bare
    day ('15') joins a dated one ('17 October')."""
    words, points = " ".join(_words(text)), number_points(text, found)
    pairs = []
    for (_, end, kind, a), (start, _, kind2, b) in zip(points, points[1:]):
        between = set(words[end:start].split())
        if (kind == kind2 or (kind is None and kind2 in CLOSED_CLASSES["month"])) and a < b \
                and JOINING & between and between <= JOINING | BESIDE_A_JOIN | CLOSED_CLASSES["weekday"]:
            pairs.append((a, b))
    return pairs


def clocks_alike(xs: list[Quantity], ys: list[Quantity]) -> tuple[list[Quantity], list[Quantity]]:
    """Two answers' quantities, a bare '10.30' on one side read as a time where the other gives a clock time ('half
    past ten')."""
    hours = [any(x.dim == CLOCK[0] for x in found) for found in (xs, ys)]
    if hours[0] and not hours[1]:
        return xs, dotted_as_clock(ys)
    if hours[1] and not hours[0]:
        return dotted_as_clock(xs), ys
    return xs, ys


def dotted_as_clock(found: list[Quantity]) -> list[Quantity]:
    """A bare '10.30' read as half past ten: where another answer gives a clock time, a number with two decimals that
    could be one is one."""
    out = []
    for x in found:
        m = re.fullmatch(r"(\d{1,2})\.([0-5]\d)", x.text) if x.dim is None else None
        if m and int(m.group(1)) <= 23:
            out += [Quantity(float(m.group(1)), CLOCK[0], text=x.text),
                    Quantity(float(m.group(2)), CLOCK[1], text=x.text)]
        else:
            out.append(x)
    return out


def _part_of_day(words: list[str], j: int) -> str | None:
    """'in the morning' → am; 'in the afternoon', 'in the evening' → pm ('at night' can be either)."""
    if words[j:j + 3] == ["in", "the", "morning"]:
        return "am"
    if words[j:j + 3] in (["in", "the", "afternoon"], ["in", "the", "evening"]):
        return "pm"
    return None


def _clock_phrase(words: list[str], i: int) -> tuple[tuple[float, float], int] | None:
    """'half past eight' → (8, 30); 'quarter to midnight' → (11, 45); 'twenty to ten' → (9, 40)."""
    j, minutes = i, None
    if words[j] == "quarter" or (words[j] in ("a",) and j + 1 < len(words) and words[j + 1] == "quarter"):
        j += 1 if words[j] == "quarter" else 2
        minutes = 15.0
    elif words[j] == "half":
        minutes, j = 30.0, j + 1
    else:
        run = _number_between(words, j, 1, 30)
        if run is None:
            return None
        minutes, j = run
        if j < len(words) and words[j] in ("minute", "minutes"):
            j += 1
        elif minutes not in (5, 10, 20, 25):
            return None
    if words[i] == "half" and j < len(words) and words[j] not in ("past", "after", "an", "a", "of", "the"):
        run = _number_between(words, j, 1, 12)  # 'half six': half past six, as said in Britain
        if run is not None and (run[1] == len(words) or words[run[1]] in AFTER_HALF_SIX):
            return (run[0], 30.0), run[1]
    if j + 1 >= len(words) or words[j] not in ("past", "after", "to", "before", "til", "till"):
        return None
    rel, j = words[j], j + 1
    if words[j] in HOUR_WORDS:
        hour, j = float(HOUR_WORDS[words[j]]), j + 1
    else:
        run = _number_between(words, j, 1, 12)
        if run is None:
            return None
        hour, j = run
    if rel in ("to", "before", "til", "till"):
        hour, minutes = (hour - 1) or 12, 60 - minutes
    return (hour, minutes), j


# ---------------------------------------------------------------------------------------------
# closed classes: terms of one class exclude each other ("green" is not "red")

CLOSED_CLASSES = {
    "colour": {"red", "orange", "yellow", "green", "blue", "purple", "violet", "pink", "brown", "black", "white",
               "gray", "silver", "gold", "golden", "beige", "turquoise", "crimson", "scarlet", "navy", "amber", "cream",
               "ivory", "teal", "maroon", "olive", "lilac", "lavender", "mauve", "cyan", "magenta", "bronze", "copper",
               "tan", "khaki", "charcoal", "indigo", "emerald", "burgundy", "rust", "peach", "coral", "mustard"},
    "month": {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
              "november", "december"},
    "weekday": {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"},
    "season": {"spring", "summer", "autumn", "winter"},
    "direction": {"north", "south", "east", "west", "northern", "southern", "eastern", "western"},
    "time of day": {"morning", "afternoon", "evening"},
    "kin": {"brother", "sister", "cousin", "mother", "father", "son", "daughter", "uncle", "aunt", "grandmother",
            "grandfather", "wife", "husband", "niece", "nephew", "grandson", "granddaughter", "parent"},
}
SPELLING = {"grey": "gray", "mum": "mother", "mom": "mother", "mommy": "mother",
            "mummy": "mother", "dad": "father", "daddy": "father", "grandma": "grandmother", "granny": "grandmother",
            "nan": "grandmother", "grandpa": "grandfather", "grandad": "grandfather", "granddad": "grandfather",
            "auntie": "aunt", "aunty": "aunt", "bike": "bicycle", "kid": "child", "kids": "child", "mom's": "mother"}
_MONTH_ABBR = {"jan": "january", "feb": "february", "mar": "march", "apr": "april", "jun": "june", "jul": "july",
               "aug": "august", "sep": "september", "sept": "september", "oct": "october", "nov": "november",
               "dec": "december"}
_TERM_CLASS = {t: c for c, ts in CLOSED_CLASSES.items() for t in ts}


def normalize_word(w: str) -> str:
    """Lower case, one spelling for British/American variants and family words."""
    w = w.lower().replace("’", "'")
    w = SPELLING.get(w, w)
    if len(w) > 4 and w.endswith("our") and w not in ("flour", "detour", "contour", "amour", "devour"):
        w = w[:-3] + "or"  # colour → color, harbour → harbor
    m = re.search(r"[^aeiou](re)(s?)$", w)
    if len(w) > 4 and m and w.rstrip("s") not in ("acre", "genre", "ogre", "lucre", "massacre", "mediocre"):
        w = w[:m.start(1)] + "er" + m.group(2)  # metre → meter, theatres → theaters
    if len(w) > 5 and w.endswith("ise") and w[-4] not in "aeiou" and w not in ("exercise", "promise", "surprise", "expertise", "enterprise", "advertise", "premise", "otherwise", "noise", "praise", "raise", "cruise", "bruise", "wise"):
        w = w[:-3] + "ize"  # realise → realize
    return w


# ---------------------------------------------------------------------------------------------
# words

FUNCTION_POS = {"DET", "PRON", "AUX", "ADP", "CCONJ", "SCONJ", "PART", "PUNCT", "SYM", "SPACE", "INTJ", "X"}
LIGHT = {"be", "have", "do", "get", "make", "go", "say", "tell", "take", "come", "also", "just", "only", "very",
         "really", "then", "there", "here", "so", "too", "still", "even", "about", "around", "roughly", "nearly",
         "almost", "approximately", "some", "all", "each", "every", "both", "much", "many", "well", "actually",
         "exactly", "probably", "maybe", "perhaps", "yes", "no", "not", "never", "n't", "thing", "something",
         "anything", "everything", "nothing", "someone", "somebody", "anyone", "one", "way", "kind", "sort", "lot",
         "mr", "mrs", "ms", "miss", "dr", "mr.", "mrs.", "ms.", "dr.", "st", "st.", "sir", "called", "name", "named",
         "answer", "story", "text", "question", "because", "since", "course", "whole", "total"}
VAGUE = {"small", "little", "big", "large", "huge", "tiny", "old", "young", "new", "great", "good", "bad", "long",
         "short", "high", "low", "whole", "full", "real", "same", "other", "own", "certain", "main", "nice", "local",
         "nearby", "first", "last", "next", "only", "such", "very", "much", "many", "few", "several", "single"}
TITLES = {"mr", "mrs", "ms", "miss", "dr", "sir", "lord", "lady", "captain", "uncle", "aunt", "old", "young",
          "doctor", "professor", "prof", "coxswain", "councilwoman", "councilman", "mayor", "sergeant", "saint",
          "st", "king", "queen", "prince", "princess", "mister", "madam", "the", "little", "big"}
NEGATORS = {"not", "n't", "never", "no", "neither", "nor", "nobody", "nothing", "none", "nowhere", "without"}
YES = {"yes", "yeah", "yep", "yup", "yea", "aye", "sure", "correct", "right", "indeed", "absolutely", "certainly",
       "definitely", "true", "affirmative"}
NO = {"no", "nope", "nah", "not", "never", "negative", "false", "incorrect", "wrong"}
PROFORMS = {"do", "be", "have", "can", "could", "will", "would", "shall", "should", "may", "might", "must", "need"}
WH = ("what", "who", "whom", "whose", "where", "when", "why", "how", "which")
YES_NO_OPENERS = frozenset({"do", "does", "did", "is", "was", "are", "were", "has", "have", "had", "can", "could",
                            "will", "would", "should", "shall", "may", "might", "must", "am", "isn't", "wasn't",
                            "didn't", "doesn't", "don't", "aren't", "weren't"})
NUMERIC_QUESTION = re.compile(
    r"^\W*(?:and |so |but )?(?:(?:for|by|in|at|on|to|of|after|within|since|until|till|from) )?"
    r"(?:how (?:many|much|long|old|far|high|big|tall|"
    r"deep|heavy|fast|often|low|large|wide|small|early|late|soon)|what (?:time|year|age|date|percentage|number|"
    r"size|height|temperature|distance|speed|weight|price|mileage|length|depth|width)|when|which year|"
    r"in which year)\b")


PREVENTING = {"stop", "prevent", "avoid"}  # verbs whose verb complement does not happen
LACKING = {"shortage", "lack", "absence", "want", "dearth", "scarcity"}  # nouns whose 'of' or compound is not there


@dataclass
class Analysis:
    """One text, read once: the facts the judge compares."""

    text: str
    norm: str  # SQuAD-style normalised text
    lemmas: list[str] = field(default_factory=list)  # normalised lemmas of all alphabetic tokens, in order
    content: dict[str, float] = field(default_factory=dict)  # content lemma → weight (the syntactic root weighs more)
    nouns: set[str] = field(default_factory=set)  # lemmas of the common nouns
    entities: list[frozenset[str]] = field(default_factory=list)  # proper-name groups, titles dropped
    negated: set[str] = field(default_factory=set)  # lemmas a negation denies ('sell' in 'never to sell the farm')
    negated_scope: set[str] = field(default_factory=set)  # and the objects in its scope ('farm')
    has_negation: bool = False
    root: str = ""
    root_negated: bool = False
    root_complement: bool = False  # the root verb governs a clause or verb: 'They have to be over 11.'
    imperative: bool = False  # an order or a request: 'Ask at reception.', 'Please tell your host.'
    particles: dict[str, str] = field(default_factory=dict)  # a phrasal verb's particle → its verb: 'up' → 'hang'
    first_clause_negated: bool = False  # 'It didn't; it was second.'
    modifiers: dict[str, dict[str, set[str]]] = field(default_factory=dict)  # 'cake' → {'compound': {'lemon'}}
    # a noun's relative clause, its content words: 'person' → {'run', 'school'} in 'the person who runs the school'
    clauses: dict[str, set[str]] = field(default_factory=dict)
    lead: str | None = None  # 'yes' / 'no' when the answer starts with one
    unknown: bool = False
    quantities: list[Quantity] = field(default_factory=list)
    closed: dict[str, set[str]] = field(default_factory=dict)
    n_tokens: int = 0
    conjuncts: list[set[str]] = field(default_factory=list)  # 'lemon juice and mint' → [{lemon, juice}, {mint}]
    alternatives: list[set[str]] = field(default_factory=list)  # 'cumin or turmeric' → [{cumin}, {turmeric}]
    possessors: list[frozenset[str]] = field(default_factory=list)  # owners: 'Piet' in "Piet's brother"
    places: list[frozenset[str]] = field(default_factory=list)  # names after 'in', 'at', 'from' …: 'in Brno'
    described: list[frozenset[str]] = field(default_factory=list)  # names in a relative clause: "that Ruth planted"
    degenerate: bool = False
    # the subjects of its general statements, when it makes nothing else ('Gravel paths can get slippery in the
    # rain.', 'Great question! Conservators do careful work.'): talk about things in general, none of the story
    general: set[str] = field(default_factory=set)
    # per sentence, its subject when the sentence says what a common noun does or is and gives it no name ('The ward
    # sister is in charge of the ward.'); None for a sentence that names someone or is about something else
    unnamed_subjects: list[str | None] = field(default_factory=list)


def analyse(doc, text: str) -> Analysis:
    """Read a spaCy Doc of ``text``."""
    a = Analysis(text=text, norm=normalize_text(text), unknown=is_unknown(text), quantities=quantities(text),
                 degenerate=is_degenerate(text))
    tokens = [t for t in doc if not t.is_space]
    a.n_tokens = sum(1 for t in tokens if not t.is_punct)
    a.lemmas = [_lemma(t) for t in tokens if t.is_alpha]
    a.particles = {t.lower_: _lemma(t.head) for t in tokens if t.dep_ == "prt"}
    first = next((t for t in tokens if t.is_alpha), None)
    if first is not None:
        w = first.text.lower()
        nxt = tokens[tokens.index(first) + 1] if tokens.index(first) + 1 < len(tokens) else None
        standalone = nxt is None or nxt.is_punct or first.pos_ == "INTJ"
        if w in YES and standalone:
            a.lead = "yes"
        elif w in ("no", "nope", "nah") and (standalone or nxt.pos_ in ("PRON", "PROPN")):
            a.lead = "no"
        elif w in ("of",) and nxt is not None and nxt.text.lower() == "course":
            a.lead = "yes"
        elif w == "not" and nxt is not None and nxt.text.lower() in ("at", "really", "quite", "exactly"):
            a.lead = "no"
    closing = re.search(r"[,;:—–-]\s*(?:so|and so|which means|meaning)\s+(yes|no)\W*$", text.lower())
    if a.lead is None and closing:
        a.lead = closing.group(1)  # the reasons first: 'He said this is his last year, so no.'
    # content words, weighted: the head of the answer phrase counts double
    roots = [t for t in tokens if t.dep_ == "ROOT"]
    root = roots[0] if roots else None
    head_tokens = set()
    for r in roots:
        head_tokens.add(r.i)
        if r.pos_ in ("AUX",) or _lemma(r) in ("be", "have"):
            head_tokens.update(c.i for c in r.children if c.dep_ in ("attr", "acomp", "dobj", "oprd"))
    if root is not None:
        a.root = _lemma(root)
        a.root_complement = any(c.dep_ in ("xcomp", "ccomp") for c in root.children)
        a.imperative = root.tag_ == "VB" and not any(c.dep_ in ("nsubj", "nsubjpass", "aux") for c in root.children)
        a.root_negated = any(c.dep_ == "neg" for c in root.children) or any(
            c.dep_ == "neg" for aux in root.children if aux.dep_ in ("aux", "auxpass") for c in aux.children)
    for t in tokens:
        lem = _lemma(t)
        if not t.is_alpha or t.pos_ in FUNCTION_POS or lem in LIGHT or len(lem) < 2:
            continue
        if t.like_num or lem in ONES or lem in TENS or lem in ORDINALS or lem in SCALES:
            continue  # numbers are compared as quantities
        weight = 2.0 if t.i in head_tokens else 1.0
        if t.pos_ == "NOUN":
            a.nouns.add(lem)
        if t.pos_ == "PROPN":
            weight *= 1.5
        a.content[lem] = max(a.content.get(lem, 0.0), weight)
    # negation: 'never to sell' → sell; 'not pleased' → pleased; 'didn't open' → open; 'no rain' → rain
    for t in tokens:
        if t.dep_ == "neg" or t.lower_ in ("never", "nobody", "nothing", "none", "neither"):
            a.has_negation = True
            head = t.head
            a.negated.add(_lemma(head))
            # the predicate of a negated copula is negated too ('was not pleased'); the object is in the
            # negation's scope ('didn't own a phone') but not itself denied ('never sell the farm' ≠ no farm)
            a.negated.update(_lemma(c) for c in head.children if c.dep_ in ("acomp", "attr", "oprd"))
            a.negated_scope.update(_lemma(c) for c in head.children if c.dep_ in ("dobj", "xcomp"))
        elif t.lower_ == "no" and t.dep_ == "det":
            a.has_negation = True
            a.negated.add(_lemma(t.head))
        elif t.lower_ == "too" and t.dep_ == "advmod" and t.head.pos_ in ("ADJ", "ADV"):
            # 'too unclear to show what happened': what it is too much for does not happen
            near = [*t.head.children, *t.head.head.children]
            denied = [c for c in near if c.dep_ == "xcomp" and c.pos_ == "VERB" and c.i > t.head.i
                      and any(g.lower_ == "to" for g in c.children)]
            if denied:
                a.has_negation = True
                a.negated.update(_lemma(c) for c in denied)
        elif _lemma(t) == "lack" and t.pos_ == "VERB":
            # 'he lacked a trade permit': what is lacked is not there
            a.negated.update(_lemma(c) for c in t.children if c.dep_ == "dobj")
        elif _lemma(t) in LACKING and t.pos_ == "NOUN":
            # 'a crew shortage', 'a lack of staff': what is lacking is not there
            a.negated.update(_lemma(c) for c in t.children if c.dep_ in ("compound", "amod") and c.pos_ == "NOUN")
            a.negated.update(_lemma(g) for c in t.children if c.dep_ == "prep" and c.lower_ == "of"
                             for g in c.children if g.dep_ == "pobj")
        elif _lemma(t) in PREVENTING and t.pos_ == "VERB":
            # what a verb of preventing governs does not happen: 'to stop her licking her stitches'
            a.negated.update(_lemma(c) for c in t.subtree if c.pos_ == "VERB" and c.i > t.i
                             and c.dep_ in ("xcomp", "ccomp", "pcomp", "advcl", "dobj"))
    a.negated_scope |= a.negated
    for t in tokens:
        if t.is_punct and t.text in (";", ",", ".", ":", "—", "-") and t.i > 0:
            break
        if t.dep_ == "neg" or t.lower_ in ("never", "nobody", "nothing", "none", "neither"):
            a.first_clause_negated = True
            break
    for t in tokens:
        if t.pos_ == "NOUN" and t.is_alpha:  # common nouns: a name's parts are not modifiers
            for m in t.children:
                hyphened = m.i + 1 < len(doc) and doc[m.i + 1].text == "-"  # 'see' in 'see-through'
                if m.dep_ in ("amod", "compound", "nmod") and m.is_alpha and _lemma(m) not in VAGUE \
                        and m.pos_ not in ("NUM", "DET", "PRON") and not hyphened:
                    kind = "amod" if m.dep_ == "amod" else "compound"  # an adjective replaces an adjective
                    a.modifiers.setdefault(_lemma(t), {}).setdefault(kind, set()).add(_lemma(m))
        if t.pos_ in ("NOUN", "PRON"):  # 'the person who runs the school', 'someone who works there'
            for m in t.children:
                if m.dep_ in ("relcl", "acl"):
                    a.clauses.setdefault(_lemma(t), set()).update(
                        _lemma(x) for x in m.subtree if x.pos_ in ("NOUN", "VERB", "ADJ", "PROPN") and x.is_alpha
                        and _lemma(x) not in LIGHT)
    # proper-name groups
    group: list[str] = []
    in_clause = {x.i for t in tokens if t.dep_ == "relcl" for x in t.subtree}
    clause_group = True
    for t in tokens + [None]:
        # a name is capitalised: tagged PROPN, or a capitalised noun inside the sentence
        proper = t is not None and t.is_alpha and t.text[:1].isupper() and (
            t.pos_ == "PROPN" or (not t.is_sent_start and t.pos_ in ("NOUN", "ADJ")))
        if proper and _lemma(t) not in _TERM_CLASS:
            if t.lower_.rstrip(".") not in TITLES:
                group.append(t.lower_)
                clause_group = clause_group and t.i in in_clause
            continue
        if group and t is not None and t.text == "-" and not t.nbor(-1).whitespace_ and t.i + 1 < len(doc) \
                and not t.whitespace_ and doc[t.i + 1].text[:1].isupper():
            continue  # one name: 'Pellegrini-Shaw', 'Delacourt-Ng'
        if group:
            a.entities.append(frozenset(group))
            if clause_group:
                a.described.append(frozenset(group))
            if t is not None and t.text in ("'s", "’s", "'"):
                a.possessors.append(frozenset(group))
            last = t.nbor(-1) if t is not None else tokens[-1]
            if last.dep_ == "pobj" and last.head.lower_ in PLACE_PREPOSITIONS:
                a.places.append(frozenset(group))
            group, clause_group = [], True
    words = [t for t in tokens if t.is_alpha]
    if not a.entities and 0 < len(words) <= 4 and all(t.text[:1].isupper() for t in words) \
            and words[0].lower_ not in YES | NO | {"unknown", "none", "the", "a", "an"} \
            and not all(t.is_stop for t in words) \
            and not any(_lemma(t) in _TERM_CLASS for t in words):  # 'Lisbon', 'Porto': a name alone
        name = frozenset(t.lower_ for t in words if t.lower_.rstrip(".") not in TITLES)
        a.entities = [name] if name else []
    a.conjuncts, a.alternatives = _coordination(tokens, ("and", ",")), _coordination(tokens, ("or",))
    a.general = _general_subjects(doc)
    a.unnamed_subjects = [_unnamed_subject(sent) for sent in doc.sents if any(t.is_alpha for t in sent)]
    for w in a.lemmas + [normalize_word(x) for x in re.findall(r"[a-z]+", text.lower())]:
        w = _MONTH_ABBR.get(w, w)
        c = _TERM_CLASS.get(w)
        if c == "direction":
            w = w.removesuffix("ern")  # 'the northern tip' is 'the north end'
        if c and not (w in ("may", "march") and not _is_month_word(text, w)):  # 'may' and 'march' are verbs too
            a.closed.setdefault(c, set()).add(w)
    return a


GENERAL_MODALS = {"can", "may", "might", "should", "must"}  # not "could", "would", "will": what a story tells
FREQUENTLY = {"often", "always", "usually", "generally", "sometimes", "normally", "typically"}


def _general_subjects(doc) -> set[str]:
    """The subjects of the text's statements when every statement is general: a bare plural or mass noun with a
    verb in the present or a modal ('Birthday cards often have pictures inside!', 'Bread should always cool.');
    sentences without a verb ('Great question!') say nothing either way. Empty otherwise."""
    subjects = set()
    for sent in doc.sents:
        root = sent.root
        if not any(t.pos_ in ("VERB", "AUX") for t in sent):
            continue
        subject = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        modal = any(c.dep_ == "aux" and c.lower_ in GENERAL_MODALS for c in root.children)
        present = modal or root.tag_ in ("VBZ", "VBP") or any(
            c.dep_ in ("aux", "auxpass") and c.tag_ in ("VBZ", "VBP") for c in root.children)
        # a bare plural ('Birthday cards …'), or a mass noun with a modal or 'often' ('Bread should always cool.');
        # not a list ('Phones, drinks and sweets are not allowed.') nor a part ('Half of the charge is refunded.')
        bare = subject is not None and subject.pos_ == "NOUN" and not subject.ent_type_ and not any(
            c.dep_ in ("det", "poss", "nummod", "conj") or (c.dep_ == "prep" and c.lower_ == "of")
            for c in subject.children)
        often = modal or any(c.lower_ in FREQUENTLY for c in root.children)
        if subject is not None and _defines(root, subject):
            subjects.add(_lemma(subject))
            continue
        if not (bare and present and (subject.tag_ == "NNS" or often)):
            return set()
        subjects.add(_lemma(subject))
    return subjects


def _defines(root, subject) -> bool:
    """A definition: 'An antiseptic is a substance that stops germs.', 'A checkout is when a player finishes a leg.'
    (a thing of a kind, said of no particular one)."""
    def indefinite(t) -> bool:
        return any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in t.children)

    return root.lemma_ == "be" and root.tag_ == "VBZ" and subject.pos_ == "NOUN" and indefinite(subject) and any(
        (c.dep_ == "attr" and indefinite(c)) or (c.dep_ == "advcl" and any(m.lower_ == "when" for m in c.children))
        for c in root.children)


NAMING_DEPS = ("attr", "oprd", "acomp", "prep", "agent")  # where a sentence about a role gives the name of its holder


def _unnamed_subject(sent) -> str | None:
    """The lemma of the sentence's subject, a common noun, when nothing beside it or after the verb is a name: 'The
    social secretary organises the events.' → 'secretary'; not 'The secretary is Maud Abara.', 'The movers are from
    a firm called Swiftline.', 'The tech editor, Jo, …'."""
    root = sent.root
    verbless = root.pos_ == "NOUN" and not any(t.pos_ in ("VERB", "AUX") for t in sent)  # 'The volunteer coordinator.'
    subject = root if verbless else next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    if subject is None or not (subject.pos_ == "NOUN" and not subject.ent_type_ or _a_titled_role(subject)):
        return None
    beside = list(subject.children) if verbless else \
        [c for c in subject.children if c.dep_ in ("appos", "acl", "relcl")
         or (c.dep_ == "compound" and not _a_titled_role(subject))]  # 'Race' in 'The Race Secretary' names nobody
    after = [c for c in root.children if c.dep_ in NAMING_DEPS] + beside
    if any((t.pos_ == "PROPN" and t.ent_type_ not in ("DATE", "TIME")) or t.ent_type_ in ("PERSON", "ORG")
           for c in after for t in c.subtree):  # 'on Fridays' names nobody
        return None
    return _lemma(subject)


def _a_titled_role(t) -> bool:
    """A role said with capitals: a proper noun after 'the' that names no person ('the Race Secretary', 'the Head of
    Year'); a person's name takes no article."""
    return t.pos_ == "PROPN" and t.ent_type_ != "PERSON" and any(c.lower_ == "the" for c in t.children)


PLACE_PREPOSITIONS = {"in", "at", "near", "from", "into", "across", "around", "outside", "inside", "towards", "toward"}


def _coordination(tokens, words: tuple[str, ...]) -> list[set[str]]:
    """The content words of each member of the first coordination joined by these words ('and', 'or'); none
    when another conjunction also joins members ('a tube or a patch kit, and a pump')."""
    ccs = {t.lower_ for t in tokens if t.dep_ == "cc"}
    if not ccs & set(words) or ccs - set(words) - {"and", "or"} or (ccs & {"and", "or"}) - set(words):
        return []
    kinds = ("NOUN", "PROPN") if "and" in words else ("NOUN", "PROPN", "ADJ", "NUM", "VERB")  # 'cumin' read as a verb
    for t in tokens:
        if t.pos_ not in kinds or t.dep_ == "conj":
            continue
        members = [t]
        for m in members:  # conjuncts of conjuncts: 'pens, rulers and glue'
            members += [c for c in m.children if c.dep_ == "conj" and c.pos_ in kinds]
        if len(members) < 2:
            continue
        inside = [set(m.subtree) for m in members]
        out = []
        for k, m in enumerate(members):
            own = inside[k] - set().union(*(inside[x] for x in range(len(members)) if x != k and members[x] in
                                            inside[k]))
            out.append({_lemma(x) for x in own if x.is_alpha and x.pos_ not in FUNCTION_POS and _lemma(x) not in LIGHT
                        and not x.like_num and not is_number_word(x.lower_)})
        return [words for words in out if words]
    return []


def fold_accents(text: str) -> str:
    """'Castañeda' → 'Castaneda', 'Fähre' → 'Fahre': small models often drop the accents a story has."""
    if text.isascii():
        return text
    return "".join(ch for ch in unicodedata.normalize("NFD", text) if not unicodedata.combining(ch))


def normalize_text(text: str) -> str:
    """Lower case, no articles, punctuation dropped except inside numbers ('3.3', '3,800', '8:15')."""
    text = re.sub(r"(?<!\d)[^\w\s]|[^\w\s](?!\d)", " ", text.lower().replace("’", "'"))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def _is_month_word(text: str, month: str) -> bool:
    """'May'/'March' as a month: capitalised, and for 'May' (also a sentence-initial verb) next to a date."""
    name = month.capitalize()
    if not re.search(rf"\b{name}\b", text):
        return False
    return month == "march" or bool(re.search(
        rf"\b{name}\s+\d|\d(?:st|nd|rd|th)?\s+(?:of\s+)?{name}\b|\b(?i:in|of|last|next|early|late|mid|by|until|since) "
        rf"{name}\b|\b{name},? \d{{4}}|^\W*{name}\W*$", text))


def _lemma(t) -> str:
    lem = t.lemma_.lower() if t.lemma_ else t.lower_
    if t.pos_ == "PROPN":
        lem = t.lower_
    return normalize_word(lem)


@dataclass
class QuestionInfo:
    text: str
    content: set[str]
    lemmas: set[str]
    wh: str | None  # the question word, or None for a yes/no question
    yes_no: bool
    numeric: bool  # asks for a number, a time or a date
    verbs: set[str]  # the question's verbs (lemmas), for echo answers ("He did.") and "unopened"
    negated: set[str]
    past: bool  # asks about what happened ('What did the path turn into?', 'Who was there?')
    # the role whose holder the question asks to be named: 'sister' in 'Who is the ward sister on Ward 7?', 'agency'
    # in 'What is the name of the letting agency?'
    role: str | None = None
    described: set[str] = field(default_factory=set)  # verbs of its relative clauses: 'slip' in 'Was the passenger
    # who slipped hurt?', which an answer may echo without saying yes


def analyse_question(doc, text: str) -> QuestionInfo:
    tokens = [t for t in doc if t.is_alpha]
    words = [t.lower_ for t in tokens]
    first = words[0] if words else ""
    if first in ("and", "so", "but", "then", "or") and len(words) > 1:
        first = words[1]
    yes_no = first in YES_NO_OPENERS
    # a wh-word after the opening auxiliary begins a clause, not the question: 'Was the passenger who slipped hurt?'
    wh = None if yes_no else next((w for w in words[:4] if w in WH), None)
    lemmas = {_lemma(t) for t in tokens}
    content = {_lemma(t) for t in tokens if t.pos_ not in FUNCTION_POS and _lemma(t) not in LIGHT
               and t.lower_ not in WH}
    verbs = {_lemma(t) for t in tokens if t.pos_ == "VERB" or (t.pos_ == "ADJ" and t.dep_ in ("acomp", "ROOT"))}
    negated = {_lemma(t.head) for t in doc if t.dep_ == "neg"}
    numeric = bool(NUMERIC_QUESTION.search(text.lower()))
    past = any(t.tag_ == "VBD" for t in tokens)
    described = {_lemma(t) for c in doc if c.dep_ in ("relcl", "acl") for t in c.subtree if t.pos_ == "VERB"}
    return QuestionInfo(text, content, lemmas, wh, yes_no, numeric, verbs, negated, past, _role_asked(doc),
                        described)


def _role_asked(doc) -> str | None:
    """'Who is the ward sister?', "Who was Ada's landlord?", 'What is the name of the agency?' ask who holds a role
    (a common noun); not 'Who is Pemberton?', nor 'Who is the memorial for?' (another verb or a preposition)."""
    text = doc.text.lower()
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return None
    another_verb = any(t.pos_ == "VERB" or (t.pos_ == "ADP" and t.dep_ != "prep") for t in doc)
    stranded = any(t.dep_ == "prep" and not list(t.children) for t in doc)  # 'Who is the memorial for?'
    if re.match(r"\W*who (?:is|was|'s)\b", text) and _lemma(root) == "be" and not another_verb and not stranded:
        role = next((c for c in root.children if c.dep_ in ("nsubj", "attr") and c.lower_ != "who"), None)
    elif re.match(r"\W*what (?:is|was|'s) the name of\b", text):
        of = next(t for t in doc if t.lower_ == "of")
        role = next((c for c in of.children if c.dep_ == "pobj"), None)
    else:
        return None
    return _lemma(role) if role is not None and (role.pos_ == "NOUN" or _a_titled_role(role)) else None


SUFFIXES = ("s", "es", "ed", "d", "ing", "er", "ers", "or", "ors", "ian", "ians", "an", "ans", "ese", "ish", "al",
            "ally", "ly", "ic", "ical", "ness", "ment", "ments", "ion", "ions", "ation", "ations", "y", "ies", "ist",
            "ists", "ism", "e", "en", "ful", "less", "ity", "ive", "ery", "ry", "able")


def same_word(a: str, b: str) -> bool:
    """Equal lemmas, or one an inflection/derivation of the other ('nurse'/'nursing', 'wood'/'wooden')."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    stem = short[:-1] if short.endswith(("e", "y")) and len(short) > 4 else short
    if len(stem) < 4 or not long_.startswith(stem):
        return False
    return long_[len(stem):] in SUFFIXES


# ---------------------------------------------------------------------------------------------
# rates

_SECONDS = {"minute": 60, "hour": 3600, "day": 86400, "night": 86400, "week": 604800, "fortnight": 1209600,
            "month": 2629800, "year": 31557600}
_WEEKDAY = "|".join(sorted(CLOSED_CLASSES["weekday"]))
_UNIT = r"(minute|hour|day|night|week|fortnight|month|year)s?"
_K_PER = re.compile(r"\b(once|twice|thrice|(\w+) times) (?:a|an|per|each|every) " + _UNIT + r"\b")
_EVERY = re.compile(r"\bevery (?:(other|second|third|\w+) )?" + _UNIT + r"\b")
# 'four an hour', 'six buses per hour' (not a price: '£20 a day')
_N_PER = re.compile(r"(?<![£$€\d.,])\b([\w-]+) (?:([a-z]+) )?(?:a|an|per) " + _UNIT + r"\b")


def rate(text: str) -> float | None:
    """How many times per second an answer says a thing happens ('once a fortnight', 'every two weeks', 'twice
    weekly', 'daily'); None when it gives no rate."""
    t = text.lower()
    m = _K_PER.search(t)
    if m:
        k = MULTIPLES.get(m.group(1)) or _count(m.group(2))
        return k / _SECONDS[m.group(3)] if k else None
    m = _EVERY.search(t)
    if m:
        n = {"other": 2, "second": 2, "third": 3, None: 1}.get(m.group(1)) or _count(m.group(1))
        return 1 / (n * _SECONDS[m.group(2)]) if n else None
    if re.search(rf"\bevery (?:{_WEEKDAY})\b", t):
        return 1 / _SECONDS["week"]
    m = _N_PER.search(t)
    if m and _count(m.group(1)) and m.group(2) not in UNITS:  # not a measure: '20 pounds a day', '24 hours a day'
        return _count(m.group(1)) / _SECONDS[m.group(3)]
    m = re.search(r"\b(?:(once|twice|thrice) )?(" + "|".join(PERIOD_WORDS) + r")\b", t)
    if m:
        return MULTIPLES.get(m.group(1), 1) / _SECONDS[PERIOD_WORDS[m.group(2)]]
    return None


def _count(word: str | None) -> float | None:
    found = quantities(word) if word else []
    return found[0].value if len(found) == 1 and found[0].dim is None else None
