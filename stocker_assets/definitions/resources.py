"""Resources: one configurable handle on everything a run depends on.

Every field of ``StockerResource`` mirrors a field of ``stocker_core.config.Settings``
(the single home of defaults). A field left unset (``None``) takes the Settings value,
i.e. the ``STOCKER_*`` variable or the built-in default; ``from_settings()`` fills every
field so the Dagster launchpad shows what a run will use.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import dagster as dg
from pydantic import Field

from stocker_core.config import Settings, activate_settings, deactivate_settings
from stocker_core.data_sources import MarketDataSource
from stocker_core.market.source_builder import get_source
from stocker_core.warehouse import Warehouse

RUN_FIELDS = (
    "home",
    "source",
    "files_dir",
    "text_dir",
    "council_backend",
    "council_moderator",
    "hf_model",
    "hf_adapter",
    "openai_base_url",
    "openai_model",
    "council_workers",
    "llm_concurrency",
    "chart_workers",
    "synth_ic",
    "synth_seed",
    "synth_tickers",
    "synth_years",
    "synth_start",
    "synth_persistence",
)
"""The Settings fields a run can override through the resource."""


class StockerResource(dg.ConfigurableResource):
    """Run configuration: data source, folders, council backend and models, worker counts.

    Unset fields come from ``Settings`` (``STOCKER_*`` variables, then defaults).
    """

    home: str | None = Field(default=None, description="STOCKER_HOME: warehouse, charts, models, reports")
    source: str | None = Field(
        default=None,
        description="Market data source: a registered one (sample, files, yfinance, synthetic or "
        "one added with stocker_core.data_sources.register_source)",
    )
    files_dir: str | None = Field(default=None, description="Folder of CSV/Parquet bars (files source)")
    text_dir: str | None = Field(default=None, description="news/forums/macro .jsonl folder")
    council_backend: str | None = Field(default=None, description="rule, openai or transformers")
    council_moderator: str | None = Field(default=None, description="rule or llm")
    hf_model: str | None = Field(default=None, description="Local model folder or Hub id (transformers)")
    hf_adapter: str | None = Field(default=None, description="Optional LoRA adapter folder")
    openai_base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint")
    openai_model: str | None = Field(default=None, description="Model name at that endpoint")
    council_workers: int | None = Field(default=None, description="Threads voting in parallel")
    llm_concurrency: int | None = Field(default=None, description="Concurrent LLM requests")
    chart_workers: int | None = Field(default=None, description="Chart rendering processes")
    synth_ic: float | None = Field(default=None, description="Synthetic source: planted IC")
    synth_seed: int | None = Field(default=None, description="Synthetic source: seed")
    synth_tickers: str | None = Field(default=None, description="Synthetic source: a count or names")
    synth_years: float | None = Field(default=None, description="Synthetic source: years of sessions")
    synth_start: str | None = Field(default=None, description="Synthetic source: first day (YYYY-MM-DD)")
    synth_persistence: float | None = Field(default=None, description="Synthetic source: factor AR(1)")

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> StockerResource:
        """A resource with every field filled from ``settings`` (default: the environment)."""
        settings = settings or Settings()
        values = {name: getattr(settings, name) for name in RUN_FIELDS}
        return cls(**{k: str(v) if isinstance(v, Path | date) else v for k, v in values.items()})

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        # Library code that asks for get_settings() during this step (policy factories,
        # model loaders) sees the run's configuration, not only the environment's.
        activate_settings(self.settings())

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        deactivate_settings()

    def settings(self) -> Settings:
        """Settings with this resource's fields applied over the environment's."""
        overrides = {name: getattr(self, name) for name in RUN_FIELDS if getattr(self, name) is not None}
        return Settings(**overrides)  # init values win over STOCKER_* variables

    def warehouse(self) -> Warehouse:
        return Warehouse(self.settings().warehouse_path)

    def market_source(self) -> MarketDataSource:
        return get_source(self.settings())

    def charts_dir(self) -> Path:
        return self.settings().charts_dir


def default_resources() -> dict[str, object]:
    """Resources for the local deployment: every run setting shown, filled from Settings."""
    return {"stocker": StockerResource.from_settings()}
