"""Shared helpers of the council tests."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from stocker_testing import SEED_DIR as FIXTURE


@pytest.fixture(scope="session")
def fixture_dir() -> Path:
    return FIXTURE


@pytest.fixture(scope="session")
def easy_inputs():
    """Council inputs of task_easy from the seed fixture."""
    from stocker_core.decision_context.decision import CouncilInputs
    from stocker_core.market.files_source import FilesSource
    from stocker_core.text_events.events import load_text_folder

    source = FilesSource(FIXTURE)
    lo, hi = pd.Timestamp("2020-01-01").date(), pd.Timestamp("2025-01-01").date()
    closes = pd.concat([source.fetch(s, lo, hi).assign(symbol=s) for s in ("MSFT", "GOOGL", "GC=F")])
    return CouncilInputs(
        "AAPL", source.fetch("AAPL", lo, hi), load_text_folder(FIXTURE), closes, ("MSFT", "GOOGL"), "GC=F"
    )
