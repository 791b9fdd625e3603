"""The knowledge-graph figures of one round: the dialogue's entities and the relations between them, what the
question needs (Ḡ_j), and what the original and the perturbed context before it hold.

Both figures share one layout, so the same entity sits in the same place in each. The layout is computed in
pixels for labels of known size (``layout``) and the figures are drawn at that size, one plotted unit to a
pixel: no two labels, of entities or of relations, overlap.
"""

from __future__ import annotations

import html
from collections.abc import Hashable, Iterable

import numpy as np
import plotly.graph_objects as go

from mortar.kg.model import DialogueGraph

WIDTH = 460  # px: the drawing area of one figure (two sit side by side on the Inspector page)
NODE_FONT, EDGE_FONT = 12, 10  # px
CHAR_WIDTH = 0.6  # of the font size: a generous average width of a character
MARKER, BIG_MARKER = 12, 18  # px
PAD = 6  # px kept free between two labels
MAX_LABEL = 26  # characters of a label; longer names are cut (the hover shows them whole)
MARGIN = dict(l=10, r=10, t=36, b=10)
LEGEND_HEIGHT = 70  # px below the drawing for the legend
REPULSION, SPRING, GRAVITY = 0.3, 0.5, 0.3  # of the ideal distance; of a link's stretch; of the way to the centre

NOT_IN_CONTEXT = "not in this context"
IN_CONTEXT = "in this context"
STATED = "stated by this question"
NEEDED = "needed (Ḡ_j), in this context"
MISSING = "needed (Ḡ_j), missing here"
NODE_KINDS = (  # legend name, colour — drawn in this order, later ones on top
    (NOT_IN_CONTEXT, "#d6d1c9"),
    (IN_CONTEXT, "#4c78a8"),
    (STATED, "#e4a33b"),
    (NEEDED, "#3a9a5b"),
    (MISSING, "#c8312b"),
)


def text_size(text: str, font: int) -> tuple[float, float]:
    """Width and height in px that ``text`` takes at this font size (an upper estimate)."""
    return len(text) * font * CHAR_WIDTH + 4, font * 1.3


def _short(name: str, most: int = MAX_LABEL) -> str:
    return name if len(name) <= most else name[:most - 1] + "…"


def node_size(name: str) -> tuple[float, float]:
    """The box of an entity: its label above its marker."""
    w, h = text_size(_short(name), NODE_FONT)
    return max(w, BIG_MARKER), h + BIG_MARKER



def layout(sizes: dict[Hashable, tuple[float, float]], links: Iterable[tuple[Hashable, Hashable]],
           width: float = WIDTH, seed: int = 7, iterations: int = 250) -> dict[Hashable, tuple[float, float]]:
    """Centres (px, y up) for boxes of the given sizes, inside [0, width] across, no two boxes overlapping.

    A spring layout whose repulsion is measured between box edges rather than centres (a long label pushes
    harder), linked boxes pulled to a rest length that fits both; then overlapping boxes are pushed apart
    along the axis where they overlap least, and the picture is stretched vertically if that alone does not
    separate them. Deterministic: the start comes from ``seed``.
    """
    keys = list(sizes)
    n = len(keys)
    if n == 0:
        return {}
    half = np.array([sizes[k] for k in keys], dtype=float) / 2 + PAD / 2
    index = {k: i for i, k in enumerate(keys)}
    pairs = np.array([(index[a], index[b]) for a, b in links if a in index and b in index and a != b], dtype=int)
    pairs = pairs.reshape(-1, 2)
    area = float((4 * half[:, 0] * half[:, 1]).sum())
    height = max(2 * half[:, 1].max(), 2.5 * area / width)
    rng = np.random.default_rng(seed)
    pos = rng.uniform(0, 1, (n, 2)) * [width, height]
    radius = np.hypot(half[:, 0], half[:, 1])
    touching = 0.8 * (radius[:, None] + radius[None, :])
    ideal = REPULSION * np.sqrt(area / n)
    # positions as complex numbers (x + iy): the same forces in half the array operations
    z = pos[:, 0] + 1j * pos[:, 1]
    centre = complex(width / 2, height / 2)
    a, b = pairs[:, 0], pairs[:, 1]
    rest = radius[a] + radius[b]
    ends = np.zeros((n, len(pairs)))  # a link pulls its first box by +pull, its second by -pull
    ends[a, np.arange(len(pairs))] += 1
    ends[b, np.arange(len(pairs))] -= 1
    for step in range(iterations):
        d = z[:, None] - z[None, :]
        dist = np.abs(d) + 1e-9
        # repulsion, from box edge to box edge (a box's own term is 0: its offset from itself is)
        move = (d * (ideal ** 2 / np.maximum(dist - touching, 1.0) / dist)).sum(axis=1)
        if len(pairs):
            e = z[b] - z[a]
            length = np.abs(e) + 1e-9
            move += ends @ (e * ((length - rest) / length * SPRING))
        move += (centre - z) * GRAVITY  # gravity keeps unlinked entities near the others
        temperature = width / 8 * (1 - step / iterations) + 1
        norm = np.abs(move) + 1e-9
        z = z + move * (np.minimum(norm, temperature) / norm)
        z = np.clip(z.real, half[:, 0], width - half[:, 0]) + 1j * z.imag
    pos = np.stack([z.real, z.imag], axis=1)
    pos = _separate(pos, half, width)
    pos[:, 1] -= (pos[:, 1] - half[:, 1]).min()
    return {k: (float(x), float(y)) for k, (x, y) in zip(keys, pos)}


