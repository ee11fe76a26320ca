"""The vote cache: read first, compute misses only, invalidate only what changed."""

from __future__ import annotations

import threading

import pandas as pd

from stocker_core.council.backends import RuleBackend, VoteResult
from stocker_core.council.cache import VoteCache
from stocker_core.council.voting import run_votes
from stocker_core.warehouse.db import Warehouse


class CountingBackend(RuleBackend):
    """The rule backend, counting calls; prompt version and model id adjustable."""

    def __init__(self, model_id: str = "rules-v1", versions: dict[str, str] | None = None):
        self.model_id = model_id
        self.versions = versions or {}
        self.calls = 0
        self._lock = threading.Lock()

    def prompt_version(self, role: str) -> str:
        return self.versions.get(role, super().prompt_version(role))

    def vote(self, role, ctx) -> VoteResult:
        with self._lock:
            self.calls += 1
        return super().vote(role, ctx)


def _run(inputs, backend, cache, days):
    return run_votes("AAPL", days, inputs.context, backend, cache, max_workers=4)


def test_second_run_computes_nothing(tmp_path, easy_inputs):
    cache = VoteCache(Warehouse(tmp_path / "w.duckdb"))
    days = easy_inputs.trading_days("2023-08-01", "2023-08-31")
    backend = CountingBackend()
    progress: list[tuple[int, int]] = []
    first = run_votes(
        "AAPL", days, easy_inputs.context, backend, cache, progress=lambda d, t: progress.append((d, t))
    )
    assert backend.calls == 7 * len(days) and first.stats["misses"] == 7 * len(days)
    assert progress[-1] == (7 * len(days), 7 * len(days))
    again = CountingBackend()
    second = _run(easy_inputs, again, cache, days)
    assert again.calls == 0 and second.stats == {
        "hits": 7 * len(days),
        "misses": 0,
        "parse_failures": 0,
        "uncached": 0,
    }
    cols = ["role", "signal", "confidence", "rationale"]
    pd.testing.assert_frame_equal(first.votes[cols], second.votes[cols])
    assert second.votes["cached"].all()


def test_prompt_or_model_change_invalidates_only_those_rows(tmp_path, easy_inputs):
    cache = VoteCache(Warehouse(tmp_path / "w.duckdb"))
    days = easy_inputs.trading_days("2023-08-01", "2023-08-10")
    _run(easy_inputs, CountingBackend(), cache, days)
    changed = CountingBackend(versions={"news": "new-prompt"})
    run = _run(easy_inputs, changed, cache, days)
    assert changed.calls == len(days) and run.stats["hits"] == 6 * len(days)
    assert set(run.votes.loc[~run.votes["cached"], "role"]) == {"news"}
    other_model = CountingBackend(model_id="rules-v2")
    _run(easy_inputs, other_model, cache, days)
    assert other_model.calls == 7 * len(days)
    back = CountingBackend()
    _run(easy_inputs, back, cache, days)  # the original rows are still valid
    assert back.calls == 0
    stored = cache.votes_for("AAPL", days)
    assert len(stored) == 7 * len(days) * 2 + len(days)


def test_uncacheable_votes_are_not_stored(tmp_path, easy_inputs):
    class Failing(CountingBackend):
        def vote(self, role, ctx):
            raise RuntimeError("boom")

    cache = VoteCache(Warehouse(tmp_path / "w.duckdb"))
    days = easy_inputs.trading_days("2023-08-01", "2023-08-02")
    run = _run(easy_inputs, Failing(), cache, days)
    assert run.stats["parse_failures"] == 14 and run.stats["uncached"] == 14
    assert cache.votes_for("AAPL", days).empty
