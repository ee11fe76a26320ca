"""Bypass attempts on the read-only SQL console (issue 34, defect 1): whatever DuckDB accepts,
nothing is written and nothing outside the warehouse is read, and a refused statement has
written nothing before it failed."""

from __future__ import annotations

import hashlib
import os
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner
from warehouse_testing import month_bars

from stocker_core.warehouse import Warehouse
from stocker_core.warehouse.read_only import (
    ReadOnlyQueryError,
    check_console_folder,
    planned_operators,
    query_plan,
    read_only_query,
)

JAN = date(2012, 1, 1)
PART = "stocker.parts/market/prices/ticker=GOOGL/month=2012-01/part.parquet"


@pytest.fixture
def warehouse(tmp_path: Path) -> Warehouse:
    home = tmp_path / "home"
    warehouse = Warehouse(home / "stocker.duckdb")
    warehouse.replace_months("market.prices", "GOOGL", [JAN], month_bars("GOOGL", JAN))
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret")
    return warehouse


def _tree(root: Path) -> dict[str, str]:
    """Every file under ``root`` and its content hash."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(".wal")
    }


def corpus(home: Path) -> list[str]:
    part = home / PART
    fresh = home / "stocker.parts" / "market" / "prices" / "ticker=GOOGL" / "month=2012-02" / "part.parquet"
    outside = home.parent / "outside"
    return [
        # the repro of the issue and the forging pair, in a CTE (a SELECT to DuckDB's parser)
        f"WITH x AS (COPY (SELECT 1 AS pwned) TO '{part}' (FORMAT parquet)) SELECT 1 AS done",
        f"WITH x AS (COPY (SELECT * REPLACE (close * 10 AS close) FROM market.prices) TO '{part}' "
        "(FORMAT parquet)) SELECT 1 AS done",
        f"WITH x AS (COPY (SELECT 1 AS a) TO '{fresh}' (FORMAT parquet)) SELECT * FROM x",
        f"WITH a AS (SELECT 1), b AS (COPY (SELECT 2 AS b) TO '{part}') SELECT * FROM a",
        f"SELECT * FROM (WITH x AS (COPY (SELECT 1) TO '{part}') SELECT 1)",
        f"WITH x AS MATERIALIZED (COPY (SELECT 1) TO '{part}') SELECT 1",
        f"COPY (SELECT 1 AS x) TO '{part}' (FORMAT parquet)",
        f"COPY market.prices FROM '{part}'",
        # EXPLAIN ANALYZE runs its statement
        f"EXPLAIN ANALYZE COPY (SELECT 1 AS x) TO '{part}' (FORMAT parquet)",
        f"EXPLAIN ANALYZE WITH x AS (COPY (SELECT 1) TO '{part}') SELECT 1",
        "EXPLAIN ANALYZE SELECT 1",
        "EXPLAIN SELECT 1",
        # table functions
        f"SELECT * FROM read_text('{outside / 'secret.txt'}')",
        f"SELECT * FROM read_csv('{outside / 'secret.txt'}')",
        f"SELECT * FROM read_text('{home / 'stocker.parts'}/../../outside/secret.txt')",
        "SELECT * FROM read_text('stocker.parts/../../outside/secret.txt')",
        "SELECT * FROM glob('/*')",
        "SELECT * FROM read_text('/etc/passwd')",
        f"SELECT * FROM query('COPY (SELECT 1) TO ''{part}''')",
        "SELECT * FROM checkpoint()",
        "SELECT * FROM force_checkpoint()",
        f"SELECT * FROM read_blob('{outside}/*')",
        # macros, prepared statements, variables
        "CREATE TEMP MACRO m() AS 1",
        f"CREATE TEMP MACRO w() AS TABLE (SELECT 1); COPY (SELECT 1) TO '{part}'",
        "SET VARIABLE x = 1",
        f"PREPARE p AS COPY (SELECT 1) TO '{part}'",
        # the catalog, files, extensions and settings
        f"ATTACH '{home / 'other.duckdb'}' AS other",
        f"ATTACH '{outside / 'other.duckdb'}' AS other",
        f"EXPORT DATABASE '{home / 'stocker.parts' / 'dump'}'",
        "CREATE TABLE main.t AS SELECT 1 AS x",
        "CREATE TEMP TABLE t AS SELECT 1 AS x",
        "INSERT INTO meta.lineage SELECT * FROM meta.lineage",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "SET allowed_directories = ['/']",
        "SET lock_configuration = false",
        "RESET enable_external_access",
        "CALL checkpoint()",
        "PRAGMA enable_profiling",
        "CHECKPOINT",
        "VACUUM",
        "SELECT 1; COPY (SELECT 1 AS x) TO 'x.csv'",
    ]


def test_every_bypass_is_refused_before_anything_is_written(warehouse: Warehouse) -> None:
    home = warehouse.path.parent
    before = _tree(home.parent)
    reference = read_only_query(warehouse, "SELECT count(*) AS n, sum(close) AS s FROM market.prices")
    for attack in corpus(home):
        with pytest.raises(ReadOnlyQueryError):
            read_only_query(warehouse, attack)
        assert _tree(home.parent) == before, f"{attack!r} changed a file"
    assert not (home / "other.duckdb").exists() and not (home.parent / "outside" / "other.duckdb").exists()
    again = read_only_query(warehouse, "SELECT count(*) AS n, sum(close) AS s FROM market.prices")
    assert again.equals(reference) and int(again["n"].iloc[0]) == len(month_bars("GOOGL", JAN))


def test_the_plan_names_the_copy_hidden_in_a_cte(warehouse: Warehouse) -> None:
    home = warehouse.path.parent
    with warehouse.read_only_connection() as con:
        ops = planned_operators(con, f"WITH x AS (COPY (SELECT 1) TO '{home / PART}') SELECT 1")
    assert "COPY_TO_FILE" in ops
    with pytest.raises(ReadOnlyQueryError, match=r"plan writes \(COPY_TO_FILE\)"):
        read_only_query(warehouse, f"WITH x AS (COPY (SELECT 1) TO '{home / PART}') SELECT 1")


def test_reads_inside_the_warehouse_still_run(warehouse: Warehouse) -> None:
    home = warehouse.path.parent
    assert len(read_only_query(warehouse, f"SELECT * FROM read_parquet('{home / PART}')")) == len(
        month_bars("GOOGL", JAN)
    )
    assert len(read_only_query(warehouse, "SELECT * FROM market.prices WHERE ticker = ?", ["GOOGL"])) > 0
    plan = query_plan(warehouse, "SELECT * FROM market.prices WHERE close > 0")
    assert "READ_PARQUET" in plan.upper().replace(" ", "_")


def test_the_current_folder_plays_no_part(
    warehouse: Warehouse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Relative paths resolve against the current folder first (issue 34 refused to run beside a
    foreign ``./stocker.parts``; issue 43: the check raced a toggled link). The console's query
    now runs in a pinned folder: a ``stocker.parts`` where the user stands is never read."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "stocker.parts").mkdir(parents=True)
    (elsewhere / "stocker.parts" / "loot.txt").write_text("not the warehouse")
    monkeypatch.chdir(elsewhere)
    loot = read_only_query(warehouse, "SELECT * FROM read_text('stocker.parts/loot.txt')")
    assert loot.empty  # the warehouse's partitions hold no loot.txt
    assert read_only_query(warehouse, "SELECT count(*) AS n FROM market.prices")["n"].iloc[0] == len(
        month_bars("GOOGL", JAN)
    )
    listed = read_only_query(warehouse, "SELECT file FROM glob('stocker.parts/*')")["file"].tolist()
    assert listed and all(not str(f).startswith(str(elsewhere)) for f in listed)
    assert Path.cwd() == elsewhere  # given back after the query
    monkeypatch.chdir(warehouse.path.parent)  # the warehouse's own folder is fine too
    assert check_console_folder(warehouse) == (warehouse.path.parent / "stocker.parts").resolve()
    assert len(read_only_query(warehouse, "SELECT count(*) AS n FROM market.prices")) == 1


def test_a_partitions_folder_that_is_a_symbolic_link_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 43, item 4: the home's ``stocker.parts`` itself a link to an outside folder let
    ``read_text`` read outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    home = tmp_path / "home"
    home.mkdir()
    real = Warehouse(tmp_path / "real" / "stocker.duckdb")
    real.replace_months("market.prices", "GOOGL", [JAN], month_bars("GOOGL", JAN))
    (home / "stocker.duckdb").write_bytes(real.path.read_bytes())
    os.symlink(outside, home / "stocker.parts")
    linked = Warehouse(home / "stocker.duckdb")
    before = _tree(tmp_path)
    for sql in (
        "SELECT content FROM read_text('stocker.parts/secret.txt')",
        f"SELECT content FROM read_text('{home / 'stocker.parts' / 'secret.txt'}')",
        "SELECT count(*) FROM market.prices",
    ):
        with pytest.raises(ReadOnlyQueryError, match="is a symbolic link"):
            read_only_query(linked, sql)
        with pytest.raises(ReadOnlyQueryError, match="is a symbolic link"):
            query_plan(linked, sql)
    from stocker_assets.cli import app

    monkeypatch.setenv("STOCKER_HOME", str(home))
    result = CliRunner().invoke(app, ["sql", "SELECT content FROM read_text('stocker.parts/secret.txt')"])
    assert result.exit_code == 2 and "secret" not in result.output.replace("secret.txt", ""), result.output
    assert result.output.startswith("error: the partitions folder") and len(result.output.splitlines()) == 1
    assert _tree(tmp_path) == before


def test_a_link_toggled_in_the_current_folder_never_leaks(
    warehouse: Warehouse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 43, item 4: toggling ``./stocker.parts`` (a link to an outside folder, then gone)
    during a query leaked an outside file in 9 of 25 runs."""
    import threading

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = elsewhere / "stocker.parts"
    monkeypatch.chdir(elsewhere)
    stop = threading.Event()

    def toggle() -> None:
        while not stop.is_set():
            try:
                os.symlink(tmp_path / "outside", link)
                os.unlink(link)
            except OSError:
                pass

    toggler = threading.Thread(target=toggle, daemon=True)
    toggler.start()
    try:
        for _ in range(40):
            try:
                found = read_only_query(
                    warehouse, "SELECT content FROM read_text('stocker.parts/secret.txt')"
                )
            except ReadOnlyQueryError:
                continue
            assert "secret" not in found.to_string(), "an outside file leaked"
    finally:
        stop.set()
        toggler.join(timeout=5)


