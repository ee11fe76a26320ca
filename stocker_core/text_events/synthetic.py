"""The synthetic market's text: headlines that carry its hidden factor, forum chatter, macro events.

How the planted signal travels (see ``stocker_core.market.synthetic``):

- **Pre-close headlines** (1-3 per ticker per session D, published between 08:00 New
  York and ten minutes before D's close) read as positive or negative as the factor
  ``f_D`` is: each takes ``x = f_D + small noise`` and is the headline of a scored bank
  whose sentiment sits at the quantile of ``x``. The bank is ranked by the project's own
  scorer (``sentiment.score_text``), so the scored sentiment is monotone in ``x`` and has
  the sign of ``x``: the scorer recovers ``f_D``.
- **After-close headlines** (on ~40% of sessions, 10 minutes to 3 hours after D's close)
  carry news that moves the *next* session: their tone follows ``eps_(D+1)``, the
  unpredictable part of ``r_(D+1)``. A decision at D's close must not see them; a
  pipeline that leaked them would show an information coefficient near 0.6.
- **Forum posts** chase the trailing five sessions' return up to the previous close (no
  lead); **macro events** (monthly CPI prints, eight FOMC decisions a year) are noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np
import pandas as pd
from scipy.special import ndtr

from stocker_core.market.calendar import NEW_YORK, session_close
from stocker_core.market.synthetic import SyntheticMarket, SyntheticSpec, synthetic_market
from stocker_core.text_events.events import COLUMNS, TextEvents, sort_events
from stocker_core.text_events.sentiment import score_text

NEWS_SOURCE = "Synthetic Wire"
FORUM = "r/synthstocks"
PRE_CLOSE_NOISE = 0.1
"""Spread of each pre-close headline's tone around f_D (the day's headlines differ a little)."""
AFTER_CLOSE_SHARE = 0.4
AFTER_CLOSE_WEIGHT = 0.6
"""Weight of eps_(D+1) in an after-close headline's tone (the rest is noise)."""
FORUM_RATE = 1.2
"""Forum posts per ticker per session (Poisson)."""
_TEXT_STREAM, _MACRO_STREAM = 2, 3

POSITIVE_NEWS = (
    "beats earnings estimates",
    "raises full-year guidance",
    "wins a major government contract",
    "announces a large share buyback",
    "upgraded to outperform by analysts",
    "shares rally on strong demand",
    "posts record quarterly revenue",
    "soars after a product breakthrough",
    "tops sales forecasts",
    "reports strong growth in cloud unit",
    "shares rebound as margins improve",
    "lands a credible new partnership",
    "sees demand surge for its new line",
    "gets a bullish note from a top broker",
    "expands into a fast-growing market",
)
NEGATIVE_NEWS = (
    "misses earnings estimates",
    "cuts full-year guidance",
    "faces an antitrust probe",
    "announces layoffs across divisions",
    "downgraded to underperform by analysts",
    "shares tumble on weak demand",
    "issues a product recall",
    "hit with a shareholder lawsuit",
    "warns of a sales slowdown",
    "shares slump as losses widen",
    "delays its flagship launch",
    "loses a key customer contract",
    "plunges after a bearish report",
    "faces new export restrictions",
    "disappoints investors with weak outlook",
)
GOOD_NEWS_TAILS = (
    "",
    " as investors cheer",
    " as the outlook improves",
    " after a strong quarter",
    " as rivals struggle",
    " in a volatile session",
    "; analysts stay cautious",
)
BAD_NEWS_TAILS = (
    "",
    " amid sector concerns",
    " amid recession fears",
    " as the market slows",
    " after a weak quarter",
    " in a volatile session",
    "; analysts stay cautious",
)
"""Qualifiers that fit the event's direction (or neither), so every headline reads coherently."""
AFTER_CLOSE_PREFIX = "After the bell: "

BULLISH_TAKES = (
    "{t} to the moon, loading up on calls",
    "bought more {t} today, this looks strong",
    "{t} is a great long here",
    "holding {t}, nice rally lately",
    "{t} looks cheap, happy to add",
    "love the momentum in {t}",
)
BEARISH_TAKES = (
    "trimming my {t} position",
    "{t} looks weak, buying puts",
    "bagholding {t}, this is a disaster",
    "{t} destroyed my portfolio, selling everything",
    "short {t}, the drop is not over",
    "{t} chart looks ugly, staying away",
)
FORUM_TAILS = ("", " lol", " imo", ", not financial advice", "!!", " — thoughts?")

