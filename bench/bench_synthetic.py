"""The synthetic market's planted signal as the pipeline sees it: for each ic, the Spearman
IC of D's pre-close headline sentiment (the project's scorer) against r_(D+1), and the
``oracle`` policy against buy-and-hold on non-overlapping two-month episodes of every
ticker (mean excess return per episode, its standard error and t), at the environment's
default cost — plus the time to make the market and its text. ``--policies oracle,council``
adds other registered policies (the rule council plays every day: slower).

    python bench/bench_synthetic.py [--ic 0,0.05,0.1] [--years 3] [--tickers 4] [--persistence 0.8]

``--size`` times making the market and its text only, at universe size (issue 49), with the
peak memory of this process: ``python bench/bench_synthetic.py --size --tickers 500 --years 10``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy.stats import spearmanr


def measure(ic: float, years: float, tickers: int, persistence: float, policies: list[str]) -> list[dict]:
    from stocker_core.baselines.oracle import day_sentiment
    from stocker_core.composition import register_all
    from stocker_core.config import Settings, use_settings
    from stocker_core.env.episode import episode_from_bars
    from stocker_core.evaluation.backtests import backtest
    from stocker_core.market.synthetic import SyntheticSpec, synthetic_market
    from stocker_core.text_events.synthetic import synthetic_text

    register_all()
    settings = Settings(
        source="synthetic",
        synth_ic=ic,
        synth_years=years,
        synth_tickers=str(tickers),
        synth_persistence=persistence,
    )
    spec = SyntheticSpec.from_settings(settings)
    started = time.perf_counter()
    market, text = synthetic_market(spec), synthetic_text(spec)
    made = time.perf_counter() - started
    ics, excess = [], {name: [] for name in policies}
    for ticker in spec.tickers:
        truth = market.truth.loc[market.truth["ticker"] == ticker].reset_index(drop=True)
        news = text.news.loc[text.news["ticker"] == ticker]
        ics.append(
            truth.assign(s=day_sentiment(news, truth["date"]), nxt=truth["log_return"].shift(-1)).dropna()
        )
        bars = market.bars[ticker]
        months = pd.period_range(bars["date"].iloc[0], bars["date"].iloc[-1], freq="M")
        for month in months[1:-2:2]:  # whole two-month windows, none overlapping
            key = f"{ticker}|{month.to_timestamp().date()}"
            with use_settings(settings):  # the oracle reads the configured text
                episode = episode_from_bars(key, bars, settings, "synthetic")
                result = backtest(episode, [*policies, "buy_and_hold"], settings=settings)
            if result.failures:
                raise SystemExit(f"{key}: {result.failures}")
            final = {run.policy: run.values[-1] for run in result.runs}
            for name in policies:
                excess[name].append(final[name] / final["buy_and_hold"] - 1)
    rows = pd.concat(ics, ignore_index=True)
    measured = round(float(spearmanr(rows["s"], rows["nxt"])[0]), 4)
    out = []
    for name, values in excess.items():
        values_arr = np.asarray(values)
        se = values_arr.std(ddof=1) / np.sqrt(len(values_arr))
        out.append(
            {
                "ic": ic,
                "measured_ic": measured,
                "policy": name,
                "windows": len(values_arr),
                "excess_per_window": round(float(values_arr.mean()), 4),
                "se": round(float(se), 4),
                "t": round(float(values_arr.mean() / se), 2),
                "make_s": round(made, 2),
            }
        )
    return out


def measure_size(tickers: int, years: float) -> dict:
    """Seconds to make the market (bars and truth) and its text of ``tickers`` × ``years``."""
    import resource

    from stocker_core.config import Settings
    from stocker_core.market.synthetic import SyntheticSpec, synthetic_market
    from stocker_core.text_events.synthetic import synthetic_text

    settings = Settings(source="synthetic", synth_tickers=str(tickers), synth_years=years)
    spec = SyntheticSpec.from_settings(settings)  # 10 years: 2014-01 … 2023-12
    started = time.perf_counter()
    market = synthetic_market(spec)
    made = time.perf_counter() - started
    text = synthetic_text(spec)
    texted = time.perf_counter() - started - made
    return {
        "tickers": tickers,
        "years": years,
        "bars": sum(len(frame) for frame in market.bars.values()),
        "market_s": round(made, 2),
        "text_s": round(texted, 2),
        "headlines": len(text.news),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ic", default="0,0.05,0.1")
    parser.add_argument("--years", type=float, default=3.0)
    parser.add_argument("--tickers", type=int, default=4)
    parser.add_argument("--persistence", type=float, default=0.8)
    parser.add_argument(
        "--policies", default="oracle", help="comma-separated policies to set against buy-and-hold"
    )
    parser.add_argument("--size", action="store_true", help="time making the market and text only")
    args = parser.parse_args()
    if args.size:
        print(" · ".join(f"{key} {value:,}" for key, value in measure_size(args.tickers, args.years).items()))
        return
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    rows = [
        row
        for ic in args.ic.split(",")
        for row in measure(float(ic), args.years, args.tickers, args.persistence, policies)
    ]
    print(pd.DataFrame(rows).to_markdown(index=False))


if __name__ == "__main__":
    main()
