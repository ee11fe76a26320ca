"""The files each asset's partition vouches for on disk, checked before a skip.

- a ticker × month asset writes one Parquet part file of its table (``PARTITION_TABLES``) for
  that ticker and month; ``charts`` also the PNGs its part file lists; the vote cache's files
  (``CACHE_ASSETS``) are only checked to be there and whole: other commands add votes;
- an unpartitioned asset writes the files and folders of the home named by path values in the
  metadata of its latest materialization (a model folder, an SB3 zip, report files).

``BuildOutputs`` finds those files, checks them against ``meta.outputs``
(``stocker_core.warehouse.outputs``), records them after a build, and moves a damaged one out
of the way before its rebuild (``set_aside``), so the rebuild never reads it. A partition
built before outputs were recorded is adopted: its files as they are now are recorded, after
the same structural look (a file that fails it is damaged).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

import dagster as dg
import duckdb

from stocker_core.warehouse.db import Warehouse
from stocker_core.warehouse.home_paths import resolve_path
from stocker_core.warehouse.outputs import (
    OutputFile,
    OutputProblem,
    check_file,
    lineage_rows,
    parquet_problem,
    record_outputs,
    recorded_outputs,
    snapshot,
)
from stocker_core.warehouse.schema import PARTITIONED

PARTITION_TABLES = {
    "prices": "market.prices",
    "indicators": "market.indicators",
    "charts": "market.charts",
    "episodes": "env.episodes",
    "ideal_trajectories": "env.ideal_trajectories",
    "specialist_votes": "council.votes",
}
"""The partitioned table each ticker × month asset writes (one part file per partition)."""

CACHE_ASSETS = frozenset({"specialist_votes"})
"""Assets whose part files other commands add to (the vote cache: the council policy, the
moderator's data): checked for presence and a whole Parquet frame, never for their bytes."""

DAMAGED_FOLDER = "damaged"
"""Where, under the home, damaged files are moved before their rebuild (one folder per run)."""

Scope = tuple[str, str]
"""(asset, partition): ``""`` for an unpartitioned asset's partition."""


class BuildOutputs:
    """Finds, checks, records and sets aside the output files of asset partitions."""

    def __init__(self, warehouse: Warehouse, instance: dg.DagsterInstance | None = None) -> None:
        self.warehouse, self.instance = warehouse, instance
        self.home = warehouse.home
        self._recorded: dict[Scope, list[OutputFile]] | None = None
        self._pending: dict[Scope, list[OutputFile]] = {}
        """Records to store at the next ``record`` (touched files, adopted partitions)."""
        self._stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        self._legacy: dict[Scope, int] | None = None

    # -- which files ------------------------------------------------------------------------
    def files(self, asset: str, partition: str) -> list[Path]:
        """The output files of ``asset``'s ``partition`` that exist now (a folder: its files)."""
        if partition:
            return self._partition_files(asset, partition)
        found: list[Path] = []
        for path in self._materialized_paths(asset):
            if path.is_dir():
                found.extend(sorted(p for p in path.rglob("*") if p.is_file()))
            elif path.exists():
                found.append(path)
        return found

    def _part_file(self, asset: str, partition: str) -> Path | None:
        table = PARTITION_TABLES.get(asset)
        if table is None or "|" not in partition:
            return None
        ticker, month = partition.split("|", 1)
        return self.warehouse.parts.part_path(PARTITIONED[table], ticker, month[:7])

    def _partition_files(self, asset: str, partition: str) -> list[Path]:
        part = self._part_file(asset, partition)
        if part is None or not os.path.lexists(part):
            return []
        found = [part]
        if asset == "charts" and part.is_file() and parquet_problem(part) is None:
            found.extend(self._chart_pngs(part))
        return found

    def _chart_pngs(self, part: Path) -> list[Path]:
        """The PNG files a charts part file lists (those inside the home)."""
        con = duckdb.connect()
        try:
            rows = con.execute("SELECT path FROM read_parquet(?)", [str(part)]).fetchall()
        except duckdb.Error:
            return []
        finally:
            con.close()
        found = [resolve_path(r[0], self.home) for r in rows if r[0]]
        return [Path(p) for p in found if p is not None and _inside(Path(p), self.home)]

    def _materialized_paths(self, asset: str) -> list[Path]:
        """Paths of the home in the metadata of ``asset``'s latest materialization."""
        if self.instance is None:
            return []
        records = self.instance.fetch_materializations(dg.AssetKey.from_user_string(asset), limit=1).records
        if not records or records[0].asset_materialization is None:
            return []
        found = []
        for value in records[0].asset_materialization.metadata.values():
            if isinstance(value, dg.PathMetadataValue) and value.path:
                path = resolve_path(str(value.path), self.home)
                if path is not None and _inside(Path(path), self.home):
                    found.append(Path(path))
        return found

    # -- checks -----------------------------------------------------------------------------
    def _records(self) -> dict[Scope, list[OutputFile]]:
        if self._recorded is None:
            self._recorded = recorded_outputs(self.warehouse)
        return self._recorded

    def check(self, asset: str, partition: str) -> list[OutputProblem]:
        """What is wrong on disk with the files ``asset``'s ``partition`` vouches for (none: as
        recorded). Touched-but-same files and adopted partitions are recorded at ``record``."""
        recorded = self._records().get((asset, partition))
        if recorded is None:
            return self._adopt(asset, partition)
        problems, refreshed, touched = [], [], False
        for record in recorded:
            what, again = check_file(record, self.home, exact=asset not in CACHE_ASSETS)
            if what:
                problems.append(OutputProblem(asset, partition, record.path, what))
            touched |= again is not None
            refreshed.append(again or record)
        if touched and not problems:
            self._pending[(asset, partition)] = refreshed
        return problems

    def _legacy_rows(self) -> dict[Scope, int]:
        """Rows per partition by ``meta.lineage`` while nothing is in ``meta.outputs`` (a home
        built before it), else nothing: after one run every file there is recorded."""
        if self._legacy is None:
            self._legacy = lineage_rows(self.warehouse) if not self._records() else {}
        return self._legacy

    def _adopt(self, asset: str, partition: str) -> list[OutputProblem]:
        """A partition without recorded files: its files now, or what is wrong with them (on a
        home built before ``meta.outputs``, a part file gone whose lineage records rows)."""
        problems, files = [], []
        part = self._part_file(asset, partition)
        rows = self._legacy_rows().get((asset, partition), 0)
        if part is not None and rows > 0 and not os.path.lexists(part):
            relative = _relative(part, self.home)
            what = f"is missing (meta.lineage records {rows} row(s))"
            return [OutputProblem(asset, partition, relative, what)]
        for path in self.files(asset, partition):
            relative = _relative(path, self.home)
            if not path.is_file():
                problems.append(OutputProblem(asset, partition, relative, "is not a regular file"))
                continue
            what = parquet_problem(path) if path.suffix == ".parquet" else None
            if what:
                problems.append(OutputProblem(asset, partition, relative, what))
                continue
            found = snapshot(asset, partition, path, self.home)
            if found is not None:
                files.append(found)
        if files and not problems:
            self._pending[(asset, partition)] = files
        return problems

    # -- after a decision -------------------------------------------------------------------
    def set_aside(self, problems: Sequence[OutputProblem]) -> dict[str, str]:
        """Move each damaged file that still exists to ``<home>/damaged/<run>/<its path>``, so
        its rebuild starts clean; {its path: where it went}."""
        moved = {}
        for problem in problems:
            path = self.home / problem.path
            if not os.path.lexists(path):
                continue
            target = self.home / DAMAGED_FOLDER / self._stamp / problem.path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(path), str(target))
            moved[problem.path] = _relative(target, self.home)
        return moved

    def record(self, built: Iterable[Scope], kept: Iterable[Scope] = ()) -> None:
        """Record the files of ``built`` partitions as they are now, and the pending records
        (touched files, adoptions) of ``kept`` ones."""
        scopes = list(dict.fromkeys(built))
        files = [
            found
            for asset, partition in scopes
            for path in self.files(asset, partition)
            if (found := snapshot(asset, partition, path, self.home)) is not None
        ]
        for scope in kept:
            if scope in self._pending and scope not in scopes:
                scopes.append(scope)
                files.extend(self._pending.pop(scope))
        record_outputs(self.warehouse, scopes, files)
        records = self._records()
        for scope in scopes:
            records[scope] = [f for f in files if (f.asset, f.partition) == scope]


def _inside(path: Path, home: Path) -> bool:
    try:
        Path(os.path.abspath(path)).relative_to(os.path.abspath(home))
    except ValueError:
        return False
    return True


def _relative(path: Path, home: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(os.path.abspath(home)).as_posix()
    except ValueError:
        return str(path)
