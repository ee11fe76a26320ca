"""Evaluation assets: backtests per ticker × month, chronological splits, the rolling-window
evaluation over the test split and the report; every number is written to ``eval.*``."""

import json

import dagster as dg
import pandas as pd

from stocker_assets.definitions.automation import BACKTESTS_FOLLOW_EPISODES, MODEL_ASSET_NAMES, WEEKLY_RETRAIN
from stocker_assets.definitions.council import specialist_votes
from stocker_assets.definitions.env import WINDOW, episodes
from stocker_assets.definitions.factories import partitioned_asset, warehouse_asset
from stocker_assets.definitions.lineage import combined_version, png_markdown, record_build
from stocker_assets.definitions.market.assets import prices
from stocker_assets.definitions.progress import throttled_progress
from stocker_assets.definitions.resources import StockerResource
from stocker_core.market.builds import MonthBuild
from stocker_core.warehouse.db import frame_version

EVALUATION = "evaluation"
MODEL_ASSETS = MODEL_ASSET_NAMES
"""Assets whose lineage partitions are policy names (trained models): recorded as upstream of a
backtest that played that policy."""
REPORT_NAME = "evaluation"


class EvaluationConfig(dg.Config):
    """Which policies to evaluate (empty: every registered one), the seed and the rolling windows."""

    policies: list[str] = []
    seed: int = 0
    window_days: int = 63
    step_days: int = 7
    resamples: int = 2000

    def policy_names(self) -> list[str] | None:
        return list(self.policies) or None

    def rolling(self):
        from stocker_core.evaluation.rolling import RollingConfig

        return RollingConfig(
            window_days=self.window_days, step_days=self.step_days, resamples=self.resamples, seed=self.seed
        )


def _month_keys(key: str, months: int) -> list[str]:
    ticker, first = key.split("|")
    start = pd.Timestamp(first)
    return [f"{ticker}|{(start + pd.DateOffset(months=i)).date().isoformat()}" for i in range(months)]


