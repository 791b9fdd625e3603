"""Synonyms from the WordNet 3.0 database files, read directly (offline).

The files come from Debian's ``wordnet-base`` package (``/usr/share/wordnet``) or any folder named
by ``MORTAR_WORDNET`` holding ``index.{noun,verb,adj,adv}`` and ``data.{…}``. Format (wndb(5)):
an index line is ``lemma pos synset_cnt p_cnt [ptr…] sense_cnt tagsense_cnt offset…``; a data line,
found by its byte offset, is ``offset lex_filenum ss_type w_cnt word lex_id [word lex_id…] …``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

POS_FILES = {"NOUN": "noun", "VERB": "verb", "ADJ": "adj", "ADV": "adv"}
DEFAULT_DIRS = ("/usr/share/wordnet",)


class WordNetMissing(RuntimeError):
    pass


def wordnet_dir() -> Path:
    for candidate in filter(None, (os.environ.get("MORTAR_WORDNET"), *DEFAULT_DIRS)):
        path = Path(candidate)
        if (path / "index.noun").is_file() and (path / "data.noun").is_file():
            return path
    raise WordNetMissing("WordNet data not found: install Debian's wordnet-base (apt-get install wordnet-base) "
                         "or set MORTAR_WORDNET to a folder with WordNet 3.0's index.* and data.* files")


@lru_cache(maxsize=4)
def _index(pos: str) -> dict[str, tuple[int, ...]]:
    offsets = {}
    with open(wordnet_dir() / f"index.{pos}", encoding="utf-8") as f:
        for line in f:
            if line.startswith(" "):
                continue  # licence header
            parts = line.split()
            synset_cnt, p_cnt = int(parts[2]), int(parts[3])
            offsets[parts[0]] = tuple(int(o) for o in parts[6 + p_cnt:6 + p_cnt + synset_cnt])
    return offsets


def _synset_words(pos: str, offset: int) -> list[str]:
    with open(wordnet_dir() / f"data.{pos}", "rb") as f:
        f.seek(offset)
        parts = f.readline().decode("utf-8").split()
    count = int(parts[3], 16)
    return [parts[4 + 2 * k] for k in range(count)]


@lru_cache(maxsize=20000)
def synonyms(lemma: str, pos: str, senses: int | None = None) -> tuple[str, ...]:
    """Other words of the lemma's synsets, most frequent sense first (spaces for multi-word lemmas);
    ``senses``: only the most frequent ones (1: the first sense's words, the safest paraphrases)."""
    pos_file = POS_FILES.get(pos)
    if pos_file is None:
        return ()
    key = lemma.lower().replace(" ", "_")
    found: list[str] = []
    for offset in _index(pos_file).get(key, ())[:senses]:
        for word in _synset_words(pos_file, offset):
            word = word.split("(")[0]  # adjective markers such as "(a)"
            if word.lower() != key and word not in found:
                found.append(word)
    return tuple(w.replace("_", " ") for w in found)


def _synset_line(pos: str, offset: int) -> list[str]:
    with open(wordnet_dir() / f"data.{pos}", "rb") as f:
        f.seek(offset)
        return f.readline().decode("utf-8").split()


def _pointers(parts: list[str]) -> list[tuple[str, int, str, int, int]]:
    """A data line's pointers: (symbol, offset, pos letter, source word number, target word number)."""
    count = int(parts[3], 16)
    at = 4 + 2 * count
    out = []
    for k in range(int(parts[at])):
        symbol, offset, pos, st = parts[at + 1 + 4 * k: at + 5 + 4 * k]
        out.append((symbol, int(offset), pos, int(st[:2], 16), int(st[2:], 16)))
    return out


_POS_LETTER = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}


@lru_cache(maxsize=4)
def irregular_forms(pos: str) -> dict[str, tuple[str, ...]]:
    """A lemma → its irregular inflections, from WordNet's exception list (``noun.exc``: 'children child', 'feet
    foot'; ``verb.exc``: 'has have', 'went go')."""
    forms: dict[str, tuple[str, ...]] = {}
    with open(wordnet_dir() / f"{POS_FILES[pos]}.exc", encoding="utf-8") as f:
        for line in f:
            inflected, *lemmas = line.split()
            for lemma in lemmas:
                forms[lemma] = forms.get(lemma, ()) + (inflected,)
    return forms


def verb_frames(word: str, offset: int) -> frozenset[int]:
    """The sentence frames WordNet gives ``word`` in the verb synset at ``offset`` (wninput(5WN): 2 'Somebody ----s',
    8 'Somebody ----s something', 28 'Somebody ----s to INFINITIVE', …): the synset's frames for all its words and
    those for this word alone."""
    parts = _synset_line("verb", offset)
    words = [parts[4 + 2 * k].lower() for k in range(int(parts[3], 16))]
    at = 4 + 2 * len(words)
    at += 1 + 4 * int(parts[at])  # past the pointers
    own = words.index(word.lower().replace(" ", "_")) + 1 if word.lower().replace(" ", "_") in words else -1
    return frozenset(int(parts[at + 2 + 3 * k]) for k in range(int(parts[at]))
                     if int(parts[at + 3 + 3 * k], 16) in (0, own))


