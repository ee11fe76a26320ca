"""Named jobs, one per area of the asset graph; `stocker materialize` launches its runs
through them, so every run carries the job's name (never ``__ephemeral_asset_job__``).

| job | groups |
|---|---|
| ``market_job`` | market: prices, indicators, charts (and their checks) |
| ``env_job`` | env: episodes, ideal trajectories |
| ``council_job`` | text events and council: news, forum posts, macro events, specialist votes |
| ``evaluation_job`` | evaluation: splits, backtests, DRL baselines, rolling evaluation, report |
| ``training_job`` | training: the moderator's base/SFT/GRPO models and the agent policy |
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

JOB_GROUPS: dict[str, tuple[str, ...]] = {
    "market_job": ("market",),
    "env_job": ("env",),
    "council_job": ("text", "council"),
    "evaluation_job": ("evaluation",),
    "training_job": ("training",),
}
"""Job name -> the asset groups it runs (every group belongs to exactly one job)."""

JOB_DESCRIPTIONS = {
    "market_job": "prices, indicators and charts for ticker × month partitions (with their checks).",
    "env_job": "episodes and their hindsight-ideal trajectories for ticker × start-month partitions.",
    "council_job": "text events (news, forum posts, macro events) and the specialists' cached votes.",
    "evaluation_job": "splits, per-episode backtests, DRL baselines, the rolling evaluation and the report.",
    "training_job": "the moderator (base, SFT, GRPO) and the tool-using agent's policy.",
}


def _job(name: str) -> dg.UnresolvedAssetJobDefinition:
    """The job of ``name``'s groups; Dagster infers its partitioning from the selected assets
    (ticker × month, none for training: checked in tests/assets/test_definitions.py)."""
    return dg.define_asset_job(
        name, selection=dg.AssetSelection.groups(*JOB_GROUPS[name]), description=JOB_DESCRIPTIONS[name]
    )


market_job = _job("market_job")
env_job = _job("env_job")
council_job = _job("council_job")
evaluation_job = _job("evaluation_job")
training_job = _job("training_job")

ALL_JOBS = [market_job, env_job, council_job, evaluation_job, training_job]


def job_for_group(group: str) -> str:
    """The name of the job that runs assets of ``group`` (KeyError for an unknown group)."""
    for name, groups in JOB_GROUPS.items():
        if group in groups:
            return name
    raise KeyError(f"no job runs asset group {group!r}: add it to stocker_assets.definitions.jobs.JOB_GROUPS")


def split_by_job(assets: Sequence[dg.AssetsDefinition]) -> list[tuple[str, list[dg.AssetsDefinition]]]:
    """``assets`` (one run's worth) as consecutive (job name, assets) runs that respect
    their dependencies: an asset goes to the earliest run after everything it reads that
    is in ``assets``, sharing a run with upstream assets of its own job.

    E.g. [splits, moderator_base, rolling_evaluation] -> evaluation_job [splits],
    training_job [moderator_base], evaluation_job [rolling_evaluation].
    """
    by_key = {key: a for a in assets for key in a.keys}
    job_of = {key: job_for_group(a.group_names_by_key[key]) for a in assets for key in a.keys}
    level: dict[dg.AssetKey, int] = {}

    def level_of(key: dg.AssetKey, seen: tuple[dg.AssetKey, ...] = ()) -> int:
        if key not in level:
            if key in seen:
                raise ValueError(f"dependency cycle through {key.to_user_string()}")
            asset = by_key[key]
            deps = [u for u in asset.asset_deps.get(key, set()) if u in by_key and u not in asset.keys]
            level[key] = max(
                (level_of(u, (*seen, key)) + (job_of[u] != job_of[key]) for u in deps), default=0
            )
        return level[key]

    runs: dict[tuple[int, int], list[dg.AssetsDefinition]] = {}
    order = list(JOB_GROUPS)
    for asset in dict.fromkeys(by_key.values()):  # a multi-asset once
        keys = list(asset.keys)
        slot = (max(level_of(k) for k in keys), order.index(job_of[keys[0]]))
        runs.setdefault(slot, []).append(asset)
    return [(order[job], runs[(lvl, job)]) for lvl, job in sorted(runs)]
