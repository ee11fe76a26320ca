"""The hash chain, the JSON Lines round trip and the scoring arithmetic, by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from stocker_core.ledger.entries import GENESIS, chain, content_hash, from_jsonl, to_jsonl
from stocker_core.ledger.score import entry_return, forward_record
from stocker_core.ledger.store import Head
from stocker_core.ledger.verify import verify_chain


def _draft(ticker: str, exposure: float, for_session: str = "2023-06-02") -> dict:
    return {
        "ticker": ticker,
        "policy": "macd",
        "decided_on": "2023-06-01",
        "for_session": for_session,
        "target_exposure": exposure,
        "shares": 10,
        "decision_close": 180.09,
        "cost_fraction": 0.000999,
        "model_version": "rules",
        "inputs_hash": "ab" * 32,
        "recorded_at": "2023-06-01T21:00:00+00:00",
        "mode": "replayed",
        "source": "files",
    }


def test_entries_link_to_the_previous_hash_and_seal_their_content():
    entries = chain([_draft("AAPL", 0.1), _draft("MSFT", 0.2)], 1, GENESIS)
    assert [e.seq for e in entries] == [1, 2]
    assert entries[0].prev_hash == GENESIS and entries[1].prev_hash == entries[0].hash
    assert entries[0].hash == content_hash(entries[0].content()) and len(entries[0].hash) == 64
    assert verify_chain(entries, Head(2, entries[1].hash)).ok
    assert from_jsonl(to_jsonl(entries)) == entries  # floats and text exactly as hashed


def test_verify_names_what_is_wrong():
    entries = chain([_draft("AAPL", 0.1), _draft("MSFT", 0.2), _draft("KO", 0.3)], 1, GENESIS)
    edited = [entries[0], dataclasses.replace(entries[1], target_exposure=0.9), entries[2]]
    assert verify_chain(edited).first_problem.startswith("entry #2 MSFT macd for 2023-06-02: its content")
    assert "#2 is missing" in verify_chain([entries[0], entries[2]]).first_problem
    assert "#3 is missing" in verify_chain(entries[:2], Head(3, entries[2].hash)).first_problem
    late = chain([{**_draft("AAPL", 0.1), "recorded_at": "2023-06-02T20:00:00+00:00"}], 1, GENESIS)
    assert "not before its outcome bar's close 2023-06-02T20:00:00+00:00" in verify_chain(late).first_problem
    in_time = chain([{**_draft("AAPL", 0.1), "recorded_at": "2023-06-02T19:59:59+00:00"}], 1, GENESIS)
    assert verify_chain(in_time).ok


def test_an_entry_returns_its_account_change():
    # 10,000 before the trade; 0.999 of it left after a cost of 10; half in the stock, which gains 10%
    assert entry_return(0.5, 0.001, 100.0, 110.0) == pytest.approx(0.999 * 1.05 - 1.0, abs=1e-15)
    assert entry_return(0.0, 0.0, 100.0, 50.0) == 0.0


def test_the_forward_record_compounds_days_and_states_its_uncertainty():
    rows = []
    for day, (mine, bench) in enumerate([(0.02, 0.01), (0.01, -0.02), (-0.01, -0.01)]):
        session = f"2023-06-0{day + 2}"
        for policy, r in (("macd", mine), ("buy_and_hold", bench)):
            rows.append(
                {
                    "seq": len(rows) + 1,
                    "ticker": "AAPL",
                    "policy": policy,
                    "mode": "live",
                    "for_session": session,
                    "policy_return": r,
                    "benchmark_return": bench,
                    "excess": r - bench,
                }
            )
    record = forward_record(pd.DataFrame(rows)).set_index("policy")
    macd = record.loc["macd"]
    excess = np.array([0.01, 0.03, 0.0])
    half = stats.t.ppf(0.975, 2) * excess.std(ddof=1) / np.sqrt(3)
    assert macd["days"] == 3 and macd["cumulative_return"] == pytest.approx(1.02 * 1.01 * 0.99 - 1)
    assert macd["benchmark_cumulative"] == pytest.approx(1.01 * 0.98 * 0.99 - 1)
    assert macd["mean_daily_excess"] == pytest.approx(excess.mean())
    assert (macd["ci_low"], macd["ci_high"]) == pytest.approx((excess.mean() - half, excess.mean() + half))
    assert macd["p_value"] == pytest.approx(stats.ttest_1samp(excess, 0.0).pvalue)
    assert macd["min_detectable_edge"] > half  # 80% power needs more than the interval's half-width
    assert record.loc["buy_and_hold", "excess_cumulative"] == 0.0
