"""Report statistics: extra columns of the report's leaderboard, one number per policy.

A report statistic is a function of one policy's ``eval.rolling`` rows over the independent
(non-overlapping) test windows the leaderboard reads, one row per window (``ticker``,
``window_index``, ``start_date``, ``end_date``, ``total_return``, ``sharpe`` and the other
``metrics.METRIC_NAMES``), to a number (None where it is undefined). One call registers it::

    register_statistic("best window return", best_window_return)

``pooled.pooled_evidence`` then computes it for every policy on the leaderboard (a column of
that name in ``Evidence.leaderboard``) and ``pooled.leaderboard_table`` shows it after the
built-in columns, formatted by ``fmt`` (``metrics.format_metric`` unless given); a clone's
cell reads "= <original>" like its others. The report (HTML and Markdown) shows the
leaderboard table as it is, so nothing else changes.

A statistic the project ships goes in a module of its own on this floor or below, and its
``(name, fn)`` pair into ``BUILTIN`` at the end of this module, which ``register_statistics()``
registers when the composition root (``stocker_core.composition.register_all``) calls it;
nothing registers at import. A test or a notebook registers its own at run time and removes
it with ``unregister_statistic``. How-to: docs/how-to/add-a-report-statistic.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from stocker_core.evaluation.metrics import format_metric
from stocker_core.evaluation.stats import StatsError

WindowStatistic = Callable[[pd.DataFrame], "float | None"]
"""One policy's rows of its independent windows -> a number (None: undefined)."""

RESERVED = frozenset(
    {
        "policy",
        "label",
        "clone_of",
        "n",
        "d_sharpe",
        "d_sharpe_low",
        "d_sharpe_high",
        "d_return",
        "d_return_low",
        "d_return_high",
        "p_value",
        "p_holm",
        "mdd_sharpe",
        "mdd_return",
        "random_percentile",
        "independent windows",
        "p (t-test)",
        "Holm p",
        "min. detectable Δ Sharpe",
        "percentile among random",
    }
)
"""The leaderboard's own column names (in ``Evidence.leaderboard`` and in its table)."""


@dataclass(frozen=True)
class ReportStatistic:
    """A registered statistic: its column name, its function and its cell format."""

    name: str
    fn: WindowStatistic
    fmt: Callable[[float | None], str] = format_metric

    def value(self, rows: pd.DataFrame) -> float | None:
        """``fn`` on one policy's rows, as a float (None when undefined or not finite)."""
        result = self.fn(rows)
        if result is None or pd.isna(result):
            return None
        return float(result)


_REGISTRY: dict[str, ReportStatistic] = {}


def register_statistic(
    name: str,
    fn: WindowStatistic,
    fmt: Callable[[float | None], str] | None = None,
    replace: bool = False,
) -> ReportStatistic:
    """Add a leaderboard column ``name`` whose cell for a policy is ``fn`` of its rows.

    StatsError for an empty name, one of the leaderboard's own columns (``RESERVED``) or a
    name already registered to another function (unless ``replace``).
    """
    if not name or name in RESERVED:
        raise StatsError(f"{name!r} cannot name a report statistic: the leaderboard has that column")
    known = _REGISTRY.get(name)
    if known is not None and known.fn is not fn and not replace:
        raise StatsError(f"a report statistic {name!r} is already registered (replace=True to swap it)")
    statistic = ReportStatistic(name, fn, fmt or format_metric)
    _REGISTRY[name] = statistic
    return statistic


def unregister_statistic(name: str) -> None:
    """Remove the statistic ``name`` (nothing if it is not registered)."""
    _REGISTRY.pop(name, None)


def report_statistics() -> tuple[ReportStatistic, ...]:
    """The registered statistics, in registration order (the order of their columns)."""
    return tuple(_REGISTRY.values())


def statistic_values(rows: pd.DataFrame, statistics: tuple[ReportStatistic, ...]) -> dict[str, float | None]:
    """``{name: value}`` of each of ``statistics`` on one policy's rows."""
    return {s.name: s.value(rows) for s in statistics}


BUILTIN: tuple[tuple[str, WindowStatistic], ...] = ()
"""The statistics the project ships, ``(name, fn)`` in column order, each function in a module
of its own (none today: the leaderboard's own columns are ``RESERVED``)."""


def register_statistics() -> None:
    """Register the statistics the project ships (``BUILTIN``; called by the composition root,
    again is a no-op)."""
    for name, fn in BUILTIN:
        register_statistic(name, fn)