def _separate(pos: np.ndarray, half: np.ndarray, width: float, rounds: int = 5000) -> np.ndarray:
    """Push overlapping boxes apart until none overlaps; every 40 rounds while some still do, stretch the picture
    vertically by 10% (which in the end separates any two boxes at different heights)."""
    n = len(pos)
    pos = pos.copy()
    pos[:, 1] += np.arange(n) * 1e-3  # no two boxes at exactly the same height
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    for attempt in range(rounds):
        dx = pos[:, None, 0] - pos[None, :, 0]
        dy = pos[:, None, 1] - pos[None, :, 1]
        ox = half[:, None, 0] + half[None, :, 0] - np.abs(dx)
        oy = half[:, None, 1] + half[None, :, 1] - np.abs(dy)
        hit = (ox > 0) & (oy > 0) & upper
        if not hit.any():
            break
        across = hit & (ox < oy)  # each pair moves apart by half its overlap each, along its shorter overlap
        up = hit & ~across
        step_x = np.where(across, (ox / 2 + 0.5) * np.where(dx >= 0, 1, -1), 0)
        step_y = np.where(up, (oy / 2 + 0.5) * np.where(dy >= 0, 1, -1), 0)
        pos[:, 0] += step_x.sum(axis=1) - step_x.sum(axis=0)
        pos[:, 1] += step_y.sum(axis=1) - step_y.sum(axis=0)
        pos[:, 0] = np.clip(pos[:, 0], half[:, 0], width - half[:, 0])
        if attempt % 40 == 39:
            pos[:, 1] = pos[:, 1].mean() + (pos[:, 1] - pos[:, 1].mean()) * 1.1
    return pos


def _entities(dg: DialogueGraph) -> tuple[dict, dict]:
    """Every entity (by name) and relation of the dialogue's graphs (older stored graphs keep some relations
    in the round graphs only)."""
    graphs = [dg.graph] + [g for r in dg.rounds for g in (r.question, r.answer, r.decontextualised)]
    entities = {}
    for g in graphs:
        for e in g.entities:
            entities.setdefault(e.name, e)
    relations = dict.fromkeys(rel for g in graphs for rel in g.relations)
    return entities, relations


def kg_figures(dg: DialogueGraph, turn_id: int, original: set[str], perturbed: set[str], whole: bool = False,
               width: int = WIDTH) -> tuple[go.Figure, go.Figure]:
    """Round ``turn_id``'s knowledge graph twice, in one layout: coloured by the original context (the seed's
    rounds before it, ``original``: entity names) and by the perturbed one (``perturbed``).

    Shown: what the question states and needs (Ḡ_j) and the entities the dialogue relates to those;
    ``whole``: every entity of the dialogue.
    """
    rg = dg.round(turn_id)
    needed, stated = set(rg.needed), set(rg.question.names)
    entities, relations = _entities(dg)
    focus = needed | stated | set(rg.decontextualised.names)
    if whole:
        nodes = set(entities)
    else:  # the question's entities and what the dialogue relates to them
        nodes = (focus | {n for rel in relations if {rel.source, rel.target} & focus
                          for n in (rel.source, rel.target)}) & set(entities)
    nodes |= needed  # a needed entity is drawn even when no graph names it as an entity
    edges: dict[tuple[str, str], list[str]] = {}
    for rel in relations:
        if rel.source in nodes and rel.target in nodes and rel.source != rel.target:
            key = (rel.source, rel.target) if (rel.target, rel.source) not in edges else (rel.target, rel.source)
            names = edges.setdefault(key, [])
            if rel.name not in names:
                names.append(rel.name)
    edge_text = {key: _short(" / ".join(names)) for key, names in edges.items()}
    sizes: dict[Hashable, tuple[float, float]] = {n: node_size(n) for n in sorted(nodes)}
    sizes |= {("edge", a, b): text_size(t, EDGE_FONT) for (a, b), t in sorted(edge_text.items())}
    links = [(end, ("edge", a, b)) for a, b in sorted(edges) for end in (a, b)]
    pos = layout(sizes, links, width=width)
    missing = ", ".join(sorted(needed - perturbed))
    lacks = f" — lacks {missing}" if missing else ""
    return (_draw(pos, sizes, edges, edge_text, entities, needed, stated, original, width,
                  f"Round {turn_id} · original context"),
            _draw(pos, sizes, edges, edge_text, entities, needed, stated, perturbed, width,
                  html.escape(_short(f"Round {turn_id} · perturbed context{lacks}", 60))))


