"""The knowledge-graph figure: the dialogue's graph around one question, what it needs, what the context holds."""

from __future__ import annotations

import html
import math

import plotly.graph_objects as go

from mortar.kg.model import DialogueGraph

NODE_KINDS = (  # legend name, colour — drawn in this order, later ones on top
    ("other entity of the dialogue", "#c9c4bb"),
    ("in the context so far", "#4c78a8"),
    ("stated by this question", "#e4a33b"),
    ("needed (Ḡ_j), in context", "#3a9a5b"),
    ("needed (Ḡ_j), missing", "#c8312b"),
)


def kg_figure(dg: DialogueGraph, turn_id: int, available: set[str], whole: bool = False) -> go.Figure:
    """The dialogue's knowledge graph around one question: what it needs, what the context offers.

    ``whole``: every entity of the dialogue; otherwise the question's own entities, what it needs and
    what the perturbed context holds at that point.
    """
    import networkx as nx

    rg = dg.round(turn_id)
    needed = set(rg.needed)
    stated = set(rg.question.names)
    graphs = [dg.graph] + [g for r in dg.rounds for g in (r.question, r.answer, r.decontextualised)]
    entities = {}
    for g in graphs:
        for e in g.entities:
            entities.setdefault(e.name, e)
    nodes = set(entities) if whole else (needed | stated | available | set(rg.decontextualised.names)) & set(entities)
    nodes |= needed  # a needed entity is drawn even when no graph names it as an entity
    edges = {}
    for g in graphs:
        for rel in g.relations:
            if rel.source in nodes and rel.target in nodes and rel.source != rel.target:
                edges.setdefault((rel.source, rel.target), rel.name)
    g = nx.Graph()
    g.add_nodes_from(sorted(nodes))
    g.add_edges_from(edges)
    pos = nx.spring_layout(g, seed=7, k=1.2 / math.sqrt(max(1, len(nodes)))) if nodes else {}

    def kind(name: str) -> str:
        if name in needed:
            return NODE_KINDS[3][0] if name in available else NODE_KINDS[4][0]
        if name in stated:
            return NODE_KINDS[2][0]
        if name in available:
            return NODE_KINDS[1][0]
        return NODE_KINDS[0][0]

    fig = go.Figure()
    ex, ey, mx, my, mtext = [], [], [], [], []
    for (a, b), name in edges.items():
        ex += [pos[a][0], pos[b][0], None]
        ey += [pos[a][1], pos[b][1], None]
        mx.append((pos[a][0] + pos[b][0]) / 2)
        my.append((pos[a][1] + pos[b][1]) / 2)
        mtext.append(html.escape(f"{a} —{name}→ {b}"))
    fig.add_trace(go.Scatter(x=ex, y=ey, mode="lines", line=dict(width=1, color="#9a958d"), hoverinfo="skip",
                             showlegend=False))
    fig.add_trace(go.Scatter(x=mx, y=my, mode="markers", marker=dict(size=6, color="rgba(0,0,0,0)"),
                             hovertext=mtext, hoverinfo="text", showlegend=False))
    for label, colour in NODE_KINDS:
        names = [n for n in sorted(nodes) if kind(n) == label]
        if not names:
            continue
        big = label.startswith("needed")
        fig.add_trace(go.Scatter(
            x=[pos[n][0] for n in names], y=[pos[n][1] for n in names], mode="markers+text", name=label,
            text=[html.escape(n) for n in names], textposition="top center",
            hovertext=[html.escape(f"{n} ({entities[n].type})" if n in entities and entities[n].type else n)
                       for n in names], hoverinfo="text",
            marker=dict(size=18 if big else 12, color=colour, line=dict(width=2 if big else 1, color="#1f1d1a"))))
    fig.update_layout(height=460, margin=dict(l=10, r=10, t=30, b=10), plot_bgcolor="#ffffff",
                      legend=dict(orientation="h", y=-0.05), hovermode="closest",
                      xaxis=dict(visible=False), yaxis=dict(visible=False),
                      title=dict(text=html.escape(f"Round {turn_id}: " + rg.decontextualised_question)[:120],
                                 font=dict(size=13)))
    return fig


