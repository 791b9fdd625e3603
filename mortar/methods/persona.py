"""The persona-centric metamorphic relations, on persona dialogues (the paper's setting: a persona, the partner's
persona, the partner's lines as the rounds) and on story-grounded dialogues (the story stands where the paper has
the persona). The dialogue's rounds are asked in the seed's order.

    P1 synonymous grounding: a persona dialogue's revised persona; else the story (or a persona without a revised
       one) rewritten sentence by sentence (synonyms of non-entity words, a sentence kept only while its embedding
       stays close) — the answers should stay the same;
    P2 the partner's persona instead of the speaker's (the paper's MR2): a reply that states a fact of the
       speaker's persona should change (P2-change), any other should stay (P2). On a story, an interference: an
       unrelated passage (another seed's, no shared named entity, low similarity) added — the answers should stay;
    P3 character-level swap noise (one adjacent pair swapped in every word) on the persona or story, the history
       (the earlier lines), the current line, line and history, or all three — the answers should stay the same.
       The paper finds noise on persona and context together roughly doubles the violations.

Each relation compares the answer in the version with the SUT's own answer to the seed as it is (ORIG), judged
with the run's oracle as two system answers (``relations.same_as_orig``): read for what each says to the question,
and a pair where neither answers is "no answer", reported apart, never a violation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mortar.dataset import TestCase, persona_text
from mortar.methods import Answered, Made, Making, Table, TestMethod, register_method
from mortar.methods.persona_transforms import (names_in, persona_fact, rewrite_story, swap_noise, synonymous_sentences,
                                               unrelated_passage)
from mortar.perturb import case_rng
from mortar.selection import select
from mortar.relations import DIRECTION, INVARIANCE, Check, Judging, Relation, register_relation, round_check, same_as_orig
from mortar.settings import setting
from mortar.sut.base import SCORES
from mortar.vocab import (EVERYWHERE, HISTORY, NOISE_KINDS, NOISE_LOCATIONS, P1, P2, P2_CHANGES, P3, PERSONA, PERSONA_METHOD,
                          PERSONA_PERTURBATIONS, PERSONA_RELATIONS, PERSONA_REWRITE_ABOVE, QUESTION,
                          QUESTION_AND_HISTORY, SEL, SELECTION_CANDIDATES, STORY)
from mortar import metrics


@dataclass(frozen=True)
class PersonaSettings:
    relations: tuple[str, ...] = setting(PERSONA_RELATIONS, "P1 synonymous story, P2 an unrelated passage added, P3 "
                                         f"swap noise (default: all of {' '.join(PERSONA_RELATIONS)})",
                                         label="persona relation", flag="--persona-relations",
                                         choices=PERSONA_RELATIONS, nonempty=True)
    noise_locations: tuple[str, ...] = setting(NOISE_LOCATIONS, "where P3's swap noise goes; 'both' = the question "
                                               "and the history together (default: all)", label="noise location",
                                               flag="--noise-locations", choices=NOISE_LOCATIONS)
    noise_names: bool = setting(True, "P3's noise also swaps letters in names; the flag --keep-names leaves names "
                                "as written", label="noise in names", flag="--keep-names", inverted_flag=True)
    rewrite_above: float = setting(PERSONA_REWRITE_ABOVE, "P1 keeps a rewritten sentence only this close (embedding "
                                   f"cosine) to the original (default {PERSONA_REWRITE_ABOVE})",
                                   label="P1 rewrite cosine", flag="--rewrite-above", between=(0.0, 1.0))
    selection: bool = setting(False, "also rank the gold answer among the dataset's candidates, or K distractors, by "
                              "the SUT's likelihood (hits@1, MRR; local SUTs and vLLM-style servers; --selection K, "
                              f"default {SELECTION_CANDIDATES})", label="selection",
                              flag="--selection", value_of="candidates")
    candidates: int = setting(SELECTION_CANDIDATES, "response selection: distractors ranked beside the gold answer "
                              f"where the dataset gives no candidates (default {SELECTION_CANDIDATES})", label="selection candidates",
                              flag="--selection-candidates", minimum=1)


def make_cases(making: Making) -> Made:
    from mortar.nlp import load_nlp  # spaCy: loaded only when the method runs

    settings: PersonaSettings = making.settings
    nlp, embeddings = load_nlp().nlp, making.oracle.embeddings
    cases, notes = [], []
    for seed in making.seeds:
        order = tuple(r.turn_id for r in seed.rounds)
        if P1 in settings.relations and seed.persona and seed.persona.revised:
            cases.append(TestCase(seed.id, P1, 1, order, story=persona_text(seed.persona.revised)))
        elif P1 in settings.relations:
            rng = case_rng(making.run_seed, seed.id, P1, 1)
            story = rewrite_story(seed.story, synonymous_sentences(seed.story, rng, nlp, embeddings,
                                                                   settings.rewrite_above))
            if story != seed.story:  # no sentence kept a rewrite: nothing to test
                cases.append(TestCase(seed.id, P1, 1, order, story=story))
        if P2 in settings.relations and seed.persona:
            if seed.persona.partner:  # the paper's MR2: the partner's persona instead of the speaker's
                cases.append(TestCase(seed.id, P2, 1, order, story=persona_text(seed.persona.partner)))
            else:
                notes.append(f"{P2}: no partner persona for seed {seed.id}")
        elif P2 in settings.relations:
            others = [s.story for s in making.pool if s.id != seed.id]
            passage = unrelated_passage(seed.story, others, case_rng(making.run_seed, seed.id, P2, 1), nlp, embeddings)
            if passage is None:
                notes.append(f"{P2}: no unrelated passage for seed {seed.id}")
            else:
                cases.append(TestCase(seed.id, P2, 1, order, story=f"{seed.story}\n\n{passage}"))
        if P3 in settings.relations:
            cases += _noise_cases(seed, order, making.run_seed, settings, nlp)
    return Made(cases, notes=tuple(notes))


def _noise_cases(seed, order, run_seed: int, settings: PersonaSettings, nlp) -> list[TestCase]:
    """P3 by location: the noisy story with every round; per round j, the noisy question j, the noisy
    earlier questions, both, or both with the noisy story. A question's noise is the same wherever it is asked (one generator per
    seed round), so the cases share their noisy prefixes in the executor's tree."""
    protected = frozenset() if settings.noise_names else names_in(nlp(seed.story))
    noisy = {r.turn_id: swap_noise(r.question, case_rng(run_seed, seed.id, P3, r.turn_id),
                                   protected | (frozenset() if settings.noise_names else names_in(nlp(r.question))))
             for r in seed.rounds}
    cases = []
    if STORY in settings.noise_locations:
        story = swap_noise(seed.story, case_rng(run_seed, seed.id, NOISE_KINDS[STORY], 0), protected)
        cases.append(TestCase(seed.id, NOISE_KINDS[STORY], 1, order, story=story))
    noisy_positions = {QUESTION: lambda j: (j,), HISTORY: lambda j: tuple(range(1, j)),
                       QUESTION_AND_HISTORY: lambda j: tuple(range(1, j + 1)),
                       EVERYWHERE: lambda j: tuple(range(1, j + 1))}
    for location in (QUESTION, HISTORY, QUESTION_AND_HISTORY, EVERYWHERE):
        if location not in settings.noise_locations:
            continue
        # the grounding's noise is the story location's, so "all" adds to it exactly the noisy question and history
        story = swap_noise(seed.story, case_rng(run_seed, seed.id, NOISE_KINDS[STORY], 0), protected) \
            if location == EVERYWHERE else None
        for j in range(1, len(order) + 1):
            positions = noisy_positions[location](j)
            if not positions:
                continue  # the first round has no history to make noisy
            cases.append(TestCase(seed.id, NOISE_KINDS[location], 1, order[:j], target_round=order[j - 1],
                                  replaced=tuple((p, noisy[order[p - 1]]) for p in positions), story=story))
    return cases


