"""Keeps the ticker partitions in step with the universe file."""

import dagster as dg

from stocker_assets.definitions.partitions import ticker_partitions
from stocker_core.config import get_settings
from stocker_core.universe import read_universe


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
