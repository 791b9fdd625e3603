"""What the numbers and names of a report mean, from the registries (each method's and relation's own text) and
the metrics' definitions: the dashboard's help texts and the HTML report's "how to read this"."""

from __future__ import annotations

from mortar.methods import methods
from mortar.relations import RELATIONS
from mortar.vocab import L1, L2, L3, OPERATOR_TEXT, RBT, TRUE_POSITIVE_BELOW


def glossary() -> dict[str, str]:
    """Every method's and relation's own text (so a registered one is explained too), and the metrics'."""
    entries = {m.label: m.text for m in methods().values()}
    entries.update({name: r.text for name, r in RELATIONS.items()})
    entries.update({name: f"{name}, {text}." for name, text in OPERATOR_TEXT.items()})
    entries.update({
        "EC": "Equivalent context check: is the context before a perturbed question as informative for it as the "
              "original one? Three checks, OR-ed: semantic (the question resolves itself), ontology (the entities "
              "it needs from its context, Ḡ_j, are in the perturbed context), story (its pronoun has one referent "
              "in the story).",
        "NBugs": "NBugs: the number of bugs, i.e. violated checks (detections).",
        "RETC": "RETC: rate of effective test cases, the share of test cases with at least one bug.",
        "BPTC": "BPTC: bugs per test case, NBugs divided by the number of test cases.",
        "Rate+": "Rate+: the share of checks that are violated (bugs / checks made).",
        "CV": "CV: coefficient of variation (standard deviation / mean) of the L1/L2/L3 counts; lower means the "
              "bugs spread more evenly over the levels.",
        "PPD": "PPD: precision of positive detections, the share of labelled detections that are true bugs "
               f"(an annotator's acceptability score below {TRUE_POSITIVE_BELOW} of 10; adjudicated where "
               "annotators disagree).",
        "kappa": "Cohen's kappa: agreement of two annotators on true/false positive beyond chance "
                 "(1 perfect, 0 no better than chance).",
        L1: f"{L1}: the question is also answered wrongly in {RBT}.",
        L2: f"{L2}: answered correctly in {RBT}, in a seed where {RBT} found some other bug.",
        L3: f"{L3}: in a seed where {RBT} found no bug at all — bugs only metamorphic testing reveals.",
        "similarity": "Score of the two compared texts under the run's oracle (answer: what the answer says, "
                      "default ε 0.5; cosine of MiniLM embeddings or MSS, the paper's, ε 0.6); ε is the run's "
                      "threshold.",
    })
    return entries
