"""The agent's daily decisions kept on disk, so that the evaluation stages of one job (the
rolling evaluation and each ticker's partition backtests, in different processes) decide a
(ticker, day) once, like the council's cached votes.

A decision depends only on (ticker, day) given the writer's model, the agent settings, the
ticker's data and the code of the tools and the loop, so all of these key the store: the
model's run folder (a new training run is a new folder), the ``AgentConfig`` and prompt
masking, a digest of the ticker's data (bars, indicators, text, macro closes) and a digest of
the source of ``stocker_core.agent`` and ``stocker_core.decision_context``. Anything that changes a
decision therefore misses the store. Files: ``$STOCKER_HOME/cache/agent_decisions/<key>/
<TICKER>-<unique>.json`` (``{day: decision or null}``), each written atomically; a write folds
the files it read into one, so readers never see half a file and writers never lose a day.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from functools import lru_cache
from pathlib import Path

import pandas as pd

from stocker_core.agent.data import AgentData
from stocker_core.atomic_files import write_json_atomic

STORE_FOLDER = ("cache", "agent_decisions")
CODE_PACKAGES = ("agent", "context")
"""Packages whose source decides what a tool answers and how a turn is read."""


@lru_cache(maxsize=1)
def code_digest() -> str:
    """sha256 of the source files of ``CODE_PACKAGES`` (any edit there misses the store)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for package in CODE_PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if path.suffix in (".py", ".json") and path.is_file():
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def _frame_digest(digest: hashlib._Hash, frame: pd.DataFrame) -> None:
    digest.update(json.dumps([str(c) for c in frame.columns]).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())


def data_digest(data: AgentData) -> str:
    """sha256 of what the tools read for ``data.ticker``: bars with indicators, text, macro closes."""
    digest = hashlib.sha256(data.ticker.encode())
    _frame_digest(digest, data.bars)
    for kind in ("news", "forums", "macro"):
        _frame_digest(digest, getattr(data.text, kind))
    for symbol in sorted(data.macro_closes):
        digest.update(symbol.encode())
        _frame_digest(digest, data.macro_closes[symbol])
    return digest.hexdigest()


def store_key(policy: str, model: str, config_json: str, masked: bool, data: AgentData) -> str:
    """The folder name of one (policy, model, settings, data, code) combination."""
    parts = [policy, model, config_json, str(masked), data_digest(data), code_digest()]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


class DecisionStore:
    """Decisions of one key: ``load(ticker)`` and ``save(ticker, decisions)``."""

    def __init__(self, home: Path, key: str) -> None:
        self.folder = Path(home).joinpath(*STORE_FOLDER, key)

    def _files(self, ticker: str) -> list[Path]:
        return sorted(self.folder.glob(f"{ticker}-*.json")) if self.folder.is_dir() else []

    def load(self, ticker: str) -> dict[pd.Timestamp, str | None]:
        """Every stored decision of ``ticker`` (a file that cannot be read is skipped)."""
        return self._read(self._files(ticker))[0]

    def _read(self, files: list[Path]) -> tuple[dict[pd.Timestamp, str | None], list[Path]]:
        found: dict[pd.Timestamp, str | None] = {}
        read = []
        for path in files:
            try:
                days = json.loads(path.read_text())
            except (OSError, ValueError):  # removed by a writer that folded it, or foreign
                continue
            found.update({pd.Timestamp(day): decision for day, decision in days.items()})
            read.append(path)
        return found, read

    def save(self, ticker: str, decisions: dict[pd.Timestamp, str | None]) -> None:
        """Add ``decisions`` of ``ticker``: one new file holding them and every file read now,
        which are then removed (a file another writer adds meanwhile stays)."""
        if not decisions:
            return
        known, read = self._read(self._files(ticker))
        known.update(decisions)
        payload = {day.date().isoformat(): decision for day, decision in sorted(known.items())}
        write_json_atomic(self.folder / f"{ticker}-{uuid.uuid4().hex}.json", payload)
        for path in read:
            path.unlink(missing_ok=True)
