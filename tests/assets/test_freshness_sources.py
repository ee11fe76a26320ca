"""``prices_are_fresh`` through Dagster on fixed data sets: the sample and the synthetic market
end where their data ends, so their first run is fresh (issue 35)."""

import dagster as dg
import pytest

from stocker_assets.definitions.market.assets import prices
from stocker_assets.definitions.market.checks import prices_are_fresh, prices_are_valid
from stocker_assets.definitions.partitions import ticker_partitions
from stocker_assets.definitions.resources import StockerResource


def _freshness(tmp_path, ticker: str, month: str, **config) -> dg.AssetCheckEvaluation:
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(ticker_partitions.name, [ticker])
        result = dg.materialize(
            [prices, prices_are_valid, prices_are_fresh],
            instance=instance,
            resources={"stocker": StockerResource(home=str(tmp_path / "home"), **config)},
            partition_key=f"{ticker}|{month}",
        )
    assert result.success
    return next(e for e in result.get_asset_check_evaluations() if e.check_name == "prices_are_fresh")


def test_the_samples_last_month_is_fresh(tmp_path):
    # GOOGL's sample ends Wednesday 2018-08-29: the 30th and 31st are not missing, there is no more
    check = _freshness(tmp_path, "GOOGL", "2018-08-01", source="sample")
    assert check.passed is True
    assert check.metadata["max_missing_sessions"].value == 0
    table = check.metadata["per_ticker"].value
    assert "2018-08-29" in table and "2018-08-29T20:00:00+00:00" in table  # judged as of its last close


@pytest.mark.parametrize("start", ["2021-01-15"])
def test_a_synthetic_market_ending_mid_month_is_fresh(tmp_path, start):
    # 2021-01-15 + 6 months: the market's last session is Wednesday 2021-07-14
    check = _freshness(
        tmp_path,
        "SYN1",
        "2021-07-01",
        source="synthetic",
        synth_start=start,
        synth_years=0.5,
        synth_tickers="SYN1",
    )
    assert check.passed is True
    assert check.metadata["max_missing_sessions"].value == 0
    assert "2021-07-14" in check.metadata["per_ticker"].value
