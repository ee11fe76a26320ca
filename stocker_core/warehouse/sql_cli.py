"""``stocker sql "<query>"``: a read-only SQL query on the warehouse, printed as a table.

The query goes through ``warehouse.read_only``: DuckDB must parse it as one SELECT (or SHOW,
DESCRIBE, SUMMARIZE) whose plan holds no writing operator, and it runs on a read-only catalog
with external access off but for the partitions folder and the configuration locked. COPY (in
a CTE too), EXPORT, ATTACH, CREATE, INSERT, INSTALL, SET, EXPLAIN and the like are refused with
exit code 2, before anything runs; ``--plan`` prints DuckDB's plan of a SELECT instead.
"""

from __future__ import annotations

import typer

from stocker_core.cli_support import fail
from stocker_core.errors import StockerError

commands = typer.Typer()
"""What this area adds to ``stocker``: ``sql``."""


def run_query(path, sql: str):
    """The result of ``sql`` on the warehouse at ``path`` as a DataFrame, read-only
    (``ReadOnlyQueryError`` for a write, a syntax error or a missing warehouse)."""
    from stocker_core.warehouse import Warehouse
    from stocker_core.warehouse.read_only import read_only_query

    return read_only_query(Warehouse(path), sql)


@commands.command("sql")
def sql_command(
    query: str = typer.Argument(..., metavar="QUERY", help='SQL, e.g. "SELECT * FROM market.prices LIMIT 5"'),
    limit: int = typer.Option(
        50, "--limit", min=1, max=1_000_000, help="Rows to print (the table only; --json prints all)"
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as a JSON list of objects"),
    plan: bool = typer.Option(False, "--plan", help="Print DuckDB's plan of the query instead of running it"),
) -> None:
    """Run a read-only SQL query on the warehouse ($STOCKER_HOME/stocker.duckdb) and print it.

    Tables: market.prices, market.indicators, market.charts, env.episodes, council.votes,
    meta.lineage, eval.*, … (`SHOW ALL TABLES` lists them). Writes are refused.
    """
    from stocker_core.config import get_settings

    settings = get_settings(fresh=True)
    try:
        if plan:
            from stocker_core.warehouse import Warehouse
            from stocker_core.warehouse.read_only import query_plan

            typer.echo(query_plan(Warehouse(settings.warehouse_path), query))
            return
        frame = run_query(settings.warehouse_path, query)
    except StockerError as exc:
        fail(exc)
    if as_json:
        typer.echo(frame.to_json(orient="records", date_format="iso"))
        return
    if frame.empty:
        typer.echo(f"(no rows; columns: {', '.join(map(str, frame.columns)) or 'none'})")
        return
    typer.echo(frame.head(limit).to_string(index=False))
    if len(frame) > limit:
        typer.echo(f"… {len(frame) - limit} more row(s) of {len(frame)} (--limit N or --json for all)")
