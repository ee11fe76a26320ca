"""Resources: one configurable handle on Stocker's settings, warehouse and data source."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from stocker_core.config import Settings
from stocker_core.market.sources import MarketDataSource, get_source
from stocker_core.warehouse import Warehouse


class StockerResource(dg.ConfigurableResource):
    """Settings overrides for a deployment or a test; unset fields come from STOCKER_* vars."""

    home: str | None = None
    source: str | None = None
    files_dir: str | None = None

    def settings(self) -> Settings:
        overrides = {
            k: v
            for k, v in {"home": self.home, "source": self.source, "files_dir": self.files_dir}.items()
            if v is not None
        }
        return Settings(**overrides)  # init values win over STOCKER_* variables

    def warehouse(self) -> Warehouse:
        return Warehouse(self.settings().warehouse_path)

    def market_source(self) -> MarketDataSource:
        return get_source(self.settings())

    def charts_dir(self) -> Path:
        return self.settings().charts_dir


def default_resources() -> dict[str, object]:
    """Resources for the local deployment (everything from STOCKER_* variables)."""
    return {"stocker": StockerResource()}