@partitioned_asset(
    EVALUATION,
    "Every registered policy on the partition's episode (tables eval.backtests and "
    "eval.equity_curves), except the policies fitted on the train split on train-split "
    "episodes (in-sample); lineage to prices, episodes, the vote cache version and model files.",
    deps=[
        dg.AssetDep(prices, partition_mapping=WINDOW),
        episodes,
        dg.AssetDep(specialist_votes, partition_mapping=WINDOW),
        *(dg.AssetKey(name) for name in MODEL_ASSETS),
    ],
    automation_condition=BACKTESTS_FOLLOW_EPISODES,
    kinds={"duckdb", "matplotlib"},
)
def backtests(
    context: dg.AssetExecutionContext, config: EvaluationConfig, stocker: StockerResource
) -> dg.MaterializeResult:
    from stocker_core.evaluation.plots import equity_png
    from stocker_core.evaluation.report import mean_metrics_table
    from stocker_core.evaluation.steps import backtest_partitions
    from stocker_core.evaluation.store import backtest_frames

    settings, warehouse = stocker.settings(), stocker.warehouse()
    outcome = backtest_partitions(
        settings,
        warehouse,
        context.partition_keys,
        config.policy_names(),
        config.seed,
        context.run.run_id,
        who="asset",
        progress=throttled_progress(context, "episodes"),
    )
    build, upstream, frames, last = MonthBuild(), {}, [], None
    for ticker_run in outcome:
        build.empty.extend(ticker_run.empty)
        keys = list(ticker_run.results)
        months = sorted({m for k in keys for m in _month_keys(k, settings.episode_months)})
        price_versions = warehouse.latest_data_versions("prices", months)
        vote_versions = warehouse.latest_data_versions("specialist_votes", months)
        episode_versions = warehouse.latest_data_versions("episodes", keys)
        rows_of = ticker_run.content_rows()  # the rows the step wrote, as content
        every_played = sorted({r.policy for result in ticker_run.results.values() for r in result.runs})
        model_versions = {a: warehouse.latest_data_versions(a, every_played) for a in MODEL_ASSETS}
        for key, result in ticker_run.results.items():
            rows = rows_of[key]
            frames.append(rows)
            build.rows[key] = len(rows)
            build.data_versions[key] = frame_version(rows.astype(str))
            sources = {f"episodes@{key}": episode_versions.get(key, "unrecorded")}
            for month in _month_keys(key, settings.episode_months):
                sources[f"prices@{month}"] = price_versions.get(month, "unrecorded")
                sources[f"specialist_votes@{month}"] = vote_versions.get(month, "unrecorded")
            if ticker_run.vote_version:
                sources["council.votes"] = ticker_run.vote_version
            played = {r.policy for r in result.runs}
            for asset, versions in model_versions.items():
                for policy, version in versions.items():
                    if policy in played:
                        sources[f"{asset}@{policy}"] = version
            upstream[key] = sources
            last = result
    record_build(context, warehouse, build, upstream)
    failures = {name: problem for t in outcome for name, problem in t.failures.items()}
    metadata: dict[str, object] = {
        "episodes": len(build.rows),
        "without_data": dg.MetadataValue.json(build.empty[:50]),
        "failed_policies": dg.MetadataValue.json(failures),
        "vote_cache_version": dg.MetadataValue.json({t.ticker: t.vote_version for t in outcome}),
        "in_sample_partitions": sum(len(t.in_sample) for t in outcome),
        "in_sample_note": "train-split episodes: the policies fitted on train were not played there",
    }
    if frames:
        table = mean_metrics_table(pd.concat(frames, ignore_index=True))
        metadata["mean_metrics"] = dg.MetadataValue.md(table.to_markdown(index=False))
    if last is not None:
        _, curves = backtest_frames(last.runs, "episode")
        png = equity_png(curves, f"{last.episode.key}: portfolio value")
        metadata["plot"] = png_markdown(png, "equity curves")
    return dg.MaterializeResult(metadata=metadata, data_version=combined_version(build))


@warehouse_asset(
    EVALUATION,
    "Chronological train / valid / test date ranges per ticker from the stored trading days, "
    "30 trading days apart (table eval.splits); every training step reads them.",
    deps=[prices],
    automation_condition=WEEKLY_RETRAIN,
    kinds={"duckdb"},
)
def splits(context: dg.AssetExecutionContext, stocker: StockerResource) -> dg.MaterializeResult:
    from stocker_core.evaluation.steps import compute_and_store_splits

    warehouse = stocker.warehouse()
    result = compute_and_store_splits(warehouse)
    table = pd.DataFrame(result.rows())
    build = MonthBuild()
    for ticker, part in table.groupby("ticker"):
        build.rows[str(ticker)] = len(part)
        build.data_versions[str(ticker)] = frame_version(part.astype(str))
    record_build(context, warehouse, build)
    for ticker, why in result.skipped:
        context.log.warning(f"{ticker} left out of the splits: {why}")
    return dg.MaterializeResult(
        metadata={
            "tickers": len(build.rows),
            "splits": dg.MetadataValue.md(table.to_markdown(index=False)),
            "skipped_tickers": dg.MetadataValue.json(dict(result.skipped)),
        },
        data_version=combined_version(build),
    )


