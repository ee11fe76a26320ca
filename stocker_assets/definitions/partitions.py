"""Partitions: ticker (dynamic) × trading month (monthly, including the current month).

Dagster orders multi-partition dimensions alphabetically in keys, so the month
dimension is named ``trading_month`` to make keys read ticker first:
``AAPL|2023-08-01``.
"""

import dagster as dg

from stocker_core.config import get_settings

TICKER_DIM = "ticker"
MONTH_DIM = "trading_month"

ticker_partitions = dg.DynamicPartitionsDefinition(name="ticker")
month_partitions = dg.MonthlyPartitionsDefinition(start_date=get_settings().start_month, end_offset=1)
ticker_month_partitions = dg.MultiPartitionsDefinition(
    {TICKER_DIM: ticker_partitions, MONTH_DIM: month_partitions}
)


def month_window_mapping(start_offset: int, end_offset: int = 0) -> dg.MultiPartitionMapping:
    """Same ticker; months from ``start_offset`` to ``end_offset`` relative to this one.

    ``month_window_mapping(-12)`` is a 12-month lookback; ``month_window_mapping(0, 1)``
    is this month and the next (a two-month episode window).
    """
    return dg.MultiPartitionMapping(
        {
            TICKER_DIM: dg.DimensionPartitionMapping(TICKER_DIM, dg.IdentityPartitionMapping()),
            MONTH_DIM: dg.DimensionPartitionMapping(
                MONTH_DIM,
                dg.TimeWindowPartitionMapping(
                    start_offset=start_offset,
                    end_offset=end_offset,
                    allow_nonexistent_upstream_partitions=True,
                ),
            ),
        }
    )


def months_by_ticker(keys: list[str]) -> dict[str, list]:
    """Group ``TICKER|YYYY-MM-01`` keys into {ticker: [month start dates]}, validated."""
    from stocker_core.market.validation import parse_partition_key

    grouped: dict[str, list] = {}
    for key in keys:
        ticker, month = parse_partition_key(key)
        grouped.setdefault(ticker, []).append(month)
    return {t: sorted(ms) for t, ms in grouped.items()}


ledger_session_partitions = dg.DynamicPartitionsDefinition(name="ledger_session")
"""XNYS sessions (``YYYY-MM-DD``) at whose close the ``ledger`` records the next session's
decisions: added by the ``ledger_after_refresh`` schedule on sessions only (nothing on holidays),
or by hand from the launch dialog."""
