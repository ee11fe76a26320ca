"""``stocker warehouse status|migrate``: the warehouse's layout, partitions and migration."""

from __future__ import annotations

import json

import typer

from stocker_core.cli_support import fail
from stocker_core.errors import StockerError

warehouse_app = typer.Typer(help="The warehouse: DuckDB catalog + Parquet partitions.", no_args_is_help=True)

commands = typer.Typer()
"""What this area adds to ``stocker``: the ``warehouse`` group."""
commands.add_typer(warehouse_app, name="warehouse")


def _warehouse():
    from stocker_core.config import get_settings
    from stocker_core.warehouse import Warehouse

    return Warehouse(get_settings(fresh=True).warehouse_path)


def warehouse_status() -> dict[str, object]:
    """Where the warehouse is, whether it uses the Parquet layout, and what each table holds."""
    from stocker_core.warehouse.schema import PARTITIONED

    warehouse = _warehouse()
    store = warehouse.parts
    tables = {}
    for name, table in PARTITIONED.items():
        parts = store.partitions(table)
        tables[name] = {"partitions": len(parts), "tickers": len({t for t, _ in parts})}
    return {
        "file": str(warehouse.path),
        "parts": str(store.root),
        "layout": "parquet" if store.is_current else ("single-file" if warehouse.path.exists() else "none"),
        "tables": tables,
        "temp_files": [str(p) for p in store.leftover_temp_files()],
    }


@warehouse_app.command("status")
def status_command(as_json: bool = typer.Option(False, "--json", help="Print JSON")) -> None:
    """Layout (parquet / single-file), partitions per table, leftover temp files."""
    report = warehouse_status()
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    typer.echo(f"file:   {report['file']}\nparts:  {report['parts']}\nlayout: {report['layout']}")
    for name, row in report["tables"].items():
        typer.echo(f"  {name:<24} {row['partitions']:>7} partitions  {row['tickers']:>5} tickers")
    if report["temp_files"]:
        typer.echo(f"{len(report['temp_files'])} temp file(s) of interrupted writes (safe to delete)")


@warehouse_app.command("migrate")
def migrate_command(as_json: bool = typer.Option(False, "--json", help="Print JSON")) -> None:
    """Move a single-file warehouse's partitioned tables to Parquet files, checking every
    table's row count and content hash before it is swapped for its view (any command that
    writes does this on its own; this one shows the figures)."""
    warehouse = _warehouse()
    if not warehouse.path.exists():
        fail(StockerError(f"no warehouse at {warehouse.path}: nothing to migrate"))
    try:
        warehouse.ensure_schema()
    except StockerError as exc:
        fail(exc, code=1)
    moved = [m.to_dict() for m in warehouse.migrations]
    if as_json:
        typer.echo(json.dumps({"migrated": moved}, indent=2))
        return
    if not moved:
        typer.echo(f"{warehouse.path}: already in the Parquet layout, nothing to migrate")
    for m in moved:
        typer.echo(
            f"{m['table']:<24} {m['rows_before']:>9} rows -> {m['rows_after']:>9} rows in "
            f"{m['partitions']} partitions; hash {m['hash_before']} == {m['hash_after']}"
        )