def test_a_symbolic_link_in_the_partitions_is_refused(warehouse: Warehouse, tmp_path: Path) -> None:
    home = warehouse.path.parent
    link = home / "stocker.parts" / "market" / "leak"
    os.symlink(tmp_path / "outside", link)
    with pytest.raises(ReadOnlyQueryError, match="symbolic link"):
        read_only_query(warehouse, f"SELECT * FROM read_text('{link}/secret.txt')")


def test_the_cli_refuses_the_repro_in_one_line(warehouse: Warehouse, monkeypatch: pytest.MonkeyPatch) -> None:
    from stocker_assets.cli import app

    home = warehouse.path.parent
    monkeypatch.setenv("STOCKER_HOME", str(home))
    before = _tree(home)
    sql = f"WITH x AS (COPY (SELECT 1 AS pwned) TO '{home / PART}' (FORMAT parquet)) SELECT 1 AS done"
    result = CliRunner().invoke(app, ["sql", sql])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: the query's plan writes (COPY_TO_FILE)")
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert _tree(home) == before
    plan = CliRunner().invoke(app, ["sql", "--plan", "SELECT * FROM market.prices WHERE close > 0"])
    assert plan.exit_code == 0 and "READ_PARQUET" in plan.output.upper().replace(" ", "_")
