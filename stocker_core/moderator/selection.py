"""Which episodes train and which are held out, and the guard that keeps held-out days out.

Training and its held-out table use the train and valid splits only. Episode keys come
from the config when given; otherwise from the evaluation's stored splits (``eval.splits``:
an episode belongs to a split when all its days are inside it), else from a chronological
fallback over the stored episodes (70% / 15% / 15% of the start months with a gap). The
``SplitGuard`` refuses any episode with a trading day inside a forbidden (valid or test)
range of its ticker, so the dataset builder cannot take one by mistake.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date

from stocker_core.config import Settings
from stocker_core.env.episode import Episode, window_bounds
from stocker_core.evaluation.splits import SplitError, SplitLeakError, load_splits
from stocker_core.market.validation import parse_partition_key, partition_key
from stocker_core.warehouse.db import Warehouse

TRAIN_SHARE, VALID_SHARE = 0.70, 0.15
GAP_MONTHS = 1

DaysOf = Callable[[Sequence[str]], dict[str, Sequence[date]]]
"""Trading days of each episode key (to place episodes inside the evaluation's splits)."""


@dataclass(frozen=True)
class DateRange:
    """An inclusive range of days belonging to one split (of one ticker, or of all)."""

    name: str
    first: date
    last: date
    ticker: str | None = None

    def overlaps(self, ticker: str, first: date, last: date) -> bool:
        same = self.ticker is None or self.ticker == ticker
        return same and first <= self.last and last >= self.first


@dataclass(frozen=True)
class SplitGuard:
    """The day ranges training must never touch (the valid and test windows)."""

    forbidden: tuple[DateRange, ...] = ()

    def check(self, episode: Episode) -> None:
        """Raise SplitLeakError when ``episode`` has a trading day in a forbidden range."""
        for span in self.forbidden:
            if span.overlaps(episode.ticker, episode.start, episode.end):
                raise SplitLeakError(
                    f"episode {episode.key} ({episode.start}..{episode.end}) overlaps the "
                    f"{span.name} split ({span.first}..{span.last}); training takes train-split "
                    "episodes only"
                )


@dataclass(frozen=True)
class EpisodeSplits:
    """Episode keys per split and the guard derived from the held-out ones."""

    train: list[str]
    valid: list[str]
    test: list[str] = field(default_factory=list)
    guard: SplitGuard = field(default_factory=SplitGuard)


def key_range(key: str, settings: Settings, name: str) -> DateRange:
    """The calendar days an episode key's window covers, as a DateRange of its ticker."""
    ticker, month = parse_partition_key(key)
    start, end = window_bounds(month, settings.episode_months)
    return DateRange(name, start, date.fromordinal(end.toordinal() - 1), ticker)


def guard_for(held_out: dict[str, Iterable[str]], settings: Settings) -> SplitGuard:
    """A guard forbidding the windows of every held-out key (``{"valid": [...], "test": [...]}``)."""
    return SplitGuard(
        tuple(key_range(key, settings, name) for name, keys in held_out.items() for key in keys)
    )


def chronological_split(keys: Sequence[str], settings: Settings) -> EpisodeSplits:
    """Per ticker, the first 70% of start months train, the next 15% validate, the rest test,
    with ``GAP_MONTHS`` plus the episode length between splits so no window overlaps."""
    by_ticker: dict[str, list[date]] = {}
    for key in keys:
        ticker, month = parse_partition_key(key)
        by_ticker.setdefault(ticker, []).append(month)
    train, valid, test = [], [], []
    skip = settings.episode_months - 1 + GAP_MONTHS
    for ticker, months in sorted(by_ticker.items()):
        months = sorted(set(months))
        n = len(months)
        cut_train, cut_valid = int(n * TRAIN_SHARE), int(n * (TRAIN_SHARE + VALID_SHARE))
        train += [partition_key(ticker, m) for m in months[: max(0, cut_train - skip)]]
        valid += [partition_key(ticker, m) for m in months[cut_train : max(cut_train, cut_valid - skip)]]
        test += [partition_key(ticker, m) for m in months[cut_valid:]]
    return EpisodeSplits(train, valid, test, guard_for({"valid": valid, "test": test}, settings))


def evaluation_splits(warehouse: Warehouse, keys: Sequence[str], days_of: DaysOf) -> EpisodeSplits | None:
    """Episodes wholly inside the evaluation's stored train / valid / test splits, with a
    guard on every ticker's valid and test ranges; None when no splits are stored."""
    try:
        splits = load_splits(warehouse)
    except SplitError:
        return None
    days = days_of([k for k in keys if parse_partition_key(k)[0] in splits.tickers])
    chosen = {name: splits.episodes_in_split(name, days) for name in ("train", "valid", "test")}
    forbidden = tuple(
        DateRange(r.split, r.start, r.end, r.ticker) for r in splits.ranges if r.split in ("valid", "test")
    )
    return EpisodeSplits(chosen["train"], chosen["valid"], chosen["test"], SplitGuard(forbidden))


def select_episodes(
    settings: Settings,
    train: Sequence[str] | None = None,
    valid: Sequence[str] | None = None,
    available: Sequence[str] = (),
    warehouse: Warehouse | None = None,
    days_of: DaysOf | None = None,
) -> EpisodeSplits:
    """Train and valid keys: the given ones, else the evaluation's stored splits, else the
    chronological fallback over ``available`` keys (e.g. the stored ``env.episodes``).
    The guard forbids the held-out windows (and the stored splits' valid/test ranges)."""
    splits = None
    if warehouse is not None and days_of is not None and warehouse.path.exists():
        splits = evaluation_splits(warehouse, available, days_of)
    if splits is None:
        splits = chronological_split(list(available), settings)
    chosen_train = list(train) if train is not None else splits.train
    chosen_valid = list(valid) if valid is not None else splits.valid
    held_out = guard_for({"valid": chosen_valid, "test": splits.test}, settings)
    guard = SplitGuard(held_out.forbidden + splits.guard.forbidden)
    return EpisodeSplits(chosen_train, chosen_valid, splits.test, guard)
