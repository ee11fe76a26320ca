"""Planted-future data for the agent's tools: a decision day D with rows before, on, after
its close and after D, so a test can prove nothing later than the cut-off comes back."""

from __future__ import annotations

import numpy as np
import pandas as pd
from stocker_testing import make_bars

from stocker_core.text_events.events import TextEvents

DECISION_DAY = pd.Timestamp("2023-06-14")  # a Wednesday, regular 16:00 close (20:00 UTC)
FUTURE_CLOSE = 999.0


def planted_bars() -> pd.DataFrame:
    """300 business days of closes 100, 101, …; every day after D closes at 999."""
    bars = make_bars(np.arange(100.0, 400.0), start="2022-06-01")
    future = bars["date"] > DECISION_DAY
    bars.loc[future, ["open", "high", "low", "close", "adj_close"]] = FUTURE_CLOSE
    return bars


def planted_text() -> TextEvents:
    """News/forums/macro: date-only rows on D-1 (visible), D and D+1 (not: published after the
    close), and timestamped rows at 15:59 (visible) and 16:01 New York on D (not)."""
    ny = "America/New_York"

    def stamp(text: str) -> pd.Timestamp:
        return pd.Timestamp(text, tz=ny).tz_convert("UTC")

    news = pd.DataFrame(
        {
            "ticker": "SYN",
            "date": pd.to_datetime(["2023-06-13", "2023-06-14", "2023-06-15", "2023-06-14", "2023-06-14"]),
            "headline": [
                "SYN beats estimates in strong quarter",
                "FUTURE same-day date-only headline",
                "FUTURE next-day headline plunges",
                "SYN upgraded before the bell",
                "FUTURE after-close headline",
            ],
            "source": "wire",
            "sentiment_label": None,
            "url": None,
            "published_at": [
                stamp("2023-06-14 00:00"),  # a date-only D-1 row: end of D-1
                stamp("2023-06-15 00:00"),
                stamp("2023-06-16 00:00"),
                stamp("2023-06-14 15:59"),
                stamp("2023-06-14 16:01"),
            ],
        }
    )
    forums = pd.DataFrame(
        {
            "ticker": "SYN",
            "date": pd.to_datetime(["2023-06-12", "2023-06-14", "2023-06-20"]),
            "subreddit": "stocks",
            "score": [10, 50, 99],
            "post_text": ["SYN rally looks strong", "FUTURE same day post", "FUTURE next week post"],
        }
    )
    macro = pd.DataFrame(
        {
            "date": pd.to_datetime(["2023-06-01", "2023-06-14", "2023-07-01"]),
            "country": "US",
            "headline": ["CPI hotter than expected", "FUTURE FOMC decision", "FUTURE July CPI"],
            "policy_signal": ["hawkish", "dovish", "dovish"],
        }
    )
    return TextEvents(news, forums, macro)


def planted_macro() -> dict[str, pd.DataFrame]:
    bars = make_bars(np.linspace(4000, 4299, 300), start="2022-06-01")[["date", "close"]]
    bars.loc[bars["date"] > DECISION_DAY, "close"] = FUTURE_CLOSE
    return {"^GSPC": bars}