@warehouse_asset(
    EVALUATION,
    "Every policy on 63-trading-day windows stepped by 7 days across each test split, and on "
    "the whole test period: mean ± block-bootstrap 95% CI per policy and metric, wins and "
    "sign-test p-values against buy_and_hold and random (eval.rolling*, eval.backtests).",
    deps=[splits, specialist_votes, *(dg.AssetKey(name) for name in MODEL_ASSETS)],
    automation_condition=WEEKLY_RETRAIN,
    kinds={"duckdb", "matplotlib"},
)
def rolling_evaluation(
    context: dg.AssetExecutionContext, config: EvaluationConfig, stocker: StockerResource
) -> dg.MaterializeResult:
    from stocker_core.evaluation.plots import rolling_ci_png
    from stocker_core.evaluation.report import rolling_table, verdict_lines
    from stocker_core.evaluation.steps import NoWindowsError
    from stocker_core.evaluation.steps import rolling_evaluation as run_rolling

    settings, warehouse = stocker.settings(), stocker.warehouse()
    rolling = config.rolling()
    try:
        outcome = run_rolling(
            settings,
            warehouse,
            config.policy_names(),
            rolling,
            run_id=context.run.run_id,
            log=context.log.info,
            progress=throttled_progress(context, "windows"),
            who="asset",
        )
    except NoWindowsError as exc:  # every ticker too short: named, the stored rows kept
        context.log.warning(str(exc))
        return dg.MaterializeResult(
            metadata={"windows": 0, "left_out": dg.MetadataValue.json(exc.left_out), "status": str(exc)}
        )
    for ticker, why in outcome.left_out.items():
        context.log.warning(f"{ticker} left out of the rolling evaluation: {why}")
    build = MonthBuild()
    build.rows["all"] = len(outcome.rows)
    build.data_versions["all"] = frame_version(outcome.summary.astype(str))
    record_build(context, warehouse, build, {"all": {"council.votes": json.dumps(outcome.vote_versions)}})
    table = rolling_table(outcome.summary, outcome.comparisons, rolling.baselines)
    verdicts = [v["text"] for v in verdict_lines(outcome.comparisons, rolling.baselines)]
    return dg.MaterializeResult(
        metadata={
            "windows": outcome.windows,
            "rows": len(outcome.rows),
            "failed_policies": dg.MetadataValue.json(outcome.failures),
            "left_out": dg.MetadataValue.json(outcome.left_out),
            "rolling_table": dg.MetadataValue.md(table.to_markdown(index=False)),
            "verdicts": dg.MetadataValue.md("\n".join(f"- {v}" for v in verdicts)),
            "plot": png_markdown(
                rolling_ci_png(outcome.summary, "total_return", "total return per window: mean and 95% CI"),
                "rolling total return",
            ),
        },
        data_version=combined_version(build),
    )


@warehouse_asset(
    EVALUATION,
    "The evaluation report from the eval.* rows: self-contained HTML and a Markdown twin under "
    "$STOCKER_HOME/reports/evaluation/ (indexed in eval.reports).",
    deps=[backtests, rolling_evaluation, splits],
    automation_condition=WEEKLY_RETRAIN,
    kinds={"duckdb", "html"},
)
def evaluation_report(
    context: dg.AssetExecutionContext, config: EvaluationConfig, stocker: StockerResource
) -> dg.MaterializeResult:
    from stocker_core.evaluation.report import build_report

    settings, warehouse = stocker.settings(), stocker.warehouse()
    files = build_report(warehouse, settings.home, REPORT_NAME, config.rolling())
    context_values = files.context
    build = MonthBuild()
    html = files.html.read_bytes()
    build.rows[REPORT_NAME] = 1
    build.data_versions[REPORT_NAME] = frame_version(
        pd.DataFrame({"html": [html.decode("utf-8", "replace")]})
    )
    record_build(context, warehouse, build)
    metadata: dict[str, object] = {
        "html": dg.MetadataValue.path(str(files.html)),
        "markdown": dg.MetadataValue.path(str(files.markdown)),
        "metrics_table": dg.MetadataValue.md(str(context_values["rolling_md"])),
        "verdicts": dg.MetadataValue.md("\n".join(f"- {v['text']}" for v in context_values["verdicts"])),
    }
    equity = next((p for p in files.images if p.name.startswith("equity_")), None)
    if equity is not None:
        metadata["plot"] = png_markdown(equity.read_bytes(), "equity curves over the test period")
    return dg.MaterializeResult(metadata=metadata)
