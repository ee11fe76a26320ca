"""The corpus refresh: every weekday after the US close, the current month of every ticker."""

import dagster as dg

from stocker_assets.definitions.jobs import market_job
from stocker_assets.definitions.partitions import ticker_partitions

REFRESH_CRON = "30 18 * * 1-5"  # 18:30 New York time, after the 16:00 close
REFRESH_TZ = "America/New_York"


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


LEDGER_CRON = "0 19 * * 1-5"  # 19:00 New York: half an hour after the corpus refresh
LEDGER_PARTITIONS = "ledger_session"


@dg.schedule(
    job_name="ledger_job",
    cron_schedule=LEDGER_CRON,
    execution_timezone=REFRESH_TZ,
    description="After the refresh, on sessions: record the next session's decisions, score the landed ones.",
)
def ledger_after_refresh(context: dg.ScheduleEvaluationContext):
    """The session of the scheduled day (New York) as a ``ledger`` partition and its run, plus a
    ``ledger_scores`` run; nothing on a holiday. A missed evening is never back-filled: a later
    recording for that session is refused (its bar exists)."""
    from stocker_core.market.clock import is_session

    day = context.scheduled_execution_time.date()
    if not is_session(day):
        return dg.SkipReason(f"{day} is not an XNYS session: nothing to record")
    key = day.isoformat()
    context.instance.add_dynamic_partitions(LEDGER_PARTITIONS, [key])
    tags = {"stocker/trigger": "ledger_after_refresh"}
    return [
        dg.RunRequest(run_key=f"ledger|{key}", partition_key=key, tags=tags),
        dg.RunRequest(run_key=f"ledger_scores|{key}", job_name="ledger_scores_job", tags=tags),
    ]