@lru_cache(maxsize=20000)
def antonyms(lemma: str, pos: str, senses: int | None = 2, clusters: bool = True) -> tuple[str, ...]:
    """Words of opposite meaning ('afraid' → 'unafraid', 'fearless'): WordNet's antonyms of the lemma's most
    frequent senses, with the words of their synsets and (``clusters``) of the adjective clusters around them."""
    pos_file = POS_FILES.get(pos)
    if pos_file is None:
        return ()
    key = lemma.lower().replace(" ", "_")
    found: list[str] = []
    for offset in _index(pos_file).get(key, ())[:senses]:
        parts = _synset_line(pos_file, offset)
        words = [parts[4 + 2 * k].split("(")[0].lower() for k in range(int(parts[3], 16))]
        for symbol, target, letter, source, _ in _pointers(parts):
            if symbol != "!" or (source and words[source - 1] != key):
                continue
            target_file = _POS_LETTER[letter]
            target_parts = _synset_line(target_file, target)
            around = [o for s, o, _, _, _ in _pointers(target_parts) if s == "&"] if clusters else []
            for o in [target] + around:
                for w in _synset_words(target_file, o):
                    w = w.split("(")[0].replace("_", " ")
                    if w.lower() != key and w not in found:
                        found.append(w)
    return tuple(found)


@lru_cache(maxsize=20000)
def _kinds(offset: int, depth: int) -> dict[int, int]:
    """The noun synset's hypernyms up to ``depth`` steps above it: offset → steps."""
    found: dict[int, int] = {}
    frontier = [offset]
    for step in range(1, depth + 1):
        frontier = [o for f in frontier for s, o, _, _, _ in _pointers(_synset_line("noun", f)) if s in ("@", "@i")]
        for o in frontier:
            found.setdefault(o, step)
    return found


@lru_cache(maxsize=20000)
def regions_of(name: str, depth: int = 3) -> frozenset[str]:
    """The places WordNet says a named place is part of, up to ``depth`` steps ('lima' → 'peru', 'south america' …;
    lower case); none for a word whose most frequent sense is no name."""
    offsets = _index("noun").get(name.lower().replace(" ", "_"), ())[:1]
    if not offsets or not _synset_words("noun", offsets[0])[0][:1].isupper():
        return frozenset()
    found: set[str] = set()
    frontier = list(offsets)
    for _ in range(depth):
        frontier = [o for f in frontier for s, o, _, _, _ in _pointers(_synset_line("noun", f)) if s == "#p"]
        found.update(w.lower().replace("_", " ") for o in frontier for w in _synset_words("noun", o))
    return frozenset(found)


@lru_cache(maxsize=20000)
def _first_sense_is_a(lemma: str, kinds: tuple[str, ...]) -> bool:
    """Is the noun's most frequent sense one of these kinds (WordNet noun lemmas), or a kind of one?"""
    index = _index("noun")
    roots = {o for w in kinds for o in index.get(w, ())[:1]}
    found = index.get(lemma.lower().replace(" ", "_"), ())
    return bool(found) and (found[0] in roots or bool(roots & _kinds(found[0], 12).keys()))


def names_an_agent(lemma: str) -> bool:
    """The noun's most frequent sense is a living thing or a social group ('fisherman', 'aunt', 'dog', 'police',
    'committee'): something that can be the answer to 'who'."""
    return _first_sense_is_a(lemma, ("organism", "social_group"))


def names_a_person(lemma: str) -> bool:
    """The noun's most frequent sense is a person ('nurse', 'volunteer', 'aunt'); not a group nor an animal."""
    return _first_sense_is_a(lemma, ("person",))


def names_a_place(lemma: str) -> bool:
    """The noun's most frequent sense is a location, a structure, a facility or a way ('car park', 'station',
    'kitchen', 'trail'): something that can be the answer to 'where'."""
    return _first_sense_is_a(lemma, ("location", "structure", "facility", "way", "geological_formation"))


@lru_cache(maxsize=20000)
def kind_in_common(a: str, b: str, depth: int = 2) -> str | None:
    """The nearest kind of thing two nouns name different members of ('room' for 'attic' and 'cellar', 'health
    professional' for 'nurse' and 'doctor'), by their most frequent senses; None when they share a sense (synonyms),
    when one is a kind of the other ('dog', 'animal'), or when no kind within ``depth`` steps holds both."""
    index = _index("noun")
    senses_a, senses_b = index.get(a.lower().replace(" ", "_"), ()), index.get(b.lower().replace(" ", "_"), ())
    if not senses_a or not senses_b or set(senses_a) & set(senses_b):
        return None
    up_a, up_b = _kinds(senses_a[0], depth), _kinds(senses_b[0], depth)
    if senses_a[0] in _kinds(senses_b[0], depth + 2) or senses_b[0] in _kinds(senses_a[0], depth + 2):
        return None
    common = sorted(up_a.keys() & up_b.keys(), key=lambda o: up_a[o] + up_b[o])
    return _synset_words("noun", common[0])[0].replace("_", " ") if common else None


