"""The Dagster ``ledger`` (one partition per session) and ``ledger_scores`` assets with their blocking
checks, and the schedule that records after the refresh on sessions only."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import dagster as dg
from ledger_testing import FIRST_DECISION, after_close, set_clock

from stocker_assets.definitions.ledger import (
    CHAIN_INTACT,
    NO_ENTRY_AFTER_OUTCOME,
    LedgerConfig,
    ledger,
    ledger_after_refresh,
    ledger_scores,
)
from stocker_assets.definitions.partitions import ledger_session_partitions
from stocker_assets.definitions.resources import StockerResource
from stocker_core.ledger.store import LedgerStore
from stocker_core.market.clock import next_session


def _run(instance, assets, settings, partition=None):
    return dg.materialize(
        assets,
        instance=instance,
        partition_key=partition,
        resources={"stocker": StockerResource.from_settings(settings)},
        run_config=dg.RunConfig({"ledger": LedgerConfig(policies=["macd"])}) if ledger in assets else None,
        raise_on_error=False,
    )


def _checks(result) -> dict[str, bool]:
    return {e.check_name: e.passed for e in result.get_asset_check_evaluations()}


def test_the_ledger_records_a_session_and_scores_it_with_passing_checks(aapl_home, monkeypatch):
    instance = dg.DagsterInstance.ephemeral()
    day, tomorrow = FIRST_DECISION, next_session(FIRST_DECISION)
    instance.add_dynamic_partitions(ledger_session_partitions.name, [str(day)])
    settings = set_clock(monkeypatch, after_close(day))
    result = _run(instance, [ledger], settings, str(day))
    assert result.success and _checks(result) == {CHAIN_INTACT: True, NO_ENTRY_AFTER_OUTCOME: True}
    meta = result.asset_materializations_for_node("ledger")[0].metadata
    assert meta["written"].value == 2 and meta["for_session"].value == str(tomorrow)

    settings = set_clock(monkeypatch, after_close(tomorrow))
    scored = _run(instance, [ledger_scores], settings)
    assert scored.success and _checks(scored) == {CHAIN_INTACT: True, NO_ENTRY_AFTER_OUTCOME: True}
    assert scored.asset_materializations_for_node("ledger_scores")[0].metadata["scored"].value == 2


def test_a_late_recording_fails_the_blocking_check_and_writes_nothing(aapl_home, monkeypatch):
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(ledger_session_partitions.name, [str(FIRST_DECISION)])
    settings = set_clock(monkeypatch, after_close(next_session(FIRST_DECISION)))  # a missed evening
    result = _run(instance, [ledger], settings, str(FIRST_DECISION))
    assert not result.success
    assert _checks(result) == {CHAIN_INTACT: True, NO_ENTRY_AFTER_OUTCOME: False}
    assert LedgerStore(settings).entry_files() == []


def test_the_schedule_records_on_sessions_only():
    new_york = ZoneInfo("America/New_York")
    with dg.instance_for_test() as instance:
        holiday = datetime(2023, 7, 4, 19, tzinfo=new_york)
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=holiday) as context:
            assert isinstance(ledger_after_refresh(context), dg.SkipReason)
        session = datetime(2023, 7, 5, 19, tzinfo=new_york)
        with dg.build_schedule_context(instance=instance, scheduled_execution_time=session) as context:
            requests = ledger_after_refresh(context)
        assert instance.get_dynamic_partitions(ledger_session_partitions.name) == ["2023-07-05"]
    assert [r.partition_key for r in requests] == ["2023-07-05", None]
    assert [r.job_name for r in requests] == [None, "ledger_scores_job"]
    assert ledger_after_refresh.cron_schedule == "0 19 * * 1-5"
