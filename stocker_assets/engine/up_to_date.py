"""Which runs of the main job are up to date, and which months of them are not.

Every asset of a run unit (``stages.RunUnit``: one ticker's partitioned assets of a stage, or
one unpartitioned asset) gets an input fingerprint per partition, chained like a Merkle tree:

- its **code**: its derived code version (``definitions/code_versions.py``);
- its **settings**: every ``STOCKER_*`` value that can change what it writes (paths, worker
  counts, queues and the clock are left out), plus the moderator's and the agent's training
  settings for the training and evaluation assets;
- its **data**: for the root (prices), the source's bars of its month; for the others, the
  fingerprints of the partitions they read through their partition mappings (an episode reads
  its month and the next, indicators twelve months back), and the text events of the months
  they read.

A partition whose assets' fingerprints all equal the ones recorded after their last
successful build (``meta.builds``) is skipped; a ticker's run covers only the months from its
first stale one to its last. The whole-history assets that Dagster retrains weekly (splits, models, the
rolling evaluation and the report: ``automation.WEEKLY_RETRAIN``) read their partitioned
inputs only up to the **weekly cut**, the last Friday on or before each ticker's last bar:
a new session on Monday to Thursday does not retrain; the first one on or after a Friday
does, as does a corrected bar before the cut, a new ticker, or changed code or settings.

A recorded fingerprint says what was built, not that it is still on disk: before a partition is
called up to date, the files it vouches for are checked against ``meta.outputs``
(``build_outputs``); a missing, truncated or changed one is moved aside and its partition
rebuilt, whatever the fingerprints say, and named in the summary (``disk_report``). A month the
source no longer has while the warehouse still stores it is named too (stored data never
shrinks: it is kept).

Every decision is written to ``meta.builds`` (built or skipped, and why) and, for skipped
assets, shown in the Dagster UI as an observation on the asset.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta

import dagster as dg
import numpy as np
import pandas as pd

from stocker_assets.definitions.automation import AGENT_WEEKLY_RETRAIN, WEEKLY_RETRAIN
from stocker_assets.definitions.partitions import MONTH_DIM
from stocker_assets.engine.build_outputs import BuildOutputs
from stocker_assets.engine.runner import TickerRun
from stocker_assets.engine.stages import RunUnit
from stocker_core.config import Settings
from stocker_core.data_sources import MarketDataSource
from stocker_core.errors import StockerError
from stocker_core.warehouse.builds import (
    BuildDecision,
    all_fingerprints,
    record_decisions,
)
from stocker_core.warehouse.db import Warehouse, frame_version, row_hashes, rows_version
from stocker_core.warehouse.outputs import OutputProblem
from stocker_core.warehouse.schema import PARTITIONED

FINGERPRINT_FORMAT = "1"
"""Bumped when what a fingerprint covers changes: every partition then rebuilds once."""

SETTINGS_IGNORED = frozenset(
    {
        "home",  # where, not what: a moved home is the same home
        "files_dir",  # the files themselves are fingerprinted as data
        "text_dir",
        "clock",  # what the clock lets through is fingerprinted as data
        "main_from",  # which months run, not what a month holds
        "main_to",
        "default_tickers",
        "synth_tickers",  # which synthetic tickers exist; each one's bars and text are data
        "ledger_policies",
        "openai_api_key",
        "llm_timeout_s",
        "llm_retries",
        "llm_backoff_s",
        "llm_concurrency",
        "council_workers",
        "chart_workers",
        "main_workers",
        "executor",
        "celery_broker",
        "celery_backend",
        "celery_gpu_queue",
        "celery_llm_queue",
    }
)
TRAINING_GROUPS = frozenset({"training", "evaluation"})
TEXT_KINDS = {"news": "news", "forum_posts": "forums", "macro_events": "macro"}


def _hash(*parts: object) -> str:
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def settings_fingerprint(settings: Settings, training: bool) -> str:
    """The settings that can change what a unit writes (``training``: with the moderator's
    and the agent's training settings)."""
    values = {k: v for k, v in settings.model_dump(mode="json").items() if k not in SETTINGS_IGNORED}
    if training:
        from stocker_core.agent.config import AgentConfig
        from stocker_core.moderator.config import TrainingConfig

        values["moderator"] = TrainingConfig().model_dump(mode="json")
        values["agent"] = AgentConfig().model_dump(mode="json")
    return _hash(FINGERPRINT_FORMAT, values)


def weekly_cut(last: date) -> date:
    """The last Friday on or before ``last``: the weekly retrain reads data up to it."""
    return last - timedelta(days=(last.weekday() - 4) % 7)


def month_offset(month: date, offset: int) -> date:
    total = month.year * 12 + month.month - 1 + offset
    return date(total // 12, total % 12 + 1, 1)


def _month_window(mapping: dg.PartitionMapping | None) -> tuple[int, int]:
    """(start, end) month offsets of a ticker × month partition mapping ((0, 0): same month)."""
    by_dimension = getattr(mapping, "downstream_mappings_by_upstream_dimension", None) or {}
    month = by_dimension.get(MONTH_DIM)
    inner = getattr(month, "partition_mapping", None)
    return int(getattr(inner, "start_offset", 0)), int(getattr(inner, "end_offset", 0))


@dataclass(frozen=True)
class Decision:
    """What to do with one unit: run it (over ``months`` for a ticker's unit) or skip it."""

    run: bool
    reason: str
    months: tuple[date, ...] = ()
    fingerprints: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """{asset: {partition ("" when unpartitioned): its fingerprint now}}, every partition of the unit."""
    skipped: tuple[str, ...] = ()
    """Partitions left as they are."""
    damaged: Mapping[str, str] = field(default_factory=dict)
    """{partition: what was wrong with its files on disk}: rebuilt whatever the fingerprints say."""


@dataclass
class _TickerData:
    """The source's bars and the text events of one ticker, hashed per month."""

    bars: dict[date, str]
    counts: dict[date, int]
    text: dict[date, str]
    last_bar: date | None
    history: str
    """A hash of the bars and text up to the weekly cut."""


def _month_slices(dates: np.ndarray) -> dict[date, np.ndarray]:
    """{first day of a month: the positions of ``dates`` (day precision) in it, in order}."""
    months = dates.astype("datetime64[M]")
    found: dict[date, np.ndarray] = {}
    for month in np.unique(months):
        found[month.astype("datetime64[D]").astype(date)] = np.flatnonzero(months == month)
    return found


class _TextRows:
    """One kind of text events (news, forum posts, macro), each row hashed once: what a
    ticker reads of it, versioned per month and up to a cut, without hashing again."""

    def __init__(self, frame: pd.DataFrame, shared: bool) -> None:
        self.shared, self.columns = shared, list(frame.columns)
        self.hashes = row_hashes(frame.reset_index(drop=True))
        self.dates = pd.to_datetime(frame["date"]).to_numpy(dtype="datetime64[D]")
        self._by_ticker = {} if shared else frame.reset_index(drop=True).groupby("ticker", sort=False).indices
        self._months: dict[date, str] | None = None
        self._before: dict[date, str] = {}

    def of(self, ticker: str) -> np.ndarray:
        """The positions of the rows ``ticker`` reads (every row of a shared kind), in order."""
        if self.shared:
            return np.arange(len(self.hashes))
        return np.sort(self._by_ticker.get(ticker, np.empty(0, dtype="int64")))

    def month_versions(self, rows: np.ndarray) -> dict[date, str]:
        """{month: version of the ``rows`` dated in it} (a shared kind's, worked out once)."""
        if self.shared and self._months is not None:
            return self._months
        found = {
            month: rows_version(self.hashes[rows[inside]], self.columns)
            for month, inside in _month_slices(self.dates[rows]).items()
        }
        if self.shared:
            self._months = found
        return found

    def version_before(self, rows: np.ndarray, cut: date) -> str:
        """The version of the ``rows`` dated on or before ``cut``."""
        if self.shared and cut in self._before:
            return self._before[cut]
        kept = rows[self.dates[rows] <= np.datetime64(cut)]
        version = rows_version(self.hashes[kept], self.columns)
        if self.shared:
            self._before[cut] = version
        return version


def _text_by_month(text: Sequence[tuple[_TextRows, np.ndarray]]) -> dict[date, str]:
    """{month: one hash of every kind's version of that month} for a ticker's ``text``."""
    parts: dict[date, list[str]] = {}
    for rows, at in text:
        if len(at):
            for month, version in sorted(rows.month_versions(at).items()):
                parts.setdefault(month, []).append(version)
    return {m: _hash(v) for m, v in parts.items()}


class UpToDate:
    """Decides, unit by unit in plan order, what the main job must run (``--force``: all)."""

    def __init__(
        self,
        defs: dg.Definitions,
        settings: Settings,
        source: MarketDataSource,
        warehouse: Warehouse,
        tickers: Sequence[str],
        force: bool = False,
        instance: dg.DagsterInstance | None = None,
    ) -> None:
        self.settings, self.source, self.warehouse, self.force = settings, source, warehouse, force
        self.outputs = BuildOutputs(warehouse, instance)
        self.damaged: list[tuple[OutputProblem, str | None]] = []
        """Every damaged output found this run, and where it was moved (None: it was gone)."""
        self.left_source: dict[str, list[str]] = {}
        """{ticker: stored months (YYYY-MM) its source no longer has}: kept, never shrunk."""
        self.tickers = list(tickers)
        self._recorded: dict[tuple[str, str], str] | None = None
        self._memo: dict[tuple[str, str], str] = {}
        self._windows: dict[tuple[str, frozenset[str]], tuple[int, int] | None] = {}
        self._assets = {
            k.to_user_string(): a for a in defs.assets if isinstance(a, dg.AssetsDefinition) for k in a.keys
        }
        self._now: dict[str, dict[str, str]] = {}  # asset -> partition -> fingerprint, this run
        self._tickers: dict[str, _TickerData] = {}
        self._events: dict[str, pd.DataFrame] | None = None
        self._text: list[_TextRows] | None = None
        self._settings = {t: settings_fingerprint(settings, t) for t in (False, True)}

    # -- inputs ------------------------------------------------------------------------------

    def _asset(self, name: str) -> dg.AssetsDefinition:
        return self._assets[name]

    def _key(self, name: str) -> dg.AssetKey:
        return dg.AssetKey.from_user_string(name)

    def _code(self, names: Iterable[str]) -> str:
        return _hash(sorted((n, self._asset(n).code_versions_by_key.get(self._key(n)) or "") for n in names))

    def _group(self, name: str) -> str:
        return self._asset(name).group_names_by_key[self._key(name)]

    def _weekly(self, name: str) -> bool:
        condition = self._asset(name).automation_conditions_by_key.get(self._key(name))
        return condition is WEEKLY_RETRAIN or condition is AGENT_WEEKLY_RETRAIN

    def _deps(self, name: str) -> list[tuple[str, tuple[int, int]]]:
        """(upstream asset, month window) of each input of ``name``."""
        asset, key = self._asset(name), self._key(name)
        found = []
        for upstream in sorted(asset.asset_deps.get(key, set()), key=lambda k: k.to_user_string()):
            window = (0, 0)
            if asset.partitions_def is not None and self._partitioned(upstream.to_user_string()):
                window = _month_window(asset.get_partition_mapping(upstream))
            found.append((upstream.to_user_string(), window))
        return found

    def _partitioned(self, name: str) -> bool:
        return name in self._assets and self._asset(name).partitions_def is not None

    def _text_events(self) -> dict[str, pd.DataFrame]:
        """The configured text events by kind, as the text assets would store them."""
        if self._events is None:
            from stocker_core.text_events.configured import configured_events

            self._events = {}
            for kind in set(TEXT_KINDS.values()):
                frame = configured_events(self.settings, kind)  # type: ignore[arg-type]
                self._events[kind] = frame if frame is not None else pd.DataFrame()
        return self._events

    def _ticker(self, ticker: str) -> _TickerData:
        """The source's bars and text of ``ticker``, hashed per month (read once per run).
        Rows are hashed once (``row_hashes``) and each month versioned from its slice."""
        if ticker not in self._tickers:
            info = self.source.symbol_info(ticker)
            bars = self.source.fetch(ticker, info.first_date, info.last_date + timedelta(days=1))
            dates = pd.to_datetime(bars["date"]).to_numpy(dtype="datetime64[D]")
            hashes = row_hashes(bars) if len(bars) else np.empty(0, dtype="uint64")
            by_month, counts = {}, {}
            for month, rows in _month_slices(dates).items():
                by_month[month] = rows_version(hashes[rows], bars.columns)
                counts[month] = len(rows)
            last = dates.max().astype(date) if len(bars) else None
            text = [(rows, rows.of(ticker)) for rows in self._text_rows()]
            cut = weekly_cut(last) if last is not None else None
            history = "none"
            if cut is not None:
                before = rows_version(hashes[dates <= np.datetime64(cut)], bars.columns)
                history = _hash(before, [rows.version_before(at, cut) for rows, at in text if len(at)])
            self._tickers[ticker] = _TickerData(by_month, counts, _text_by_month(text), last, history)
        return self._tickers[ticker]

    def _text_rows(self) -> list[_TextRows]:
        """Each kind's text events hashed row by row once, in the order of the kinds' names."""
        if self._text is None:
            self._text = [
                _TextRows(frame, shared=kind == "macro" or "ticker" not in frame.columns)
                for kind, frame in sorted(self._text_events().items())
                if len(frame)
            ]
        return self._text

    # -- fingerprints -------------------------------------------------------------------------

    def _recorded_fingerprints(self) -> dict[tuple[str, str], str]:
        """{(asset, partition): fingerprint} of every recorded build (read once)."""
        if self._recorded is None:
            self._recorded = {}
            for asset, partition, fingerprint in all_fingerprints(self.warehouse):
                self._recorded[(asset, partition)] = fingerprint
        return self._recorded

    def _upstream(self, name: str, partition: str) -> str:
        """The fingerprint of ``name``'s ``partition`` now: decided this run, else recorded."""
        found = self._now.get(name, {}).get(partition)
        if found is not None:
            return found
        return self._recorded_fingerprints().get((name, partition), "never built")

    def _all_partitions(self, name: str) -> dict[str, str]:
        """Every partition's fingerprint of a partitioned asset: recorded, then this run's."""
        found = {p: fp for (n, p), fp in self._recorded_fingerprints().items() if n == name}
        return {**found, **self._now.get(name, {})}

    def _source_window(self, name: str, inside: frozenset[str]) -> tuple[int, int] | None:
        """The months of source data one partition of ``name`` reads through the assets of
        its own unit (``inside``), relative to it; None when it reads no source data."""
        key = (name, inside)
        if key not in self._windows:
            deps = [(u, w) for u, w in self._deps(name) if self._partitioned(u)]
            found: tuple[int, int] | None = (0, 0) if not deps else None
            for upstream, (start, end) in deps:
                inner = self._source_window(upstream, inside) if upstream in inside else None
                if inner is not None:
                    lo, hi = start + inner[0], end + inner[1]
                    found = (lo, hi) if found is None else (min(found[0], lo), max(found[1], hi))
            self._windows[key] = found
        return self._windows[key]

    def _asset_fingerprint(self, name: str, ticker: str, month: date, inside: frozenset[str]) -> str:
        """The fingerprint of ``name``'s partition ``ticker|month``: its code and settings, the
        source's bars of the months it reads when it is the root, and the fingerprints of the
        partitions it reads (computed for the assets of its own unit, else decided or recorded)."""
        key = (name, f"{ticker}|{month.isoformat()}")
        if key in self._memo:
            return self._memo[key]
        training = self._group(name) in TRAINING_GROUPS
        inputs: dict[str, object] = {}
        partitioned_deps = [(u, w) for u, w in self._deps(name) if self._partitioned(u)]
        if not partitioned_deps:  # the root: it reads the source
            inputs["bars"] = self._ticker(ticker).bars.get(month, "")
        window = self._source_window(name, inside)
        for upstream, (start, end) in self._deps(name):
            if not self._partitioned(upstream):
                if upstream in TEXT_KINDS and window is not None:
                    # the text it reads, month by month over the source months it reads
                    text = self._ticker(ticker).text
                    months = range(window[0], window[1] + 1)
                    inputs[upstream] = [
                        self._code([upstream]),
                        [text.get(month_offset(month, i), "") for i in months],
                    ]
                else:
                    inputs[upstream] = self._upstream(upstream, "")
                continue
            for i in range(start, end + 1):
                other = month_offset(month, i)
                if upstream in inside:
                    inputs[f"{upstream}@{i}"] = self._asset_fingerprint(upstream, ticker, other, inside)
                else:
                    inputs[f"{upstream}@{i}"] = self._upstream(upstream, f"{ticker}|{other.isoformat()}")
        found = _hash(self._code([name]), self._settings[training], inputs)
        self._memo[key] = found
        return found

    def _ticker_fingerprints(self, unit: RunUnit) -> dict[str, dict[str, str]]:
        """{asset: {partition: fingerprint}} of one ticker's unit, month by month."""
        inside = frozenset(unit.assets)
        ticker = unit.ticker or ""
        return {
            name: {
                f"{ticker}|{m.isoformat()}": self._asset_fingerprint(name, ticker, m, inside)
                for m in unit.months
            }
            for name in unit.assets
        }

    def _whole_fingerprint(self, name: str) -> str:
        """The fingerprint of an unpartitioned asset (weekly ones read data up to the cut)."""
        training = self._group(name) in TRAINING_GROUPS
        inputs: dict[str, object] = {}
        weekly = self._weekly(name)
        for upstream, _ in self._deps(name):
            if not self._partitioned(upstream):
                inputs[upstream] = self._upstream(upstream, "")
            elif weekly:  # everything partitioned is a function of code, settings and data
                inputs[f"{upstream}:code"] = self._code([upstream])
                inputs[f"{upstream}:history"] = {t: self._ticker(t).history for t in self.tickers}
            else:
                inputs[upstream] = _hash(sorted(self._all_partitions(upstream).items()))
        if not self._deps(name) and name in TEXT_KINDS:
            if self.settings.news_online and name == "news":
                inputs["online"] = "fetched live: never known to be unchanged"
                inputs["now"] = pd.Timestamp.now().isoformat()
            frame = self._text_events().get(TEXT_KINDS[name], pd.DataFrame())
            inputs[name] = frame_version(frame.astype(str).reset_index(drop=True)) if len(frame) else ""
        return _hash(self._code([name]), self._settings[training], inputs)

    # -- decisions ----------------------------------------------------------------------------

    def decide(self, unit: RunUnit) -> Decision:
        """What to run of ``unit``: nothing, all of it, or (a ticker's unit) its stale months —
        a partition whose files on disk are not as recorded is stale whatever its fingerprint."""
        damaged = self._check_disk(unit)
        try:
            if unit.ticker is None:
                fingerprints = {name: {"": self._whole_fingerprint(name)} for name in unit.assets}
            else:
                fingerprints = self._ticker_fingerprints(unit)
                self._note_left_source(unit)
        except StockerError as exc:  # e.g. bars that fail the quality gate: the run reports it
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            return Decision(True, f"inputs not fingerprinted ({first[:120]})", unit.months, damaged=damaged)
        for name, parts in fingerprints.items():
            self._now[name] = {**self._now.get(name, {}), **parts}
        partitions = list(next(iter(fingerprints.values())))
        if self.force:
            return Decision(True, "--force", unit.months, fingerprints, damaged=damaged)
        recorded = self._recorded_fingerprints()
        stored = {p for p in partitions if all((n, p) in recorded for n in fingerprints)}
        changed = [
            p for p in partitions if any(recorded.get((n, p)) != fp[p] for n, fp in fingerprints.items())
        ]
        kept_by_clock = self._newer_than_clock(unit, [p for p in changed if p in stored and p not in damaged])
        stale = [p for p in partitions if p in damaged or (p in changed and p not in kept_by_clock)]
        if not stale:
            why = "up to date: code, settings and inputs unchanged"
            if kept_by_clock:
                why += f"; {len(kept_by_clock)} stored partition(s) reach past STOCKER_CLOCK: kept"
            return Decision(False, why, (), fingerprints, tuple(partitions))
        why = self._why(unit, partitions, stale, stored, damaged)
        if unit.ticker is None:
            return Decision(True, why, (), fingerprints, damaged=damaged)
        stale_months = sorted(date.fromisoformat(p.split("|")[1]) for p in stale)
        months = tuple(m for m in unit.months if stale_months[0] <= m <= stale_months[-1])
        kept = tuple(p for p in partitions if date.fromisoformat(p.split("|")[1]) not in months)
        return Decision(True, why, months, fingerprints, kept, damaged)

    @staticmethod
    def _why(
        unit: RunUnit,
        partitions: Sequence[str],
        stale: Sequence[str],
        stored: set[str],
        damaged: Mapping[str, str],
    ) -> str:
        """Why ``stale`` partitions of ``unit`` run: never built, changed inputs, damaged files."""
        never = [p for p in stale if p not in stored]
        changed = len(stale) - len(never) - len([p for p in stale if p in stored and p in damaged])
        if len(never) == len(partitions):
            return "never built"
        if unit.ticker is None:
            return "files damaged on disk" if damaged else "inputs, settings or code changed"
        why = f"{len(never)} new partition(s), {changed} with changed inputs"
        return why + (f", {len(damaged)} damaged on disk" if damaged else "")

    def _check_disk(self, unit: RunUnit) -> dict[str, str]:
        """{partition: what is wrong} for ``unit``'s partitions whose recorded files are not on
        disk as built; damaged files are moved aside now, so the rebuild never reads them."""
        partitions = [f"{unit.ticker}|{m.isoformat()}" for m in unit.months] if unit.ticker else [""]
        found: dict[str, list[OutputProblem]] = {}
        for name in unit.assets:
            for partition in partitions:
                problems = self.outputs.check(name, partition)
                if problems:
                    found.setdefault(partition, []).extend(problems)
        every = [p for problems in found.values() for p in problems]
        moved = self.outputs.set_aside(every)
        self.damaged.extend((p, moved.get(p.path)) for p in every)
        return {
            partition: "; ".join(f"{p.asset}: {p.path} {p.what}" for p in problems)
            for partition, problems in found.items()
        }

    def _note_left_source(self, unit: RunUnit) -> None:
        """Note the stored months of ``unit``'s root table that its source no longer has (up to
        the source's last bar: months a clock hides are not gone)."""
        from stocker_assets.engine.build_outputs import PARTITION_TABLES

        ticker = unit.ticker or ""
        roots = [n for n in unit.assets if n in PARTITION_TABLES and not self._has_partitioned_deps(n)]
        if not roots or ticker in self.left_source:
            return
        data = self._ticker(ticker)
        if data.last_bar is None:
            return
        have = {m.strftime("%Y-%m") for m in data.bars}
        last = data.last_bar.strftime("%Y-%m")
        table = PARTITIONED[PARTITION_TABLES[roots[0]]]
        stored = [m for _, m in self.warehouse.parts.partitions(table, ticker)]
        self.left_source[ticker] = sorted(m for m in stored if m not in have and m <= last)

    def _has_partitioned_deps(self, name: str) -> bool:
        return any(self._partitioned(u) for u, _ in self._deps(name))

    def disk_report(self) -> list[str]:
        """Lines for the summary: each damaged file found (and where it went), each month kept
        that the source no longer has."""
        lines = []
        for problem, moved in self.damaged:
            where = f"; moved to {moved}" if moved else ""
            lines.append(f"rebuilt {problem.describe()}{where}")
        for ticker, months in sorted(self.left_source.items()):
            for month in months:
                table = PARTITIONED["market.prices"]
                rows = self.warehouse.parts.stored_rows(table, ticker, month)
                lines.append(
                    f"{ticker} {month}: kept: the source no longer has {ticker} {month}; its {rows} "
                    "stored bar(s) stay (stored data never shrinks without a reason)"
                )
        return lines

    def _newer_than_clock(self, unit: RunUnit, changed: Sequence[str]) -> set[str]:
        """Built partitions of ``unit`` whose source view under ``STOCKER_CLOCK`` holds fewer
        bars than are stored: the clock hides sessions already stored, and a rebuild would
        only shrink them (the ledger's replay reads what is stored up to its clock)."""
        if self.settings.clock is None or unit.ticker is None or not changed:
            return set()
        counts = self._ticker(unit.ticker).counts
        stored = self.warehouse.read_table("market.prices", unit.ticker, columns=["date"])
        if stored.empty:
            return set()
        stored_counts = pd.to_datetime(stored["date"]).dt.to_period("M").value_counts()
        kept = set()
        for partition in changed:
            month = pd.Period(partition.split("|")[1], "M")
            if counts.get(month.to_timestamp().date(), 0) < int(stored_counts.get(month, 0)):
                kept.add(partition)
        return kept

    def record(self, unit: RunUnit, decision: Decision, run: TickerRun | None) -> None:
        """Write the decision to ``meta.builds``, one row per asset and partition: the
        fingerprints of what was built (after a successful run), and the skipped as skipped."""
        run_id = run.run_id if run is not None else None
        rows, built, kept = [], [], []
        built_ok = decision.run and run is not None and run.success
        for name, parts in decision.fingerprints.items():
            for partition, fingerprint in parts.items():
                if partition in decision.skipped:
                    rows.append(BuildDecision(name, partition, fingerprint, "skipped", decision.reason))
                    kept.append((name, partition))
                elif built_ok:
                    why = decision.reason
                    if partition in decision.damaged:
                        why = f"rebuilt, damaged on disk: {decision.damaged[partition]}"
                    rows.append(BuildDecision(name, partition, fingerprint, "built", why, run_id))
                    built.append((name, partition))
        record_decisions(self.warehouse, rows)
        self.outputs.record(built, kept)


def skipped_run(unit: RunUnit, decision: Decision) -> TickerRun:
    """The outcome shown for a unit that did not run (nothing to do)."""
    return TickerRun(unit.ticker or unit.name, 0, "", True, 0.0, [], skipped=decision.reason)


def observe_skipped(instance: dg.DagsterInstance, skipped: Mapping[str, list[str]]) -> None:
    """One observation per skipped asset, so the Dagster UI shows why it did not run."""
    for name, partitions in sorted(skipped.items()):
        tickers = sorted({p.split("|")[0] for p in partitions if p})
        metadata: dict[str, object] = {
            "decision": "skipped: up to date (code, settings and inputs unchanged since its last build)",
            "partitions_skipped": len([p for p in partitions if p]),
        }
        if tickers:
            metadata["tickers"] = dg.MetadataValue.json(tickers)
        instance.report_runless_asset_event(
            dg.AssetObservation(asset_key=dg.AssetKey.from_user_string(name), metadata=metadata)
        )
