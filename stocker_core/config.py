"""One Settings object for the whole project, read from ``STOCKER_*`` environment variables."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

SourceName = Literal["sample", "files", "yfinance"]


class Settings(BaseSettings):
    """Paths, data source, universe and reward/cost parameters.

    Every field can be set with an environment variable named ``STOCKER_<FIELD>``,
    e.g. ``STOCKER_HOME=/tmp/x STOCKER_SOURCE=files STOCKER_FILES_DIR=...``.
    """

    model_config = SettingsConfigDict(env_prefix="STOCKER_", extra="ignore")

    home: Path = Field(default=Path("data"), description="Root folder for generated content")
    source: SourceName = "sample"
    files_dir: Path | None = Field(default=None, description="Folder of CSV/Parquet bars")
    start_month: str = Field(default="2009-05-01", description="First monthly partition")
    default_tickers: list[str] = Field(default_factory=lambda: ["GOOGL"])
    benchmark: str = Field(default="^GSPC", description="Peer of last resort for the council")
    peers: dict[str, list[str]] = Field(default_factory=dict, description='e.g. {"AAPL": ["MSFT"]}')
    commodities: dict[str, str] = Field(default_factory=dict, description='e.g. {"XOM": "CL=F"}')

    # Episodes and rewards (SPEC §1)
    starting_cash: float = 10_000.0
    episode_months: int = 2
    transaction_cost: float = 0.001
    invalid_penalty: float = 0.01
    w_perf: float = 0.7
    w_infl: float = 0.3
    annual_inflation: float = 0.05
    lookahead_k: int = 0
    lookahead_weight: float = 0.0

    @field_validator("home", "files_dir", mode="after")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        return value.expanduser().resolve() if value is not None else None

    @property
    def warehouse_path(self) -> Path:
        """The DuckDB file holding every table."""
        return self.home / "stocker.duckdb"

    @property
    def universe_path(self) -> Path:
        """Plain-text list of registered tickers, one per line."""
        return self.home / "universe.txt"

    @property
    def charts_dir(self) -> Path:
        return self.home / "charts"

    @property
    def dagster_home(self) -> Path:
        """DAGSTER_HOME used by the ``stocker`` CLI when none is set."""
        return self.home / "dagster"


@lru_cache(maxsize=1)
def _cached_settings() -> Settings:
    return Settings()


def get_settings(fresh: bool = False) -> Settings:
    """The process-wide settings; ``fresh=True`` re-reads the environment."""
    if fresh:
        _cached_settings.cache_clear()
    return _cached_settings()
