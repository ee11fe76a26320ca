"""The market's job and what launches it: the corpus refresh every weekday after the US close
(the current month of every ticker), and the sensor that keeps the ticker partitions in step
with the universe file."""

import dagster as dg

from stocker_assets.definitions.automation import REFRESH_CRON, REFRESH_TZ
from stocker_assets.definitions.jobs import group_job
from stocker_assets.definitions.partitions import ticker_partitions
from stocker_core.config import get_settings
from stocker_core.universe import read_universe

market_job = group_job(
    "market_job", "prices, indicators and charts for ticker × month partitions (with their checks)."
)


@dg.schedule(
    job=market_job,
    cron_schedule=REFRESH_CRON,
    execution_timezone=REFRESH_TZ,
    description="Refresh the current month's bars and indicators for every registered ticker.",
)
def corpus_refresh(context: dg.ScheduleEvaluationContext):
    """One run request per ticker for the month of the scheduled time (New York)."""
    when = context.scheduled_execution_time
    month = when.strftime("%Y-%m-01")
    tickers = context.instance.get_dynamic_partitions(ticker_partitions.name)
    if not tickers:
        return dg.SkipReason("no tickers registered: run `stocker tickers add SYMBOL`")
    return [
        dg.RunRequest(
            run_key=f"{ticker}|{when.strftime('%Y-%m-%d')}",
            partition_key=f"{ticker}|{month}",
            tags={"stocker/trigger": "corpus_refresh"},  # Dagster adds the partition's own tags
        )
        for ticker in sorted(tickers)
    ]


@dg.sensor(
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Registers tickers listed in STOCKER_HOME/universe.txt as ticker partitions.",
)
def universe_sync(context: dg.SensorEvaluationContext):
    try:
        wanted = read_universe(get_settings(fresh=True))
    except ValueError as exc:
        return dg.SkipReason(f"universe file is invalid: {exc}")
    known = set(context.instance.get_dynamic_partitions(ticker_partitions.name))
    new = [t for t in wanted if t not in known]
    if not new:
        return dg.SkipReason("every ticker in the universe file is registered")
    return dg.SensorResult(dynamic_partitions_requests=[ticker_partitions.build_add_request(new)])
