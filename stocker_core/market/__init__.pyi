"""The public names of ``stocker_core.market``, imported on first use (``__init__.py``)."""

from .bars import load_bars as load_bars
from .calendar import (
    trading_calendar as trading_calendar,
    sessions as sessions,
    month_sessions as month_sessions,
    month_end as month_end,
)
from .charts import (
    render_chart as render_chart,
    render_months as render_months,
    chart_path as chart_path,
    ChartDataError as ChartDataError,
)
from .files_source import FilesSource as FilesSource
from .sample_source import SampleSource as SampleSource
from .yfinance_source import YFinanceSource as YFinanceSource
from .synthetic import (
    SyntheticSource as SyntheticSource,
    SyntheticSpec as SyntheticSpec,
    synthetic_market as synthetic_market,
)
from .frames import normalize_bars as normalize_bars
from .indicators import compute_indicators as compute_indicators
from .builds import (
    build_prices as build_prices,
    build_indicators as build_indicators,
    build_charts as build_charts,
    MonthBuild as MonthBuild,
)
from .quality import (
    indicator_problems as indicator_problems,
    stored_problems_by_month as stored_problems_by_month,
)
from .source_builder import get_source as get_source
from .validation import (
    validate_ticker as validate_ticker,
    validate_month as validate_month,
    parse_partition_key as parse_partition_key,
    partition_key as partition_key,
)