register_relation(Relation(
    P1, PERSONA, INVARIANCE, "P1, synonymous grounding: the story rewritten with synonyms (meaning kept) should "
    "get the same answers as the story itself.", same_as_orig(P1, (P1,))))
def depends_on_persona(seed, reply: str, oracle) -> int | None:
    """The sentence of the seed's persona that a reply states and the partner's persona does not (None: none, or
    not a persona dialogue with a partner): under the partner's persona such a reply should change."""
    if not (seed.persona and seed.persona.partner):
        return None
    return persona_fact(reply, seed.persona.sentences, seed.persona.partner, oracle.embeddings)


def partner_substitution(expect_change: bool):
    """P2 on a persona dialogue (the partner's persona instead of the speaker's), split by what the seed's reply
    says: a reply that states a persona fact (``depends_on_persona``) should change (P2-change: violated when the
    two replies agree, read by the answer oracle); any other reply should stay (P2, as the paper's MR2). On a story-grounded dialogue P2 is the invariance under an added passage."""
    name = P2_CHANGES if expect_change else P2
    invariance = same_as_orig(name, (P2,))

    def judge(j: Judging) -> list[Check]:
        if not (j.seed.persona and j.seed.persona.partner):
            return [] if expect_change else invariance(j)
        checks = []
        for c in invariance(j):
            fact = depends_on_persona(j.seed, c.text_b, j.oracle)  # text_b: the reply to the seed as it is
            if (fact is not None) != expect_change:
                continue
            if expect_change:  # violated where the two replies agree (the fact's topic may stay: "no pets here")
                c = replace(c, violated=not c.no_answer and not c.violated)
            checks.append(c)
        return checks
    return judge


