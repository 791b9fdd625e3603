"""CI budgets: `--fail-on "RATE>0.30"` and the like; a run over one of its budgets fails the build.

A budget is ``KEY[:SCOPE] OP LIMIT`` with OP ``>`` or ``>=`` (the run fails when the figure is above, or
at or above, the limit):

- ``RATE``: Rate+ (bugs / checks);  ``NBUGS``: bugs;  ``L1``, ``L2``, ``L3``: bugs of that level;
- ``NEW``: detections that the baseline run (``--baseline RUN``, or run A of ``mortar compare``) did not have;
- SCOPE: a relation (``RATE:MR1``) or a method's report label (``RATE:MT``); without one, every check of the
  run (RBT included).

Several budgets: repeat ``--fail-on`` or give a comma list. A budget the run exceeds ends the command with
:data:`EXIT_BUDGET_EXCEEDED` and one line on stderr naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from mortar.errors import InputError
from mortar.metrics import level_counts, method_summary
from mortar.vocab import ALL, BUDGET_KEYS, LEVELS, NEW, RATE
from mortar.methods import methods
from mortar.relations import RELATIONS, headline_checks
from mortar import store
from mortar.compare import read_pair
from mortar.compare import diff

EXIT_BUDGET_EXCEEDED = 3  # `mortar run/gate/compare --fail-on`: a budget was exceeded (2 stays bad input)

_BUDGET = re.compile(r"^\s*(\w+)\s*(?::\s*([^\s:<>=]+)\s*)?(>=|>)\s*(\d+(?:\.\d*)?|\.\d+)\s*$")


class BudgetExceeded(Exception):
    """The run went over one or more of its budgets; the message is the one-line reason."""


@dataclass(frozen=True)
class Budget:
    key: str  # one of BUDGET_KEYS
    scope: str  # ALL, a relation or a method's report label
    op: str  # '>' or '>='
    limit: float

    def __str__(self) -> str:
        return f"{self.name}{self.op}{self.limit_text}"

    @property
    def limit_text(self) -> str:
        return str(int(self.limit)) if self.limit.is_integer() else repr(self.limit)

    @property
    def name(self) -> str:
        return self.key if self.scope == ALL else f"{self.key}:{self.scope}"

    def exceeded_by(self, value: float) -> bool:
        """NaN (no check in scope) never exceeds a budget."""
        return value > self.limit if self.op == ">" else value >= self.limit


def scopes() -> dict[str, str]:
    """What a budget's scope may name, upper-cased → as the tool spells it: relations and method labels."""

    registered = methods().values()  # registers the built-in methods' relations too
    return {n.upper(): n for n in [*RELATIONS, *(m.label for m in registered)]}


def parse_budget(text: str) -> Budget:
    match = _BUDGET.match(text)
    if not match:
        raise InputError(f"--fail-on {text!r}: not a budget; write KEY[:SCOPE]>LIMIT, e.g. RATE>0.30, L1>10, "
                         f"RATE:MR1>=0.5 or NEW>0 (keys: {', '.join(BUDGET_KEYS)})")
    key, scope, op, limit = match.group(1).upper(), match.group(2), match.group(3), float(match.group(4))
    if key not in BUDGET_KEYS:
        raise InputError(f"--fail-on {text!r}: unknown key {match.group(1)}; choose from {', '.join(BUDGET_KEYS)}")
    if scope is not None:
        known = scopes()
        if scope.upper() not in known:
            raise InputError(f"--fail-on {text!r}: unknown relation or method {scope}; choose from "
                             f"{', '.join(dict.fromkeys(known.values()))}")
        scope = known[scope.upper()]
    if key == RATE and limit > 1:
        raise InputError(f"--fail-on {text!r}: Rate+ is a share between 0 and 1")
    return Budget(key, scope or ALL, op, limit)


def parse_budgets(texts: Iterable[str] | None) -> list[Budget]:
    """Budgets from repeated options, each of them possibly a comma list."""
    return [parse_budget(part) for text in texts or () for part in text.split(",") if part.strip()]


def needs_baseline(budgets: list[Budget]) -> bool:
    return any(b.key == NEW for b in budgets)


def _in_scope(checks, scope: str) -> list:
    if scope == ALL:
        return list(checks)

    relations = {scope} | {r for m in methods().values() if m.label == scope for r in m.relations}
    return [c for c in checks if c.relation in relations]


def measure(budget: Budget, checks, baseline=None) -> float:
    """The run's figure the budget limits (``baseline``: the baseline run's checks, for NEW)."""
    mine = _in_scope(checks, budget.scope)
    if budget.key == NEW:

        return float(len(diff(_in_scope(baseline or [], budget.scope), mine)[1]))
    if budget.key in LEVELS:
        return float(level_counts(mine)[budget.key])
    summary = method_summary(mine, 0)
    return float(summary["Rate+"] if budget.key == RATE else summary["NBugs"])


def evaluate(budgets: list[Budget], checks, baseline=None) -> list[tuple[Budget, float, bool]]:
    """Each budget with the run's figure and whether it is exceeded; detections reported apart (unstable, flaky)
    count in none, as in the report's headline figures."""
    checks = headline_checks(checks)
    baseline = None if baseline is None else headline_checks(baseline)
    return [(b, value, b.exceeded_by(value)) for b in budgets for value in [measure(b, checks, baseline)]]


def describe(budget: Budget, value: float) -> str:
    """'RATE = 0.412 > 0.3' when exceeded, else 'RATE = 0.212 (fails when > 0.3)'."""
    shown = "–" if value != value else f"{value:.3f}" if budget.key == RATE else f"{value:.0f}"
    if budget.exceeded_by(value):
        return f"{budget.name} = {shown} {budget.op} {budget.limit_text}"
    return f"{budget.name} = {shown} (fails when {budget.op} {budget.limit_text})"


def enforce(results: list[tuple[Budget, float, bool]]) -> None:
    """Raise BudgetExceeded naming every exceeded budget, in one line."""
    over = [describe(b, v) for b, v, exceeded in results if exceeded]
    if over:
        raise BudgetExceeded("; ".join(over))


def gate_run(con, run_id: str, budgets: list[Budget], baseline: str | None = None) -> list[tuple[Budget, float, bool]]:
    """A stored run's budgets evaluated (``baseline``: a run of the same test cases, needed by NEW)."""

    if needs_baseline(budgets) and baseline is None:
        raise InputError(f"{', '.join(str(b) for b in budgets if b.key == NEW)} needs a baseline run (--baseline RUN)")
    if baseline is None:
        checks, before = store.read_checks(con, run_id), None
        if not checks:
            raise InputError(f"run {run_id} has no results yet (a `mortar generate` run, or one still in progress)")
    else:
        before, checks = read_pair(con, baseline, run_id)
    return evaluate(budgets, checks, before)

