"""A run as a JUnit XML report, so that any CI shows its results natively.

One <testsuite> per relation, one <testcase> per seed question it checked; the test case fails when any check
of that relation on that question was violated, and the failure shows each violated check with the two
answers it compared. Each suite's properties carry the relation's checks, bugs and Rate+ as the report has
them.

Detections reported apart — flaky (not found again when asked again, ``--confirm``) or on an unstable seed
question (``--orig-repeats``) — fail no test case and count in no figure. A test case whose only detections are
such is *skipped* with a message that says why: CI tools show skipped tests natively as neither passed nor failed,
which is what an unconfirmed detection is, and it leaves the build green as the headline figures do. The suite's
properties ``flaky`` and ``unstable`` count the detections (a skipped test case may hold several).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from mortar.compare import relation_order
from mortar.errors import InputError
from mortar.metrics import bugs_per_relation
from mortar.relations import headline_checks, reported_apart
from mortar import store

APART = {"flaky": "not found again when asked again (--confirm)",
         "unstable": "on a question whose ORIG answers disagree (--orig-repeats)"}
MESSAGE_CHARS = 200  # an answer longer than this is cut in the one-line failure message (the body has it whole)
# characters XML 1.0 cannot carry (SUT output is untrusted text): replaced, so the file always parses
_NOT_XML = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value) -> str:
    return _NOT_XML.sub("\ufffd", "" if value is None else str(value))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS - 1] + "…"


def _check_lines(check) -> str:
    level = f" · {check.bug_level}" if check.bug_level else ""
    return (f"{check.check_id} · {', '.join(check.perturbations)} · position {', '.join(map(str, check.positions))}"
            f"{level} · similarity {check.similarity:.3f}\n"
            f"  SUT answer:    {check.text_a}\n  compared with: {check.text_b}\n")


def junit_xml(checks, questions: dict, run_id: str, sut: str | None = None) -> bytes:
    """The run's checks as JUnit XML (``questions``: (seed_id, turn_id) → the seed's question)."""
    by_relation: dict[str, dict[tuple[str, int], list]] = {}
    for c in checks:
        by_relation.setdefault(c.relation, {}).setdefault((c.seed_id, c.source_round), []).append(c)
    relations = relation_order(by_relation)
    figures = {row["relation"]: row for row in bugs_per_relation(headline_checks(checks), relations)}
    root = ET.Element("testsuites", name=_text(f"mortar {run_id}"))
    total = failed = skipped = 0
    for relation in relations:
        groups = by_relation[relation]
        suite = ET.SubElement(root, "testsuite", name=relation, errors="0", time="0")
        properties = ET.SubElement(suite, "properties")
        mine_apart = [c for g in groups.values() for c in g if reported_apart(c)]
        for name, value in (("run", run_id), ("sut", sut), ("checks", figures[relation]["detections"]),
                            ("NBugs", figures[relation]["bugs"]), ("Rate+", f"{figures[relation]['Rate+']:.6f}"),
                            ("flaky", sum(c.flaky for c in mine_apart) or None),
                            ("unstable", sum(c.unstable for c in mine_apart) or None)):
            if value is not None:
                ET.SubElement(properties, "property", name=name, value=_text(value))
        suite_failed = suite_skipped = 0
        for (seed_id, turn_id), mine in sorted(groups.items()):
            question = questions.get((seed_id, turn_id), "")
            case = ET.SubElement(suite, "testcase", classname=_text(f"mortar.{relation}.{seed_id}"),
                                 name=_text(f"{seed_id} round {turn_id}" + (f": {question}" if question else "")), time="0")
            violated = [c for c in mine if c.violated and not reported_apart(c)]
            apart = [c for c in mine if reported_apart(c)]
            if apart and not violated:
                suite_skipped += 1
                why = "; ".join(f"{n} {kind}, {text}" for kind, text in APART.items()
                                for n in [sum(getattr(c, kind) for c in apart)] if n)
                message = f"{len(apart)} {relation} detection{'s' if len(apart) > 1 else ''} reported apart: {why}"
                skip = ET.SubElement(case, "skipped", message=_text(message))
                skip.text = _text(f"Question: {question}\n\n" + "\n".join(_check_lines(c) for c in apart))
            if violated:
                suite_failed += 1
                first = violated[0]
                message = (f"{len(violated)} of {len(mine)} {relation} checks violated; e.g. "
                           f"{', '.join(first.perturbations)}: '{_short(first.text_a)}' vs '{_short(first.text_b)}' "
                           f"(similarity {first.similarity:.3f})")
                failure = ET.SubElement(case, "failure", message=_text(message), type=_text(relation))
                failure.text = _text(f"Question: {question}\n\n" + "\n".join(_check_lines(c) for c in violated))
        suite.set("tests", str(len(groups)))
        suite.set("failures", str(suite_failed))
        suite.set("skipped", str(suite_skipped))
        total, failed, skipped = total + len(groups), failed + suite_failed, skipped + suite_skipped
    root.set("tests", str(total))
    root.set("failures", str(failed))
    root.set("skipped", str(skipped))
    root.set("errors", "0")
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)


def write_junit(con, run_id: str, out: str | Path) -> tuple[int, int]:
    """Write a stored run's JUnit report atomically; returns (test cases, failures)."""

    checks = store.read_checks(con, run_id)
    if not checks:
        raise InputError(f"run {run_id} has no results yet (a `mortar generate` run, or one still in progress)")
    data = junit_xml(checks, store.seed_questions(con, run_id), run_id, store.stored_config(con, run_id).sut_model)
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    try:
        tmp.write_bytes(data)
        tmp.replace(out)
    except OSError as e:
        raise InputError(f"{out}: cannot write: {e.strerror}") from None
    root = ET.fromstring(data)
    return int(root.get("tests")), int(root.get("failures"))
