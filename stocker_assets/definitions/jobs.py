"""Which named job runs which asset groups; `stocker materialize` launches its runs through
them, so every run carries the job's name (never ``__ephemeral_asset_job__``). Each domain
defines its job with :func:`group_job` (the ledger's two jobs select their assets by name).

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


def group_job(name: str, description: str) -> dg.UnresolvedAssetJobDefinition:
    """The job ``name`` over its groups in ``JOB_GROUPS``; Dagster infers its partitioning from
    the selected assets (ticker × month, none for training: checked in
    tests/assets/test_definitions.py). Each domain defines its own job with this."""
    return dg.define_asset_job(
        name, selection=dg.AssetSelection.groups(*JOB_GROUPS[name]), description=description
    )


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
