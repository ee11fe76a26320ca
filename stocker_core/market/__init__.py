"""Market data: sources, trading calendar, indicators, candlestick charts, validation.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from stocker_core.lazy import lazy_exports

_EXPORTS = {
    "load_bars": "bars",
    "nyse": "calendar",
    "sessions": "calendar",
    "month_sessions": "calendar",
    "month_end": "calendar",
    "render_chart": "charts",
    "render_months": "charts",
    "chart_path": "charts",
    "ChartDataError": "charts",
    "FilesSource": "files_source",
    "SampleSource": "sample_source",
    "YFinanceSource": "yfinance_source",
    "SyntheticSource": "synthetic",
    "SyntheticSpec": "synthetic",
    "synthetic_market": "synthetic",
    "normalize_bars": "frames",
    "compute_indicators": "indicators",
    "build_prices": "builds",
    "build_indicators": "builds",
    "build_charts": "builds",
    "MonthBuild": "builds",
    "price_problems": "quality",
    "indicator_problems": "quality",
    "MarketDataSource": "sources",
    "SymbolInfo": "sources",
    "get_source": "sources",
    "validate_ticker": "validation",
    "validate_month": "validation",
    "parse_partition_key": "validation",
    "partition_key": "validation",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
