"""How connected the spaCy backend's knowledge graphs are: entity nodes and relation edges per seed graph.

The whole-dialogue graph of every seed (story, questions and answers), extracted with the real spaCy
pipeline the project is configured with. Target: at least as many relation edges as entity nodes on average
(edges/nodes ≥ 1), so that the Inspector's graph shows relations rather than isolated entities.

    python benchmarks/kg_edges.py [DATASET.json ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mortar.formats import load_dataset  # noqa: E402
from mortar.kg.spacy_backend import SpacyExtractor  # noqa: E402


def measure(path: Path, extractor: SpacyExtractor) -> dict:
    seeds = list(load_dataset(path).seeds)
    start = time.perf_counter()
    graphs = extractor.extract_many(seeds)
    seconds = time.perf_counter() - start
    rows, labels = [], Counter()
    for dg in graphs:
        g = dg.graph
        linked = {n for r in g.relations for n in (r.source, r.target)}
        rows.append((dg.seed_id, len(g.entities), len(g.relations), len(linked & g.names)))
        labels.update(r.name.split()[0] if r.name.split()[0] in ("is", "has", "of", "count", "not") else "verb"
                      for r in g.relations)
    nodes = sum(r[1] for r in rows) / len(rows)
    edges = sum(r[2] for r in rows) / len(rows)
    return {"dataset": path.name, "rows": rows, "mean_nodes": nodes, "mean_edges": edges,
            "edges_per_node": edges / nodes, "linked_share": sum(r[3] for r in rows) / sum(r[1] for r in rows),
            "labels": labels, "rounds_per_second": sum(len(s.rounds) for s in seeds) / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("datasets", nargs="*", type=Path, default=[ROOT / "data/sample_coqa.json"])
    args = parser.parse_args()
    extractor = SpacyExtractor()
    print(f"knowledge graphs: spaCy backend, {extractor.model}")
    for path in args.datasets:
        r = measure(path, extractor)
        print(f"\n{r['dataset']}: {len(r['rows'])} seeds")
        print(f"  {'seed':<12} {'nodes':>5} {'edges':>5} {'edges/nodes':>11}")
        for seed_id, nodes, edges, _ in r["rows"]:
            print(f"  {seed_id:<12} {nodes:>5} {edges:>5} {edges / max(1, nodes):>11.2f}")
        print(f"  mean nodes                    {r['mean_nodes']:.1f}")
        print(f"  mean edges                    {r['mean_edges']:.1f}")
        print(f"  edges/nodes (of the means)    {r['edges_per_node']:.2f}   (target ≥ 1)")
        print(f"  entities in some relation     {r['linked_share']:.1%}")
        total = sum(r["labels"].values())
        shares = ", ".join(f"{k} {v / total:.0%}" for k, v in r["labels"].most_common())
        print(f"  relation labels               {shares}")
        print(f"  extraction                    {r['rounds_per_second']:.1f} rounds/s (nlp.pipe, pipeline loaded once)")


if __name__ == "__main__":
    main()
