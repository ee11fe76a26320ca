"""The market the project reads: the data source, its folders, the universe, the months and
the clock."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from stocker_core.data_sources import DataSource, data_source, source_names
from stocker_core.settings.values import (
    TICKER_WORDS,
    absolute_folder,
    blank_folder_is_unset,
    is_ticker,
    parse_month_setting,
    spelt_as_iso,
)

SourceName = str
"""A registered data source's name (``data_sources.source_names()``)."""
CLOCK_SPELLING = "expected an ISO timestamp with a zone, e.g. 2016-03-01T22:00:00+00:00"


class MarketSettings(BaseModel):
    """Paths, source and universe: where bars and text come from, which tickers, which months
    the main job covers, and the clock a replay runs under."""

    source: SourceName = Field(
        default="sample",
        description="Market data source: a registered one (sample: offline, files, yfinance, synthetic, "
        "or one added with register_source)",
    )
    files_dir: Path | None = Field(
        default=None,
        description="Folder of CSV/Parquet bars for the files source: long (a ticker or symbol column) "
        "or one file per symbol",
    )
    start_month: str = Field(
        default="2009-05-01",
        description="First month partition (YYYY-MM or a day; not after this month); on the synthetic "
        "source its first month unless set",
    )
    default_tickers: list[str] = Field(
        default_factory=lambda: ["GOOGL"],
        description="Universe when universe.txt does not exist. Unless set: on the sample source GOOGL "
        "and JPM, JNJ, XOM, PG, KO, WMT, HD, PFE, CVX, UNH; on the synthetic source its tickers",
    )
    main_from: str | None = Field(
        default=None,
        description="The first month `stocker materialize` runs when --from is not given (None: all data; "
        "sample source: 2014-06 unless set)",
    )
    main_to: str | None = Field(
        default=None,
        description="The last month `stocker materialize` runs when --to is not given (None: all data; "
        "sample source: 2018-08, the end of GOOGL's data, unless set)",
    )
    benchmark: str = Field(
        default="^GSPC", description="The council's peer of last resort (synthetic source: ^SYN unless set)"
    )
    peers: dict[str, list[str]] = Field(
        default_factory=dict, description='Peers per ticker, e.g. {"AAPL": ["MSFT"]}'
    )
    commodities: dict[str, str] = Field(
        default_factory=dict, description='Commodity per ticker, e.g. {"XOM": "CL=F"}'
    )
    text_dir: Path | None = Field(
        default=None,
        description="Folder with news.jsonl, forums.jsonl and macro.jsonl (None: STOCKER_FILES_DIR; on the "
        "sample source without either, the reference tasks' text shipped in the package)",
    )
    news_online: bool = False  # also pull recent yfinance headlines for registered tickers
    """The ``news`` asset also pulls recent yfinance headlines of the registered tickers."""
    clock: datetime | None = Field(
        default=None,
        description="An ISO timestamp with zone (None: the wall clock): every source reveals only bars whose "
        "XNYS session closed by it and text published before it; ledger entries made under it are replayed",
    )

    @field_validator("files_dir", "text_dir", mode="before")
    @classmethod
    def _blank_market_folder_is_unset(cls, value: Any, info: ValidationInfo) -> Any:
        return blank_folder_is_unset(cls, value, info)

    @field_validator("files_dir", "text_dir", mode="after")
    @classmethod
    def _absolute_market_folder(cls, value: Path | None) -> Path | None:
        return absolute_folder(value)

    @field_validator("source", mode="after")
    @classmethod
    def _registered_source(cls, value: str) -> str:
        if value not in source_names():
            raise ValueError("expected one of: " + ", ".join(source_names()))
        return value

    @field_validator("start_month", mode="after")
    @classmethod
    def _first_of_month(cls, value: str) -> str:
        month = parse_month_setting(value)
        if month > date.today():
            raise ValueError(f"expected a month no later than this one ({date.today():%Y-%m})")
        return month.isoformat()

    @field_validator("main_from", "main_to", mode="after")
    @classmethod
    def _a_month(cls, value: str | None) -> str | None:
        if value is None or not value.strip():  # blank: all data, as unset
            return None
        return f"{parse_month_setting(value):%Y-%m}"

    @field_validator("benchmark", mode="after")
    @classmethod
    def _a_ticker(cls, value: str) -> str:
        if not is_ticker(value):
            raise ValueError(f"expected a ticker of {TICKER_WORDS}")
        return value

    @field_validator("default_tickers", mode="after")
    @classmethod
    def _tickers(cls, value: list[str]) -> list[str]:
        bad = [name for name in value if not is_ticker(name)]
        if bad:
            raise ValueError(f"expected a JSON list of tickers of {TICKER_WORDS}; not {bad}")
        return value

    @field_validator("peers", "commodities", mode="after")
    @classmethod
    def _tickers_by_ticker(cls, value: dict[str, Any]) -> dict[str, Any]:
        names = [*value, *(name for v in value.values() for name in (v if isinstance(v, list) else [v]))]
        bad = [name for name in names if not is_ticker(name)]
        if bad:
            raise ValueError(f"expected tickers of {TICKER_WORDS}; not {bad}")
        return value

    @field_validator("clock", mode="before")
    @classmethod
    def _clock_spelling(cls, value: Any) -> Any:
        """A timestamp is spelt in ISO 8601, never a number of seconds."""
        return spelt_as_iso(value, CLOCK_SPELLING)

    @field_validator("clock", mode="after")
    @classmethod
    def _clock_has_zone(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError(CLOCK_SPELLING)
        return value

    @property
    def data_source(self) -> DataSource:
        """The registered source ``source`` names, as it describes itself (``DataSource``)."""
        return data_source(self.source)

    @property
    def text_folder(self) -> Path | None:
        """Where text events are read from: ``text_dir``, else ``files_dir``, else the text the
        source ships (``DataSource.text_folder``: on the ``sample`` source the reference tasks'
        headlines shipped in the package)."""
        if self.text_dir or self.files_dir:
            return self.text_dir or self.files_dir
        return self.data_source.text_folder
