"""One Settings object for the whole project, read from ``STOCKER_*`` environment variables."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

SourceName = Literal["sample", "files", "yfinance"]
BackendName = Literal["rule", "openai", "transformers"]
ModeratorName = Literal["rule", "llm"]
LLMMode = Literal["scored", "free"]
StructuredOutput = Literal["auto", "json_schema", "logprobs", "off"]
ExecutorName = Literal["in_process", "celery"]


class Settings(BaseSettings):
    """Every default of the project: paths, data source, universe, reward and costs,
    council backend and models, worker counts.

    Every field can be set with an environment variable named ``STOCKER_<FIELD>``,
    e.g. ``STOCKER_HOME=/tmp/x STOCKER_SOURCE=files STOCKER_FILES_DIR=...``; a Dagster
    run takes the same fields from its ``StockerResource``.
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

    # Council (SPEC §1): backend, endpoint, models, runner
    council_backend: BackendName = "rule"
    council_moderator: ModeratorName = "rule"
    openai_base_url: str = "http://127.0.0.1:8000/v1"
    openai_model: str = "gpt-4o-mini"
    openai_api_key: str | None = Field(default=None, description="Falls back to OPENAI_API_KEY")
    openai_multimodal: bool = False
    hf_model: str | None = None
    hf_adapter: str | None = None
    hf_multimodal: bool = False
    hf_load_in_4bit: bool = True  # only ever applied when CUDA is present
    llm_timeout_s: float = Field(default=60.0, gt=0)
    llm_retries: int = Field(default=3, ge=0)
    llm_backoff_s: float = Field(default=0.5, ge=0)
    llm_max_tokens: int = Field(default=256, gt=0)
    llm_temperature: float = Field(default=0.0, ge=0)
    llm_concurrency: int = Field(default=4, ge=1)
    council_workers: int = Field(default=4, ge=1)
    llm_mode: LLMMode = Field(
        default="scored", description="scored: answers scored by likelihood; free: generate and parse"
    )
    llm_rationale: bool = Field(default=False, description="Scored votes also generate a rationale")
    llm_mask: bool = Field(default=True, description="Mask ticker, names, dates and price levels")
    openai_structured: StructuredOutput = Field(
        default="auto", description="OpenAI-compatible: json_schema, logprobs, off, or auto (try in order)"
    )
    vision: bool = Field(default=False, description="Send the chart PNG to the model as an image")
    text_dir: Path | None = Field(default=None, description="news/forums/macro .jsonl drop folder")
    news_online: bool = False  # also pull recent yfinance headlines for registered tickers

    # Work sizes
    chart_workers: int | None = Field(default=None, ge=1, description="Chart processes (None: by size)")

    # Scale-out (`stocker deploy init`): where `stocker materialize` runs each step
    executor: ExecutorName = Field(
        default="in_process", description="in_process: this process; celery: steps on Celery workers"
    )
    celery_broker: str = Field(default="redis://127.0.0.1:6379/0", description="Celery broker URL")
    celery_backend: str | None = Field(default=None, description="Celery result backend (None: the broker)")
    celery_gpu_queue: str | None = Field(
        default=None, description="Celery queue for training steps (a GPU worker listens on it)"
    )
    celery_llm_queue: str | None = Field(
        default=None, description="Celery queue for council vote steps (workers near the LLM server)"
    )

    @field_validator("home", "files_dir", "text_dir", mode="after")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        return value.expanduser().resolve() if value is not None else None

    @model_validator(mode="after")
    def _openai_key_fallback(self) -> Settings:
        if not self.openai_api_key:
            self.openai_api_key = os.environ.get("OPENAI_API_KEY") or None
        return self

    @property
    def text_folder(self) -> Path | None:
        """Where text events are read from: ``text_dir``, else ``files_dir``."""
        return self.text_dir or self.files_dir

    @property
    def warehouse_path(self) -> Path:
        """The DuckDB file (catalog, lineage, small tables; partitions in ``stocker.parts/`` beside it)."""
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


_active: list[Settings] = []
"""Settings put in force by ``use_settings`` (innermost last)."""


def get_settings(fresh: bool = False) -> Settings:
    """The settings in force: those of an enclosing ``use_settings`` block, else the
    process-wide ones read from the environment (``fresh=True`` re-reads it)."""
    if _active:
        return _active[-1]
    if fresh:
        _cached_settings.cache_clear()
    return _cached_settings()


def activate_settings(settings: Settings) -> None:
    """Put ``settings`` in force for ``get_settings()`` until ``deactivate_settings()``."""
    _active.append(settings)


def deactivate_settings() -> None:
    """Undo the innermost ``activate_settings``."""
    if _active:
        _active.pop()


@contextmanager
def use_settings(settings: Settings) -> Iterator[Settings]:
    """Within the block, code that calls ``get_settings()`` (policy factories, loaders)
    sees ``settings``, e.g. a Dagster run's resource configuration."""
    activate_settings(settings)
    try:
        yield settings
    finally:
        deactivate_settings()
