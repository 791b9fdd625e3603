"""Relations of the spaCy knowledge-graph backend (real pipeline, coreferee rules) and the Inspector's graph
figures: the triples hand-written sentences state, and a layout whose labels never overlap."""

import itertools

import pytest

from mortar.context import context_before
from mortar.dataset import Round, Seed
from mortar.kg.model import DialogueGraph
from mortar.kg.spacy_backend import SpacyExtractor
from mortar.ui.kg_figure import MISSING, NEEDED, WIDTH, kg_figures, layout, node_size, text_size

ANYTHING = (Round(1, "What happened?", "nothing"),)
SEEDS = (
    Seed("svo", "Mary Stone went to the store with her brother. Tom and Anna painted the fence and the gate. "
                "The cake was baked by Peter. The old farmer did not sell the cows.", ANYTHING),
    Seed("copular", "John Reed is a doctor. The night was cold and dark. Their grandmother, Hetty, lived in Leeds.",
         ANYTHING),
    Seed("possessive", "Mary's dog chased the cat of the neighbour. Otto has a red kite.", ANYTHING),
    Seed("coreference", "Lena Park bought a bike in May. She rode it to the lake every morning.", ANYTHING),
    Seed("rounds", "Otto Brandt lives in Larkmoor with his two sisters.", (
        Round(1, "Who lives in Larkmoor?", "Otto Brandt"),
        Round(2, "What did he fly on Sunday?", "a green kite"))),
)


@pytest.fixture(scope="module")
def graphs() -> dict[str, DialogueGraph]:
    return {dg.seed_id: dg for dg in SpacyExtractor().extract_many(list(SEEDS))}


def triples(dg: DialogueGraph) -> set[tuple[str, str, str]]:
    return {(r.source, r.name, r.target) for r in dg.graph.relations}


def test_subject_verb_object_with_prepositions_conjuncts_passives_and_negation(graphs):
    found = triples(graphs["svo"])
    assert {("mary stone", "go to", "store"), ("mary stone", "go with", "brother")} <= found
    # conjunct subjects and objects: every pair
    assert {(s, "paint", o) for s in ("tom", "anna") for o in ("fence", "gate")} <= found
    assert ("peter", "bake", "cake") in found  # the passive's agent is the subject
    assert ("cake", "bake", "peter") not in found
    assert ("farmer", "not sell", "cow") in found


def test_copular_relations_to_nouns_and_to_adjectives(graphs):
    found = triples(graphs["copular"])
    assert ("john reed", "is", "doctor") in found
    assert {("night", "is", "cold"), ("night", "is", "dark")} <= found
    assert ("hetty", "is", "grandmother") in found  # an apposition names the noun
    assert graphs["copular"].graph.names >= {"cold", "dark"}  # attribute values become nodes of the whole graph


def test_possessive_relations(graphs):
    found = triples(graphs["possessive"])
    assert {("mary", "has", "dog"), ("cat", "of", "neighbour"), ("otto", "has", "kite")} <= found
    assert ("dog", "chase", "cat") in found


def test_pronouns_resolve_to_their_entity(graphs):
    found = triples(graphs["coreference"])
    assert {("lena park", "ride", "bike"), ("lena park", "ride to", "lake")} <= found
    assert not any(n in ("she", "it") for t in found for n in (t[0], t[2]))
    # 'his two sisters': the possessive pronoun is Otto
    assert ("otto brandt", "has", "sister") in triples(graphs["rounds"])


def test_a_round_states_relations_with_its_pronoun_resolved_and_its_wh_word_answered(graphs):
    dg = graphs["rounds"]
    round2 = dg.round(2)
    assert round2.needed == {"otto brandt"}
    stated = {(r.source, r.name, r.target) for r in round2.decontextualised.relations}
    assert ("otto brandt", "fly on", "sunday") in stated
    assert ("otto brandt", "fly", "kite") in triples(dg)  # 'What did he fly?' — 'a green kite'


