"""The documented offline flow (docs/forward-ledger.md: under ``STOCKER_CLOCK``, the month's
``stocker materialize --groups market``, then ``stocker ledger record``) on a home already built
past the clock: no stored partition shrinks or changes (row counts and Parquet bytes of market.*,
env.* and council.*), and the replay records from what is stored up to its clock exactly what
it records on a home holding nothing after the clock."""

from __future__ import annotations

import hashlib
import json
from datetime import date

import pytest
from ledger_testing import FIRST_DECISION, after_close, invoke, set_clock
from typer.testing import CliRunner

from stocker_core.config import Settings, get_settings
from stocker_core.ledger.reader import read_entries
from stocker_core.ledger.store import LedgerStore
from stocker_core.market.gate import ingest_prices
from stocker_core.market.source_builder import get_source
from stocker_core.warehouse.db import Warehouse

POLICIES = "buy_and_hold,macd"
JUNE = FIRST_DECISION.replace(day=1)
DECISION_FIELDS = ("ticker", "policy", "decided_on", "for_session", "target_exposure", "shares",
                   "decision_close", "cost_fraction", "inputs_hash", "mode")  # fmt: skip


def _materialize(*args: str):
    from stocker_assets import pipeline_cli
    from stocker_core.cli import build_app

    return CliRunner().invoke(build_app([pipeline_cli.commands]), ["materialize", "-t", "AAPL", *args])


def _snapshot(settings: Settings) -> dict[str, object]:
    """Row counts of every market/env/council table, the bytes of their part files, and the
    symbol and quality rows (what a clock-limited refresh must leave as it found them)."""
    warehouse = Warehouse(settings.warehouse_path)
    names = warehouse.query(
        "SELECT table_schema || '.' || table_name AS name FROM information_schema.tables "
        "WHERE table_schema IN ('market', 'env', 'council') ORDER BY 1"
    )["name"]
    counts = {n: int(warehouse.query(f"SELECT count(*) AS n FROM {n}")["n"].iloc[0]) for n in names}
    files = {
        p.relative_to(warehouse.parts.root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for schema in ("market", "env", "council")
        for p in sorted((warehouse.parts.root / schema).rglob("*.parquet"))
    }
    symbols = warehouse.query("SELECT ticker, source, first_date, last_date FROM market.symbols")
    quality = warehouse.query("SELECT * FROM market.quality ORDER BY ticker, month")
    return {
        "counts": counts,
        "files": files,
        "symbols": symbols.to_dict("records"),
        "quality": quality.astype(str).to_dict("records"),
    }


def _decisions(result) -> list[tuple]:
    assert result.exit_code == 0, result.output + result.stderr
    written = json.loads(result.stdout)["written"]
    return [tuple(entry[f] for f in DECISION_FIELDS) for entry in written]


@pytest.mark.slow
def test_the_offline_flow_on_a_built_home_changes_nothing_stored_and_records_as_on_a_fresh_one(
    aapl_home, monkeypatch, tmp_path
):
    monkeypatch.setenv("STOCKER_CHARTS", "auto")  # the default: a rule council draws no chart
    built = get_settings(fresh=True)
    assert _materialize("--groups", "market").exit_code == 0  # every month of AAPL's bars
    done = _materialize("--from", "2023-06", "--to", "2023-06", "--groups", "env,council")
    assert done.exit_code == 0, done.output
    before = _snapshot(built)
    assert before["counts"]["market.prices"] > 100 and before["counts"]["council.votes"] > 0
    assert before["counts"]["env.episodes"] == 1

    clocked = set_clock(monkeypatch, after_close(FIRST_DECISION))  # June 1st's close: 1 bar of June
    refresh = _materialize("--from", "2023-06", "--to", "2023-06", "--groups", "market")
    assert refresh.exit_code == 0, refresh.output
    assert _snapshot(clocked) == before
    # what the prices asset does when it runs: the stored month reaches past the clock, it is kept
    report = ingest_prices(get_source(clocked), Warehouse(clocked.warehouse_path), "AAPL", [JUNE])
    assert report.rows == {} and list(report.kept) == ["AAPL|2023-06-01"]
    assert "kept as stored: 21 bars through 2023-06-30" in report.kept["AAPL|2023-06-01"]
    assert len(report.notes) == 1 and "STOCKER_CLOCK" in report.notes[0]
    assert _snapshot(clocked) == before

    recorded = _decisions(invoke("record", "--policies", POLICIES, "--json"))
    assert [(d[1], d[2], d[3], d[-1]) for d in recorded] == [
        ("buy_and_hold", "2023-06-01", "2023-06-02", "replayed"),
        ("macd", "2023-06-01", "2023-06-02", "replayed"),
    ]
    entries = read_entries(LedgerStore(clocked))
    assert {e.source for e in entries} == {"warehouse"}  # read what is stored, up to the clock
    assert invoke("verify").exit_code == 0
    assert _snapshot(clocked) == before

    # the same replay on a home holding nothing after the clock (bars from the source behind it)
    monkeypatch.setenv("STOCKER_HOME", str(tmp_path / "fresh"))
    fresh = get_settings(fresh=True)
    assert not fresh.warehouse_path.exists()
    assert _decisions(invoke("record", "--policies", POLICIES, "--json")) == recorded
    assert date.fromisoformat(recorded[0][3]) > FIRST_DECISION
