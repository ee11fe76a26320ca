"""The ledger domain: the forward paper-trading ledger (docs/forward-ledger.md), its two jobs and
the evening schedule that runs them.

``ledger`` (one partition per XNYS session D) records, at D's close, every policy's decision
for the next session, hash-chained, and is refused when that session's bar exists already;
``ledger_scores`` scores the entries whose outcome bars have landed and stores each policy's
forward record. Both carry two blocking checks: the chain is intact, and no entry was recorded
at or after its outcome (a refused recording fails the second).
"""

from datetime import date

import dagster as dg

from stocker_assets.definitions.automation import REFRESH_TZ
from stocker_assets.definitions.code_versions import module_code_version
from stocker_assets.definitions.council import specialist_votes
from stocker_assets.definitions.market.assets import prices
from stocker_assets.definitions.partitions import ledger_session_partitions
from stocker_assets.definitions.resources import StockerResource

LEDGER = "ledger"
CHAIN_INTACT = "chain_intact"
NO_ENTRY_AFTER_OUTCOME = "no_entry_after_outcome"
EVERY_PARTITION = dg.AllPartitionMapping()
"""A session's recording reads every ticker's bars (and votes) up to its close: lineage to all of them."""
LATE = "not before its outcome"
"""How ``verify_chain`` words an entry recorded at or after its outcome bar's close."""


class LedgerConfig(dg.Config):
    """The policies to record (empty: ``STOCKER_LEDGER_POLICIES``); buy-and-hold always."""

    policies: list[str] = []


def _checks(asset: str) -> list[dg.AssetCheckSpec]:
    return [
        dg.AssetCheckSpec(
            CHAIN_INTACT,
            asset=asset,
            blocking=True,
            description="Every entry re-hashes; links and head match.",
        ),
        dg.AssetCheckSpec(
            NO_ENTRY_AFTER_OUTCOME,
            asset=asset,
            blocking=True,
            description="No entry recorded at or after its outcome bar's close; no refused recording.",
        ),
    ]


def _check_results(asset: str, problems: list[str], refused: str | None) -> list[dg.AssetCheckResult]:
    """The two checks' verdicts from the verification's problems (and a refusal, if any)."""
    late = [p for p in problems if LATE in p]
    broken = [p for p in problems if LATE not in p]
    timing = ([refused] if refused else []) + late
    return [
        dg.AssetCheckResult(
            asset_key=asset,
            check_name=CHAIN_INTACT,
            passed=not broken,
            severity=dg.AssetCheckSeverity.ERROR,
            metadata={"problems": len(broken), "first": broken[0] if broken else "none"},
        ),
        dg.AssetCheckResult(
            asset_key=asset,
            check_name=NO_ENTRY_AFTER_OUTCOME,
            passed=not timing,
            severity=dg.AssetCheckSeverity.ERROR,
            metadata={"problems": len(timing), "first": timing[0] if timing else "none"},
        ),
    ]


def _record_markdown(record) -> str:
    if len(record) == 0:
        return "no scored entries yet"
    shown = record[["mode", "policy", "days", "cumulative_return", "excess_cumulative", "p_value"]]
    return shown.to_markdown(index=False, floatfmt=".4f")


