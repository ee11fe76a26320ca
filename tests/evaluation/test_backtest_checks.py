"""The backtest invariants on hand-made eval.* rows."""

import pandas as pd

from stocker_core.evaluation.backtest_checks import (
    ideal_shortfalls,
    missing_first_steps,
    start_cash_mismatches,
)


def test_ideal_must_end_highest():
    rows = pd.DataFrame(
        {
            "key": ["A|2023-01-01"] * 3 + ["A|2023-02-01"] * 2 + ["A|2023-03-01"],
            "policy": ["ideal", "buy_and_hold", "council", "ideal", "council", "council"],
            "final_value": [11_000.0, 10_500.0, 11_000.0, 10_100.0, 10_100.5, 9_000.0],
        }
    )
    problems = ideal_shortfalls(rows)
    assert set(problems) == {"A|2023-02-01", "A|2023-03-01"}  # a tie with the ideal is fine
    assert problems["A|2023-02-01"] == ["council ends at 10,100.50 > ideal 10,100.00"]
    assert problems["A|2023-03-01"] == ["no ideal row"]
    assert ideal_shortfalls(pd.DataFrame()) == {}


def test_equity_curves_start_at_the_starting_cash():
    first = pd.DataFrame(
        {
            "key": ["A|2023-01-01", "A|2023-01-01", "A|2023-02-01"],
            "policy": ["ideal", "council", "council"],
            "value": [10_000.0, 9_990.0, 5_000.0],
        }
    )
    problems = start_cash_mismatches(first, {"A|2023-02-01": 5_000.0}, default_cash=10_000.0)
    assert problems == {"A|2023-01-01": ["council starts at 9,990.00, not 10,000.00"]}
    rows = pd.DataFrame({"key": ["A|2023-01-01", "A|2023-01-01"], "policy": ["ideal", "random"]})
    assert missing_first_steps(rows, first) == {"A|2023-01-01": ["random has no equity curve"]}
