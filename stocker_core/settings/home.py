"""Where everything generated lives: ``STOCKER_HOME`` and the paths under it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from stocker_core.settings.values import absolute_folder, blank_folder_is_unset


class HomeSettings(BaseModel):
    """The home folder: the warehouse, charts, models, reports, the CLI's Dagster instance and
    the universe file are under it."""

    home: Path = Field(
        default=Path("data"),
        description="Root of everything generated: the warehouse, charts, models, reports, the CLI's "
        "Dagster instance and the universe file (a relative path is taken from the working folder)",
    )

    @field_validator("home", mode="before")
    @classmethod
    def _blank_home_is_unset(cls, value: Any, info: ValidationInfo) -> Any:
        return blank_folder_is_unset(cls, value, info)

    @field_validator("home", mode="after")
    @classmethod
    def _absolute_home(cls, value: Path) -> Path | None:
        return absolute_folder(value)

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
