"""DDL for every warehouse table, one place, and which tables are stored per ticker-month.

The partitioned tables (``PARTITIONED``) live as Parquet files in a hive layout next to the
DuckDB file (see ``partitioned.py``) and appear in it as views of the same name; the others
are ordinary DuckDB tables (catalog, lineage, small tables)."""

from stocker_core.warehouse.partitioned import PartitionedTable

SCHEMAS = ["market", "text", "env", "council", "meta", "models"]

TABLES: dict[str, str] = {
    "market.prices": """
        CREATE TABLE IF NOT EXISTS market.prices (
            ticker VARCHAR NOT NULL, date DATE NOT NULL,
            open DOUBLE, high DOUBLE, low DOUBLE, close DOUBLE NOT NULL,
            adj_close DOUBLE, volume DOUBLE, source VARCHAR,
            PRIMARY KEY (ticker, date))""",
    "market.indicators": """
        CREATE TABLE IF NOT EXISTS market.indicators (
            ticker VARCHAR NOT NULL, date DATE NOT NULL,
            rsi14 DOUBLE, macd DOUBLE, macd_signal DOUBLE, macd_hist DOUBLE,
            sma20 DOUBLE, sma50 DOUBLE, sma200 DOUBLE,
            bb_lower DOUBLE, bb_mid DOUBLE, bb_upper DOUBLE, atr14 DOUBLE,
            PRIMARY KEY (ticker, date))""",
    "market.symbols": """
        CREATE TABLE IF NOT EXISTS market.symbols (
            ticker VARCHAR PRIMARY KEY, source VARCHAR, first_date DATE, last_date DATE,
            close_only BOOLEAN, updated_at TIMESTAMP)""",
    "market.quality": """
        CREATE TABLE IF NOT EXISTS market.quality (
            ticker VARCHAR NOT NULL, month DATE NOT NULL, status VARCHAR NOT NULL,
            problems JSON, accepted JSON, source VARCHAR, checked_at TIMESTAMP,
            PRIMARY KEY (ticker, month))""",
    "market.charts": """
        CREATE TABLE IF NOT EXISTS market.charts (
            ticker VARCHAR NOT NULL, date DATE NOT NULL, path VARCHAR NOT NULL,
            sha256 VARCHAR NOT NULL, width INTEGER, height INTEGER,
            window_start DATE, window_end DATE, input_hash VARCHAR,
            PRIMARY KEY (ticker, date))""",
    "env.episodes": """
        CREATE TABLE IF NOT EXISTS env.episodes (
            ticker VARCHAR NOT NULL, month DATE NOT NULL, key VARCHAR NOT NULL,
            start_date DATE, end_date DATE, trading_days INTEGER, starting_cash DOUBLE,
            first_close DOUBLE, last_close DOUBLE, buy_and_hold_final DOUBLE,
            ideal_total DOUBLE, greedy_total DOUBLE, source VARCHAR,
            PRIMARY KEY (ticker, month))""",
    "env.ideal_trajectories": """
        CREATE TABLE IF NOT EXISTS env.ideal_trajectories (
            ticker VARCHAR NOT NULL, month DATE NOT NULL, step INTEGER NOT NULL, date DATE,
            close DOUBLE, ideal_long BOOLEAN, ideal_shares DOUBLE, ideal_pnl DOUBLE,
            greedy_long BOOLEAN, greedy_shares DOUBLE, greedy_pnl DOUBLE,
            PRIMARY KEY (ticker, month, step))""",
    "meta.lineage": """
        CREATE TABLE IF NOT EXISTS meta.lineage (
            asset VARCHAR NOT NULL, partition VARCHAR, run_id VARCHAR,
            code_version VARCHAR, data_version VARCHAR, upstream_data_versions JSON,
            row_count BIGINT, materialized_at TIMESTAMP)""",
    # what `stocker materialize` decided per asset and partition: the input fingerprint
    # (code, settings, data) of its last successful build, and whether the latest run built
    # or skipped it (stocker_assets/engine/up_to_date.py)
    "meta.builds": """
        CREATE TABLE IF NOT EXISTS meta.builds (
            asset VARCHAR NOT NULL, partition VARCHAR NOT NULL, fingerprint VARCHAR NOT NULL,
            decision VARCHAR NOT NULL, reason VARCHAR, run_id VARCHAR, decided_at TIMESTAMP,
            PRIMARY KEY (asset, partition))""",
    # the files a recorded build vouches for (a partition's Parquet file, chart PNGs, model
    # files): checked before a partition is called up to date (warehouse/outputs.py)
    "meta.outputs": """
        CREATE TABLE IF NOT EXISTS meta.outputs (
            asset VARCHAR NOT NULL, partition VARCHAR NOT NULL, path VARCHAR NOT NULL,
            size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, sha256 VARCHAR NOT NULL,
            recorded_at TIMESTAMP, PRIMARY KEY (asset, partition, path))""",
    "models.runs": """
        CREATE TABLE IF NOT EXISTS models.runs (
            run_id VARCHAR PRIMARY KEY, model_name VARCHAR NOT NULL, kind VARCHAR NOT NULL,
            base_model VARCHAR, config JSON, seed BIGINT, episode_keys JSON,
            vote_cache_version VARCHAR, path VARCHAR, sha256 VARCHAR,
            wall_seconds DOUBLE, metrics JSON, created_at TIMESTAMP)""",
}

TABLES["council.votes"] = """
        CREATE TABLE IF NOT EXISTS council.votes (
            role VARCHAR NOT NULL, backend VARCHAR NOT NULL, model_id VARCHAR NOT NULL,
            prompt_version VARCHAR NOT NULL, ticker VARCHAR NOT NULL, date DATE NOT NULL,
            signal DOUBLE NOT NULL, confidence DOUBLE NOT NULL, rationale VARCHAR,
            parse_error BOOLEAN NOT NULL DEFAULT FALSE, created_at TIMESTAMP,
            PRIMARY KEY (role, backend, model_id, prompt_version, ticker, date))"""


def _partitioned(name: str, key: tuple[str, ...], month_column: str | None = None) -> PartitionedTable:
    return PartitionedTable(name, TABLES[name], key, month_column)


PARTITIONED: dict[str, PartitionedTable] = {
    t.name: t
    for t in (
        _partitioned("market.prices", ("ticker", "date")),
        _partitioned("market.indicators", ("ticker", "date")),
        _partitioned("market.charts", ("ticker", "date")),
        _partitioned("env.episodes", ("ticker", "month"), month_column="month"),
        _partitioned("env.ideal_trajectories", ("ticker", "month", "step"), month_column="month"),
        _partitioned("council.votes", ("role", "backend", "model_id", "prompt_version", "ticker", "date")),
    )
}

# Columns added after a table first shipped: applied to existing warehouses on connect.
# (table, statement); applied to the table while it is still a DuckDB table.
MIGRATIONS: list[tuple[str, str]] = [
    ("market.charts", "ALTER TABLE market.charts ADD COLUMN IF NOT EXISTS input_hash VARCHAR"),
    # which source each stored bar came from (NULL for bars stored before: unknown)
    ("market.prices", "ALTER TABLE market.prices ADD COLUMN IF NOT EXISTS source VARCHAR"),
]
