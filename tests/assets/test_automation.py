"""Declarative automation, evaluated by Dagster's own tester on an ephemeral instance:
a new month of prices for one ticker requests exactly the partitions that read it, and
the weekly cadence retrains only after the Friday tick."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import dagster as dg
import pandas as pd
import pytest

from stocker_assets.definitions.location import defs
from stocker_assets.definitions.partitions import ticker_partitions

NY = ZoneInfo("America/New_York")
PARTITIONED = [
    "prices",
    "indicators",
    "charts",
    "specialist_votes",
    "episodes",
    "ideal_trajectories",
    "backtests",
]
UNPARTITIONED = [
    "news",
    "forum_posts",
    "macro_events",
    "splits",
    "moderator_base",
    "moderator_sft",
    "moderator_grpo",
    "agent_policy",
    "drl_agents",
    "rolling_evaluation",
    "evaluation_report",
]
WEEKLY = [a for a in UNPARTITIONED if a not in ("news", "forum_posts", "macro_events")]


def _months(first: str, last: str) -> list[str]:
    return [m.strftime("%Y-%m-%d") for m in pd.date_range(first, last, freq="MS")]


@pytest.fixture
def instance():
    """Two tickers with every asset materialized through February 2024 (runless events)."""
    with dg.DagsterInstance.ephemeral() as inst:  # in memory: hundreds of events in seconds
        inst.add_dynamic_partitions(ticker_partitions.name, ["AAPL", "MSFT"])
        for ticker in ("AAPL", "MSFT"):
            for month in _months("2022-01-01", "2024-02-01"):
                for asset in PARTITIONED:
                    inst.report_runless_asset_event(
                        dg.AssetMaterialization(asset_key=asset, partition=f"{ticker}|{month}")
                    )
        for asset in UNPARTITIONED:
            inst.report_runless_asset_event(dg.AssetMaterialization(asset_key=asset))
        yield inst


def _requested(result) -> dict[str, list[str | None]]:
    """{asset: sorted requested partition keys ([None] for an unpartitioned asset)}."""
    found = {}
    for res in result.results:
        if isinstance(res.key, dg.AssetKey):
            keys = result.get_requested_partitions(res.key)
            if keys:
                found[res.key.to_user_string()] = sorted(keys, key=str)
    return found


def _tick(instance, when: datetime, cursor=None):
    # every asset and check, as the daemon evaluates them (the project has no source assets;
    # dagster's default selection adds them through a beta parameter and warns)
    everything = dg.AssetSelection.all() | dg.AssetSelection.all_asset_checks()
    return dg.evaluate_automation_conditions(
        defs=defs, instance=instance, asset_selection=everything, evaluation_time=when, cursor=cursor
    )


def _daemon(instance, start: datetime, cursor, ticks: int = 6) -> list[dict[str, list[str | None]]]:
    """Tick every 5 minutes from ``start``; each tick's requests then "run" (recorded as
    materializations). Returns what each tick requested, until a tick requests nothing."""
    waves = []
    for i in range(ticks):
        result = _tick(instance, start + timedelta(minutes=5 * i), cursor)
        cursor, requested = result.cursor, _requested(result)
        if not requested:
            return waves
        waves.append(requested)
        for asset, keys in requested.items():
            for key in keys:
                instance.report_runless_asset_event(dg.AssetMaterialization(asset_key=asset, partition=key))
    raise AssertionError(f"still requesting after {ticks} ticks: {waves[-1]}")


def test_assets_carry_the_documented_conditions():
    graph = defs.resolve_asset_graph()
    labels = {}
    for key in graph.get_all_asset_keys():
        condition = graph.get(key).automation_condition
        labels[key.to_user_string()] = condition.get_label() if condition else None
    for asset in PARTITIONED[1:]:
        assert labels[asset] == "eager (every month)", asset
    for asset in WEEKLY:
        assert labels[asset] == "on_cron(0 18 * * 5, America/New_York)", asset
    assert labels["prices"] is None  # the corpus_refresh schedule drives prices
    sensors = {s.name: s for s in defs.sensors}
    sensor = sensors["default_automation_condition_sensor"]
    assert isinstance(sensor, dg.AutomationConditionSensorDefinition)
    assert sensor.default_status == dg.DefaultSensorStatus.STOPPED


def test_definitions_carry_the_upkeep_checks():
    checks = {(s.asset_key.to_user_string(), s.name) for c in defs.asset_checks for s in c.check_specs}
    model_checks = {"valid_parse_rate", "valid_return_vs_buy_and_hold", "reward_groups_have_spread"}
    expected = {
        ("prices", "prices_are_fresh"),
        ("backtests", "ideal_is_an_upper_bound"),
        ("backtests", "equity_starts_at_starting_cash"),
        ("evaluation_report", "report_counts_test_looks"),
        *(
            (asset, name)
            for asset in ("moderator_sft", "moderator_grpo", "agent_policy")
            for name in model_checks
        ),
    }
    assert expected <= checks
    # the freshness check runs with every prices run, so the corpus refresh (market_job) runs it
    job = defs.resolve_job_def("market_job")
    assert (
        dg.AssetCheckKey(dg.AssetKey("prices"), "prices_are_fresh")
        in job.asset_layer.asset_graph.asset_check_keys
    )


def test_new_month_of_prices_requests_exactly_its_downstream_partitions(instance):
    # Tuesday 2024-03-12: the 18:30 refresh lands March for AAPL only
    first = _tick(instance, datetime(2024, 3, 12, 18, 0, tzinfo=NY))
    assert first.total_requested == 0
    instance.report_runless_asset_event(
        dg.AssetMaterialization(asset_key="prices", partition="AAPL|2024-03-01")
    )
    waves = _daemon(instance, datetime(2024, 3, 12, 18, 45, tzinfo=NY), first.cursor)
    march, feb = "AAPL|2024-03-01", "AAPL|2024-02-01"
    assert waves == [
        {
            "indicators": [march],
            "charts": [march],
            "specialist_votes": [march],
            # the episode starting in February ends in March: it reads the new month too
            "episodes": [feb, march],
            "ideal_trajectories": [feb, march],
        },
        # backtests read two months of votes (a window mapping): Dagster waits for them
        {"backtests": [feb, march]},
    ]
    # nothing for MSFT, for other months, or anything trained: an ordinary day does not retrain


def test_corrected_old_month_is_followed_within_its_lookbacks(instance):
    first = _tick(instance, datetime(2024, 3, 12, 18, 0, tzinfo=NY))
    instance.report_runless_asset_event(
        dg.AssetMaterialization(asset_key="prices", partition="MSFT|2023-06-01")
    )
    waves = _daemon(instance, datetime(2024, 3, 12, 18, 45, tzinfo=NY), first.cursor)
    requested = {a: sorted({k for w in waves for k in w.get(a, [])}) for a in PARTITIONED[1:]}
    # indicators and votes look back 12 months, charts 6; the 2-month episodes start in May or June
    assert requested["indicators"] == [f"MSFT|{m}" for m in _months("2023-06-01", "2024-02-01")]
    assert requested["specialist_votes"] == [f"MSFT|{m}" for m in _months("2023-06-01", "2024-02-01")]
    assert requested["charts"] == [f"MSFT|{m}" for m in _months("2023-06-01", "2023-12-01")]
    assert requested["episodes"] == ["MSFT|2023-05-01", "MSFT|2023-06-01"]
    assert requested["backtests"][:2] == ["MSFT|2023-05-01", "MSFT|2023-06-01"]
    assert not set(WEEKLY) & {a for w in waves for a in w}


def test_weekly_tick_retrains_after_the_friday_refresh(instance):
    first = _tick(instance, datetime(2024, 3, 15, 17, 30, tzinfo=NY))
    assert first.total_requested == 0
    for ticker in ("AAPL", "MSFT"):
        instance.report_runless_asset_event(
            dg.AssetMaterialization(asset_key="prices", partition=f"{ticker}|2024-03-01")
        )
    waves = _daemon(instance, datetime(2024, 3, 15, 18, 45, tzinfo=NY), first.cursor)
    when = {a: i for i, w in enumerate(waves) for a in w}
    assert set(WEEKLY) <= set(when)
    assert all(sum(a in w for w in waves) == 1 for a in WEEKLY)  # each runs once
    assert when["splits"] < when["moderator_base"] <= when["moderator_sft"] <= when["moderator_grpo"]
    assert when["rolling_evaluation"] >= max(
        when[m] for m in ("moderator_grpo", "agent_policy", "drl_agents")
    )
    assert when["evaluation_report"] > when["backtests"]
    assert "news" not in when and "prices" not in when
    # the next weekday's refresh does not retrain
    cursor = _tick(instance, datetime(2024, 3, 18, 18, 0, tzinfo=NY), None).cursor
    instance.report_runless_asset_event(
        dg.AssetMaterialization(asset_key="prices", partition="AAPL|2024-03-01")
    )
    monday = _daemon(instance, datetime(2024, 3, 18, 18, 45, tzinfo=NY), cursor)
    assert monday and not set(WEEKLY) & {a for w in monday for a in w}