def kg_figure(dg: DialogueGraph, turn_id: int, available: set[str], whole: bool = False) -> go.Figure:
    """One context's figure (``available``: the entity names it holds before round ``turn_id``)."""
    return kg_figures(dg, turn_id, available, available, whole)[1]


def _draw(pos, sizes, edges, edge_text, entities, needed, stated, context, width, title) -> go.Figure:
    def kind(name: str) -> str:
        if name in needed:
            return NEEDED if name in context else MISSING
        if name in stated:
            return STATED
        return IN_CONTEXT if name in context else NOT_IN_CONTEXT

    def marker_y(name: str) -> float:  # the marker sits at the bottom of the entity's box, its label above
        return pos[name][1] - sizes[name][1] / 2 + BIG_MARKER / 2

    ex, ey, hx, hy, htext, notes = [], [], [], [], [], []
    for a, b in sorted(edges):
        mx, my = pos[("edge", a, b)]
        ex += [pos[a][0], mx, pos[b][0], None]
        ey += [marker_y(a), my, marker_y(b), None]
        hx.append(mx)
        hy.append(my)
        htext.append(html.escape(f"{a} —{' / '.join(edges[(a, b)])}→ {b}"))
        # the relation's label at the edge's midpoint, its arrow from there to the target (one annotation: plotly
        # writes an annotation's text at its arrow's tail)
        notes.append(dict(x=pos[b][0], y=marker_y(b), ax=mx, ay=my, axref="x", ayref="y", xref="x", yref="y",
                          showarrow=True, arrowhead=2, arrowsize=1, arrowwidth=1, arrowcolor="#9a958d",
                          standoff=BIG_MARKER / 2, text=html.escape(edge_text[(a, b)]),
                          font=dict(size=EDGE_FONT, color="#5f5a52"), bgcolor="rgba(255,255,255,0.9)", borderpad=0))
    # the traces and layout as plain dicts
    traces = [dict(type="scatter", x=ex, y=ey, mode="lines", line=dict(width=1, color="#b3ada3"), hoverinfo="skip",
                   showlegend=False),
              dict(type="scatter", x=hx, y=hy, mode="markers", marker=dict(size=10, color="rgba(0,0,0,0)"),
                   hovertext=htext, hoverinfo="text", showlegend=False)]
    names = [n for n in sizes if isinstance(n, str)]
    for label, colour in NODE_KINDS:
        chosen = [n for n in names if kind(n) == label]
        if not chosen:
            continue
        big = label in (NEEDED, MISSING)
        traces.append(dict(
            type="scatter", x=[pos[n][0] for n in chosen], y=[marker_y(n) for n in chosen], mode="markers+text",
            name=label, text=[html.escape(_short(n)) for n in chosen], textposition="top center",
            textfont=dict(size=NODE_FONT, color="#1f1d1a"),
            hovertext=[html.escape(f"{n} ({entities[n].type})" if n in entities and entities[n].type else n)
                       for n in chosen], hoverinfo="text",
            marker=dict(size=BIG_MARKER if big else MARKER, color=colour,
                        line=dict(width=2 if big else 1, color="#1f1d1a"))))
    height = max((pos[k][1] + sizes[k][1] / 2 for k in sizes), default=0) + 4
    layout = dict(
        width=width + MARGIN["l"] + MARGIN["r"], height=height + MARGIN["t"] + MARGIN["b"] + LEGEND_HEIGHT,
        autosize=False, margin=dict(MARGIN, b=MARGIN["b"] + LEGEND_HEIGHT), plot_bgcolor="#ffffff",
        hovermode="closest", legend=dict(orientation="h", y=0, yanchor="top", x=0),
        xaxis=dict(visible=False, range=[0, width], fixedrange=True),
        yaxis=dict(visible=False, range=[0, height], fixedrange=True),
        title=dict(text=title, font=dict(size=13), x=0, xanchor="left"), annotations=notes)
    # not validated again: the same dicts validate (tests/test_kg_edges.py), and validating the annotations (one per
    # relation) was most of the cost of opening a detection in the Inspector
    return go.Figure(data=traces, layout=layout, _validate=False)
