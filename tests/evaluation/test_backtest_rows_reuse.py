"""The backtests asset versions the rows the step wrote: the same content, and so the same data
versions, as the rows of each episode's runs built again (what it did before)."""

from evaluation_testing import RULE_POLICIES, store_prices, synthetic_prices

from stocker_core.config import Settings
from stocker_core.evaluation.steps import backtest_partitions, compute_and_store_splits
from stocker_core.evaluation.store import backtest_frames, read_eval
from stocker_core.warehouse.db import Warehouse, frame_version


def test_written_rows_version_like_rows_built_again(tmp_path):
    settings = Settings(home=tmp_path / "home")
    warehouse = Warehouse(settings.warehouse_path)
    store_prices(warehouse, synthetic_prices(days=400))
    compute_and_store_splits(warehouse)
    keys = ["SYN|2015-03-01", "SYN|2016-05-01"]
    (done,) = backtest_partitions(settings, warehouse, keys, RULE_POLICIES, run_id="run-1")
    content = done.content_rows()
    assert sorted(content) == keys
    for key, result in done.results.items():
        again, _ = backtest_frames(result.runs, "episode")
        again = again.drop(columns=["created_at"])
        assert content[key].astype(str).reset_index(drop=True).equals(again.astype(str))
        assert frame_version(content[key].astype(str)) == frame_version(again.astype(str))
    stored = read_eval(warehouse, "eval.backtests").sort_values(["key", "policy"])
    assert len(stored) == len(done.rows) == 2 * len(RULE_POLICIES)
    assert set(stored["run_id"]) == {"run-1"} and stored["month"].notna().all()