CPI_READINGS = (
    ("CPI comes in hotter than expected, inflation concerns rise", "hawkish"),
    ("CPI in line with forecasts", "neutral"),
    ("CPI cools more than expected, easing inflation worries", "dovish"),
)
FOMC_DECISIONS = (
    ("Fed hikes rates and signals more tightening", "hawkish"),
    ("Fed holds rates steady", "neutral"),
    ("Fed cuts rates to support growth", "dovish"),
)


@dataclass(frozen=True)
class HeadlineBank:
    """Candidate texts ranked by the project's scorer, split by the sign of their score."""

    positive: tuple[str, ...]
    """Scored > 0, weakest first."""
    negative: tuple[str, ...]
    """Scored < 0, weakest (closest to 0) first."""

    @classmethod
    def build(cls, positive: list[str], negative: list[str]) -> HeadlineBank:
        """Rank the texts by score; a text whose score has the wrong sign for its meaning
        (a good event under a gloomy qualifier that the scorer reads as negative) is left
        out, so a reader (VADER or an LLM) and the planted tone agree on the sign."""
        up = sorted((score_text(t), t) for t in dict.fromkeys(positive))
        down = sorted((score_text(t), t) for t in dict.fromkeys(negative))
        bank = cls(tuple(t for s, t in up if s > 0), tuple(t for s, t in reversed(down) if s < 0))
        if not bank.positive or not bank.negative:
            raise ValueError("a headline bank needs both positive and negative texts")
        return bank

    def pick(self, tone: np.ndarray) -> list[str]:
        """For each tone ``x`` (a standard-normal scale), the text at quantile ``|2Φ(x) − 1|``
        of the bank side with the sign of ``x``: its score is monotone in ``x``."""
        strength = np.abs(2.0 * ndtr(tone) - 1.0)
        out = []
        for x, u in zip(tone.tolist(), strength.tolist(), strict=True):
            side = self.positive if x > 0 else self.negative
            out.append(side[min(len(side) - 1, int(u * len(side)))])
        return out


@lru_cache(maxsize=64)
def news_bank(ticker: str, prefix: str = "") -> HeadlineBank:
    """The headline bank of ``ticker`` (each text scored in full, ticker and prefix included)."""

    def texts(events: tuple[str, ...], tails: tuple[str, ...]) -> list[str]:
        return [f"{prefix}{ticker} {event}{tail}" for event in events for tail in tails]

    return HeadlineBank.build(texts(POSITIVE_NEWS, GOOD_NEWS_TAILS), texts(NEGATIVE_NEWS, BAD_NEWS_TAILS))


@lru_cache(maxsize=64)
def forum_bank(ticker: str) -> HeadlineBank:
    def texts(takes: tuple[str, ...]) -> list[str]:
        return [take.format(t=ticker) + tail for take in takes for tail in FORUM_TAILS]

    return HeadlineBank.build(texts(BULLISH_TAKES), texts(BEARISH_TAKES))


def _instants(days: np.ndarray, minutes: np.ndarray) -> pd.Series:
    """New York wall-clock ``day + minutes`` as UTC instants."""
    local = pd.DatetimeIndex(days) + pd.to_timedelta(np.round(np.asarray(minutes) * 60), unit="s")
    return pd.Series(local.tz_localize(NEW_YORK).tz_convert("UTC"))


def _cutoff_minutes(days: pd.DatetimeIndex) -> np.ndarray:
    """Minutes after New York midnight of each session's close (960, or 780 on early closes)."""
    return np.array([_close_minutes(d) for d in days], dtype=float)


@cache
def _close_minutes(day: pd.Timestamp) -> float:
    """One session's close in minutes after New York midnight (every ticker shares the
    sessions: worked out once a day, not once a ticker and day)."""
    close = pd.Timestamp(session_close(day)).tz_convert(NEW_YORK).tz_localize(None)
    return (close - day).total_seconds() / 60.0


