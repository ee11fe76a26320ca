"""Run the configured council backend over an episode's days into the vote cache, then
report parse failures, seconds per vote and the Spearman IC of the signals against
next-day returns (read back from the cache, so an interrupted run reports what it wrote).

    STOCKER_COUNCIL_BACKEND=transformers STOCKER_HF_MODEL=smollm2 \\
    STOCKER_SOURCE=files STOCKER_FILES_DIR=path/to/seed_tasks \\
        python bench/llm_council_run.py --task task_easy
    STOCKER_SOURCE=sample ... python bench/llm_council_run.py --ticker GOOGL \\
        --start 2016-03-01 --end 2016-03-31
    python bench/llm_council_run.py --task task_easy --report-only   # just the figures
"""

from __future__ import annotations

import argparse
import json
import time

import pandas as pd
from scipy.stats import spearmanr

from stocker_core.composition import register_all
from stocker_core.config import get_settings
from stocker_core.council.backends import get_backend
from stocker_core.council.cache import VoteCache
from stocker_core.council.roles import ROLE_NAMES
from stocker_core.council.voting import run_votes
from stocker_core.decision_context.decision import load_council_inputs
from stocker_core.env.peers import context_symbols
from stocker_core.env.tasks import TASKS
from stocker_core.warehouse.db import Warehouse


def _window(args: argparse.Namespace) -> tuple[str, str, str]:
    if args.task:
        task = TASKS[args.task]
        start = pd.Timestamp(task.month)
        end = start + pd.DateOffset(months=2) - pd.Timedelta(days=1)
        return task.ticker, str(start.date()), str(end.date())
    return args.ticker, args.start, args.end


def information_coefficients(votes: pd.DataFrame, bars: pd.DataFrame) -> dict[str, object]:
    """Spearman IC of each role's signal (and of the mean signal) against the next session's
    return, with the number of days it rests on."""
    closes = pd.Series(bars["close"].to_numpy(float), index=pd.to_datetime(bars["date"]))
    forward = (closes.shift(-1) / closes - 1).rename("next_return")
    wide = votes.pivot_table(index="date", columns="role", values="signal")
    wide["mean_signal"] = wide.mean(axis=1)
    joined = wide.join(forward, how="inner").dropna(subset=["next_return"])
    out: dict[str, object] = {"days": len(joined)}
    for column in wide.columns:
        pair = joined[[column, "next_return"]].dropna()
        if len(pair) >= 5 and pair[column].nunique() > 1:
            rho, p = spearmanr(pair[column], pair["next_return"])
            out[column] = {"ic": round(float(rho), 3), "p": round(float(p), 3), "n": len(pair)}
        else:
            out[column] = {"ic": None, "n": len(pair)}
    return out


def main() -> None:
    register_all()  # an entry point, as the `stocker` command is: sources, policies, specialists
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task")
    parser.add_argument("--ticker")
    parser.add_argument("--start")
    parser.add_argument("--end")
    parser.add_argument("--limit", type=int, default=0, help="Only the first N days")
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    settings = get_settings(fresh=True)
    ticker, start, end = _window(args)
    peers, commodity = context_symbols(ticker, settings)
    inputs = load_council_inputs(ticker, start, end, peers=peers, commodity=commodity, settings=settings)
    days = inputs.trading_days(start, end)
    if args.limit:
        days = days[: args.limit]
    cache = VoteCache(Warehouse(settings.warehouse_path))
    stats: dict[str, object] = {}
    name = settings.council_backend
    model_id = settings.hf_model if name == "transformers" else settings.openai_model
    versions = None  # --report-only reads every prompt version of the model (no model loaded)
    if not args.report_only:
        backend = get_backend(settings)
        name, model_id = backend.name, backend.model_id
        versions = {role: backend.prompt_version(role) for role in ROLE_NAMES}
        started = time.perf_counter()
        run = run_votes(
            ticker,
            days,
            inputs.context,
            backend,
            cache,
            max_workers=1,
            progress=lambda done, total: print(
                f"{done}/{total} votes, {time.perf_counter() - started:.0f} s", flush=True
            ),
        )
        seconds = time.perf_counter() - started
        stats = {**run.stats, "seconds": round(seconds, 1)}
        if run.stats["misses"]:
            stats["seconds_per_vote"] = round(seconds / run.stats["misses"], 2)
    started = time.perf_counter()
    cached = cache.votes_for(ticker, days, backend=name, model_id=model_id, prompt_versions=versions)
    stats["cache_read_s"] = round(time.perf_counter() - started, 3)
    stats["cached_votes"] = len(cached)
    stats["parse_failures_in_cache"] = int(cached["parse_error"].sum()) if len(cached) else 0
    stats["days_with_votes"] = int(cached["date"].nunique()) if len(cached) else 0
    report = {
        "ticker": ticker,
        "window": [start, end],
        "backend": name,
        "model": model_id,
        "prompt_versions": int(cached["prompt_version"].nunique()) if len(cached) else 0,
        "mode": settings.llm_mode,
        "masked": settings.llm_mask,
        **stats,
        "mean_signal_by_role": cached.groupby("role")["signal"].mean().round(3).to_dict()
        if len(cached)
        else {},
        "information_coefficient": information_coefficients(cached, inputs.bars) if len(cached) else {},
    }
    print(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
