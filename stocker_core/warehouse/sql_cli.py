"""``stocker sql "<query>"``: a read-only SQL query on the warehouse, printed as a table.

The file is opened read-only and external access (files, URLs, ATTACH) is switched off for
the connection, so a query can read the warehouse's tables and nothing else, and write
nothing: INSERT, UPDATE, CREATE, COPY … TO and the like are refused with exit code 2.
"""

from __future__ import annotations

import typer

from stocker_core.cli_support import fail
from stocker_core.errors import StockerError


class QueryError(StockerError, ValueError):
    """The query could not run (a syntax error, an unknown table, an attempted write)."""


def run_query(path, sql: str):
    """The result of ``sql`` on the warehouse at ``path`` as a DataFrame, read-only."""
    import duckdb

    from stocker_core.warehouse import Warehouse

    if not sql.strip():
        raise QueryError("the query is empty")
    if not path.exists():
        raise QueryError(f"no warehouse at {path}: run `stocker materialize` first")
    with Warehouse(path).connect(read_only=True) as con:
        try:
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
            return con.execute(sql).df()
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0]
            if "read-only" in first or "disabled by configuration" in first or "locked" in first:
                first += " (stocker sql only reads the warehouse)"
            raise QueryError(first) from None


def sql_command(
    query: str = typer.Argument(..., metavar="QUERY", help='SQL, e.g. "SELECT * FROM market.prices LIMIT 5"'),
    limit: int = typer.Option(50, "--limit", min=1, help="Rows to print (the table only; --json prints all)"),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as a JSON list of objects"),
) -> None:
    """Run a read-only SQL query on the warehouse ($STOCKER_HOME/stocker.duckdb) and print it.

    Tables: market.prices, market.indicators, market.charts, env.episodes, council.votes,
    meta.lineage, eval.*, … (`SHOW ALL TABLES` lists them). Writes are refused.
    """
    from stocker_core.config import get_settings

    settings = get_settings(fresh=True)
    try:
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


def register(app: typer.Typer) -> None:
    """Add the ``sql`` command to the ``stocker`` app."""
    app.command("sql")(sql_command)