register_relation(Relation(
    P2, PERSONA, INVARIANCE, "P2, interference: an unrelated passage added to the story, or on a persona dialogue the "
    "partner's persona instead of the speaker's, should not change the answers that do not state a persona fact.",
    partner_substitution(expect_change=False)))
register_relation(Relation(
    P2_CHANGES, PERSONA, DIRECTION, "P2-change, persona sensitivity: with the partner's persona instead of the "
    "speaker's, a reply that stated a fact of the speaker's persona should change.",
    partner_substitution(expect_change=True)))
register_relation(Relation(
    P3, PERSONA, INVARIANCE, "P3, character noise: one swapped letter pair per word in the story, the history, the "
    "question or both should not change the answers.", same_as_orig(P3, tuple(NOISE_KINDS.values()))))


def same_selection(j: Judging) -> list[Check]:
    """Response selection: the candidate the SUT's likelihood ranks first is the same in the version as in
    the seed (no threshold: the choice itself is compared)."""
    if not j.orig_cases or not j.selections:
        return []
    orig = j.orig_cases[0]
    first = {row["source_round"]: row["top"] for (tcid, _), row in j.selections.items() if tcid == orig.test_case_id}
    checks = []
    for case in j.cases:
        for (tcid, pos), row in j.selections.items():
            if tcid != case.test_case_id or row["source_round"] not in first:
                continue
            before = first[row["source_round"]]
            # under the partner's persona a candidate that states the speaker's persona should no longer be first
            change = case.perturbation == P2 and depends_on_persona(j.seed, before, j.oracle) is not None
            checks.append(round_check(SEL, j.seed.id, row["source_round"], case, pos, row["top"], before,
                                      float(row["top"] == before), None, (row["top"] == before) == change))
    return checks


register_relation(Relation(
    SEL, PERSONA, INVARIANCE, "SEL, response selection: among the gold answer and distractors, the SUT's "
    "likelihood should rank the same candidate first in every version as in the seed (no threshold); under the "
    "partner's persona, a first candidate that stated the speaker's persona should change.",
    same_selection))


def tables(checks, cases, verdicts, unknown, record: dict | None = None) -> list[Table]:

    return [Table("persona_versions", "Persona relations: violations per relation and per version (noise location)",
                  "P3's noise on the question and the history together is the paper's headline comparison.",
                  metrics.per_kind(checks, (P1, P2, P2_CHANGES, P3, SEL)))]


def check(settings: PersonaSettings) -> list[str]:
    return ["choose at least one noise location for P3"] if P3 in settings.relations and not settings.noise_locations \
        else []


def requires(settings: PersonaSettings) -> dict[str, str]:
    return {SCORES: "--selection"} if settings.selection else {}


def selection(answered: Answered) -> dict:
    """Response selection: the gold answer's rank among the candidates by the SUT's likelihood."""
    if not answered.settings.selection:
        return {}
    return select(answered.seeds, answered.cases, answered.answers, answered.sut, answered.pool,
                  answered.settings.candidates, answered.run_seed, answered.oracle, answered.threshold,
                  answered.progress)


register_method(TestMethod(
    name=PERSONA_METHOD, label=PERSONA, perturbations=PERSONA_PERTURBATIONS, relations=(P1, P2, P2_CHANGES, P3, SEL),
    text="Persona-centric relations on the story: synonymous story (P1), an unrelated passage added (P2), "
         "character swap noise on the story, history, question or both (P3); the answers should not change.",
    make_cases=make_cases, tables=tables, settings=PersonaSettings, config_key="persona", check=check,
    requires=requires, after_answers=selection))
