"""The words of the method: the one place that spells perturbation, relation, method and level names.

Everything else (the engine, the SQL of the store, the CLI, the dashboard) imports these names; a new
test method adds its words here and registers its roles (``mortar.methods``, ``mortar.relations``).
"""

from __future__ import annotations

# -- test cases ------------------------------------------------------------------------------------
ORIG = "ORIG"  # the seed as it is: the test case of reference-based testing (RBT)

# MORTAR's dialogue-level perturbations (paper §III-C)
DRS, DRR, DRD, DSR, DSD = "DRS", "DRR", "DRD", "DSR", "DSD"
DIALOGUE_PERTURBATIONS = (DRS, DRR, DRD, DSR, DSD)
PERTURBATION_TEXT = {
    DRS: "shuffle: a random permutation of all rounds",
    DRR: "reduction: drop max(1, floor(ratio·n)) random rounds, the rest keep their order",
    DRD: "duplication: insert a second copy of max(1, floor(ratio·n)) random rounds at random gaps",
    DSR: "shuffle of a reduction, DRS(DRR(Q))",
    DSD: "shuffle of a duplication, DRS(DRD(Q))",
}
REDUCE_RATIO = 0.3  # share of rounds DRR/DSR drop (paper §IV: 30%)
DUPLICATE_RATIO = 0.2  # share of rounds DRD/DSD repeat (paper §IV: 20%)
REDUCING = (DRR, DSR)
DUPLICATING = (DRD, DSD)

# METAL's single-turn perturbations of one question: synonym, added word, typos, leet
SYN, ADD, TYPO, LEET = "SYN", "ADD", "TYPO", "LEET"
QUESTION_PERTURBATIONS = (SYN, ADD, TYPO, LEET)
METAL_RATE = 0.2  # share of a question's words (characters for leet) METAL changes
METAL_REVERT_BELOW = 0.8  # the semantics-preserving constraint: embedding cosine to the original question

# DialTest's sentence transformation operators on one question: synonym replacement, back translation,
# word insertion; and the guides of its Gini-guided search (the random baseline spends the same budget)
SR, BT, WI = "SR", "BT", "WI"
DIALTEST_OPERATORS = (SR, BT, WI)
OPERATOR_TEXT = {
    SR: "synonym replacement: nouns, verbs and adjectives replaced by WordNet synonyms (never entities, numbers, "
        "wh-words)",
    BT: "back translation through Chinese, French or Spanish by the configured chat endpoint",
    WI: "word insertion: 1–3 words the local causal LM predicts at a random place (no wh-word, entity or negation)",
}
GINI, RANDOM = "gini", "random"
GUIDES = (GINI, RANDOM)
# White-box guidance on local SUTs: sensitivity by gradient (GRI) or by low-confidence alignment (WALI), and
# the test orders built on them (INITIAL: the order a run makes its test cases in; IDEAL: greedy, knowing the bugs)
GRI, WALI = "gri", "wali"
SENSITIVITIES = (GRI, WALI)
INITIAL, IDEAL = "initial", "ideal"
ORDERS = (GRI, WALI, GINI, RANDOM)
DIALTEST_KEEP_ABOVE = 0.8  # a transformed question is reverted below this embedding cosine to the original
GINI_TAU = 0.0  # Algorithm 1 keeps a mutant whose Gini impurity rises by more than this

