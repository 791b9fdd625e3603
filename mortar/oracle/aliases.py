"""Other names for the same thing, as data: demonyms ('Peruvian' → Peru) and abbreviations ('NYC').

The answer oracle writes every answer, reference and story with one name per thing before it compares
them, so "She's Peruvian" contains the gold "Peru" and "the UN" is "the United Nations". Countries also
form a closed class: an answer naming another country than the reference ('Chile' for 'Peru', 'Belgian'
for 'Dutch') names a different thing of the same type.
"""

from __future__ import annotations

import re
from functools import lru_cache

# country → its adjectives / demonyms (singular and plural forms that differ from the adjective)
DEMONYMS = {
    "Afghanistan": "Afghan Afghans", "Argentina": "Argentine Argentinian Argentinean Argentines Argentinians",
    "Australia": "Australian Australians", "Austria": "Austrian Austrians", "Bangladesh": "Bangladeshi Bangladeshis",
    "Belgium": "Belgian Belgians", "Bolivia": "Bolivian Bolivians", "Brazil": "Brazilian Brazilians",
    "Bulgaria": "Bulgarian Bulgarians", "Canada": "Canadian Canadians", "Chile": "Chilean Chileans",
    "China": "Chinese", "Colombia": "Colombian Colombians", "Croatia": "Croatian Croatians Croat Croats",
    "Cuba": "Cuban Cubans", "Czechia": "Czech Czechs", "Denmark": "Danish Dane Danes", "Ecuador": "Ecuadorian Ecuadorians",
    "Egypt": "Egyptian Egyptians", "England": "English Englishman Englishwoman", "Ethiopia": "Ethiopian Ethiopians",
    "Finland": "Finnish Finn Finns", "France": "French Frenchman Frenchwoman", "Germany": "German Germans",
    "Ghana": "Ghanaian Ghanaians", "Greece": "Greek Greeks", "Hungary": "Hungarian Hungarians",
    "Iceland": "Icelandic Icelander Icelanders", "India": "Indian Indians", "Indonesia": "Indonesian Indonesians",
    "Iran": "Iranian Iranians", "Iraq": "Iraqi Iraqis", "Ireland": "Irish Irishman Irishwoman", "Israel": "Israeli Israelis",
    "Italy": "Italian Italians", "Jamaica": "Jamaican Jamaicans", "Japan": "Japanese", "Kenya": "Kenyan Kenyans",
    "Korea": "Korean Koreans", "Lebanon": "Lebanese", "Mexico": "Mexican Mexicans", "Morocco": "Moroccan Moroccans",
    "Netherlands": "Dutch Dutchman Dutchwoman Holland", "New Zealand": "Zealander Zealanders",
    "Nigeria": "Nigerian Nigerians", "Norway": "Norwegian Norwegians", "Pakistan": "Pakistani Pakistanis",
    "Peru": "Peruvian Peruvians", "Philippines": "Filipino Filipinos Filipina Philippine", "Poland": "Polish Pole Poles",
    "Portugal": "Portuguese", "Romania": "Romanian Romanians", "Russia": "Russian Russians",
    "Scotland": "Scottish Scot Scots", "Senegal": "Senegalese", "Serbia": "Serbian Serbians Serb Serbs",
    "South Africa": "Africans", "Spain": "Spanish Spaniard Spaniards", "Sweden": "Swedish Swede Swedes",
    "Switzerland": "Swiss", "Syria": "Syrian Syrians", "Thailand": "Thai Thais",
    "Turkey": "Turkish Turk Turks Turkiye Türkiye",
    "Ukraine": "Ukrainian Ukrainians", "United Kingdom": "British Briton Britons Britain UK U.K. Brit Brits",
    "United States": "American Americans USA U.S.A. US U.S. America", "Venezuela": "Venezuelan Venezuelans",
    "Vietnam": "Vietnamese", "Wales": "Welsh Welshman Welshwoman",
}
# abbreviations and short names → the full name (upper case is matched exactly, so 'us' the pronoun stays)
ABBREVIATIONS = {
    "UN": "United Nations", "U.N.": "United Nations", "EU": "European Union", "E.U.": "European Union",
    "NYC": "New York City", "LA": "Los Angeles", "NASA": "NASA", "FBI": "Federal Bureau of Investigation",
    "NHS": "National Health Service", "FDNY": "New York City Fire Department",
    "NYPD": "New York City Police Department", "DC": "Washington", "D.C.": "Washington",
}
# names that need the words around them: 'the US' is a country only in capitals ('us' is a pronoun)
_CASE_SENSITIVE = {"US", "U.S.", "UK", "U.K.", "USA", "U.S.A.", "UN", "U.N.", "EU", "E.U.", "LA", "DC", "D.C."}


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, str], dict[str, str], re.Pattern, re.Pattern]:
    canonical: dict[str, str] = {}
    for country, names in DEMONYMS.items():
        for name in names.split():
            canonical[name] = country
    canonical.update(ABBREVIATIONS)
    exact = sorted((n for n in canonical if n in _CASE_SENSITIVE or not n.isalpha()), key=len, reverse=True)
    words = sorted((n for n in canonical if n not in exact), key=len, reverse=True)
    exact_re = re.compile(r"(?<![\w.])(" + "|".join(re.escape(n) for n in exact) + r")(?![\w])")
    words_re = re.compile(r"\b(" + "|".join(re.escape(n) for n in words) + r")\b", re.IGNORECASE)
    return canonical, {k.lower(): v for k, v in canonical.items()}, exact_re, words_re


@lru_cache(maxsize=65536)  # the same answers, references and stories come back check after check
def canonical_names(text: str) -> str:
    """The text with one name per thing: 'She's Peruvian' → "She's Peru", 'the NYC fire department' →
    'the New York City fire department'."""
    canonical, lower, exact_re, words_re = _table()
    text = exact_re.sub(lambda m: canonical[m.group(1)], text)
    return words_re.sub(lambda m: lower[m.group(1).lower()], text)


COUNTRIES = frozenset(c.lower() for c in DEMONYMS)


@lru_cache(maxsize=65536)
def countries(text: str) -> frozenset[str]:
    """The countries a canonical text names."""
    low = text.lower()
    return frozenset(c for c in COUNTRIES if re.search(rf"\b{re.escape(c)}\b", low))


_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")
_NAME_RUN = re.compile(r"\b[A-Z][\w'’-]*\.?(?:\s+(?:of|for|the|and|&)?\s*[A-Z][\w'’-]*)+")  # 'D. Mawhinney' is 'DM'
_SKIPPED = {"of", "for", "the", "and", "&"}


def with_acronyms(other: str, text: str) -> str:
    """The text with a name written out in full replaced by the acronym that ``other`` uses for it: 'the World
    Wildlife Fund' → 'the WWF' when the other text says 'WWF', 'British Broadcasting Corporation' → 'BBC'."""
    acronyms = set(_ACRONYM.findall(other))
    if not acronyms:
        return text

    def short(m):
        words = [w for w in m.group(0).split() if w.lower() not in _SKIPPED]
        initials = "".join(w[0] for w in words).upper()
        if initials in acronyms:
            return initials
        # the acronym may stop where 'for' or 'of' starts: 'World Wide Fund for Nature' is the 'WWF'
        head = re.split(r"\s+(?:of|for)\s+", m.group(0))[0]
        initials = "".join(w[0] for w in head.split() if w.lower() not in _SKIPPED).upper()
        return f"{initials}{m.group(0)[len(head):]}" if len(initials) >= 2 and initials in acronyms else m.group(0)

    return _NAME_RUN.sub(short, text)