def _news_rows(ticker: str, truth: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    days = pd.DatetimeIndex(truth["date"])
    close_min = _cutoff_minutes(days)
    counts = 1 + rng.binomial(2, 0.35, len(days))
    day_of = np.repeat(np.arange(len(days)), counts)
    tone = truth["factor"].to_numpy()[day_of] + PRE_CLOSE_NOISE * rng.standard_normal(len(day_of))
    minutes = rng.uniform(8 * 60, close_min[day_of] - 10)
    pre = pd.DataFrame(
        {
            "day": day_of,
            "headline": news_bank(ticker).pick(tone),
            "published_at": _instants(days[day_of].to_numpy(), minutes),
        }
    )
    surprise = truth["next_surprise"].to_numpy()
    after_days = np.flatnonzero((rng.random(len(days)) < AFTER_CLOSE_SHARE) & np.isfinite(surprise))
    after_tone = AFTER_CLOSE_WEIGHT * surprise[after_days] + np.sqrt(
        1 - AFTER_CLOSE_WEIGHT**2
    ) * rng.standard_normal(len(after_days))
    after_minutes = close_min[after_days] + rng.uniform(10, 180, len(after_days))
    after = pd.DataFrame(
        {
            "day": after_days,
            "headline": news_bank(ticker, AFTER_CLOSE_PREFIX).pick(after_tone),
            "published_at": _instants(days[after_days].to_numpy(), after_minutes),
        }
    )
    rows = pd.concat([pre, after], ignore_index=True)
    return pd.DataFrame(
        {
            "ticker": ticker,
            "date": days[rows["day"].to_numpy()],
            "headline": rows["headline"],
            "source": NEWS_SOURCE,
            "sentiment_label": None,
            "url": None,
            "published_at": rows["published_at"],
            "time_stated": True,
        }
    )


def _forum_rows(ticker: str, truth: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    days = pd.DatetimeIndex(truth["date"])
    returns = truth["log_return"].to_numpy()
    trailing = pd.Series(returns).rolling(5, min_periods=1).sum().shift(1).fillna(0.0).to_numpy()
    scale = max(float(np.std(trailing)), 1e-9)
    counts = rng.poisson(FORUM_RATE, len(days))
    day_of = np.repeat(np.arange(len(days)), counts)
    tone = 0.8 * trailing[day_of] / scale + 0.6 * rng.standard_normal(len(day_of))
    minutes = rng.uniform(7 * 60, 23 * 60, len(day_of))
    return pd.DataFrame(
        {
            "ticker": ticker,
            "date": days[day_of],
            "subreddit": FORUM,
            "score": rng.geometric(0.05, len(day_of)).astype(np.int64),
            "post_text": forum_bank(ticker).pick(tone),
            "published_at": _instants(days[day_of].to_numpy(), minutes),
            "time_stated": True,
        }
    )


def _macro_rows(market: SyntheticMarket) -> pd.DataFrame:
    rng = np.random.default_rng([market.spec.seed, _MACRO_STREAM])
    days = market.sessions
    months = days.to_period("M")
    rows = []
    for month in months.unique():
        in_month = days[months == month]
        cpi_day = in_month[min(len(in_month) - 1, 8)]  # about the 12th
        rows.append((cpi_day, 8 * 60 + 30, CPI_READINGS[int(rng.integers(3))]))
        if month.month in (1, 3, 5, 6, 7, 9, 11, 12):  # eight FOMC meetings a year
            fomc_day = in_month[min(len(in_month) - 1, 12)]
            rows.append((fomc_day, 14 * 60, FOMC_DECISIONS[int(rng.integers(3))]))
    if not rows:
        return pd.DataFrame(columns=COLUMNS["macro"])
    stamps = _instants(np.array([r[0] for r in rows]), np.array([r[1] for r in rows], dtype=float))
    return pd.DataFrame(
        {
            "date": pd.DatetimeIndex([r[0] for r in rows]),
            "country": "US",
            "headline": [r[2][0] for r in rows],
            "policy_signal": [r[2][1] for r in rows],
            "published_at": stamps,
            "time_stated": True,
        }
    )


def _typed(kind: str, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the column order and dtypes of validated events (``events_frame``)."""
    frame = frame[COLUMNS[kind]].copy()
    frame["date"] = pd.to_datetime(frame["date"]).astype("datetime64[ns]")
    frame["published_at"] = pd.to_datetime(frame["published_at"], utc=True).astype("datetime64[ns, UTC]")
    frame["time_stated"] = frame["time_stated"].astype(bool)
    return sort_events(frame)


@lru_cache(maxsize=8)
def synthetic_text(spec: SyntheticSpec) -> TextEvents:
    """News, forum posts and macro events of the synthetic market ``spec`` (cached)."""
    market = synthetic_market(spec)
    news, forums = [], []
    for position, ticker in enumerate(spec.tickers):
        rng = np.random.default_rng([spec.seed, _TEXT_STREAM, position])
        truth = market.truth.loc[market.truth["ticker"] == ticker].reset_index(drop=True)
        news.append(_news_rows(ticker, truth, rng))
        forums.append(_forum_rows(ticker, truth, rng))
    return TextEvents(
        _typed("news", pd.concat(news, ignore_index=True)),
        _typed("forums", pd.concat(forums, ignore_index=True)),
        _typed("macro", _macro_rows(market)),
    )
