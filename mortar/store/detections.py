"""The detection search behind the violations table: filtered, sorted and paged in DuckDB.

A detection's SUT is in its run's stored configuration; it is read in Python (:class:`StoredConfig`)
and handed to the query as parameters: the SUT filter becomes a list of run ids, the SUT column a
run id → SUT lookup.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from mortar.errors import InputError
from mortar.store.reads import stored_configs
from mortar.vocab import NO_LEVEL

UNKNOWN_SUT = "?"  # the SUT of a run whose configuration names none

SORTABLE = {  # what the violations table may be sorted by → the SQL expression (never user text)
    "run": "d.run_id", "detection": "d.detection_id", "relation": "d.relation", "seed": "d.seed_id",
    "round": "d.source_round", "similarity": "d.similarity", "bug level": "d.bug_level", "SUT": "sut",
    "labels": "n_labels", "mean score": "mean_score",
}


@dataclass(frozen=True)
class DetectionFilter:
    """What the violations table shows; an empty tuple means no restriction."""

    run_ids: tuple[str, ...] = ()
    suts: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    perturbations: tuple[str, ...] = ()  # a detection matches when any of its perturbations is named
    bug_levels: tuple[str, ...] = ()  # L1, L2, L3, or NO_LEVEL
    similarity: tuple[float, float] | None = None  # inclusive range
    seeds: tuple[str, ...] = ()
    text: str = ""  # case-insensitive substring of the question, the output or the reference
    labelled_by: str | None = None  # with ``unlabelled``: only detections this annotator has not scored
    unlabelled: bool = False
    stable_only: bool = False  # leave out detections on questions whose repeated ORIG answers disagree
    confirmed_only: bool = False  # leave out flaky detections (not reproduced when asked again, --confirm)

    def where(self, sut_of: dict[str, str]) -> tuple[str, list]:
        """The SQL condition and its parameters; ``sut_of`` maps each run id to its SUT."""
        clauses, params = ["TRUE"], []

        def any_of(expr: str, values) -> None:
            if values:
                clauses.append(f"{expr} IN ({', '.join('?' for _ in values)})")
                params.extend(values)

        any_of("d.run_id", self.run_ids)
        if self.suts:
            runs = sorted(run for run, sut in sut_of.items() if sut in self.suts)
            any_of("d.run_id", runs)
            if not runs:
                clauses.append("FALSE")  # no run tested these SUTs
        any_of("d.relation", self.relations)
        any_of("d.seed_id", self.seeds)
        if self.perturbations:
            clauses.append("list_has_any(CAST(d.perturbations AS VARCHAR[]), ?::VARCHAR[])")
            params.append(list(self.perturbations))
        if self.bug_levels:
            levels = [lv for lv in self.bug_levels if lv != NO_LEVEL]
            parts = []
            if levels:
                parts.append(f"d.bug_level IN ({', '.join('?' for _ in levels)})")
                params.extend(levels)
            if NO_LEVEL in self.bug_levels:
                parts.append("d.bug_level IS NULL")
            clauses.append("(" + " OR ".join(parts) + ")")
        if self.similarity is not None:
            clauses.append("d.similarity BETWEEN ? AND ?")
            params.extend([float(self.similarity[0]), float(self.similarity[1])])
        if self.text.strip():
            clauses.append("(contains(lower(sr.question), ?) OR contains(lower(d.text_a), ?) "
                           "OR contains(lower(d.text_b), ?))")
            params.extend([self.text.strip().lower()] * 3)
        if self.stable_only:
            clauses.append("NOT d.unstable")
        if self.confirmed_only:
            clauses.append("NOT d.flaky")
        if self.unlabelled and self.labelled_by:
            clauses.append("NOT EXISTS (SELECT 1 FROM labels x WHERE x.run_id = d.run_id "
                           "AND x.detection_id = d.detection_id AND x.annotator = ?)")
            params.append(self.labelled_by)
        return " AND ".join(clauses), params


def sut_of_runs(con, run_ids: tuple[str, ...] | None = None) -> dict[str, str]:
    """run_id → the SUT (model name) it tested, ``?`` where its configuration names none."""
    return {run: UNKNOWN_SUT if cfg.sut_model is None else cfg.sut_model
            for run, cfg in stored_configs(con, run_ids).items()}


_LABEL_COUNTS = """(SELECT run_id, detection_id, count(*) AS n_labels, avg(score) AS mean_score
                     FROM labels GROUP BY run_id, detection_id)"""

# The SUT of each run arrives as two parameters, parallel lists of run ids and SUT names.
_DETECTIONS_FROM = f"""
    FROM detections d
    JOIN runs r ON r.run_id = d.run_id
    LEFT JOIN (SELECT unnest(?::VARCHAR[]) AS run_id, unnest(?::VARCHAR[]) AS sut) s ON s.run_id = d.run_id
    LEFT JOIN seed_rounds sr ON sr.dataset_id = r.dataset_id AND sr.seed_id = d.seed_id
                            AND sr.turn_id = d.source_round
    LEFT JOIN {_LABEL_COUNTS} l ON l.run_id = d.run_id AND l.detection_id = d.detection_id