def test_graph_contract_every_relation_joins_entities_of_its_own_graph(graphs):
    # the context check compares entity sets only; a round's graph must not gain entities through its relations
    for dg in graphs.values():
        parts = [dg.graph] + [g for r in dg.rounds for g in (r.question, r.answer, r.decontextualised)]
        for g in parts:
            assert all(r.source in g.names and r.target in g.names for r in g.relations)
        assert DialogueGraph.from_json(dg.to_json()) == dg  # stored as JSON and read back unchanged


def overlapping(pos, sizes):
    for a, b in itertools.combinations(sizes, 2):
        (xa, ya), (wa, ha) = pos[a], sizes[a]
        (xb, yb), (wb, hb) = pos[b], sizes[b]
        if abs(xa - xb) < (wa + wb) / 2 and abs(ya - yb) < (ha + hb) / 2:
            yield a, b


def test_layout_of_a_12_node_graph_has_no_overlapping_labels():
    names = ["felix brindle", "otto", "kite", "grandmother hetty", "crowley hill", "amos pell", "frog", "king",
             "bamboo stick", "larkmoor village", "four o'clock", "red crown"]
    sizes = {n: node_size(n) for n in names}
    edges = [(names[i], names[(i * 5 + 1) % 12]) for i in range(12)] + [(names[0], n) for n in names[2:7]]
    sizes |= {("edge", a, b): text_size("went to", 10) for a, b in edges}  # the relation labels are boxes too
    links = [(end, ("edge", a, b)) for a, b in edges for end in (a, b)]
    pos = layout(sizes, links)
    assert set(pos) == set(sizes)
    assert list(overlapping(pos, sizes)) == []
    assert all(sizes[k][0] / 2 - 1e-6 <= x <= WIDTH - sizes[k][0] / 2 + 1e-6 for k, (x, _) in pos.items())
    assert layout(sizes, links) == pos  # deterministic


def test_figures_mark_what_the_question_needs_and_what_the_perturbed_context_lacks(graphs):
    dg = graphs["rounds"]
    original = context_before(dg, [(1, True)])  # the seed asked round 1 before round 2
    seed_fig, perturbed_fig = kg_figures(dg, 2, original, set())  # a perturbed dialogue that dropped round 1

    def nodes(fig, kind):
        return {t for trace in fig.data if trace.name == kind for t in trace.text}

    assert nodes(seed_fig, NEEDED) == {"otto brandt"} and not nodes(seed_fig, MISSING)
    assert nodes(perturbed_fig, MISSING) == {"otto brandt"} and not nodes(perturbed_fig, NEEDED)
    assert "lacks otto brandt" in perturbed_fig.layout.title.text
    for fig in (seed_fig, perturbed_fig):
        labels = {a.text for a in fig.layout.annotations}
        # relation labels at the edges' midpoints; two relations of one pair share its edge
        assert {"fly", "fly on", "live with / has"} <= labels
        # one plotted unit to a pixel, so the layout's label sizes hold on screen
        assert tuple(fig.layout.xaxis.range) == (0, WIDTH)
        assert fig.layout.width == WIDTH + fig.layout.margin.l + fig.layout.margin.r
    # the same layout in both: an entity sits in the same place
    where = [{t: (x, y) for trace in fig.data if trace.text for t, x, y in zip(trace.text, trace.x, trace.y)}
             for fig in (seed_fig, perturbed_fig)]
    assert where[0] == where[1] and "otto brandt" in where[0]


def test_the_figures_drawn_without_validation_are_valid_plotly_figures(graphs):
    """kg_figure skips plotly's validation (a private ``_validate`` argument): the same figure validated must come out
    equal, and plotly must still take that argument."""
    import plotly.graph_objects as go

    dg = graphs["rounds"]
    for fig in kg_figures(dg, 2, context_before(dg, [(1, True)]), set(), whole=True):
        spec = fig.to_dict()
        assert go.Figure(data=spec["data"], layout=spec["layout"]).to_dict() == spec  # raises on an invalid property
        assert not go.Figure(layout={"title": {"text": 1}}, _validate=False)._validate

