"""Counted looks at the test split (``eval.test_looks``).

Every evaluation that plays policies on days of a test split records one row: when, who
ran it (``cli``, ``asset`` or ``web``), what it was, the tickers, the policies, the model
versions played and a hash of the settings that decide the results (``look_settings``: the
seed and the reward / cost parameters).

A look is a distinct (model version, settings) seen on test days: the main job's partition
backtests and rolling evaluation, or the same job run again unchanged, show the same results
and count once; the same model evaluated again under other settings (another seed, other
costs) is another look, and a model with more than one is flagged in the report.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime

import pandas as pd

from stocker_core.warehouse.db import Warehouse

WHO = ("cli", "asset", "web")
MODEL_LINEAGE_ASSETS = ("drl_agents", "moderator_base", "moderator_sft", "moderator_grpo", "agent_policy")
"""Assets whose lineage partitions are policy names (trained models): their latest data
version identifies the model a look played."""
RULES = "rules"
"""The version of a policy that is code only (no trained weights, no vote cache)."""


def look_settings(seed: int | None, params: object) -> dict[str, object]:
    """The settings that decide a policy's test results: the seed and the reward parameters."""
    return {"seed": seed, "params": params}


def config_hash(config: Mapping[str, object]) -> str:
    """A short stable hash of the settings a look ran with (JSON, keys sorted)."""
    text = json.dumps(dict(config), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def model_versions(
    warehouse: Warehouse, policies: Sequence[str], vote_versions: Iterable[str | None] = ()
) -> dict[str, str]:
    """``{policy: version}``: the latest recorded model version of trained policies, the vote
    cache versions of the council, ``rules`` for everything else."""
    versions = dict.fromkeys(policies, RULES)
    for asset in MODEL_LINEAGE_ASSETS:
        for policy, version in warehouse.latest_data_versions(asset, list(policies)).items():
            versions[policy] = str(version)
    trained = _trained_runs(warehouse)
    for policy in policies:
        if versions[policy] == RULES and policy in trained:
            versions[policy] = trained[policy]
    if versions.get("agent_base") == RULES and "agent_rl" in trained:  # the warm start of that run
        versions["agent_base"] = f"base of {trained['agent_rl']}"
    votes = sorted({v for v in vote_versions if v})
    if "council" in versions and votes:
        versions["council"] = ",".join(votes)
    return versions


def _trained_runs(warehouse: Warehouse) -> dict[str, str]:
    """``{model_name: weights sha256[:16]}`` of the latest run of each model in ``models.runs``
    (the moderators and the agent, whose assets are not partitioned by policy)."""
    try:
        rows = warehouse.query(
            "SELECT model_name, arg_max(sha256, created_at) AS sha FROM models.runs GROUP BY model_name"
        )
    except Exception:  # no models trained yet
        return {}
    return {str(r.model_name): str(r.sha)[:16] for r in rows.itertuples(index=False) if r.sha}


def record_test_look(
    warehouse: Warehouse,
    who: str,
    what: str,
    tickers: Sequence[str],
    versions: Mapping[str, str],
    config: Mapping[str, object],
    run_id: str | None = None,
) -> str:
    """Append one look to ``eval.test_looks``; returns its id."""
    from stocker_core.evaluation.store import ensure_eval_tables

    if who not in WHO:
        raise ValueError(f"who must be one of {', '.join(WHO)}, got {who!r}")
    look_id = uuid.uuid4().hex
    ensure_eval_tables(warehouse)
    with warehouse.transaction() as con:
        con.execute(
            "INSERT INTO eval.test_looks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                look_id,
                datetime.now(),
                who,
                what,
                json.dumps(sorted(tickers)),
                json.dumps(list(versions)),
                json.dumps(dict(versions), sort_keys=True),
                config_hash(config),
                run_id,
            ],
        )
    return look_id


def look_counts(looks: pd.DataFrame) -> pd.DataFrame:
    """One row per (policy, model version): how many distinct looks (settings hashes) played
    it, when first and last, and ``flag`` when more than one."""
    columns = ["policy", "version", "looks", "first", "last", "flag"]
    if looks.empty:
        return pd.DataFrame(columns=columns)
    rows = []
    for r in looks.itertuples(index=False):
        look = r.config_hash
        for policy, version in json.loads(r.model_versions).items():
            rows.append({"policy": policy, "version": version, "look": look, "at": pd.Timestamp(r.looked_at)})
    frame = pd.DataFrame(rows)
    out = (
        frame.groupby(["policy", "version"], sort=True)
        .agg(looks=("look", "nunique"), first=("at", "min"), last=("at", "max"))
        .reset_index()
    )
    out["flag"] = out["looks"] > 1
    return out[columns]


def looks_of(warehouse: Warehouse, versions: Mapping[str, str]) -> int:
    """How many looks (this one included, once recorded) played any of ``versions``'s models."""
    from stocker_core.evaluation.store import read_eval

    counts = look_counts(read_eval(warehouse, "eval.test_looks"))
    if counts.empty:
        return 0
    mine = counts.loc[
        [(p, v) in versions.items() for p, v in zip(counts["policy"], counts["version"], strict=True)]
    ]
    return int(mine["looks"].max()) if len(mine) else 0


def touches_test(ranges: Mapping[str, tuple[date, date]], tickers_days: Mapping[str, Sequence]) -> list[str]:
    """Tickers of ``tickers_days`` ({ticker: played days}) with a day inside their test range
    (``ranges``: {ticker: (start, end)})."""
    hit = []
    for ticker, days in tickers_days.items():
        if ticker not in ranges:
            continue
        start, end = ranges[ticker]
        if any(start <= pd.Timestamp(d).date() <= end for d in days):
            hit.append(ticker)
    return sorted(hit)


def test_ranges(warehouse: Warehouse) -> dict[str, tuple[date, date]]:
    """{ticker: (first, last) day of its test split}; empty when no splits are stored."""
    from stocker_core.evaluation.splits import SplitError, load_splits

    try:
        splits = load_splits(warehouse)
    except SplitError:
        return {}
    return {r.ticker: (r.start, r.end) for r in splits.ranges if r.split == "test"}


def record_if_test(
    warehouse: Warehouse,
    who: str,
    what: str,
    days_played: Mapping[str, Sequence],
    policies: Sequence[str],
    vote_versions: Iterable[str | None],
    config: Mapping[str, object],
    run_id: str | None = None,
) -> int | None:
    """Record a look when any of ``days_played`` ({ticker: days}) lies in a test split;
    returns how many looks the models played have had (None: not a test look)."""
    tickers = touches_test(test_ranges(warehouse), days_played)
    if not tickers:
        return None
    versions = model_versions(warehouse, policies, vote_versions)
    record_test_look(warehouse, who, what, tickers, versions, config, run_id)
    return looks_of(warehouse, versions)
