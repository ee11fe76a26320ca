"""The order of the main job: stages that alternate unpartitioned and per-ticker runs.

An unpartitioned asset (text events, splits, trained models, the rolling evaluation, the
report) runs once; a partitioned one runs per ticker over its months. A stage holds one
unpartitioned run followed by the per-ticker runs; an asset goes to the first stage that
comes after everything it reads. E.g. text → prices…votes | splits, models → backtests |
rolling evaluation → report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

import dagster as dg


@dataclass
class Stage:
    """One unpartitioned run (``unpartitioned`` may be empty), then the per-ticker runs."""

    unpartitioned: list[dg.AssetsDefinition] = field(default_factory=list)
    partitioned: list[dg.AssetsDefinition] = field(default_factory=list)


def plan_stages(assets: Sequence[dg.AssetsDefinition]) -> list[Stage]:
    """Stages for ``assets`` in dependency order (dependencies outside ``assets`` are
    taken as already built). Within a stage the unpartitioned run goes first, so a
    partitioned asset may read an unpartitioned one of its own stage but not the reverse."""
    by_key = {key: a for a in assets for key in a.keys}
    level: dict[dg.AssetKey, int] = {}

    def stage_of(key: dg.AssetKey, seen: tuple[dg.AssetKey, ...] = ()) -> int:
        if key in level:
            return level[key]
        if key in seen:
            raise ValueError(f"dependency cycle through {key.to_user_string()}")
        asset = by_key[key]
        partitioned = asset.partitions_def is not None
        stage = 0
        for upstream in asset.asset_deps.get(key, set()):
            if upstream not in by_key or upstream in asset.keys:
                continue
            up = stage_of(upstream, (*seen, key))
            up_partitioned = by_key[upstream].partitions_def is not None
            # a per-ticker run cannot feed an unpartitioned run of the same stage
            stage = max(stage, up + 1 if up_partitioned and not partitioned else up)
        level[key] = stage
        return stage

    for key in by_key:
        stage_of(key)
    stages: list[Stage] = []
    for asset in dict.fromkeys(by_key.values()):  # each multi-asset once, in the given order
        stage = max(level[k] for k in asset.keys)
        while len(stages) <= stage:
            stages.append(Stage())
        part = stages[stage].partitioned if asset.partitions_def is not None else stages[stage].unpartitioned
        part.append(asset)
    return [s for s in stages if s.unpartitioned or s.partitioned]


@dataclass(frozen=True)
class RunUnit:
    """One lane's work: an unpartitioned asset, or one ticker's partitioned assets of a stage."""

    name: str
    """Unique: the asset's name, or ``TICKER@stage``."""
    label: str
    """What the progress display calls it, e.g. ``stage 2: GOOGL 2014-06…2018-08 (51 months)``."""
    assets: tuple[str, ...]
    """The asset keys (user strings) it materializes."""
    steps: int
    """Steps shown on its bar: assets plus checks."""
    ticker: str | None = None
    months: tuple[date, ...] = ()
    deps: frozenset[str] = frozenset()
    """Names of the units it waits for."""
    members: tuple[RunUnit, ...] = ()
    """A batch (``ticker`` None): the ticker units of one stage it runs together."""
    boxes: tuple[Box, ...] = ()
    """A batch's Dagster runs: each a rectangle of consecutive tickers × contiguous months."""
    up_to_date: tuple[RunUnit, ...] = ()
    """A batch's ticker units found up to date (recorded as skipped, not run)."""

    @property
    def partitioned(self) -> bool:
        """Whether it runs ticker × month partitions (one ticker's, or a batch's)."""
        return self.ticker is not None or bool(self.members or self.up_to_date)


Box = tuple[tuple[str, ...], tuple[date, ...]]
"""(tickers, months): one run over every ticker × month of the rectangle."""


def partition_boxes(parts: Sequence[tuple[str, Sequence[date]]], order: Sequence[str]) -> tuple[Box, ...]:
    """Group ``(ticker, months)`` into as few rectangles as one Dagster run each can cover.

    A multi-partition key range ``A|m0`` … ``B|m1`` selects every ticker from A to B in the
    ticker dimension's order (``order``: Dagster's, the order tickers were registered) times
    every month from m0 to m1. So a box holds tickers consecutive in ``order``, with the same
    months, and contiguous months (a ticker whose months have a gap gets one box per run of
    them). Tickers missing from ``order`` each get their own box.
    """
    position = {t: i for i, t in enumerate(order)}
    spans: list[tuple[str, tuple[date, ...]]] = []
    for ticker, months in parts:
        spans += [(ticker, run) for run in _contiguous(sorted(months))]
    spans.sort(key=lambda s: (position.get(s[0], len(position)), s[0], s[1]))
    boxes: list[tuple[list[str], tuple[date, ...]]] = []
    for ticker, months in spans:
        last = boxes[-1] if boxes else None
        follows = (
            last is not None
            and last[1] == months
            and ticker in position
            and last[0][-1] in position
            and position[ticker] == position[last[0][-1]] + 1
        )
        if follows:
            last[0].append(ticker)
        else:
            boxes.append(([ticker], months))
    return tuple((tuple(tickers), months) for tickers, months in boxes)


def _contiguous(months: Sequence[date]) -> list[tuple[date, ...]]:
    """``months`` (sorted) split where a calendar month is missing."""
    runs: list[list[date]] = []
    for month in months:
        if runs and (month.year * 12 + month.month) - (runs[-1][-1].year * 12 + runs[-1][-1].month) == 1:
            runs[-1].append(month)
        else:
            runs.append([month])
    return [tuple(r) for r in runs]
