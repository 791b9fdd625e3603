"""A run's report as one self-contained HTML file, for people who will not open the dashboard.

The summary and tables of ``mortar report`` (``reports.run_report``), the Metrics page's figures
(``mortar.figures``) with plotly.js embedded once, a few worked examples (the highest-level detection of
each relation, both dialogues and the two answers compared) and a glossary from the registries. It opens
offline: nothing is fetched. Every text from the dataset or the SUT is HTML-escaped.
"""

from __future__ import annotations

import math
from html import escape

import pandas as pd
from plotly.offline import get_plotlyjs

from mortar import figures, labels, store
from mortar import reports
from mortar.errors import InputError
from mortar.glossary import glossary
from mortar.methods import methods
from mortar.profiles import settings_lines
from mortar.study_report import metrics_matrix, study_report, wide
from mortar.vocab import LEVELS, ORIG, PERTURBATION_TEXT, RBT

EXAMPLES = 5  # worked examples: the highest-level detection of each relation, at most this many
METRIC_TERMS = ("NBugs", "RETC", "BPTC", "Rate+", "CV", "PPD", "kappa", *LEVELS, "EC", "similarity")
PLOTLY_CONFIG = {"displaylogo": False, "responsive": True}  # no logo: it links to plotly's site

STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; margin: 0 auto;
       max-width: 1180px; padding: 1.5rem 2rem 4rem; }
