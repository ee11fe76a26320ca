"""Evaluation checks, shown on each asset's page.

- ``backtests``: the hindsight ideal ends at least as high as every policy, and every equity
  curve starts at the starting cash (both ERROR).
- ``evaluation_report``: test looks per model from ``eval.test_looks`` (WARN above 1).
"""

import dagster as dg
import pandas as pd

from stocker_assets.definitions.evaluation.assets import backtests, evaluation_report
from stocker_assets.definitions.factories import DUCKDB_POOL, partitioned_check, problem_lines
from stocker_assets.definitions.resources import StockerResource


def _partition_rows(stocker: StockerResource, keys: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The run's ``eval.backtests`` rows, their step-0 equity rows and each episode's cash."""
    from stocker_core.evaluation.store import read_eval

    warehouse = stocker.warehouse()
    where = "key IN (SELECT unnest(?::VARCHAR[]))"
    rows = read_eval(warehouse, "eval.backtests", f"scope = 'episode' AND {where}", [keys])
    first = read_eval(warehouse, "eval.equity_curves", f"step = 0 AND {where}", [keys])
    cash: dict[str, float] = {}
    if _table_exists(warehouse, "env", "episodes"):  # else the configured starting cash applies
        episodes = warehouse.query(f"SELECT key, starting_cash FROM env.episodes WHERE {where}", [keys])
        cash = dict(zip(episodes["key"], episodes["starting_cash"].astype(float), strict=True))
    return rows, first, cash


def _table_exists(warehouse, schema: str, name: str) -> bool:
    if not warehouse.path.exists():
        return False
    found = warehouse.query(
        "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
        [schema, name],
    )
    return bool(found["n"].iloc[0])


def _backtest_result(keys: list[str], rows: pd.DataFrame, problems: dict[str, list[str]]):
    return dg.AssetCheckResult(
        passed=not problems,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "partitions_checked": len(keys),
            "episodes_with_backtests": int(rows["key"].nunique()) if len(rows) else 0,
            "policy_rows": len(rows),
            "episodes_failing": len(problems),
            "problems": dg.MetadataValue.md(problem_lines(problems)),
        },
    )


@partitioned_check(
    backtests, "On every episode the hindsight ideal ends at least as high as every policy (ERROR)."
)
def ideal_is_an_upper_bound(
    context: dg.AssetCheckExecutionContext, stocker: StockerResource
) -> dg.AssetCheckResult:
    from stocker_core.evaluation.backtest_checks import ideal_shortfalls

    keys = list(context.partition_keys)
    rows, _, _ = _partition_rows(stocker, keys)
    return _backtest_result(keys, rows, ideal_shortfalls(rows))


@partitioned_check(
    backtests, "Every policy's equity curve starts (step 0) at the episode's starting cash (ERROR)."
)
def equity_starts_at_starting_cash(
    context: dg.AssetCheckExecutionContext, stocker: StockerResource
) -> dg.AssetCheckResult:
    from stocker_core.evaluation.backtest_checks import missing_first_steps, start_cash_mismatches

    keys = list(context.partition_keys)
    rows, first, cash = _partition_rows(stocker, keys)
    problems = start_cash_mismatches(first, cash, stocker.settings().starting_cash)
    for key, found in missing_first_steps(rows, first).items():
        problems.setdefault(key, []).extend(found)
    return _backtest_result(keys, rows, problems)


@dg.asset_check(
    asset=evaluation_report,
    pool=DUCKDB_POOL,
    description="Test looks per model from eval.test_looks (WARN when a model was looked at more than once).",
)
def report_counts_test_looks(stocker: StockerResource) -> dg.AssetCheckResult:
    from stocker_core.evaluation.looks import look_counts

    warehouse = stocker.warehouse()
    if not _table_exists(warehouse, "eval", "test_looks"):
        return dg.AssetCheckResult(passed=True, metadata={"test_looks": "no test-look log yet"})
    # the one count of looks: distinct settings that played each model version (evaluation.looks)
    counts = look_counts(warehouse.query("SELECT * FROM eval.test_looks"))
    over = counts[counts["flag"]]
    return dg.AssetCheckResult(
        passed=over.empty,
        severity=dg.AssetCheckSeverity.WARN,
        metadata={
            "models": len(counts),
            "models_looked_at_more_than_once": len(over),
            "max_looks": int(counts["looks"].max()) if len(counts) else 0,
            "looks_per_model": dg.MetadataValue.md(
                counts[["policy", "version", "looks"]].to_markdown(index=False) if len(counts) else "none"
            ),
        },
    )