# The persona-centric relations' test cases (there the grounding is a persona, here the story)
P1, P2, P3 = "P1", "P2", "P3"  # synonymous grounding, interference, character-level swap noise
STORY, HISTORY, QUESTION, QUESTION_AND_HISTORY = "story", "history", "question", "both"
EVERYWHERE = "all"  # the grounding (story or persona), the history and the question together: the paper's "both"
NOISE_LOCATIONS = (STORY, HISTORY, QUESTION, QUESTION_AND_HISTORY, EVERYWHERE)  # where P3's noise goes
NOISE_KINDS = {location: f"{P3}-{location}" for location in NOISE_LOCATIONS}  # P3's test cases, per location
PERSONA_PERTURBATIONS = (P1, P2, *NOISE_KINDS.values())
# What each persona version changes, in the persona paper's words (a persona dialogue's story is its persona)
PERSONA_VERSION_TEXT = {
    P1: "persona revised (story: synonyms)", P2: "partner's persona (story: a passage added)",
    NOISE_KINDS[STORY]: "noise in the persona or story", NOISE_KINDS[HISTORY]: "noise in the history",
    NOISE_KINDS[QUESTION]: "noise in the new line", NOISE_KINDS[QUESTION_AND_HISTORY]: "noise in the line and history",
    NOISE_KINDS[EVERYWHERE]: "noise in persona, line and history"}
PERSONA_REWRITE_ABOVE = 0.85  # P1 keeps a rewritten sentence only this close (embedding cosine) to the original
SELECTION_CANDIDATES = 9  # response selection: distractors ranked beside the gold answer

# -- relations -------------------------------------------------------------------------------------
RBT = "RBT"  # reference-based testing: the ORIG answer against the gold answer
MR1, MR2, MR3, MR4 = "MR1", "MR2", "MR3", "MR4"
MORTAR_RELATIONS = (MR1, MR2, MR3, MR4)
METAL = "METAL"  # the baseline's relation: a perturbed question's answer still matches the reference
P2_CHANGES = "P2-change"  # P2 on a persona dialogue where the seed's reply states a persona fact: it should change
PERSONA_RELATIONS = (P1, P2, P3)  # the answers stay the same under the version of grounding or context
DT_REF, DT_INV = "DT-REF", "DT-INV"  # DialTest: the transformed question's answer vs the reference / vs the seed's
DIALTEST_RELATIONS = (DT_REF, DT_INV)
# DialTest on an intent/slot dataset: the prediction against the gold labels, and against the seed's prediction
INTENT, SLOTS, DT_INTENT, DT_SLOTS = "INTENT", "SLOTS", "DT-INTENT", "DT-SLOTS"
SEL = "SEL"  # response selection: the candidate the SUT ranks first stays the same in every version

# -- methods ---------------------------------------------------------------------------------------
# A method has a name on the command line and a label in the report (the paper's "MT" for MORTAR).
MORTAR_METHOD, METAL_METHOD, DIALTEST_METHOD, PERSONA_METHOD = "mortar", "metal", "dialtest", "persona"
MT = "MT"
DIALTEST = "DialTest"
PERSONA = "PERSONA"  # the persona-centric relations' label in the report
BUILTIN_METHODS = (MORTAR_METHOD, METAL_METHOD, DIALTEST_METHOD, PERSONA_METHOD)  # in the order the report shows them
ALL_METHODS = "all"  # `--method all`: every registered method

# -- bug levels, relative to RBT -------------------------------------------------------------------
L1, L2, L3 = "L1", "L2", "L3"
LEVELS = (L1, L2, L3)
CRITICAL_SIMILARITY = 0.05  # a detection below this similarity is a critical bug (journal version, Fig. 7)
NO_LEVEL = "none"  # how filters name detections without a level (RBT's)
ALL = "all"  # a comparison's row over every relation or every level

# -- CI budgets (`--fail-on KEY[:SCOPE]>LIMIT`): what a budget limits --------------------------------
RATE, NBUGS, NEW = "RATE", "NBUGS", "NEW"  # Rate+; bugs; detections that are new against a baseline run
BUDGET_KEYS = (RATE, NBUGS, NEW, *LEVELS)  # a level (L1 …) limits the bugs of that level

# -- labelling (the paper's precision labelling) ---------------------------------------------------
SCORE_MIN, SCORE_MAX = 0, 10  # an annotator's acceptability score of a detection's SUT output
TRUE_POSITIVE_BELOW = 6  # a score below this marks the detection as a true positive (a real bug)


def is_true_positive(score: float) -> bool:
    return score < TRUE_POSITIVE_BELOW