h1 { font-size: 1.7rem; margin-bottom: .2rem; } h2 { margin-top: 2.5rem; border-bottom: 2px solid #b5452b; }
h3 { margin: 1.6rem 0 .3rem; } .caption, .meta { color: #666; font-size: .9rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .88rem; }
th, td { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f3f0eb; } tr:nth-child(even) td { background: #fafafa; }
tr.hit td { background: #f6d5c8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
/* fixed tracks: a figure is drawn before the next one is parsed, so its width must not depend on them */
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 1rem; }
.compared { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; }
.compared div, .question { background: #f7f5f2; border-left: 4px solid #b5452b; padding: .4rem .7rem;
                           white-space: pre-wrap; margin-bottom: .5rem; }
.example { border: 1px solid #ddd; border-radius: 6px; padding: .2rem 1.2rem 1rem; margin: 1.2rem 0; }
.dialogues { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.3fr); gap: 1rem; }
.dialogues > div { overflow-x: auto; } .dialogues table { width: 100%; } td { overflow-wrap: break-word; }
dt { font-weight: 600; margin-top: .6rem; } dd { margin-left: 1.2rem; }
nav a { margin-right: 1rem; }
"""


def html_report(con, run_id: str) -> str:
    """The report of a stored run (``run_id`` as stored, not ``latest``) as one HTML document."""
    config = store.stored_config(con, run_id)  # an unknown run is bad input
    report = reports.run_report(con, run_id)
    if not any(m["detections"] for m in report["metrics"].values()):
        raise InputError(f"run {run_id} has no results yet (a `mortar generate` run, or one still in progress)")
    runs = store.read_runs(con)
    run = runs[runs["run_id"] == run_id].iloc[0]
    precision = labels.precision_by_method(con, run_id)
    priorities = reports.prioritisation(con, run_id)
    sections = [
        ("summary", "Summary", _summary(report)),
        ("tables", "Tables", _tables(report)),
        *([("compared", "Methods compared", _compared(report))] if "uniqueness" in report else []),
        *([("precision", "Precision of the labelled detections", _table(precision.to_dict("records")))]
          if not precision.empty else []),
        *([("prioritisation", "Test prioritisation", _prioritisation(priorities))] if priorities else []),
        ("examples", "Worked examples", _examples(con, run_id)),
        ("glossary", "How to read this", _glossary(report, con, run_id)),
    ]
    meta = {"SUT": config.sut_model, "dataset": run["dataset"], "oracle": f"{config.oracle} (ε = {config.threshold})",
            "context check": config.kg_model, "created": f"{run['created_at']:%Y-%m-%d %H:%M}", "status": run["status"]}
    meta_line = " · ".join(f"{escape(k)}: {escape(str(v))}" for k, v in meta.items())
    return _document(f"MORTAR report — run {run_id}", meta_line, settings_lines(config.raw.get("run_config")), sections)


def _document(title: str, meta_line: str, against_paper: list[str], sections: list[tuple[str, str, str]]) -> str:
    """One self-contained HTML page: the title, a meta line, how the settings differ from the paper's, a
    navigation bar and the (key, name, body) sections; plotly.js inline once, so it opens without a network."""
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{STYLE}</style>",
        "<script>window.PlotlyConfig = {MathJaxConfig: 'local'};</script>",
        f"<script>{get_plotlyjs()}</script>", "</head><body>",
        f"<h1>{escape(title)}</h1>",
        *([f'<p class="meta">{meta_line}</p>'] if meta_line else []),
        *([f'<p class="meta" id="against-paper">{"<br>".join(escape(line) for line in against_paper)}</p>']
          if against_paper else []),
        "<nav>" + "".join(f'<a href="#{key}">{escape(name)}</a>' for key, name, _ in sections) + "</nav>",
        *(f'<section id="{key}"><h2>{escape(name)}</h2>\n{body}</section>' for key, name, body in sections),
        "</body></html>",
    ])


def study_html(con, study_id: str) -> str:
    """The report of a stored study as one HTML document: its systems side by side, the paper's tables with one
    row per system, the robustness drop, and the settings that differ from the paper's."""
    r = study_report(con, study_id)
    if not r["headline"]:
        raise InputError(f"study {study_id} has no finished run yet")
    wide_vii, wide_viii = (wide(r[key], column).to_dict("records") for key, column in
                           (("table_vii", "perturbation"), ("table_viii", "relation")))
    sections = [
        ("systems", "Systems", _table(r["systems"])),
        ("side-by-side", "Side by side", _figure("heatmap", figures.study_heatmap(metrics_matrix(r)))
         + _table(r["headline"])),
        ("robustness", "Robustness drop", '<p class="caption">On the same questions (the perturbed versions MR1 '
         "checked: context kept, same reference), accuracy in the seed dialogue minus accuracy in the perturbed one, "
         "with 95% bootstrap intervals over the seeds.</p>"
         + _figure("robustness", figures.robustness(r["robustness"])) + _table(r["robustness"])),
        ("table-iv", "Table IV: bug levels per system", _table(r["table_iv"])),
        ("table-vi", "Table VI: test cases and MR checks per perturbation", _table(r["table_vi"])),
        ("table-vii", "Table VII: bugs per perturbation", _table(wide_vii)
         + (_figure("per-perturbation", figures.study_breakdown(r["table_vii"], "perturbation")) if r["table_vii"]
            else "")),
        ("table-viii", "Table VIII: bugs per relation", _table(wide_viii)
         + (_figure("per-relation", figures.study_breakdown(r["table_viii"], "relation")) if r["table_viii"] else "")),
        *([("precision", "Precision per system", _table(r["precision"]))] if r["precision"] else []),
    ]
    systems = f"{len(r['systems'])} systems: " + ", ".join(escape(row["system"]) for row in r["systems"])
    return _document(f"MORTAR study — {study_id}", systems, settings_lines(r["config"]), sections)


# -- sections --------------------------------------------------------------------------------------------


def _summary(report: dict) -> str:
    lines = []
    for method, m in report["metrics"].items():
        levels = f" ({', '.join(f'{lv} {m[lv]}' for lv in LEVELS)})" if LEVELS[0] in m else ""
        lines.append(f"<li><b>{escape(method)}</b>: {m['NBugs']} bugs in {m['detections']} checks over "
                     f"{m['test_cases']} test cases{levels}</li>")
    headline = [{"method": method, **m} for method, m in report["metrics"].items()]
    return (f"<ul>{''.join(lines)}</ul>\n{_table(headline)}\n"
            f'<div class="figures">{_figure("headline", figures.headline(report))}</div>')


def _tables(report: dict) -> str:
    parts = [f"<h3>{escape(t.title)}</h3><p class=\"caption\">{escape(t.caption)}</p>{_table(t.rows)}"
             for t in report["tables"]]
    parts.append('<div class="figures">' + "".join(_figure(name, fig) for name, fig in figures.table_figures(report))
                 + "</div>")
    return "\n".join(parts)


def _compared(report: dict) -> str:
    overlap = ", ".join(f"{escape(part)} {n}" for part, n in report["overlap"].items())
    return (f'<p class="caption">A bug is unique to a method when no other method flagged a bug on the same seed '
            f"question (the paper's Table V).</p>{_table(report['uniqueness'])}"
            f"<p>Seed questions with bugs: {overlap}</p>"
            '<div class="figures">' + "".join(_figure(n, f) for n, f in figures.comparison_figures(report)) + "</div>")


def _prioritisation(priorities: dict) -> str:
    return (f'<p class="caption">{escape(reports.PRIORITISATION_CAPTION)}</p>'
            f'{_table(reports.prioritisation_rows(priorities))}'
            f'<div class="figures">{_figure("prioritisation", figures.prioritisation(priorities))}</div>')


def _examples(con, run_id: str) -> str:
    ids = example_detections(con, run_id)
    intro = ('<p class="caption">The detection of the highest bug level of each relation (L3 first: bugs only '
             "metamorphic testing reveals), with the seed's dialogue as asked in its own order and the perturbed "
             "dialogue the SUT answered differently. The highlighted row is the question of the detection; EC ✓ / ✗: "
             "the context before it is equivalent or not.</p>")
    return intro + "\n".join(_example(con, run_id, d) for d in ids)


def example_detections(con, run_id: str, n: int = EXAMPLES) -> list[str]:
    """Up to ``n`` detection ids of different relations: each relation's detection of the highest bug level,
    the highest levels first (relations in registry order among equals)."""
    present = set(store.detection_relations(con, run_id).values())
    picked = []
    for relation in [RBT, *(r for m in methods().values() for r in m.relations)]:
        if relation not in present:
            continue
        page, _ = store.find_detections(con, store.DetectionFilter(run_ids=(run_id,), relations=(relation,)),
                                        sort="bug level", descending=True, limit=1)
        level = page["bug_level"].iloc[0]
        picked.append((LEVELS.index(level) + 1 if level in LEVELS else 0, page["detection_id"].iloc[0]))
    picked.sort(key=lambda p: -p[0])  # stable: registry order among the same level
    return [d for _, d in picked[:n]]


def _example(con, run_id: str, detection_id: str) -> str:
    det = store.detection(con, run_id, detection_id)
    pair = len(det["test_case_ids"]) > 1  # a group relation compared two versions of the question
    perturbed_id, position = det["test_case_ids"][0], int(det["positions"][0])
    if pair:
        versions = store.versions(con, run_id, det)
        compared = versions[versions["compared"]] if not versions.empty else versions
        if not compared.empty:
            perturbed_id, position = compared["test_case"].iloc[0], int(compared["position"].iloc[0])
    question = store.seed_question(con, run_id, det["seed_id"], det["source_round"]) or ""
    relation = det["relation"]
    names = ("Answer in one version", "Answer in the other version") if pair else ("SUT answer", "Reference answer")
    head = [f"<h3>{escape(relation)} · {escape(det['bug_level'] or 'no level')} · seed {escape(det['seed_id'])}, "
            f"round {det['source_round']}</h3>",
            f'<p class="caption">{escape(glossary().get(relation, ""))}</p>',
            f'<div class="question">{escape(question)}</div>',
            '<div class="compared">' + "".join(f"<div><b>{name}</b>\n{escape(str(text))}</div>"
                                               for name, text in zip(names, (det["text_a"], det["text_b"]))) + "</div>",
            f"<p>Similarity {_cell(det['similarity'])}; EC verdict: {_ec(det['ec_equivalent'])}.</p>"]
    orig_id = store.original_case_id(con, run_id, det["seed_id"])
    case = store.test_case(con, run_id, perturbed_id)
    dialogues = []
    if orig_id:
        rounds = store.case_rounds(con, run_id, orig_id)
        rows = [{"round": r["source_round"], "question": r["question"], "SUT answer": _answer(r),
                 "gold answer": r["gold_answer"], "similarity": r["similarity"]} for _, r in rounds.iterrows()]
        dialogues.append(f"<div><b>Original</b> — the seed's order"
                         f"{_table(rows, lambda row: row['round'] == det['source_round'])}</div>")
    if case and case["perturbation"] != ORIG:
        rounds = store.case_rounds(con, run_id, perturbed_id)
        rows = [{"position": r["position"], "round": r["source_round"], "question": r["question"],
                 "SUT answer": _answer(r), "reference": r["reference"], "similarity": r["similarity"],
                 "EC": _tick(r["ec_equivalent"])} for _, r in rounds.iterrows()]
        dialogues.append(f"<div><b>Perturbed</b> — {escape(case['perturbation'])}"
                         f"{_table(rows, lambda row: row['position'] == position)}</div>")
    story = store.story(con, run_id, det["seed_id"])
    return (f'<div class="example">{"".join(head)}<div class="dialogues">{"".join(dialogues)}</div>'
            f"<details><summary>Story</summary><p>{escape(story)}</p></details></div>")


def _glossary(report: dict, con, run_id: str) -> str:
    entries = glossary()
    ran = {m.label: m for m in methods().values() if m.label in report["metrics"]}
    terms = [*METRIC_TERMS, RBT, *(t for m in ran.values() for t in (m.label, *m.relations))]
    perturbations = {p for _, _, perts in store.run_detections(con, run_id) for p in perts}
    items = [(t, entries[t]) for t in terms if t in entries]
    items += [(p, f"{p}, {PERTURBATION_TEXT[p]}.") for p in sorted(perturbations) if p in PERTURBATION_TEXT]
    return ("<p>Every comparison a relation makes is a <i>check</i>; a violated check is a <i>detection</i> "
            "(a bug). A test case is one dialogue asked of the SUT: a seed as it is (ORIG) or a version of it.</p>"
            "<dl>" + "".join(f"<dt>{escape(t)}</dt><dd>{escape(text)}</dd>" for t, text in items) + "</dl>")


# -- pieces ----------------------------------------------------------------------------------------------


def _figure(name: str, fig) -> str:
    return f"<div>{fig.to_html(full_html=False, include_plotlyjs=False, div_id=f'fig-{name}', config=PLOTLY_CONFIG)}</div>"


def _table(rows: list[dict], highlight=lambda row: False) -> str:
    """Rows as an HTML table, every cell escaped; rows where ``highlight(row)`` holds are marked."""
    if not rows:
        return '<p class="caption">(none)</p>'
    columns = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th>{escape(str(c))}</th>" for c in columns)
    body = []
    for row in rows:
        cells = "".join(_td(row.get(c)) for c in columns)
        body.append(f'<tr class="hit">{cells}</tr>' if highlight(row) else f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _td(value) -> str:
    value = _plain(value)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return f'<td class="num">{_cell(value)}</td>' if number else f"<td>{escape(_cell(value))}</td>"


def _plain(value):
    return value.item() if hasattr(value, "item") and not isinstance(value, (str, bytes)) else value  # numpy scalars


def _cell(value) -> str:
    """A value as table text: counts as integers, rates with three decimals, missing as a dash."""
    value = _plain(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    if _missing(value):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _answer(row) -> str | None:
    if isinstance(row["sut_answer"], str):
        return row["sut_answer"]
    return f"(no answer: {row['error']})" if isinstance(row["error"], str) else None


def _missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _ec(value) -> str:
    return "not checked" if _missing(value) else "equivalent" if value else "not equivalent"


def _tick(value) -> str:
    return "" if _missing(value) else "✓" if value else "✗"