@dg.asset(
    partitions_def=ledger_session_partitions,
    group_name=LEDGER,
    code_version=module_code_version(__name__),
    deps=[
        dg.AssetDep(prices, partition_mapping=EVERY_PARTITION),
        dg.AssetDep(specialist_votes, partition_mapping=EVERY_PARTITION),
        dg.AssetKey("moderator_grpo"),
        dg.AssetKey("agent_policy"),
    ],
    check_specs=_checks(LEDGER),
    kinds={"parquet", "duckdb"},
    description=(
        "At the partition session's close, each universe ticker × policy's decision for the next "
        "session (target exposure, model version, inputs hash, recorded-at), appended to the "
        "hash-chained ledger (stocker.parts/ledger, view ledger.entries); refused when that "
        "session's bar exists; a rerun never rewrites an entry."
    ),
)
def ledger(context: dg.AssetExecutionContext, config: LedgerConfig, stocker: StockerResource):
    """Record the next session's decisions at the close of the partition's session."""
    from stocker_core.errors import StockerError
    from stocker_core.ledger.record import LedgerRefusedError, record
    from stocker_core.ledger.service import verify_ledger
    from stocker_core.market.clock import is_session, next_session

    settings = stocker.settings()
    decided_on = date.fromisoformat(context.partition_key)
    if not is_session(decided_on):
        raise dg.Failure(description=f"{decided_on} is not an XNYS session: ledger partitions are sessions")
    refused, metadata = None, {}
    try:
        result = record(settings, list(config.policies) or None, next_session(decided_on))
        metadata = {
            "written": len(result.written),
            "already_recorded": len(result.already),
            "for_session": result.plan.for_session.isoformat(),
            "mode": result.plan.mode,
            "recorded_at": result.plan.instant.isoformat(),
            "left_out": ", ".join(f"{t}: {why}" for t, why in result.skipped.items()) or "none",
        }
        if result.written:
            metadata["head"] = f"{result.written[-1].seq}:{result.written[-1].hash}"
    except LedgerRefusedError as exc:
        refused = str(exc)
        metadata = {"status": refused, "written": 0}
        context.log.error(refused)
    except StockerError as exc:
        raise dg.Failure(description=str(exc)) from None
    report = verify_ledger(settings)
    return dg.MaterializeResult(
        metadata={**metadata, "entries": report.entries},
        check_results=_check_results(LEDGER, report.problems, refused),
    )


@dg.asset(
    group_name=LEDGER,
    code_version=module_code_version(__name__),
    deps=[ledger],
    check_specs=_checks("ledger_scores"),
    kinds={"parquet", "duckdb"},
    description=(
        "Each ledger entry whose outcome bar has landed, scored (the next-session return at its "
        "target exposure after costs, excess over buy-and-hold; view ledger.scores), and each "
        "policy's forward record, live and replayed apart (days, cumulative return, excess, "
        "95% t-interval of the daily excess, p, minimum detectable edge; view ledger.record)."
    ),
)
def ledger_scores(context: dg.AssetExecutionContext, stocker: StockerResource) -> dg.MaterializeResult:
    """Score the landed outcomes and store the forward record."""
    from stocker_core.errors import StockerError
    from stocker_core.ledger.service import score_ledger, verify_ledger

    settings = stocker.settings()
    try:
        scored = score_ledger(settings)  # refuses a chain that fails verification: nothing written
    except StockerError as exc:
        raise dg.Failure(description=str(exc)) from None
    report = verify_ledger(settings)  # the chain, and the tables just written against it and the bars
    return dg.MaterializeResult(
        metadata={
            "scored": len(scored.scores),
            "pending": scored.pending,
            "forward_record": dg.MetadataValue.md(_record_markdown(scored.record)),
        },
        check_results=_check_results("ledger_scores", report.problems, None),
    )


ledger_job = dg.define_asset_job(
    "ledger_job",
    selection=dg.AssetSelection.assets(ledger),
    description="the forward ledger's recording for one session (with its blocking checks).",
)
ledger_scores_job = dg.define_asset_job(
    "ledger_scores_job",
    selection=dg.AssetSelection.assets(ledger_scores),
    description="the forward ledger's scores and each policy's forward record.",
)

LEDGER_CRON = "0 19 * * 1-5"  # 19:00 New York: half an hour after the corpus refresh


@dg.schedule(
    job_name=ledger_job.name,
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
    context.instance.add_dynamic_partitions(ledger_session_partitions.name, [key])
    tags = {"stocker/trigger": "ledger_after_refresh"}
    return [
        dg.RunRequest(run_key=f"ledger|{key}", partition_key=key, tags=tags),
        dg.RunRequest(run_key=f"ledger_scores|{key}", job_name=ledger_scores_job.name, tags=tags),
    ]


def definitions() -> dg.Definitions:
    """What the ledger domain adds to the code location."""
    return dg.Definitions(
        assets=[ledger, ledger_scores],
        jobs=[ledger_job, ledger_scores_job],
        schedules=[ledger_after_refresh],
    )
