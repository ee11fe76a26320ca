"""The evaluation domain: chronological splits, per-episode backtests, the deep-RL baselines,
the rolling evaluation and the report (``assets``, ``drl``), their checks (``checks``) and the
evaluation job."""

import dagster as dg

from stocker_assets.definitions.evaluation import assets, checks, drl
from stocker_assets.definitions.jobs import group_job

evaluation_job = group_job(
    "evaluation_job",
    "splits, per-episode backtests, DRL baselines, the rolling evaluation and the report.",
)


def definitions() -> dg.Definitions:
    """What the evaluation domain adds to the code location."""
    return dg.Definitions(
        assets=[
            assets.backtests,
            assets.evaluation_report,
            assets.rolling_evaluation,
            assets.splits,
            drl.drl_agents,
        ],
        asset_checks=[
            checks.ideal_is_an_upper_bound,
            checks.equity_starts_at_starting_cash,
            checks.report_counts_test_looks,
        ],
        jobs=[evaluation_job],
    )