"""


def _matching(con, flt: DetectionFilter) -> tuple[str, list]:
    """The condition of ``flt`` on ``_DETECTIONS_FROM`` and the parameters of both."""
    sut_of = sut_of_runs(con)
    where, params = flt.where(sut_of)
    return where, [list(sut_of), list(sut_of.values()), *params]


def count_detections(con, flt: DetectionFilter = DetectionFilter()) -> int:
    """How many detections match ``flt``."""
    where, params = _matching(con, flt)
    return int(con.execute(f"SELECT count(*) {_DETECTIONS_FROM} WHERE {where}", params).fetchone()[0])


def find_detections(con, flt: DetectionFilter = DetectionFilter(), sort: str = "detection", descending: bool = False,
                    limit: int = 50, offset: int = 0) -> tuple[pd.DataFrame, int]:
    """One page of detections matching ``flt`` and how many match in all; filtered, sorted and paged in DuckDB."""
    if sort not in SORTABLE:
        raise ValueError(f"cannot sort by {sort!r}")
    where, params = _matching(con, flt)
    total = con.execute(f"SELECT count(*) {_DETECTIONS_FROM} WHERE {where}", params).fetchone()[0]
    order = f"{SORTABLE[sort]} {'DESC' if descending else 'ASC'} NULLS LAST, d.run_id, d.detection_id"
    page = con.execute(f"""
        SELECT d.run_id, d.detection_id, s.sut, d.relation, d.perturbations, d.seed_id, d.source_round,
               sr.question, d.text_a AS output, d.text_b AS reference, d.similarity, d.ec_equivalent, d.bug_level,
               d.unstable, d.flaky, coalesce(l.n_labels, 0) AS n_labels, l.mean_score
        {_DETECTIONS_FROM} WHERE {where}
        ORDER BY {order} LIMIT ? OFFSET ?""", params + [int(limit), int(offset)]).df()
    return page, int(total)


def run_detection_ids(con, run_id: str, limit: int) -> tuple[list[str], int]:
    """The first ``limit`` detection ids of a run, in the order ``find_detections`` gives them by detection, and
    how many the run has (without the columns and joins a page of the table needs)."""
    ids = [d for (d,) in con.execute("SELECT detection_id FROM detections WHERE run_id = ? ORDER BY detection_id "
                                     "LIMIT ?", [run_id, int(limit)]).fetchall()]
    total = con.execute("SELECT count(*) FROM detections WHERE run_id = ?", [run_id]).fetchone()[0]
    return ids, int(total)


GROUP_SORTABLE = {  # what the bug-group table may be sorted by → the SQL expression (never user text)
    "detections": "detections", "relations": "n_relations", "perturbations": "n_perturbations",
    "bug level": "max_level", "labelled": "labelled", "similarity": "min_similarity", "seed": "d.seed_id",
    "round": "d.source_round", "run": "d.run_id",
}


def group_key(seed_id: str, source_round: int) -> str:
    """A bug group's name within its run, ``seed_id:turn`` (as the Inspector's ``group`` query parameter)."""
    return f"{seed_id}:{int(source_round)}"


def parse_group_key(key: str) -> tuple[str, int]:
    """``seed_id:turn`` → (seed_id, turn); a seed id may itself hold colons."""
    seed_id, sep, turn = str(key).rpartition(":")
    if not sep or not seed_id or not turn.strip().isdigit():
        raise InputError(f"{key!r} is not a bug group: expected SEED_ID:ROUND, e.g. cs-01:3")
    return seed_id, int(turn)


def find_groups(con, flt: DetectionFilter = DetectionFilter(), sort: str = "detections", descending: bool = True,
                limit: int = 50, offset: int = 0) -> tuple[pd.DataFrame, int]:
    """Bug groups: the detections matching ``flt`` grouped by the seed question they are about (run, seed, source
    round) across perturbations and relations, with their counts; one page of them and how many groups match."""
    if sort not in GROUP_SORTABLE:
        raise ValueError(f"cannot sort groups by {sort!r}")
    where, params = _matching(con, flt)
    grouped = f"""
        SELECT d.run_id, d.seed_id, d.source_round, any_value(sr.question) AS question, any_value(s.sut) AS sut,
               count(*) AS detections, count(DISTINCT d.relation) AS n_relations,
               list_sort(list_distinct(list(d.relation))) AS relations,
               list_sort(list_distinct(flatten(list(CAST(d.perturbations AS VARCHAR[]))))) AS perturbations,
               len(list_distinct(flatten(list(CAST(d.perturbations AS VARCHAR[]))))) AS n_perturbations,
               max(d.bug_level) AS max_level,  -- L1 < L2 < L3 as text; NULL when only RBT found it
               count(*) FILTER (WHERE l.n_labels > 0) AS labelled, min(d.similarity) AS min_similarity
        {_DETECTIONS_FROM} WHERE {where}
        GROUP BY d.run_id, d.seed_id, d.source_round"""
    total = con.execute(f"SELECT count(*) FROM ({grouped})", params).fetchone()[0]
    order = (f"{GROUP_SORTABLE[sort]} {'DESC' if descending else 'ASC'} NULLS LAST, "
             "d.run_id, d.seed_id, d.source_round")
    page = con.execute(f"{grouped} ORDER BY {order} LIMIT ? OFFSET ?", params + [int(limit), int(offset)]).df()
    return page, int(total)


def group_detections(con, run_id: str, seed_id: str, source_round: int) -> pd.DataFrame:
    """Every detection of one bug group (a seed question in a run), with the versions each compared and its
    labels, by relation and detection id."""
    return con.execute(f"""
        SELECT d.detection_id, d.relation, CAST(d.perturbations AS VARCHAR[]) AS perturbations,
               CAST(d.test_case_ids AS VARCHAR[]) AS test_case_ids, CAST(d.positions AS INTEGER[]) AS positions,
               d.text_a AS output, d.text_b AS reference, d.similarity, d.ec_equivalent, d.bug_level,
               coalesce(l.n_labels, 0) AS n_labels, l.mean_score
        FROM detections d LEFT JOIN {_LABEL_COUNTS} l ON l.run_id = d.run_id AND l.detection_id = d.detection_id
        WHERE d.run_id = ? AND d.seed_id = ? AND d.source_round = ?
        ORDER BY d.relation, d.detection_id""", [run_id, seed_id, int(source_round)]).df()


def filter_choices(con, run_ids: tuple[str, ...] = ()) -> dict[str, list]:
    """The values each filter can take (within the chosen runs), for the filter widgets."""
    runs_clause = f"WHERE d.run_id IN ({', '.join('?' for _ in run_ids)})" if run_ids else ""
    params = list(run_ids)

    def values(expr: str) -> list:
        rows = con.execute(f"SELECT DISTINCT {expr} AS v FROM detections d JOIN runs r ON r.run_id = d.run_id "
                           f"{runs_clause} ORDER BY v NULLS FIRST", params).fetchall()
        return [v for (v,) in rows]

    perts = con.execute(f"SELECT DISTINCT unnest(CAST(d.perturbations AS VARCHAR[])) AS p FROM detections d "
                        f"{runs_clause} ORDER BY p", params).fetchall()
    sims = con.execute(f"SELECT min(similarity), max(similarity) FROM detections d {runs_clause}", params).fetchone()
    sut_of = sut_of_runs(con, tuple(values("d.run_id")))
    return {"suts": sorted(set(sut_of.values())),
            "relations": values("d.relation"), "seeds": values("d.seed_id"),
            "bug_levels": [NO_LEVEL if v is None else v for v in values("d.bug_level")],
            "perturbations": [p for (p,) in perts],
            "similarity": (sims[0], sims[1]) if sims[0] is not None else (0.0, 1.0)}


def run_detections(con, run_id: str) -> list[tuple[str, str, list[str]]]:
    """The run's detections as (detection_id, relation, perturbations), by detection id."""
    return con.execute("SELECT detection_id, relation, CAST(perturbations AS VARCHAR[]) FROM detections "
                       "WHERE run_id = ? ORDER BY detection_id", [run_id]).fetchall()


def detection_relations(con, run_id: str) -> dict[str, str]:
    """detection_id → relation, for the run's detections."""
    return dict(con.execute("SELECT detection_id, relation FROM detections WHERE run_id = ?", [run_id]).fetchall())