def genus(lemma: str) -> frozenset[str]:
    """The words that open the definition of a noun's most frequent sense, up to what sets it apart from its kind:
    'field' for 'meadow' ('a field where grass or alfalfa are grown'), 'man' for 'postman'."""
    found = senses(lemma, "NOUN")
    if not found:
        return frozenset()
    head, *rest = re.split(r"([;,(]|\b(?:where|who|whom|which|that|of|for|with|in|on|at|from|to|by|used|"
                           r"consisting|especially|usually)\b)", found[0].gloss, maxsplit=1)
    if rest and rest[0] == "of":
        return frozenset()  # a relation, not a kind: 'aunt' is 'the sister of your father or mother'
    return frozenset(re.findall(r"[a-z]+", head.lower())) - {"a", "an", "the", "one", "any"}


@dataclass(frozen=True)
class Sense:
    """One synset of a word: its offset, its words (most typical first), its gloss with the examples, and the
    words of the synsets right above it (hypernyms), which a gloss often leaves out."""

    offset: int
    words: tuple[str, ...]
    gloss: str
    above: tuple[str, ...]


@lru_cache(maxsize=50000)
def _sense(pos_file: str, offset: int) -> Sense:
    parts = _synset_line(pos_file, offset)
    words = tuple(parts[4 + 2 * k].split("(")[0].replace("_", " ") for k in range(int(parts[3], 16)))
    above = tuple(w.split("(")[0].replace("_", " ") for s, o, letter, _, _ in _pointers(parts) if s in ("@", "@i")
                  for w in _synset_words(_POS_LETTER[letter], o))
    with open(wordnet_dir() / f"data.{pos_file}", "rb") as f:
        f.seek(offset)
        line = f.readline().decode("utf-8")
    return Sense(offset, words, line.split(" | ", 1)[1].strip() if " | " in line else "", above)


def senses(lemma: str, pos: str) -> tuple[Sense, ...]:
    """The lemma's synsets, most frequent first (WordNet's index order)."""
    pos_file = POS_FILES.get(pos)
    if pos_file is None:
        return ()
    return tuple(_sense(pos_file, o) for o in _index(pos_file).get(lemma.lower().replace(" ", "_"), ()))


def sense_rank(lemma: str, pos: str, offset: int) -> int | None:
    """Where the synset stands among the lemma's senses (0: its most frequent); None when it is not one of them."""
    pos_file = POS_FILES.get(pos)
    offsets = _index(pos_file).get(lemma.lower().replace(" ", "_"), ()) if pos_file else ()
    return offsets.index(offset) if offset in offsets else None


@lru_cache(maxsize=1)
def _tag_counts() -> dict[tuple[str, str], dict[int, int]]:
    """(lemma, pos file) → sense number → how often the sense was tagged in WordNet's semantic concordance
    (``cntlist.rev``: ``sense_key sense_number tag_cnt``); empty where the file is missing."""
    path = wordnet_dir() / "cntlist.rev"
    counts: dict[tuple[str, str], dict[int, int]] = {}
    if not path.is_file():
        return counts
    pos_of = {"1": "noun", "2": "verb", "3": "adj", "4": "adv", "5": "adj"}
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, number, count = line.split()
            lemma, rest = key.split("%", 1)
            counts.setdefault((lemma, pos_of[rest[0]]), {})[int(number)] = int(count)
    return counts


def pos_share(lemma: str, pos: str) -> float | None:
    """The share of the lemma's tagged uses, over all parts of speech, that are in ``pos`` ('minor' is a noun in 2
    of its 15); None when none was tagged."""
    key = lemma.lower().replace(" ", "_")
    counts = {p: sum(_tag_counts().get((key, p), {}).values()) for p in set(POS_FILES.values())}
    total = sum(counts.values())
    return counts[POS_FILES[pos]] / total if total and pos in POS_FILES else None


def sense_share(lemma: str, pos: str, rank: int) -> float | None:
    """The share of the lemma's tagged uses that are its sense at ``rank`` (0: most frequent); None when its
    senses were never tagged."""
    pos_file = POS_FILES.get(pos)
    counts = _tag_counts().get((lemma.lower().replace(" ", "_"), pos_file), {}) if pos_file else {}
    total = sum(counts.values())
    return counts.get(rank + 1, 0) / total if total else None
