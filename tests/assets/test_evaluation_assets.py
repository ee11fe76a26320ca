"""The evaluation group through Dagster on a synthetic ticker stored in the warehouse."""

import sys
from pathlib import Path

import dagster as dg
import pytest

from stocker_assets.definitions.evaluation.assets import (
    backtests,
    evaluation_report,
    rolling_evaluation,
    splits,
)
from stocker_assets.definitions.partitions import ticker_partitions
from stocker_assets.definitions.resources import StockerResource
from stocker_core.warehouse import Warehouse

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evaluation"))
from evaluation_testing import RULE_POLICIES, store_prices, synthetic_prices  # noqa: E402

CONFIG = {"policies": RULE_POLICIES, "window_days": 20, "step_days": 5, "resamples": 200}


def _run_config(*names: str) -> dict:
    return {"ops": {name: {"config": CONFIG} for name in names}}


@pytest.mark.slow
def test_evaluation_assets_write_tables_lineage_and_the_report(tmp_path):
    resource = StockerResource(home=str(tmp_path / "home"))
    warehouse = Warehouse(resource.settings().warehouse_path)
    warehouse.ensure_schema()
    store_prices(warehouse, synthetic_prices(days=400))
    resources = {"stocker": resource}
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, ["SYN"])
        assert dg.materialize([splits], instance=instance, resources=resources).success
        result = dg.materialize(
            [backtests],
            instance=instance,
            resources=resources,
            partition_key="SYN|2015-03-01",
            run_config=_run_config("backtests"),
        )
        assert result.success
        meta = result.asset_materializations_for_node("backtests")[0].metadata
        assert "ideal (hindsight upper bound)" in meta["mean_metrics"].value
        assert meta["plot"].value.startswith("![equity curves](data:image/png;base64,")
        final = dg.materialize(
            [rolling_evaluation, evaluation_report],
            instance=instance,
            resources=resources,
            run_config=_run_config("rolling_evaluation", "evaluation_report"),
        )
        assert final.success
    report_meta = final.asset_materializations_for_node("evaluation_report")[0].metadata
    assert Path(report_meta["html"].value).is_file()
    assert "vs random" in report_meta["metrics_table"].value
    counts = warehouse.query(
        "SELECT (SELECT count(*) FROM eval.backtests WHERE scope = 'episode') AS episode_rows, "
        "(SELECT count(*) FROM eval.splits) AS splits, (SELECT count(*) FROM eval.rolling) AS windows"
    ).iloc[0]
    assert (counts["episode_rows"], counts["splits"], counts["windows"]) == (6, 3, 60)
    lineage = warehouse.query(
        "SELECT asset, partition, upstream_data_versions FROM meta.lineage ORDER BY asset"
    )
    assert set(lineage["asset"]) == {"backtests", "splits", "rolling_evaluation", "evaluation_report"}
    upstream = lineage.loc[lineage["asset"] == "backtests", "upstream_data_versions"].iloc[0]
    assert "prices@SYN|2015-03-01" in upstream and "episodes@SYN|2015-03-01" in upstream
