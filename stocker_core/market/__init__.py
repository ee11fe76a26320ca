"""Market data: sources, trading calendar, indicators, candlestick charts, validation.

Public names are resolved lazily (PEP 562): importing the package imports nothing heavy.
"""

from types import ModuleType

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
    "get_source": "source_builder",
    "validate_ticker": "validation",
    "validate_month": "validation",
    "parse_partition_key": "validation",
    "partition_key": "validation",
}

__all__ = sorted(_EXPORTS)


def _submodule(name: str) -> ModuleType:
    """The submodule holding a public name (plain imports, so the import contract sees them)."""
    if name == "bars":
        import stocker_core.market.bars as module
    elif name == "calendar":
        import stocker_core.market.calendar as module
    elif name == "charts":
        import stocker_core.market.charts as module
    elif name == "files_source":
        import stocker_core.market.files_source as module
    elif name == "sample_source":
        import stocker_core.market.sample_source as module
    elif name == "yfinance_source":
        import stocker_core.market.yfinance_source as module
    elif name == "synthetic":
        import stocker_core.market.synthetic as module
    elif name == "frames":
        import stocker_core.market.frames as module
    elif name == "indicators":
        import stocker_core.market.indicators as module
    elif name == "builds":
        import stocker_core.market.builds as module
    elif name == "quality":
        import stocker_core.market.quality as module
    elif name == "sources":
        import stocker_core.market.sources as module
    elif name == "source_builder":
        import stocker_core.market.source_builder as module
    elif name == "validation":
        import stocker_core.market.validation as module
    else:
        raise AttributeError(f"no submodule {name!r}")
    return module


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, _submodule)
